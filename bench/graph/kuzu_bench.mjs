// kuzu_bench.mjs — Kùzu's side of the graph benchmark (bench/graph/run.sh), Kùzu 0.11.3 for
// Node (pinned in bench/graph/package.json / package-lock.json).  Mirrors
// examples/bench_graph.c: the same phases, the same answers, the same output lines.
//
// usage:
//   node kuzu_bench.mjs load  DBPATH NODES.csv EDGES.csv
//       creates the schema, then times COPY Node FROM NODES.csv + COPY Link FROM EDGES.csv.
//   node kuzu_bench.mjs query DBPATH STARTS.txt LO HI RESULTS REPS
//       per query kind: the first call after the database opened ("first"), one untimed warm-up
//       pass (its answers go to RESULTS), REPS timed passes (the warm median); agg: once, then
//       10 x REPS timed runs.
//   node kuzu_bench.mjs first-after-write DBPATH delete|update|insert I KEY
//       one write (untimed), then the first hop1 from KEY of a freshly opened database.
//
// Every parameterised query is prepared once, outside the timings (our C API has no prepare
// step, so OmniGraph-C's numbers include compiling the query each call).  Each timing covers
// execute + getAll() (the rows materialised in JavaScript).  KUZU_BUFFER_MB sets the buffer
// pool (default 1024, the same budget bench_graph gives its cache); KUZU_THREADS the
// connection's thread count (default: Kùzu's own, all cores).
import fs from "node:fs";
import kuzu from "kuzu";

const bufferBytes = Number(process.env.KUZU_BUFFER_MB || 1024) * 1024 * 1024;
const threads = process.env.KUZU_THREADS ? Number(process.env.KUZU_THREADS) : undefined;

// The Cypher twins of bench/graph/graph.gq.  hopK: distinct nodes whose shortest forward
// distance from the start is 1..K — Kùzu's BFS-based SHORTEST recursive join reaches each
// destination once, and the start is excluded (the generator makes no self-loops, so only a
// cycle could bring it back).
const QUERIES = {
  lookup: "MATCH (n:Node {key: $k}) RETURN n.val AS val, n.cat AS cat",
  hop1: "MATCH (s:Node {key: $k})-[:Link]->(f:Node) RETURN count(DISTINCT f) AS n",
  hop2: "MATCH (s:Node {key: $k})-[:Link* SHORTEST 1..2]->(f:Node) WHERE f <> s RETURN count(DISTINCT f) AS n",
  hop3: "MATCH (s:Node {key: $k})-[:Link* SHORTEST 1..3]->(f:Node) WHERE f <> s RETURN count(DISTINCT f) AS n",
  agg:
    "MATCH (n:Node) WHERE n.val >= $lo AND n.val < $hi " +
    "RETURN n.cat AS cat, count(n) AS c, avg(n.val) AS a, max(n.val) AS m ORDER BY c DESC, cat ASC",
};

function nowUs() { return Number(process.hrtime.bigint()) / 1e3; }
function quantile(v, q) {
  if (!v.length) return 0;
  const s = [...v].sort((a, b) => a - b);
  return s[Math.round(q * (s.length - 1))];
}
function maxRssKb() { return process.resourceUsage().maxRSS; }
function open(path) {
  const db = new kuzu.Database(path, bufferBytes);
  const conn = threads ? new kuzu.Connection(db, threads) : new kuzu.Connection(db);
  return { db, conn };
}

async function load(dbPath, nodesCsv, edgesCsv) {
  const { db, conn } = open(dbPath);
  let t0 = nowUs();
  await conn.query("CREATE NODE TABLE Node(key STRING, val INT64, cat STRING, PRIMARY KEY (key))");
  await conn.query("CREATE REL TABLE Link(FROM Node TO Node)");
  const initMs = (nowUs() - t0) / 1e3;
  t0 = nowUs();
  await conn.query(`COPY Node FROM '${nodesCsv}' (HEADER=true)`);
  const t1 = nowUs();
  await conn.query(`COPY Link FROM '${edgesCsv}' (HEADER=true)`);
  const t2 = nowUs();
  const nodes = (await (await conn.query("MATCH (n:Node) RETURN count(*) AS c")).getAll())[0].c;
  const edges = (await (await conn.query("MATCH ()-[e:Link]->() RETURN count(*) AS c")).getAll())[0].c;
  await conn.close();
  await db.close();
  const records = Number(nodes) + Number(edges);
  const s = (t2 - t0) / 1e6;
  console.log(JSON.stringify({
    system: "kuzu", phase: "load", records, init_ms: +initMs.toFixed(1), seconds: +s.toFixed(3),
    nodes_s: +((t1 - t0) / 1e6).toFixed(3), edges_s: +((t2 - t1) / 1e6).toFixed(3),
    records_per_s: Math.round(records / s), max_rss_kb: maxRssKb(),
  }));
}

