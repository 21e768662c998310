// scaling.mjs — the graph benchmark's scaling series (bench/graph/run.sh --scaling; issue 36;
// docs/benchmarks.md "Scaling"): reads the JSON lines run.sh kept per size (OUT/ours-N.jsonl,
// OUT/kuzu-N.jsonl), and prints, per cost (each query kind's warm median, first call and its
// CPU, the query process's peak RSS, the load's time and peak RSS, ours' optimize and load +
// optimize against Kùzu's COPY), the value at every size, ours / Kùzu at every size, and the
// growth factor from the first size for both systems with their quotient (ours' growth / Kùzu's:
// the issue's rule is ≤ 1.25).  Writes OUT/scaling.tsv (growth factors, for scaling.gp) and
// OUT/scaling.md (the Markdown tables docs/benchmarks.md records).
// usage: node scaling.mjs OUT
import fs from "node:fs";
import path from "node:path";

const out = process.argv[2];
const readLines = (f) =>
  fs.readFileSync(f, "utf8").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
const sizes = fs.readdirSync(out)
  .map((f) => /^ours-(\d+)\.jsonl$/.exec(f))
  .filter((m) => m && fs.existsSync(path.join(out, `kuzu-${m[1]}.jsonl`)))
  .map((m) => Number(m[1]))
  .sort((a, b) => a - b);
if (sizes.length === 0) {
  console.error(`scaling.mjs: no ours-N.jsonl / kuzu-N.jsonl pairs in ${out}`);
  process.exit(1);
}
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};

// One number per (system, size, metric); undefined when a side does not measure it.
function metrics(lines, system) {
  const m = {};
  const loads = lines.filter((o) => o.phase === "load");
  if (loads.length) {
    m.load_s = median(loads.map((o) => o.seconds));
    m.load_rss_mib = median(loads.map((o) => o.max_rss_kb)) / 1024;
  }
  const opt = lines.find((o) => o.phase === "optimize");
  if (opt) m.optimize_s = opt.seconds;
  if (system === "ours" && m.load_s !== undefined) m.load_plus_index_s = m.load_s + (m.optimize_s ?? 0);
  if (system === "kuzu" && m.load_s !== undefined) m.load_plus_index_s = m.load_s; // COPY builds its indexes
  for (const q of ["lookup", "hop1", "hop2", "hop3", "agg"]) {
    const o = lines.find((x) => x.query === q);
    if (!o) continue;
    m[`${q}_warm_us`] = o.median_us;
    m[`${q}_first_us`] = o.first_us;
    if (o.first_cpu_us !== undefined) m[`${q}_first_cpu_us`] = o.first_cpu_us;
  }
  const done = lines.filter((o) => o.phase === "done" && o.max_rss_kb);
  if (done.length) m.query_rss_mib = Math.max(...done.map((o) => o.max_rss_kb)) / 1024;
  return m;
}

const data = sizes.map((n) => ({
  n,
  ours: metrics(readLines(path.join(out, `ours-${n}.jsonl`)), "ours"),
  kuzu: metrics(readLines(path.join(out, `kuzu-${n}.jsonl`)), "kuzu"),
}));
const LABEL = {
  lookup_warm_us: "key lookup, warm median", lookup_first_us: "key lookup, first call",
  lookup_first_cpu_us: "key lookup, first call CPU",
  hop1_warm_us: "1-hop, warm median", hop1_first_us: "1-hop, first call", hop1_first_cpu_us: "1-hop, first call CPU",
  hop2_warm_us: "2-hop, warm median", hop2_first_us: "2-hop, first call", hop2_first_cpu_us: "2-hop, first call CPU",
  hop3_warm_us: "3-hop, warm median", hop3_first_us: "3-hop, first call", hop3_first_cpu_us: "3-hop, first call CPU",
  agg_warm_us: "filter+agg+order, warm median", agg_first_us: "filter+agg+order, first call",
  agg_first_cpu_us: "filter+agg+order, first call CPU",
  query_rss_mib: "peak RSS, query process", load_s: "load (s)", load_rss_mib: "peak RSS, load process",
  optimize_s: "optimize after load (s, ours only)", load_plus_index_s: "load + index build (s; Kùzu: COPY)",
};
const keys = Object.keys(LABEL).filter((k) => data.some((d) => d.ours[k] !== undefined));
const fmt = (k, x) => {
  if (x === undefined || Number.isNaN(x)) return "—";
  if (k.endsWith("_us")) return x >= 10000 ? `${Math.round(x / 1000)} ms` : x >= 1000 ? `${(x / 1000).toFixed(2)} ms` : `${x.toFixed(0)} µs`;
  if (k.endsWith("_mib")) return `${Math.round(x)} MiB`;
  return `${x.toFixed(1)} s`;
};
const r2 = (x) => (x === undefined || !Number.isFinite(x) ? "—" : x.toFixed(2));
const N = (n) => (n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`);

const md = [];
md.push(`| cost | ${sizes.map((n) => `ours / Kùzu at ${N(n)}`).join(" | ")} | ${sizes.slice(1)
  .map((n) => `growth ${N(sizes[0])}→${N(n)}: ours, Kùzu (quotient)`).join(" | ")} |`);
md.push(`|---|${sizes.map(() => "---").join("|")}|${sizes.slice(1).map(() => "---").join("|")}|`);
const tsv = [["cost", ...sizes.slice(1).flatMap((n) => [`ours ${N(sizes[0])}→${N(n)}`, `Kùzu ${N(sizes[0])}→${N(n)}`])].join("\t")];
console.log(`graph benchmark scaling series, sizes ${sizes.map(N).join(", ")} (N nodes, 5N edges)`);
for (const k of keys) {
  const cells = data.map((d) => {
    const o = d.ours[k], q = d.kuzu[k];
    return q === undefined ? fmt(k, o) : `${fmt(k, o)} / ${fmt(k, q)} (**${r2(o / q)}**)`;
  });
  const grow = sizes.slice(1).map((_, i) => {
    const d0 = data[0], d = data[i + 1];
    const go = d.ours[k] / d0.ours[k], gk = d.kuzu[k] !== undefined ? d.kuzu[k] / d0.kuzu[k] : undefined;
    return { go, gk };
  });
  md.push(`| ${LABEL[k]} | ${cells.join(" | ")} | ${grow
    .map(({ go, gk }) => (gk === undefined ? `${r2(go)}×` : `${r2(go)}×, ${r2(gk)}× (**${r2(go / gk)}**)`)).join(" | ")} |`);
  tsv.push([LABEL[k], ...grow.flatMap(({ go, gk }) => [r2(go), gk === undefined ? "NaN" : r2(gk)])].join("\t"));
  console.log(`  ${LABEL[k].padEnd(38)} ${cells.map((c) => c.replace(/\*\*/g, "").padEnd(34)).join(" ")} growth ${grow
    .map(({ go, gk }) => `${r2(go)}x vs ${gk === undefined ? "-" : r2(gk) + "x"}`).join(", ")}`);
}
fs.writeFileSync(path.join(out, "scaling.tsv"), tsv.join("\n") + "\n");
fs.writeFileSync(path.join(out, "scaling.md"), md.join("\n") + "\n");
console.log(`\nMarkdown (also ${path.join(out, "scaling.md")}):\n`);
console.log(md.join("\n"));
