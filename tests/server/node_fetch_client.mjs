// A reference-style client written with Node's built-in fetch (no packages), run against a live
// omnigraph-server by tests/server/test_server_node_fetch.c.  Usage: node node_fetch_client.mjs
// http://HOST:PORT GRAPH TOKEN.  Exits non-zero on the first wrong answer.
import assert from 'node:assert/strict';

const [base, graph, token] = process.argv.slice(2);
const url = (p) => `${base}/graphs/${graph}${p}`;
const auth = { authorization: `Bearer ${token}` };
const json = { ...auth, 'content-type': 'application/json' };

async function call(path, body, headers = json) {
  const res = await fetch(url(path), { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

// a read: ReadOutput with the commit it read
const q = await call('/query', { query: 'query q() { match { $p: Person } return { $p.name } order { $p.name asc } }' });
assert.equal(q.status, 200);
assert.deepEqual(q.body.target, { branch: 'main' });
assert.deepEqual(q.body.rows.map((r) => r['p.name']), ['Ada', 'Alan']);
const seen = q.body.graph_commit_id;
assert.match(seen, /^[0-9A-Za-z]+$/);

// a conditional mutation on the head we read: 200; again on the same (now stale) head: 412
const insert = (name) => ({ query: `query i() { insert Person { name: "${name}", age: 1 } }` });
const cas = { ...json, 'Omnigraph-If-Graph-Commit': seen };
const m1 = await call('/mutate/if-graph-commit', insert('Grace'), cas);
assert.equal(m1.status, 200);
assert.equal(m1.body.affected_nodes, 1);
assert.equal(m1.body.commit.parent_commit_id, seen);
const m2 = await call('/mutate/if-graph-commit', insert('Edsger'), cas);
assert.equal(m2.status, 412);
assert.equal(m2.body.code, undefined);
assert.equal(m2.body.precondition_failure.expected, seen);
assert.equal(m2.body.precondition_failure.actual, m1.body.commit.graph_commit_id);
assert.deepEqual(m2.body.merge_conflicts, []);

// an NDJSON load sent as a stream (chunked request body)
const n = 500;
let i = 0;
const enc = new TextEncoder();
const stream = new ReadableStream({
  pull(ctrl) {
    if (i >= n) return ctrl.close();
    const lines = [];
    for (let k = 0; k < 50 && i < n; k++, i++) lines.push(JSON.stringify({ type: 'Person', data: { name: `p${i}`, age: i } }));
    ctrl.enqueue(enc.encode(lines.join('\n') + '\n'));
  },
});
const res = await fetch(url('/load/ndjson?branch=main&mode=merge'), {
  method: 'POST',
  headers: { ...auth, 'content-type': 'application/x-ndjson' },
  body: stream,
  duplex: 'half',
});
const load = await res.json();
assert.equal(res.status, 200);
assert.equal(load.total_entities, n);
assert.deepEqual(load.nodes, [{ name: 'Person', entities_loaded: n }]);

// the wrong media type is refused before the body matters
const bad = await fetch(url('/load/ndjson'), { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: 'x' });
assert.equal(bad.status, 415);

// the rows are there: 2 seeded + Grace + the stream
const c = await call('/query', { query: 'query c() { match { $p: Person } return { count($p) as n } }' });
assert.equal(c.body.rows[0].n, 3 + n);
console.log('node fetch client: ok');
