// vector_kuzu.mjs — the Kùzu 0.11.3 side of the vector benchmark (bench/search/vector_run.sh),
// with its vector extension (statically linked in the npm build, so it needs no download):
// COPY of DIR/base.f32 (as .npy columns), CREATE_VECTOR_INDEX (HNSW, l2; timed), then for
// DIR/queries.f32 the median top-10 latency of a warm pass (after one warm-up pass) and
// recall@10 against DIR/gt.u32, exact (ORDER BY array_squared_distance) and through the index.
// Usage: node bench/search/vector_kuzu.mjs DIR WORK   (Kùzu from bench/graph/node_modules)
// KUZU_REUSE=1 with an existing WORK/kuzu.db runs the index queries only.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../graph/noop.js"));
const kuzu = require("kuzu");

const [dir, work] = process.argv.slice(2);
const DIM = 128, K = 10;
const f32 = (name) => { const b = fs.readFileSync(path.join(dir, name)); return new Float32Array(b.buffer, b.byteOffset, b.length / 4); };
const base = f32("base.f32"), qs = f32("queries.f32");
const gtb = fs.readFileSync(path.join(dir, "gt.u32")), gt = new Uint32Array(gtb.buffer, gtb.byteOffset, gtb.length / 4);
const N = base.length / DIM, Q = qs.length / DIM;
const exactQueries = Math.min(Q, Number(process.env.KUZU_EXACT_QUERIES ?? 20));

// .npy v1.0 files for COPY ... BY COLUMN
function npy(file, descr, shape, bytes) {
  let h = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  while ((10 + h.length + 1) % 64) h += " ";
  h += "\n";
  const head = Buffer.alloc(10);
  head.write("\x93NUMPY", 0, "latin1");
  head[6] = 1; head[7] = 0; head.writeUInt16LE(h.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(h, "latin1"), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]));
}
const reuse = process.env.KUZU_REUSE === "1" && fs.existsSync(path.join(work, "kuzu.db"));
fs.mkdirSync(work, { recursive: true });
const ids = new BigInt64Array(N);
for (let i = 0; i < N; i++) ids[i] = BigInt(i);
npy(path.join(work, "id.npy"), "<i8", [N], ids);
npy(path.join(work, "emb.npy"), "<f4", [N, DIM], base);

const now = () => Number(process.hrtime.bigint()) / 1e6;
const db = new kuzu.Database(path.join(work, "kuzu.db"));
const c = new kuzu.Connection(db);
let t0 = now();
if (!reuse) {
  await c.query(`CREATE NODE TABLE V(id INT64 PRIMARY KEY, emb FLOAT[${DIM}])`);
  await c.query(`COPY V FROM ("${path.join(work, "id.npy")}", "${path.join(work, "emb.npy")}") BY COLUMN`);
  console.log(JSON.stringify({ system: "kuzu", phase: "load", n: N, seconds: (now() - t0) / 1e3 }));
}

async function pass(stmt, nq) {
  const lat = [];
  let hits = 0;
  for (let j = 0; j < nq; j++) {
    const q = Array.from(qs.subarray(j * DIM, (j + 1) * DIM));
    const s = now();
    const rows = await (await c.execute(stmt, { q })).getAll();
    lat.push(now() - s);
    const want = new Set(gt.subarray(j * K, (j + 1) * K));
    for (const r of rows) if (want.has(Number(r.id))) hits++;
  }
  lat.sort((a, b) => a - b);
  return { median_ms: lat[nq >> 1], recall10: hits / (nq * K), queries: nq };
}
async function measure(phase, text, nq) {
  const stmt = await c.prepare(text);
  await pass(stmt, nq);
  console.log(JSON.stringify({ system: "kuzu", phase, ...(await pass(stmt, nq)) }));
}

if (!reuse) await measure("exact", `MATCH (v:V) RETURN v.id AS id ORDER BY array_squared_distance(v.emb, CAST($q AS FLOAT[${DIM}])) LIMIT ${K}`, exactQueries);
if (!reuse) {
  t0 = now();
  await c.query(`CALL CREATE_VECTOR_INDEX('V', 'v_idx', 'emb', metric := 'l2')`);
  console.log(JSON.stringify({ system: "kuzu", phase: "index", index: "hnsw", seconds: (now() - t0) / 1e3 }));
}
for (const efs of [64, 200])
  await measure(`ann hnsw efs=${efs}`,
    `CALL QUERY_VECTOR_INDEX('V', 'v_idx', $q, ${K}, efs := ${efs}) RETURN node.id AS id`, Q);
