// lancedb_writes.test.mjs — the C reader reads a dataset LanceDB itself wrote with storage
// version "2.0" (every column type we map, nulls, a low-cardinality string column that LanceDB
// dictionary-encodes, vectors, lists), over several LanceDB versions (add, delete,
// mergeInsert), and returns the same rows LanceDB returns at each version.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { lancedb, arrow, toolJsonLines, tempRoot, lanceRows, firstDiff } from "./lib.mjs";

const root = tempRoot("lwrites");
after(() => fs.rmSync(root, { recursive: true, force: true }));

const A = arrow;
const schema = new A.Schema([
  new A.Field("id", new A.Utf8(), false),
  new A.Field("i32", new A.Int32(), true),
  new A.Field("i64", new A.Int64(), true),
  new A.Field("u64", new A.Uint64(), true),
  new A.Field("f32", new A.Float32(), true),
  new A.Field("f64", new A.Float64(), true),
  new A.Field("flag", new A.Bool(), true),
  new A.Field("day", new A.DateDay(), true),
  new A.Field("at", new A.DateMillisecond(), true),
  new A.Field("color", new A.Utf8(), true),
  new A.Field("name", new A.Utf8(), true),
  new A.Field("blob", new A.Binary(), true),
  new A.Field("vec", new A.FixedSizeList(8, new A.Field("item", new A.Float32(), true)), true),
  new A.Field("tags", new A.List(new A.Field("item", new A.Utf8(), true)), true),
  new A.Field("nums", new A.List(new A.Field("item", new A.Int64(), true)), true),
]);

const COLORS = ["red", "green", "blue"];
function row(k) {
  const h = (k * 2654435761) >>> 0;
  return {
    id: `ldb-${String(k).padStart(6, "0")}`,
    i32: h % 11 === 0 ? null : (h % 200001) - 100000,
    i64: h % 13 === 0 ? null : BigInt(h) * 4294967296n + BigInt(k),
    u64: h % 17 === 0 ? null : BigInt(h) * 1000n,
    f32: h % 7 === 0 ? null : (h % 1000) / 8,
    f64: h % 5 === 0 ? null : (h % 100000) / 3,
    flag: h % 9 === 0 ? null : h % 2 === 0,
    day: h % 19 === 0 ? null : new Date(Date.UTC(1960, 0, 1) + (h % 30000) * 86400000),
    at: h % 23 === 0 ? null : new Date(1000000000000 + (h % 1000000000)),
    color: k % 101 === 0 ? null : COLORS[k % 3],
    name: h % 3 === 0 ? null : h % 4 === 0 ? "" : `name ${h % 997}`,
    blob: h % 29 === 0 ? null : Buffer.from([h & 255, (h >> 8) & 255, k & 255].slice(0, h % 4)),
    vec: h % 31 === 0 ? null : Array.from({ length: 8 }, (_, i) => ((h >> i) % 64) / 8 - 4),
    tags: h % 37 === 0 ? null : Array.from({ length: h % 4 }, (_, i) => ((h + i) % 10 === 0 ? null : `t${(h + i) % 20}`)),
    nums: h % 41 === 0 ? null : Array.from({ length: (h >> 3) % 3 }, (_, i) => BigInt((h >> i) % 1000) - 500n),
  };
}
const rowsOf = (from, n) => Array.from({ length: n }, (_, i) => row(from + i));

const dump = (v) => toolJsonLines("dump", root, "made_by_lancedb", "--version", String(v));

test("the C reader returns LanceDB's rows at every version LanceDB wrote", async () => {
  const db = await lancedb.connect(path.join(root, "tables"));
  const t = await db.createTable("made_by_lancedb", lancedb.makeArrowTable(rowsOf(0, 20000), { schema }), {
    storageOptions: { new_table_data_storage_version: "2.0" },
  });
  const versions = [await t.version()];
  await t.add(lancedb.makeArrowTable(rowsOf(20000, 700), { schema }));
  versions.push(await t.version());
  await t.delete("i32 % 50 = 7 OR color = 'blue' AND i32 < -90000");
  versions.push(await t.version());
  const upd = { ...row(20005), name: "updated by mergeInsert" };
  const ins = { ...row(99999) };
  await t.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll()
    .execute(lancedb.makeArrowTable([upd, ins], { schema }));
  versions.push(await t.version());

  // LanceDB really wrote 2.0 files, with deletion files of its own
  const schemaLines = toolJsonLines("schema", root, "made_by_lancedb", "--version", String(versions.at(-1)));
  assert.deepEqual(schemaLines.filter((f) => f.parent_id === -1).map((f) => f.name), schema.fields.map((f) => f.name));
  assert.ok(fs.readdirSync(path.join(root, "tables", "made_by_lancedb.lance", "_deletions")).length > 0);

  for (const v of versions) {
    await t.checkout(v);
    const want = await lanceRows(t);
    const got = dump(v);
    assert.equal(got.length, await t.countRows(), `countRows at ${v}`);
    assert.equal(firstDiff(got, want), "", `version ${v}`);
  }
  assert.equal(dump(versions[0]).length, 20000);
  assert.ok(dump(versions.at(-1)).some((r) => r.name === "updated by mergeInsert"));
  t.close();
});
