// c_writes.test.mjs — LanceDB (the real Lance reader) opens every table version the C writer
// produces and returns exactly the rows the C reader (`lance_tool dump`) returns: all column
// types with nulls, vectors, lists, several fragments and pages, deletions (array and bitmap
// containers, a fully deleted fragment), an added column, a compaction and an overwrite.
// Then LanceDB writes on top of our table (add, delete, mergeInsert) and the C reader reads
// LanceDB's versions, including the ARROW_ARRAY deletion files LanceDB writes.  Last, the
// `make run` demo table reads the same in LanceDB and in the C reader.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { lancedb, binDir, tool, toolJsonLines, tempRoot, lanceRows, firstDiff } from "./lib.mjs";

const root = tempRoot("cwrites");
after(() => fs.rmSync(root, { recursive: true, force: true }));

const versions = toolJsonLines("write-all-types", root, "all_types");
toolJsonLines("write-overwrite", root, "overwrite");

const dump = (name, v, cols) =>
  toolJsonLines("dump", root, name, "--version", String(v), ...(cols ? ["--columns", cols.join(",")] : []));

test("the C writer made seven versions", () => {
  assert.deepEqual(versions.map((v) => v.version), [1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(tool("versions", root, "all_types").trim().split("\n").map(Number), [1, 2, 3, 4, 5, 6, 7]);
});

test("LanceDB reads the schema: types, nullability, primary key", async () => {
  const db = await lancedb.connect(path.join(root, "tables"));
  assert.deepEqual(await db.tableNames(), ["all_types", "overwrite"]);
  const t = await db.openTable("all_types");
  await t.checkout(7);
  const sch = await t.schema();
  const got = sch.fields.map((f) => [f.name, String(f.type), f.nullable]);
  assert.deepEqual(got, [
    ["id", "Utf8", false], ["i32", "Int32", true], ["i64", "Int64", true], ["u32", "Uint32", true],
    ["u64", "Uint64", true], ["f32", "Float32", true], ["f64", "Float64", true], ["flag", "Bool", true],
    ["day", "Date32<DAY>", true], ["at", "Date64<MILLISECOND>", true], ["name", "Utf8", true],
    ["blob", "LargeBinary", true], ["vec", "FixedSizeList[4]<Float32>", true], ["tags", "List<Utf8>", true],
    ["nums", "List<Int64>", true], ["ints", "List<Int32>", true], ["score", "Float32", true],
    ["extra", "Float64", true],
  ]);
  const id = sch.fields.find((f) => f.name === "id");
  assert.equal(id.metadata.get("lance-schema:unenforced-primary-key"), "true");
  assert.deepEqual((await t.listVersions()).map((v) => v.version), [1, 2, 3, 4, 5, 6, 7]);
  t.close();
});

test("LanceDB returns exactly the C reader's rows at every version", async () => {
  const db = await lancedb.connect(path.join(root, "tables"));
  const t = await db.openTable("all_types");
  const counts = [];
  for (const { version } of versions) {
    await t.checkout(version);
    assert.equal(await t.version(), version);
    const want = dump("all_types", version);
    assert.equal(await t.countRows(), want.length, `countRows at ${version}`);
    const got = await lanceRows(t);
    assert.equal(firstDiff(got, want), "", `version ${version}`);
    counts.push(want.length);
  }
  // appends grow, deletions shrink, the added column and the compaction change nothing
  assert.deepEqual(counts, [9120, 9420, 8104, 8104, 8354, 4377, 4377]);
  t.close();
});

test("filtered and projected reads agree with the C reader", async () => {
  const db = await lancedb.connect(path.join(root, "tables"));
  const t = await db.openTable("all_types");
  for (const version of [3, 6, 7]) {
    await t.checkout(version);
    const all = dump("all_types", version);
    for (const [sql, pred] of [
      ["i32 > 0", (r) => r.i32 !== null && r.i32 > 0],
      ["name = 'beta'", (r) => r.name === "beta"],
      ["extra IS NOT NULL", (r) => r.extra !== null && r.extra !== undefined],
      ["flag", (r) => r.flag === true],
    ]) {
      if (sql.startsWith("extra") && version < 4) continue; // added at version 4
      const want = all.filter(pred);
      assert.equal(await t.countRows(sql), want.length, `count where ${sql} at ${version}`);
      const got = (await lanceRows(t, ["id", "u64"])).length;
      assert.equal(got, all.length);
      const rows = await (await t.query().where(sql).withRowId().select(["id", "nums"]).toArrow());
      const ids = [];
      for (let i = 0; i < rows.numRows; i++) ids.push(rows.getChild("id").get(i));
      assert.deepEqual(ids.sort(), want.map((r) => r.id).sort(), `rows where ${sql} at ${version}`);
    }
    const proj = dump("all_types", version, ["vec", "id"]);
    assert.equal(firstDiff(await lanceRows(t, ["vec", "id"]), proj), "");
  }
  t.close();
});

test("an overwrite version replaces every row; the old version stays readable", async () => {
  const db = await lancedb.connect(path.join(root, "tables"));
  const t = await db.openTable("overwrite");
  for (const v of [1, 2]) {
    await t.checkout(v);
    assert.equal(firstDiff(await lanceRows(t), dump("overwrite", v)), "", `version ${v}`);
  }
  assert.equal(dump("overwrite", 1).length, 5);
  assert.equal(dump("overwrite", 2).length, 3);
  t.close();
});

test("LanceDB writes on top of our table and the C reader reads its versions", async () => {
  // on a copy, so the versions above stay ours
  const tables = path.join(root, "tables");
  fs.cpSync(path.join(tables, "all_types.lance"), path.join(tables, "lancedb_on_ours.lance"), { recursive: true });
  const db = await lancedb.connect(tables);
  const t = await db.openTable("lancedb_on_ours");
  const before = dump("lancedb_on_ours", 7);
  const sch = await t.schema();
  // add: a LanceDB-written 2.0 fragment next to ours
  const fresh = [];
  for (let k = 0; k < 40; k++) {
    fresh.push({
      id: `lancedb-${k}`, i32: k, i64: BigInt(k) * 1000000000000n, u32: k, u64: BigInt(k), f32: k / 4, f64: k / 3,
      flag: k % 2 === 0, day: new Date(Date.UTC(1999, 0, 1 + k)), at: new Date(1700000000000 + k), name: k % 5 ? `n${k}` : null,
      blob: Buffer.from([k, k + 1]), vec: [k, k + 0.5, -k, 0], tags: [`t${k}`, null], nums: [BigInt(k)], ints: k % 3 ? [k] : [],
      score: k % 4 ? k / 8 : null, extra: k % 2 ? k * 1.5 : null,
    });
  }
  await t.add(lancedb.makeArrowTable(fresh, { schema: sch }));
  const v8 = await t.version();
  // delete: a handful of rows across our fragments and LanceDB's
  await t.delete("i32 % 97 = 5 OR id = 'lancedb-3'");
  const v9 = await t.version();
  // mergeInsert on the primary key: one update, one insert (LanceDB hides the old row with
  // an ARROW_ARRAY deletion file)
  const upd = { ...fresh[7], name: "updated" };
  const ins = { ...fresh[8], id: "lancedb-new" };
  await t.mergeInsert("id").whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(lancedb.makeArrowTable([upd, ins], { schema: sch }));
  const v10 = await t.version();
  const kinds = new Set(fs.readdirSync(path.join(tables, "lancedb_on_ours.lance", "_deletions")).map((f) => path.extname(f)));
  for (const v of [v8, v9, v10]) {
    await t.checkout(v);
    const want = await lanceRows(t);
    const got = dump("lancedb_on_ours", v);
    assert.equal(firstDiff(got, want), "", `LanceDB version ${v}`);
  }
  assert.equal(dump("lancedb_on_ours", v8).length, before.length + 40);
  assert.ok(dump("lancedb_on_ours", v10).some((r) => r.name === "updated"));
  console.log(`     deletion file kinds after LanceDB's writes: ${[...kinds].join(" ")}`);
  t.close();
});

test("the `make run` demo table is real Lance too", async (t) => {
  const demo = path.join(binDir, "table_demo");
  if (!fs.existsSync(demo)) return t.skip("table_demo not built");
  const droot = path.join(root, "demo");
  execFileSync(demo, [droot], { encoding: "utf8" });
  const db = await lancedb.connect(path.join(droot, "tables"));
  const tb = await db.openTable("demo");
  for (const v of [1, 2, 3]) {
    await tb.checkout(v);
    const want = toolJsonLines("dump", droot, "demo", "--version", String(v));
    assert.equal(firstDiff(await lanceRows(tb), want), "", `demo version ${v}`);
  }
  tb.close();
});