function line(name, key, row) {
  if (!row) return `${name} ${key ?? "-"} none`;
  if (name === "lookup") return `lookup ${key} ${row.val} ${row.cat}`;
  if (name === "agg") return `agg ${row.cat} ${row.c} ${Number(row.a).toFixed(3)} ${row.m}`;
  return `${name} ${key} ${row.n}`;
}

async function query(dbPath, startsPath, lo, hi, resultsPath, reps) {
  const keys = fs.readFileSync(startsPath, "utf8").split("\n").filter(Boolean);
  const out = [];
  let t0 = nowUs();
  const { db, conn } = open(dbPath);
  await db.init();
  console.log(JSON.stringify({ system: "kuzu", phase: "open", ms: +((nowUs() - t0) / 1e3).toFixed(2) }));
  const prepared = {};
  for (const [name, text] of Object.entries(QUERIES)) prepared[name] = await conn.prepare(text);

  async function runOne(name, params, key, record) {
    const start = nowUs();
    const res = await conn.execute(prepared[name], params);
    const rows = await res.getAll();
    const us = nowUs() - start;
    if (record) {
      if (!rows.length) out.push(line(name, key, null));
      for (const r of rows) out.push(line(name, key, r));
    }
    return us;
  }
  // CPU of the whole process (every thread) during a call, µs
  const cpuUs = () => { const c = process.cpuUsage(); return c.user + c.system; };
  // Memory per query kind, as examples/bench_graph.c reports it: the peak RSS while the kind
  // ran (VmHWM, reset after each kind through /proc/self/clear_refs), and the anonymous and
  // file-backed RSS right after it (Linux; absent elsewhere).
  let peakKb = 0;
  function mem() {
    try {
      const st = fs.readFileSync("/proc/self/status", "utf8");
      const kb = (k) => Number((st.match(new RegExp(`^${k}:\\s+(\\d+)`, "m")) || [])[1] || 0);
      return { peak_rss_kb: kb("VmHWM"), rss_anon_kb: kb("RssAnon"), rss_file_kb: kb("RssFile") };
    } catch { return {}; }
  }
  function report(name, first, samples, firstCpu) {
    const m = mem();
    if (m.peak_rss_kb > peakKb) peakKb = m.peak_rss_kb;
    console.log(JSON.stringify({
      system: "kuzu", query: name, first_us: +first.toFixed(1), first_cpu_us: +firstCpu.toFixed(1), samples: samples.length,
      median_us: +quantile(samples, 0.5).toFixed(1), p90_us: +quantile(samples, 0.9).toFixed(1), ...m,
    }));
    try { fs.writeFileSync("/proc/self/clear_refs", "5"); } catch { /* not Linux: one peak */ }
  }

  for (const name of ["lookup", "hop1", "hop2", "hop3"]) {
    let first = 0, firstCpu = 0;
    const samples = [];
    for (let pass = -1; pass < reps; pass++) {
      for (let i = 0; i < keys.length; i++) {
        const c0 = cpuUs();
        const us = await runOne(name, { k: keys[i] }, keys[i], pass === -1);
        if (pass === -1 && i === 0) first = us, firstCpu = cpuUs() - c0;
        if (pass >= 0) samples.push(us);
      }
    }
    report(name, first, samples, firstCpu);
  }
  const aggParams = { lo: Number(lo), hi: Number(hi) };
  const c0 = cpuUs();
  const first = await runOne("agg", aggParams, null, true);
  const firstCpu = cpuUs() - c0;
  const samples = [];
  for (let pass = 0; pass < 10 * reps; pass++) samples.push(await runOne("agg", aggParams, null, false));
  report("agg", first, samples, firstCpu);
  console.log(JSON.stringify({ system: "kuzu", phase: "done", max_rss_kb: Math.max(maxRssKb(), peakKb) }));
  fs.writeFileSync(resultsPath, out.join("\n") + "\n");
  await conn.close();
  await db.close();
}

// One write (untimed; the database closed after it), then the first hop1 from `key` of a new
// Database in this process, as bench/graph/delta.sh measures ours on a branch one write past
// the optimized head: the same kinds (delete a node with its edges, update one property, insert
// one edge), keys from `i`.
const WRITES = {
  delete: ["MATCH (n:Node {key: $k}) DETACH DELETE n", (i) => ({ k: `k0000002${i}` })],
  update: ["MATCH (n:Node {key: $k}) SET n.val = 7", (i) => ({ k: `k0000003${i}` })],
  insert: ["MATCH (a:Node {key: $a}), (b:Node {key: $b}) CREATE (a)-[:Link]->(b)", (i) => ({ a: `k0000004${i}`, b: "k00000001" })],
};

