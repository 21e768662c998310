// defaults_lancedb.mjs — the LanceDB side of bench/search/defaults_run.sh (issue 35, docs/benchmarks.md
// "Search defaults"): the same documents as bench_fresh's (bench_hybrid gen: slug, Zipf text body,
// 64-d clustered vector), LanceDB 0.31 from tests/interop's lock file, in process.
//   node defaults_lancedb.mjs build DOCS.ndjson WORK
//       the table (slug, body, emb), an IVF_FLAT index on emb with LanceDB's default options
//       (the cheapest of its vector indexes to build; recall bounded only by its probes) and an
//       FTS index on body with its default options; one JSON line per step (wall and CPU s).
//   [LANCEDB_GT=GT.tsv] node defaults_lancedb.mjs query WORK QUERIES.tsv SHAPE [START] [WARM]
//       one fresh process: connect + open + the first query (SHAPE bm25 | nearest) timed from
//       after the module import, then the warm median of WARM (20) more after a warm-up pass,
//       at LanceDB's default search settings; with LANCEDB_GT (bench_fresh recall's exact top
//       10s) and START 1, recall@10 of nearest over the queries GT.tsv covers.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../../tests/interop/noop.js"));
const lancedb = require("@lancedb/lancedb");
const arrow = require("apache-arrow");
const DIM = 64, K = 10;
const now = () => Number(process.hrtime.bigint()) / 1e6;
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e3; };
const [cmd, ...args] = process.argv.slice(2);

if (cmd === "build") {
  const [docs, work] = args;
  let t0 = now(), c0 = cpu();
  const slugs = [], bodies = [];
  let emb = new Float32Array(1 << 20), n = 0;
  for await (const line of readline.createInterface({ input: fs.createReadStream(docs) })) {
    if (!line) continue;
    const d = JSON.parse(line).data;
    if (emb.length < (n + 1) * DIM) { const e = new Float32Array(emb.length * 2); e.set(emb); emb = e; }
    emb.set(d.emb, n * DIM);
    slugs.push(d.slug); bodies.push(d.body); n++;
  }
  const fsl = new arrow.FixedSizeList(DIM, new arrow.Field("item", new arrow.Float32(), true));
  const vec = arrow.makeData({ type: fsl, length: n, nullCount: 0,
    child: arrow.makeData({ type: new arrow.Float32(), length: n * DIM, data: emb.subarray(0, n * DIM) }) });
  const table = new arrow.Table({ slug: arrow.vectorFromArray(slugs, new arrow.Utf8()),
    body: arrow.vectorFromArray(bodies, new arrow.Utf8()), emb: arrow.makeVector(vec) });
  const db = await lancedb.connect(path.join(work, "lancedb"));
  const t = await db.createTable("docs", table, { mode: "overwrite" });
  console.log(JSON.stringify({ system: "lancedb", phase: "load", docs: n, wall_s: (now() - t0) / 1e3, cpu_s: (cpu() - c0) / 1e3 }));
  for (const [col, name, cfg] of [["emb", "ivf_flat", lancedb.Index.ivfFlat({ distanceType: "l2" })], ["body", "fts", lancedb.Index.fts()]]) {
    t0 = now(); c0 = cpu();
    await t.createIndex(col, { config: cfg, replace: true });
    console.log(JSON.stringify({ system: "lancedb", phase: "index", index: name, wall_s: (now() - t0) / 1e3, cpu_s: (cpu() - c0) / 1e3 }));
  }
} else if (cmd === "query") {
  const [work, qfile, shape, startS, warmS] = args;
  const start = Number(startS ?? 0), warm = Number(warmS ?? 20);
  const gtFile = start === 1 ? process.env.LANCEDB_GT : undefined;
    const qs = fs.readFileSync(qfile, "utf8").split("\n").filter(Boolean).map((l) => l.split("\t"));
  const w0 = now(), c0 = cpu();
  const db = await lancedb.connect(path.join(work, "lancedb"));
  const t = await db.openTable("docs");
  const run = async (i) => {
    const q = qs[i % qs.length];
    const b = shape === "bm25" ? t.query().fullTextSearch(q[2]).select(["slug", "_score"])
      : t.vectorSearch(q[3].split(",").map(Number)).distanceType("l2").select(["slug", "_distance"]);
    return (await b.limit(K).toArray()).map((r) => r.slug);
  };
  await run(start);
  const first_wall_ms = now() - w0, first_cpu_ms = cpu() - c0;
  for (let i = 0; i < warm; i++) await run(start + 1 + i);
  const lw = [], lc = [];
  for (let i = 0; i < warm; i++) {
    const a = now(), b = cpu();
    await run(start + 1 + i);
    lw.push(now() - a); lc.push(cpu() - b);
  }
  lw.sort((x, y) => x - y); lc.sort((x, y) => x - y);
  const out = { system: "lancedb", shape, first_wall_ms, first_cpu_ms, warm_wall_ms: lw[warm >> 1] ?? 0, warm_cpu_ms: lc[warm >> 1] ?? 0, warm };
  if (gtFile && shape === "nearest") {
    const gt = new Map();
    for (const l of fs.readFileSync(gtFile, "utf8").split("\n").filter(Boolean)) {
      const [q, s] = l.split("\t");
      if (!gt.has(+q)) gt.set(+q, new Set());
      gt.get(+q).add(s);
    }
    let hits = 0, total = 0;
    for (const [q, want] of gt) {
      for (const s of await run(q)) hits += want.has(s);
      total += want.size;
    }
    out.recall10 = hits / total;
    out.recall_queries = gt.size;
  }
  console.log(JSON.stringify(out));
} else {
  console.error("usage: defaults_lancedb.mjs build DOCS.ndjson WORK | query WORK QUERIES.tsv bm25|nearest [START] [WARM]");
  process.exit(2);
}
