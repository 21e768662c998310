// vector_lancedb.mjs — the LanceDB 0.31 side of the vector benchmark (bench/search/vector_run.sh):
// loads DIR/base.f32 (N x 128 float32) as a table, times the index build (IVF_FLAT, IVF_HNSW_SQ,
// IVF_PQ), and for DIR/queries.f32 reports the median top-10 latency of a warm pass (after
// one warm-up pass) and recall@10 against DIR/gt.u32, exact (bypassVectorIndex, over the first
// $LANCEDB_EXACT_QUERIES = 20 queries: it is slow) and through each index.  One JSON object per line, like bench_vector does.
// Usage: node bench/search/vector_lancedb.mjs DIR WORK   (LanceDB from tests/interop/node_modules)
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../../tests/interop/noop.js"));
const lancedb = require("@lancedb/lancedb");
const arrow = require("apache-arrow");

const [dir, work] = process.argv.slice(2);
const DIM = 128, K = 10;
const f32 = (name) => { const b = fs.readFileSync(path.join(dir, name)); return new Float32Array(b.buffer, b.byteOffset, b.length / 4); };
const base = f32("base.f32"), qs = f32("queries.f32");
const gtb = fs.readFileSync(path.join(dir, "gt.u32")), gt = new Uint32Array(gtb.buffer, gtb.byteOffset, gtb.length / 4);
const N = base.length / DIM, Q = qs.length / DIM;
const exactQueries = Math.min(Q, Number(process.env.LANCEDB_EXACT_QUERIES ?? 20));

const fsl = new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true));
const vecData = arrow.makeData({ type: fsl, length: N, nullCount: 0,
  child: arrow.makeData({ type: new arrow.Float32(), length: N * DIM, data: base }) });
const rowid = new Int32Array(N);
for (let i = 0; i < N; i++) rowid[i] = i;
const table = new arrow.Table({ row: arrow.makeVector(rowid), vector: arrow.makeVector(vecData) });

const now = () => Number(process.hrtime.bigint()) / 1e6;
const db = await lancedb.connect(path.join(work, "lancedb"));
// LANCEDB_QUERY_ONLY=1: the table and its index from an earlier run in WORK, only the ANN passes
// of the first type in $LANCEDB_INDEXES (to time both systems' queries back to back).
const queryOnly = process.env.LANCEDB_QUERY_ONLY === "1";
let t0 = now();
const t = queryOnly ? await db.openTable("vec") : await db.createTable("vec", table, { mode: "overwrite" });
if (!queryOnly) console.log(JSON.stringify({ system: "lancedb", phase: "load", n: N, seconds: (now() - t0) / 1e3 }));

async function pass(mk, nq) {
  const lat = [];
  let hits = 0;
  for (let j = 0; j < nq; j++) {
    const q = Array.from(qs.subarray(j * DIM, (j + 1) * DIM));
    const s = now();
    const rows = await mk(t.vectorSearch(q).distanceType("l2").select(["row", "_distance"]).limit(K)).toArray();
    lat.push(now() - s);
    const want = new Set(gt.subarray(j * K, (j + 1) * K));
    for (const r of rows) if (want.has(r.row)) hits++;
  }
  const first = lat[0];
  lat.sort((a, b) => a - b);
  return { median_ms: lat[nq >> 1], recall10: hits / (nq * K), queries: nq, first_ms: first };
}
// The warm-up pass's first query and median are reported too: in a fresh process
// (LANCEDB_QUERY_ONLY=1) its first query is the one that opens the index.
async function measure(phase, mk, nq = Q) {
  const w = await pass(mk, nq);
  const r = await pass(mk, nq);
  console.log(JSON.stringify({ system: "lancedb", phase, median_ms: r.median_ms, recall10: r.recall10, queries: nq,
    first_ms: w.first_ms, first_pass_median_ms: w.median_ms }));
}

if (!queryOnly) await measure("exact", (q) => q.bypassVectorIndex(), exactQueries);
// $LANCEDB_PARTITIONS IVF partitions (default sqrt(N)/4); $LANCEDB_INDEXES the index types to
// build, comma-separated, in order (default all three).  IVF_FLAT has the cheapest build (k-means
// and one pass assigning rows: no quantizer training, no graph) and its recall is bounded only
// by nprobes, so it is LanceDB's fastest-built index that reaches recall 0.95.
const parts = Number(process.env.LANCEDB_PARTITIONS ?? Math.max(1, Math.round(Math.sqrt(N) / 4)));
const wanted = (process.env.LANCEDB_INDEXES ?? "ivf_flat,ivf_hnsw_sq,ivf_pq").split(",");
const configs = [
  ["ivf_flat", () => lancedb.Index.ivfFlat({ distanceType: "l2", numPartitions: parts }),
    [["nprobes", 5], ["nprobes", 10], ["nprobes", 20]]],
  // $LANCEDB_HNSW_PARTITIONS: IVF partitions of IVF_HNSW_SQ (default 1: one graph; "auto" lets
  // LanceDB choose, as a user who passes no option gets).
  ["ivf_hnsw_sq", () => lancedb.Index.hnswSq({ distanceType: "l2",
    ...(process.env.LANCEDB_HNSW_PARTITIONS === "auto" ? {} : { numPartitions: Number(process.env.LANCEDB_HNSW_PARTITIONS ?? 1) }) }),
    [["ef", 64], ["ef", 128]]],
  ["ivf_pq", () => lancedb.Index.ivfPq({ distanceType: "l2", numPartitions: parts, numSubVectors: 16 }),
    [["nprobes", 20, 10], ["nprobes", 50, 10], ["nprobes", 20, 50]]],
].filter(([name]) => wanted.includes(name));
for (const [name, config, settings] of configs) {
  if (queryOnly) {
    for (const [knob, v, refine] of settings)
      await measure(`ann ${name} ${knob}=${v}${refine ? ` refine=${refine}` : ""}`,
        (q) => { q = knob === "ef" ? q.ef(v) : q.nprobes(v); return refine ? q.refineFactor(refine) : q; });
    break;
  }
  t0 = now();
  const c0 = process.cpuUsage(); // every thread of the process: LanceDB builds on its own pool
  await t.createIndex("vector", { config: config(), replace: true });
  const c1 = process.cpuUsage(c0);
  console.log(JSON.stringify({ system: "lancedb", phase: "index", index: name, partitions: parts, seconds: (now() - t0) / 1e3,
    cpu_seconds: (c1.user + c1.system) / 1e6 }));
  for (const [knob, v, refine] of settings) {
    await measure(`ann ${name} ${knob}=${v}${refine ? ` refine=${refine}` : ""}`,
      (q) => { q = knob === "ef" ? q.ef(v) : q.nprobes(v); return refine ? q.refineFactor(refine) : q; });
  }
}
