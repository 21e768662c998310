// lance_write_scan.mjs — the LanceDB side of the table benchmark (bench/run.sh): writes ROWS
// rows (id String, i64 Int64, f64 Float64, name String, vec FixedSizeList[128]<Float32>; the
// same values lance_tool bench-write writes) as one table version with Lance file format 2.0,
// then scans i64 and f64 of it, and prints one JSON line per phase like lance_tool does.
// Usage: node bench/lance_write_scan.mjs ROOT ROWS   (LanceDB from tests/interop/node_modules)
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../tests/interop/noop.js"));
const lancedb = require("@lancedb/lancedb");
const arrow = require("apache-arrow");

const [root, rowsArg] = process.argv.slice(2);
const ROWS = Number(rowsArg ?? 1000000);
const DIM = 128;

function buildTable() {
  const ids = new Array(ROWS), names = new Array(ROWS);
  const i64 = new BigInt64Array(ROWS), f64 = new Float64Array(ROWS), vec = new Float32Array(ROWS * DIM);
  for (let k = 0; k < ROWS; k++) {
    ids[k] = `id-${String(k).padStart(7, "0")}`;
    names[k] = `name ${k % 1000}`;
    i64[k] = BigInt(k);
    f64[k] = k * 0.5;
    for (let i = 0; i < DIM; i++) vec[k * DIM + i] = ((k + i) % 1000) / 1000;
  }
  const fsl = new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true));
  const vecData = arrow.makeData({
    type: fsl, length: ROWS, nullCount: 0,
    child: arrow.makeData({ type: new arrow.Float32(), length: ROWS * DIM, data: vec }),
  });
  return new arrow.Table({
    id: arrow.vectorFromArray(ids, new arrow.Utf8()),
    i64: arrow.makeVector(i64),
    f64: arrow.makeVector(f64),
    name: arrow.vectorFromArray(names, new arrow.Utf8()),
    vec: arrow.makeVector(vecData),
  });
}

const table = buildTable();
const db = await lancedb.connect(path.join(root, "tables"));
let t0 = process.hrtime.bigint();
const t = await db.createTable("lancedb_bench", table, {
  mode: "overwrite",
  storageOptions: { new_table_data_storage_version: "2.0" },
});
let dt = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ op: "write", rows: ROWS, seconds: dt, rows_per_s: Math.round(ROWS / dt) }));

t0 = process.hrtime.bigint();
const t2 = await db.openTable("lancedb_bench");
const res = await t2.query().select(["i64", "f64"]).toArrow();
let isum = 0n, fsum = 0, rows = 0;
for (const batch of res.batches) {
  const iv = batch.getChild("i64").data[0].values, fv = batch.getChild("f64").data[0].values;
  for (let r = 0; r < batch.numRows; r++) { isum += iv[r]; fsum += fv[r]; }
  rows += batch.numRows;
}
dt = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ op: "scan", rows, seconds: dt, rows_per_s: Math.round(rows / dt), i64_sum: String(isum), f64_sum: fsum }));
t.close();
t2.close();
