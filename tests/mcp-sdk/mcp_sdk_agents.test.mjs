// Issue 38 through the official MCP TypeScript SDK client: what a fleet of agents works with.
// Over stdio (`omnigraph mcp --agent-branch`): a write naming no branch lands on the agent's
// own branch; the branch's diff, a dry-run merge, a strict insert, receipts; validation, errors
// with position and candidates, explain, the workflow prompt; a merge proposal
// created, listed, reviewed (diff and conflicts) and approved, another closed; the change feed;
// resource templates, node-key completion, a subscription told that main moved; a long query
// cancelled through an AbortSignal.  Over HTTP (`omnigraph-server --mcp-agent-branch`, tokens
// and the example policy): the agent proposes, the admin reviews and approves, a conflicting
// proposal is refused and closed, subscriptions are honestly not offered, and a cancelled call
// stops on the server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const bin = (name) => join(process.env.OG_BIN_DIR, name);
const example = new URL('../../examples/cluster/', import.meta.url).pathname;
const LONG = 'query q() { match { $a: Person  $b: Person  $c: Person  $d: Person  $a.age + $b.age + $c.age + $d.age = 1000 } return { $a.name } }';

function og(...args) {
  return execFileSync(bin('omnigraph'), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/* examples/cluster applied into a temp dir, seeded, plus 150 people (for a long query). */
function cluster(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(example, dir, { recursive: true });
  og('cluster', 'import', '--config', dir);
  og('cluster', 'apply', '--config', dir, '--as', 'setup');
  const store = join(dir, 'graphs', 'people.omni');
  og('load', '--quiet', '--data', join(dir, 'seed.ndjson'), '--mode', 'merge', store);
  const many = Array.from({ length: 150 }, (_, i) => JSON.stringify({ type: 'Person', data: { name: `q${i}`, age: i % 90 } }));
  writeFileSync(join(dir, 'many.ndjson'), many.join('\n') + '\n');
  og('load', '--quiet', '--data', join(dir, 'many.ndjson'), '--mode', 'merge', store);
  return [dir, store];
}

const ok = (r) => {
  assert.equal(r.isError, false, JSON.stringify(r.content));
  return r.structuredContent;
};

test('stdio: an agent branch, review tools, proposals, discovery, subscriptions, cancellation', async () => {
  const [dir, store] = cluster('og-mcp-agents-');
  const transport = new StdioClientTransport({
    command: bin('omnigraph'),
    args: ['mcp', '--cluster', dir, '--as', 'agent-7', '--no-policy', '--agent-branch', 'agents/{actor}'],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'omnigraph-sdk-agents', version: '0.0.0' });
  await client.connect(transport);
  try {
    // the default agent-branch rule: `branch` is optional, the write lands on agents/agent-7
    const mutate = (await client.listTools()).tools.find((t) => t.name === 'graph_mutate');
    assert.ok(!(mutate.inputSchema.required ?? []).includes('branch'));
    let s = ok(await client.callTool({ name: 'graph_mutate', arguments: { query: 'query m() { insert strict Person { name: "Kay", age: 33 } }', message: 'add Kay' } }));
    assert.equal(s.branch, 'agents/agent-7');
    assert.equal(s.inserted, 1);
    // a strict insert of an existing key is refused; a plain one says it updated
    let r = await client.callTool({ name: 'graph_mutate', arguments: { query: 'query m() { insert strict Person { name: "Ada" } }' } });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error.code, 'already_exists');
    s = ok(await client.callTool({ name: 'graph_mutate', arguments: { query: 'query m() { insert Person { name: "Ada", age: 37 } }' } }));
    assert.deepEqual([s.inserted, s.updated], [0, 1]);
    // what the branch changed, and what merging it would do (nothing published)
    s = ok(await client.callTool({ name: 'branch_diff', arguments: { branch: 'agents/agent-7' } }));
    assert.equal(s.changes.length, 2);
    assert.match(s.merge_base, /^[0-9A-Z]{26}$/);
    s = ok(await client.callTool({ name: 'branch_merge', arguments: { source: 'agents/agent-7', dry_run: true } }));
    assert.equal(s.dry_run, true);
    // follow main from now on
    const feed = ok(await client.callTool({ name: 'change_feed', arguments: { start: 'now' } }));
    assert.ok(feed.cursor);

    // proposals: create, list, show (diff + conflicts), approve
    const p = ok(await client.callTool({ name: 'proposal_create', arguments: { source: 'agents/agent-7', title: 'Kay joins', description: 'and Ada is 37' } }));
    assert.equal(p.state, 'open');
    const list = ok(await client.callTool({ name: 'proposal_list', arguments: { state: 'open' } }));
    assert.ok(list.proposals.some((x) => x.id === p.id));
    const show = ok(await client.callTool({ name: 'proposal_show', arguments: { id: p.id } }));
    assert.equal(show.changes.length, 2);
    assert.deepEqual(show.conflicts, []);
    const done = ok(await client.callTool({ name: 'proposal_approve', arguments: { id: p.id } }));
    assert.equal(done.proposal.state, 'merged');
    // the feed sees main move
    const moved = ok(await client.callTool({ name: 'change_feed', arguments: { cursor: feed.cursor } }));
    assert.ok(moved.blocks.flatMap((b) => b.changes).length >= 2, JSON.stringify(moved));
    // a second proposal, closed without merging
    ok(await client.callTool({ name: 'branch_create', arguments: { name: 'agents/agent-7-b' } }));
    ok(await client.callTool({ name: 'graph_mutate', arguments: { query: 'query m() { insert Person { name: "Lee" } }', branch: 'agents/agent-7-b' } }));
    const p2 = ok(await client.callTool({ name: 'proposal_create', arguments: { source: 'agents/agent-7-b', title: 'Lee' } }));
    const closed = ok(await client.callTool({ name: 'proposal_close', arguments: { id: p2.id, reason: 'not needed' } }));
    assert.equal(closed.state, 'closed');

    // learning the language: check a write before making it, explain a read; the workflow prompt
    const v = ok(await client.callTool({ name: 'graph_validate', arguments: { query: 'query m($n: String) { insert Person { nam: $n } }' } }));
    assert.equal(v.ok, false);
    assert.match(v.diagnostics[0].message, /did you mean `name`/);
    r = await client.callTool({ name: 'graph_query', arguments: { query: 'query q() { match { $p: Persn } return { $p.name } }' } });
    assert.deepEqual([r.structuredContent.error.code, r.structuredContent.error.line, r.structuredContent.error.candidates], ['type', 1, ['Person']]);
    const plan = ok(await client.callTool({ name: 'graph_explain', arguments: { query: 'query q() { match { $p: Person { name: "Ada" } } return { $p.age } }' } }));
    assert.match(plan.plan, /key_lookup/);
    const prompt = await client.getPrompt({ name: 'propose_change', arguments: { goal: 'record a decision' } });
    assert.match(prompt.messages[0].content.text, /proposal_create/);

    // discovery: templates, a node by key, key completion
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.ok(resourceTemplates.some((t) => t.uriTemplate === 'omnigraph://nodes/{type}/{key}'));
    const node = await client.readResource({ uri: 'omnigraph://nodes/Person/Kay' });
    assert.equal(JSON.parse(node.contents[0].text).age, 33);
    const keys = await client.complete({ ref: { type: 'ref/resource', uri: 'omnigraph://nodes/{type}/{key}' }, argument: { name: 'key', value: 'q1' }, context: { arguments: { type: 'Person' } } });
    assert.equal(keys.completion.values.length, 61); // q1, q10..q19, q100..q149
    assert.ok(keys.completion.values.every((k) => k.startsWith('q1')));
    const types = await client.complete({ ref: { type: 'ref/resource', uri: 'omnigraph://nodes/{type}/{key}' }, argument: { name: 'type', value: 'P' } });
    assert.deepEqual(types.completion.values, ['Person']);

    // a subscription: another process writes main, the client is told
    assert.equal(client.getServerCapabilities().resources.subscribe, true);
    const updated = new Promise((resolve) => client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)));
    await client.subscribeResource({ uri: 'omnigraph://commits/main' });
    writeFileSync(join(dir, 'm.gq'), 'query m() { insert Person { name: "Out" } }\n');
    og('mutate', '--query', join(dir, 'm.gq'), '--branch', 'main', store);
    assert.equal(await updated, 'omnigraph://commits/main');

    // cancellation: the aborted query stops, so the next call (queued behind it) is answered
    const ac = new AbortController();
    const long = client.callTool({ name: 'graph_query', arguments: { query: LONG } }, undefined, { signal: ac.signal, timeout: 600000 });
    setTimeout(() => ac.abort('enough'), 500);
    await assert.rejects(long);
    const t0 = Date.now();
    ok(await client.callTool({ name: 'graph_health', arguments: {} }));
    assert.ok(Date.now() - t0 < 20000, `health answered after ${Date.now() - t0} ms`);
  } finally {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/* Starts the server; resolves with [process, "host:port", audit lines] at its listen line. */
function startServer(dir, tokens) {
  const p = spawn(bin('omnigraph-server'), ['--cluster', dir, '--bind', '127.0.0.1:0', '--mcp-agent-branch', '{actor}/work'], {
    env: { ...process.env, OMNIGRAPH_SERVER_BEARER_TOKENS_JSON: JSON.stringify(tokens) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const audit = [];
  createInterface({ input: p.stderr }).on('line', (l) => audit.push(l));
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: p.stdout });
    rl.on('line', (l) => l.startsWith('OMNIGRAPH_LISTEN_ADDR=') && resolve([p, l.slice(22), audit]));
    p.on('exit', (code) => reject(new Error(`omnigraph-server exited with ${code}`)));
  });
}

test('HTTP: agents propose on their own branches, the admin reviews and approves; cancellation', async () => {
  const [dir] = cluster('og-mcp-agents-http-');
  const tokens = { alice: 'tok-alice', bob: 'tok-bob', root: 'tok-root' };
  let server;
  try {
    const [proc, addr, audit] = await startServer(dir, tokens);
    server = proc;
    const connect = async (actor) => {
      const transport = new StreamableHTTPClientTransport(new URL(`http://${addr}/graphs/people/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${tokens[actor]}` } },
      });
      const client = new Client({ name: 'omnigraph-sdk-agents-http', version: '0.0.0' });
      await client.connect(transport);
      return client;
    };
    const alice = await connect('alice'), bob = await connect('bob'), root = await connect('root');
    try {
      // no branch named: each agent writes on {actor}/work (the server's rule)
      let s = ok(await alice.callTool({ name: 'add_person', arguments: { params: { name: 'Ann', age: 50 } } }));
      assert.equal(s.branch, 'alice/work');
      s = ok(await alice.callTool({ name: 'graph_mutate', arguments: { query: 'query u() { update Person set { age: 40 } where name = "Linus" }' } }));
      assert.equal(s.branch, 'alice/work');
      s = ok(await bob.callTool({ name: 'graph_mutate', arguments: { query: 'query u() { update Person set { age: 41 } where name = "Linus" }' } }));
      assert.equal(s.branch, 'bob/work');
      const pa = ok(await alice.callTool({ name: 'proposal_create', arguments: { source: 'alice/work', title: 'Ann; Linus is 40' } }));
      const pb = ok(await bob.callTool({ name: 'proposal_create', arguments: { source: 'bob/work', title: 'Linus is 41' } }));
      // an agent may not approve
      let r = await alice.callTool({ name: 'proposal_approve', arguments: { id: pa.id } });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.error.code, 'forbidden');
      // the admin's review and approval
      const queue = ok(await root.callTool({ name: 'proposal_list', arguments: { state: 'open' } }));
      assert.deepEqual(queue.proposals.map((x) => x.id).sort(), [pa.id, pb.id].sort());
      const review = ok(await root.callTool({ name: 'proposal_show', arguments: { id: pa.id } }));
      assert.equal(review.changes.length, 2);
      assert.deepEqual(review.conflicts, []);
      assert.equal(ok(await root.callTool({ name: 'proposal_approve', arguments: { id: pa.id } })).proposal.state, 'merged');
      // bob's edit of the same row now conflicts: shown in review, refused on approval, closed
      assert.ok(ok(await root.callTool({ name: 'proposal_show', arguments: { id: pb.id } })).conflicts.length >= 1);
      r = await root.callTool({ name: 'proposal_approve', arguments: { id: pb.id } });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.error.code, 'conflict');
      assert.equal(ok(await root.callTool({ name: 'proposal_close', arguments: { id: pb.id, reason: 'conflicts' } })).state, 'closed');
      const adults = ok(await root.callTool({ name: 'adults', arguments: { params: { min: 40 } } }));
      assert.deepEqual(adults.rows.map((x) => x['p.name']).filter((n) => n === 'Ann' || n === 'Linus').sort(), ['Ann', 'Linus']);

      // subscriptions need a stream the endpoint does not offer: not declared, not served
      assert.equal(alice.getServerCapabilities().resources.subscribe, false);
      await assert.rejects(alice.subscribeResource({ uri: 'omnigraph://commits/main' }), /Method not found/);
      // key completion over HTTP too
      const keys = await alice.complete({ ref: { type: 'ref/resource', uri: 'omnigraph://nodes/{type}/{key}' }, argument: { name: 'key', value: 'An' }, context: { arguments: { type: 'Person' } } });
      assert.deepEqual(keys.completion.values, ['Ann']);

      // cancellation: the aborted call stops on the server (its request ends well before the
      // query could have run out its budget)
      const ac = new AbortController();
      const long = alice.callTool({ name: 'graph_query', arguments: { query: LONG } }, undefined, { signal: ac.signal, timeout: 600000 });
      setTimeout(() => ac.abort('enough'), 800);
      await assert.rejects(long);
      const t0 = Date.now();
      let line;
      while (!(line = audit.find((l) => l.includes('"tools/call graph_query"') && l.includes('"actor":"alice"'))) && Date.now() - t0 < 20000)
        await new Promise((res) => setTimeout(res, 100));
      assert.ok(line, 'the cancelled call ended');
      assert.ok(JSON.parse(line).latency_ms < 20000, line);
    } finally {
      await alice.close();
      await bob.close();
      await root.close();
    }
  } finally {
    if (server) server.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});