async function firstAfterWrite(dbPath, kind, i, key) {
  if (!WRITES[kind]) throw new Error(`unknown write ${kind}`);
  let { db, conn } = open(dbPath);
  await db.init();
  const w = await conn.prepare(WRITES[kind][0]);
  await (await conn.execute(w, WRITES[kind][1](i))).getAll();
  await conn.close();
  await db.close();
  ({ db, conn } = open(dbPath));
  await db.init();
  const hop1 = await conn.prepare(QUERIES.hop1);
  const cpu0 = process.cpuUsage(), t0 = nowUs();
  const rows = await (await conn.execute(hop1, { k: key })).getAll();
  const us = nowUs() - t0, cpu = process.cpuUsage(cpu0);
  fs.writeSync(1, JSON.stringify({
    system: "kuzu", phase: "first_after_write", write: kind, key, n: Number(rows[0]?.n ?? 0),
    first_us: +us.toFixed(1), first_cpu_us: cpu.user + cpu.system, max_rss_kb: maxRssKb(),
  }) + "\n");
  // (closing a reopened database crashes kuzu 0.11.3's Node binding: the write is durable since
  // the first close, and a read-only reopen has nothing to flush)
  process.exit(0);
}

// The twins of bench/graph/patterns.gq (patterns.sh): whole-graph counts of 2-paths, triangles
// and 4-cycles.  Cypher never repeats an edge within a MATCH; the generator makes no self-loops
// or parallel edges, so 2-paths and triangles are the same counts as ours, while a 4-cycle
// a->b->a->b->a (two mutual edges) is counted by us and not by Cypher: patterns.sh compares
// the first two only.
const PATTERNS = {
  two_paths: "MATCH (a:Node)-[:Link]->(b:Node)-[:Link]->(c:Node) RETURN count(*) AS n",
  triangles: "MATCH (a:Node)-[:Link]->(b:Node)-[:Link]->(c:Node)-[:Link]->(a) RETURN count(*) AS n",
  four_cycles: "MATCH (a:Node)-[:Link]->(b:Node)-[:Link]->(c:Node)-[:Link]->(d:Node)-[:Link]->(a) RETURN count(*) AS n",
};

async function patterns(dbPath, reps) {
  const { db, conn } = open(dbPath);
  await db.init();
  for (const [name, cypher] of Object.entries(PATTERNS)) {
    if (process.env.OG_BENCH_ONLY && process.env.OG_BENCH_ONLY !== name) continue;
    const stmt = await conn.prepare(cypher);
    const samples = [], cpus = [];
    let first = 0, firstCpu = 0, count = -1;
    for (let pass = -1; pass < reps; pass++) {
      const cpu0 = process.cpuUsage(), t0 = nowUs();
      const rows = await (await conn.execute(stmt, {})).getAll();
      const us = nowUs() - t0;
      count = Number(rows[0].n);
      const c = process.cpuUsage(cpu0);
      if (pass < 0) {
        first = us;
        firstCpu = c.user + c.system;
      } else samples.push(us), cpus.push(c.user + c.system);
    }
    fs.writeSync(1, JSON.stringify({
      system: "kuzu", query: name, count, first_us: +first.toFixed(1), first_cpu_us: firstCpu,
      samples: reps, median_us: +quantile(samples, 0.5).toFixed(1), median_cpu_us: quantile(cpus, 0.5),
    }) + "\n");
  }
  await conn.close();
  await db.close();
}

const [mode, ...args] = process.argv.slice(2);
if (mode === "load" && args.length === 3) await load(...args);
else if (mode === "query" && args.length === 6) await query(args[0], args[1], args[2], args[3], args[4], Math.max(1, Number(args[5])));
else if (mode === "first-after-write" && args.length === 4) await firstAfterWrite(...args);
else if (mode === "patterns" && args.length === 2) await patterns(args[0], Math.max(1, Number(args[1])));
else {
  console.error("usage: node kuzu_bench.mjs load DBPATH NODES.csv EDGES.csv\n" +
    "       node kuzu_bench.mjs query DBPATH STARTS.txt LO HI RESULTS REPS\n" +
    "       node kuzu_bench.mjs first-after-write DBPATH delete|update|insert I KEY\n" +
    "       node kuzu_bench.mjs patterns DBPATH REPS");
  process.exit(2);
}
