// search.test.mjs — LanceDB's vector search (nearest, exact and through an IVF index) and its
// full-text index (createIndex FTS + search) work on a table the C writer produced, and give
// the answers a brute-force pass over the C reader's rows gives.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { lancedb, toolJsonLines, tempRoot } from "./lib.mjs";

const root = tempRoot("search");
after(() => fs.rmSync(root, { recursive: true, force: true }));
const ROWS = 4000;
toolJsonLines("write-search", root, "docs", String(ROWS));
const rows = toolJsonLines("dump", root, "docs", "--version", "2"); // 3 rows deleted at v2

function l2(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] - b[i]) * (a[i] - b[i]);
  return s;
}

function bruteForce(q, k) {
  return rows.map((r) => [r.id, l2(r.vec, q)]).sort((x, y) => x[1] - y[1] || (x[0] < y[0] ? -1 : 1)).slice(0, k);
}

test("nearest (exact) returns the brute-force top 10 over the live rows", async () => {
  const db = await lancedb.connect(path.join(root, "tables"));
  const t = await db.openTable("docs");
  await t.checkout(2);
  assert.equal(await t.countRows(), ROWS - 3);
  for (const probe of [5, 1234, 3999]) {
    const q = rows.find((r) => r.id === `doc-${String(probe).padStart(5, "0")}`).vec;
    const got = await t.vectorSearch(q).column("vec").distanceType("l2").limit(10).toArray();
    const want = bruteForce(q, 10);
    assert.deepEqual(got.map((r) => r.id), want.map((w) => w[0]));
    got.forEach((r, i) => assert.ok(Math.abs(r._distance - want[i][1]) < 1e-3));
  }
  // a deleted row is never returned
  const gone = await t.vectorSearch(new Array(16).fill(0)).column("vec").limit(ROWS).toArray();
  assert.ok(!gone.some((r) => ["doc-00000", "doc-00001", "doc-00002"].includes(r.id)));
  t.close();
});

test("an IVF vector index and a full-text index build on our files and answer", async () => {
  // index builds commit new versions: work on a copy so the C-written versions stay as they are
  const tables = path.join(root, "tables");
  fs.cpSync(path.join(tables, "docs.lance"), path.join(tables, "docs_indexed.lance"), { recursive: true });
  const db = await lancedb.connect(tables);
  const t = await db.openTable("docs_indexed");

  await t.createIndex("vec", { config: lancedb.Index.ivfFlat({ numPartitions: 4, distanceType: "l2" }) });
  const q = rows[100].vec;
  const got = await t.vectorSearch(q).column("vec").nprobes(4).limit(5).toArray();
  assert.deepEqual(got.map((r) => r.id), bruteForce(q, 5).map((w) => w[0]));

  await t.createIndex("text", { config: lancedb.Index.fts() });
  const indices = (await t.listIndices()).map((i) => i.indexType).sort();
  assert.deepEqual(indices, ["FTS", "IvfFlat"]);
  for (const word of ["merge", "number42"]) {
    const hits = await t.search(word, "fts").select(["id", "text"]).limit(ROWS).toArray();
    const want = rows.filter((r) => r.text.split(" ").includes(word)).map((r) => r.id).sort();
    assert.deepEqual(hits.map((h) => h.id).sort(), want, `fts "${word}"`);
    assert.ok(want.length > 0);
  }
  // the C reader still reads the table at LanceDB's newest version (it carries index metadata)
  const latest = await t.version();
  const ours = toolJsonLines("dump", root, "docs_indexed", "--version", String(latest), "--columns", "id");
  assert.equal(ours.length, ROWS - 3);
  t.close();
});
