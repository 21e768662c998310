// The official MCP TypeScript SDK client drives `omnigraph mcp` over stdio, as an agent would:
// it lists the tools (stored queries with typed input schemas among them), calls a stored
// query, writes through a stored mutation on a branch, merges the branch, and reads the
// schema resource.  The cluster is examples/cluster, imported and applied into a temp dir.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const bin = join(process.env.OG_BIN_DIR, 'omnigraph');
const example = new URL('../../examples/cluster/', import.meta.url).pathname;

function og(...args) {
  return execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

test('an MCP client lists, queries, writes on a branch and merges', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'og-mcp-sdk-'));
  try {
    cpSync(example, dir, { recursive: true });
    og('cluster', 'import', '--config', dir);
    og('cluster', 'apply', '--config', dir, '--as', 'alice');
    og('load', '--quiet', '--data', join(dir, 'seed.ndjson'), '--mode', 'merge', join(dir, 'graphs', 'people.omni'));

    const transport = new StdioClientTransport({ command: bin, args: ['mcp', '--cluster', dir, '--as', 'agent', '--no-policy'], stderr: 'pipe' });
    const client = new Client({ name: 'omnigraph-sdk-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      assert.equal(client.getServerVersion().name, 'omnigraph');

      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const n of ['adults', 'friends', 'add_person', 'befriend', 'graph_query', 'branch_create', 'branch_merge'])
        assert.ok(names.includes(n), `tool ${n} listed`);
      const adults = tools.find((t) => t.name === 'adults');
      assert.equal(adults.inputSchema.properties.params.properties.min.type, 'integer');
      assert.deepEqual(adults.inputSchema.required, ['params']);
      assert.match(adults.description, /at least \$min years old/);

      const rows = async (args) => (await client.callTool({ name: 'adults', arguments: args })).structuredContent.row_count;
      assert.equal(await rows({ params: { min: 30 } }), 2);

      // progress (the SDK sends a progressToken when given onprogress) and log messages at the
      // level set, both before the result.  Progress is not counted here: SDK 1.32 dispatches
      // notifications a microtask late but retires the call's progress handler on its response
      // at once, so over stdio the progress of a fast call, read in one chunk with its
      // response, is dropped client-side (typescript-sdk issue #2580; over HTTP each SSE event
      // is awaited and all arrive, see mcp_sdk_http.test.mjs and tests/mcp/test_mcp_stdio.c).
      const progress = [], logs = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
      let p = await client.callTool({ name: 'adults', arguments: { params: { min: 30 } } }, undefined, { onprogress: (x) => progress.push(x) });
      assert.equal(p.structuredContent.row_count, 2);
      for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress);
      assert.equal(logs.length, 0); // no level set: no log messages
      await client.setLoggingLevel('info');
      p = await client.callTool({ name: 'adults', arguments: { params: { min: 30 } } });
      assert.ok(logs.length >= 2, JSON.stringify(logs));
      assert.ok(logs.every((l) => l.logger === 'omnigraph' && l.level !== 'debug'));

      let r = await client.callTool({ name: 'branch_create', arguments: { name: 'agent-work', message: 'add Zoe, 41' } });
      assert.equal(r.isError, false);
      assert.equal(r.structuredContent.message, 'add Zoe, 41');
      // the message is kept with the branch: branch_list reads it from the graph
      r = await client.callTool({ name: 'branch_list', arguments: {} });
      assert.equal(r.structuredContent.branches.find((b) => b.name === 'agent-work').message, 'add Zoe, 41');
      assert.equal(r.structuredContent.branches.find((b) => b.name === 'main').message, null);
      r = await client.callTool({ name: 'add_person', arguments: { params: { name: 'Zoe', age: 41 }, branch: 'agent-work' } });
      assert.equal(r.isError, false, JSON.stringify(r.content));
      assert.equal(r.structuredContent.affected_nodes, 1);
      assert.equal(r.structuredContent.commit.graph_branch, 'agent-work');
      assert.equal(r.structuredContent.commit.actor_id, 'agent');
      assert.equal(await rows({ params: { min: 30 }, branch: 'agent-work' }), 3);
      assert.equal(await rows({ params: { min: 30 } }), 2);

      r = await client.callTool({ name: 'branch_merge', arguments: { source: 'agent-work', delete_branch: true } });
      assert.equal(r.isError, false, JSON.stringify(r.content));
      assert.equal(r.structuredContent.outcome, 'fast_forward');
      assert.equal(await rows({ params: { min: 30 } }), 3);

      // a typed parameter error is a tool error the model can read
      r = await client.callTool({ name: 'adults', arguments: { params: { min: 'thirty' } } });
      assert.equal(r.isError, true);
      assert.match(r.content[0].text, /param `\$min`: expected I32/);
      // an unknown tool is a protocol error
      await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool/);

      const { resources } = await client.listResources();
      assert.deepEqual(resources.map((x) => x.uri).sort(), ['omnigraph://branches', 'omnigraph://language', 'omnigraph://schema']);
      const schema = await client.readResource({ uri: 'omnigraph://schema' });
      assert.match(schema.contents[0].text, /node Person/);
      // the language, taught with this graph's own types; the agent workflows as prompts
      const lang = await client.readResource({ uri: 'omnigraph://language' });
      assert.match(lang.contents[0].text, /query find_person\(\$key: String\)/);
      const { prompts } = await client.listPrompts();
      assert.deepEqual(prompts.map((x) => x.name).sort(), ['explore_schema', 'propose_change', 'review_branch']);
      const done = await client.complete({ ref: { type: 'ref/prompt', name: 'review_branch' }, argument: { name: 'branch', value: 'ma' } });
      assert.deepEqual(done.completion.values, ['main']);
      // a result page the SDK validates against the tool's outputSchema, with the way on
      r = await client.callTool({ name: 'graph_query', arguments: { query: 'query q() { match { $p: Person } return { $p.name } order { $p.name } }', max_rows: 1 } });
      assert.equal(r.isError, false, JSON.stringify(r.content));
      assert.equal(r.structuredContent.rows.length, 1);
      assert.equal(r.structuredContent.next_offset, 1);
      // a write without a branch is refused, with the error as data
      r = await client.callTool({ name: 'graph_mutate', arguments: { query: 'query m() { insert Person { name: "Nope" } }' } });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.error.code, 'invalid');
      await client.ping();
    } finally {
      await client.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('with --policy each actor sees and may call only what its policy allows', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'og-mcp-sdk-'));
  const connect = async (actor) => {
    const transport = new StdioClientTransport({ command: bin, args: ['mcp', '--cluster', dir, '--as', actor, '--policy'], stderr: 'pipe' });
    const client = new Client({ name: 'omnigraph-sdk-test', version: '0.0.0' });
    await client.connect(transport);
    return client;
  };
  try {
    cpSync(example, dir, { recursive: true });
    og('cluster', 'import', '--config', dir);
    og('cluster', 'apply', '--config', dir, '--as', 'alice');

    const alice = await connect('alice');
    try {
      const names = (await alice.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('adults') && names.includes('add_person') && names.includes('branch_create'));
      assert.ok(!names.includes('branch_merge') && !names.includes('schema_apply'));
      const r = await alice.callTool({ name: 'add_person', arguments: { params: { name: 'Ada' }, branch: 'main' } });
      assert.equal(r.isError, true); // main is protected
      assert.match(r.content[0].text, /forbidden: policy denied action 'change' on query 'add_person' on branch 'main'/);
    } finally {
      await alice.close();
    }

    const mallory = await connect('mallory');
    try {
      const names = (await mallory.listTools()).tools.map((t) => t.name);
      assert.deepEqual(names, ['graph_health']);
      // a stored query mallory may not invoke is indistinguishable from one that does not exist
      await assert.rejects(mallory.callTool({ name: 'adults', arguments: { params: { min: 1 } } }), /Unknown tool: adults/);
      await assert.rejects(mallory.callTool({ name: 'adultz', arguments: { params: { min: 1 } } }), /Unknown tool: adultz/);
    } finally {
      await mallory.close();
    }

    // per-query rules (docs/policy.md): gus may invoke `friends` and no other stored query
    const gus = await connect('gus');
    try {
      const names = (await gus.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(names, ['branch_diff', 'branch_list', 'change_feed', 'commit_get', 'commit_list', 'friends', 'graph_explain', 'graph_health', 'graph_query',
        'graph_snapshot', 'graph_validate', 'proposal_list', 'proposal_show', 'schema_get']);
      const r = await gus.callTool({ name: 'friends', arguments: { params: { name: 'Alice' } } });
      assert.equal(r.isError, false, JSON.stringify(r.content));
      await assert.rejects(gus.callTool({ name: 'adults', arguments: { params: { min: 1 } } }), /Unknown tool: adults$/);
      await assert.rejects(gus.callTool({ name: 'adultz', arguments: { params: { min: 1 } } }), /Unknown tool: adultz$/);
    } finally {
      await gus.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
