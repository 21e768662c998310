// The official MCP TypeScript SDK client over Streamable HTTP: `omnigraph-server --cluster`
// serves examples/cluster (imported and applied into a temp dir) and the client connects to
// POST /graphs/people/mcp with a bearer token, as a remote agent would.  Each actor sees the
// tools its policy allows; alice writes through a stored mutation on a branch, root merges it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const bin = (name) => join(process.env.OG_BIN_DIR, name);
const example = new URL('../../examples/cluster/', import.meta.url).pathname;
const tokens = { alice: 'tok-alice', root: 'tok-root', mallory: 'tok-mallory', gus: 'tok-gus', ivy: 'tok-ivy' };

function og(...args) {
  return execFileSync(bin('omnigraph'), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/* Starts the server; resolves with [process, "host:port"] once it prints its listen line. */
function startServer(dir) {
  const p = spawn(bin('omnigraph-server'), ['--cluster', dir, '--bind', '127.0.0.1:0'], {
    env: { ...process.env, OMNIGRAPH_SERVER_BEARER_TOKENS_JSON: JSON.stringify(tokens) },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: p.stdout });
    rl.on('line', (l) => l.startsWith('OMNIGRAPH_LISTEN_ADDR=') && resolve([p, l.slice(22)]));
    p.on('exit', (code) => reject(new Error(`omnigraph-server exited with ${code}`)));
  });
}

test('an MCP client over HTTP: per-actor tools, a stored mutation on a branch, a merge', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'og-mcp-http-'));
  let server;
  try {
    cpSync(example, dir, { recursive: true });
    og('cluster', 'import', '--config', dir);
    og('cluster', 'apply', '--config', dir, '--as', 'setup');
    og('load', '--quiet', '--data', join(dir, 'seed.ndjson'), '--mode', 'merge', join(dir, 'graphs', 'people.omni'));
    const [proc, addr] = await startServer(dir);
    server = proc;
    const connect = async (actor) => {
      const transport = new StreamableHTTPClientTransport(new URL(`http://${addr}/graphs/people/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${tokens[actor]}` } },
      });
      const client = new Client({ name: 'omnigraph-sdk-http-test', version: '0.0.0' });
      await client.connect(transport);
      return client;
    };

    const alice = await connect('alice');
    try {
      const names = (await alice.listTools()).tools.map((t) => t.name);
      for (const n of ['adults', 'friends', 'add_person', 'graph_query', 'branch_create']) assert.ok(names.includes(n), n);
      assert.ok(!names.includes('branch_merge'));
      const rows = async (args) => (await alice.callTool({ name: 'adults', arguments: args })).structuredContent.row_count;
      assert.equal(await rows({ params: { min: 30 } }), 2);
      // progress over the POST's SSE stream; log messages at the level alice set in her session
      const progress = [], logs = [];
      alice.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
      const p = await alice.callTool({ name: 'adults', arguments: { params: { min: 30 } } }, undefined, { onprogress: (x) => progress.push(x) });
      assert.equal(p.structuredContent.row_count, 2);
      assert.ok(progress.length >= 3, JSON.stringify(progress));
      assert.equal(logs.length, 0);
      await alice.setLoggingLevel('debug');
      await alice.callTool({ name: 'adults', arguments: { params: { min: 30 } } });
      assert.ok(logs.length >= 3 && logs.some((l) => l.level === 'debug'), JSON.stringify(logs));
      let r = await alice.callTool({ name: 'branch_create', arguments: { name: 'agent-work' } });
      assert.equal(r.isError, false, JSON.stringify(r.content));
      r = await alice.callTool({ name: 'add_person', arguments: { params: { name: 'Zoe', age: 41 }, branch: 'agent-work' } });
      assert.equal(r.isError, false, JSON.stringify(r.content));
      assert.equal(r.structuredContent.commit.actor_id, 'alice'); // the token's actor, not the client's word
      assert.equal(await rows({ params: { min: 30 }, branch: 'agent-work' }), 3);
      r = await alice.callTool({ name: 'add_person', arguments: { params: { name: 'Eve' }, branch: 'main' } });
      assert.equal(r.isError, true); // main is protected
      const schema = await alice.readResource({ uri: 'omnigraph://schema' });
      assert.match(schema.contents[0].text, /node Person/);
      await alice.ping();
      // the session: an id from initialize that the client keeps; once ended it is unknown (404)
      const sid = alice.transport.sessionId;
      assert.match(sid ?? '', /^[0-9a-f]{32}$/);
      await alice.transport.terminateSession();
      assert.equal(alice.transport.sessionId, undefined);
      const gone = await fetch(`http://${addr}/graphs/people/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.alice}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      });
      assert.equal(gone.status, 404);
    } finally {
      await alice.close();
    }

    const root = await connect('root');
    try {
      const r = await root.callTool({ name: 'branch_merge', arguments: { source: 'agent-work', delete_branch: true } });
      assert.equal(r.isError, false, JSON.stringify(r.content));
      assert.equal(r.structuredContent.outcome, 'fast_forward');
      assert.equal((await root.callTool({ name: 'adults', arguments: { params: { min: 30 } } })).structuredContent.row_count, 3);
    } finally {
      await root.close();
    }

    const mallory = await connect('mallory');
    try {
      assert.deepEqual((await mallory.listTools()).tools.map((t) => t.name), ['graph_health']);
      await assert.rejects(mallory.callTool({ name: 'adults', arguments: { params: { min: 1 } } }), /Unknown tool: adults/);
    } finally {
      await mallory.close();
    }

    // per-query rules: ivy (team, interns) may not invoke the stored writes a deny rule names
    const ivy = await connect('ivy');
    try {
      const names = (await ivy.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('adults') && names.includes('graph_mutate'));
      assert.ok(!names.includes('add_person') && !names.includes('befriend'));
      await assert.rejects(ivy.callTool({ name: 'add_person', arguments: { params: { name: 'I' }, branch: 'feature' } }),
        /Unknown tool: add_person$/);
    } finally {
      await ivy.close();
    }
  } finally {
    if (server) server.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});
