// summarize.mjs — turns the JSON lines of examples/bench_graph.c and kuzu_bench.mjs (one file
// per system, every load repetition and the query run) into the graph benchmark's summary:
// medians and our/Kùzu ratios, as aligned text and as the Markdown table docs/benchmarks.md
// records.  usage: node summarize.mjs OURS.jsonl KUZU.jsonl N
import fs from "node:fs";

function readLines(file) {
  return fs.readFileSync(file, "utf8").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}
function median(v) {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
}
const [oursFile, kuzuFile, n] = process.argv.slice(2);
const ours = readLines(oursFile), kuzu = readLines(kuzuFile);

const fmtInt = (x) => Math.round(x).toLocaleString("en-US");
const fmtUs = (x) => (x >= 10000 ? fmtInt(x / 1000) + " ms" : x >= 1000 ? (x / 1000).toFixed(2) + " ms" : x.toFixed(0) + " µs");
const rows = [];

const loads = (side) => side.filter((o) => o.phase === "load");
const oLoad = median(loads(ours).map((o) => o.records_per_s));
const kLoad = median(loads(kuzu).map((o) => o.records_per_s));
if (loads(ours).length && loads(kuzu).length) // coldstart.sh passes query runs only
  rows.push({
    what: `load ${fmtInt(Number(n))} nodes + ${fmtInt(5 * Number(n))} edges (records/s, median of ${loads(ours).length})`,
    ours: fmtInt(oLoad), kuzu: fmtInt(kLoad), ratio: oLoad / kLoad, note: "rate: > 1 = we load faster",
  });
if (loads(ours).length && loads(kuzu).length && loads(ours)[0].max_rss_kb && loads(kuzu)[0].max_rss_kb) {
  const o = median(loads(ours).map((x) => x.max_rss_kb)), k = median(loads(kuzu).map((x) => x.max_rss_kb));
  rows.push({ what: "peak RSS of the load process (median)", ours: fmtInt(o / 1024) + " MiB", kuzu: fmtInt(k / 1024) + " MiB",
    ratio: o / k, note: "" });
}
const opt = ours.find((o) => o.phase === "optimize");
if (opt)
  rows.push({
    what: `optimize after the load (${opt.fragments_before ? `${opt.fragments_before} -> ${opt.fragments_after} fragments` :
      "nothing to compact"}, graph indexes written)`,
    ours: opt.seconds.toFixed(2) + " s", kuzu: "-", ratio: NaN, note: "ours only: Kùzu's COPY builds its indexes",
  });
const LABEL = {
  lookup: "key lookup",
  hop1: "1-hop count",
  hop2: "2-hop count (distinct, <= 2)",
  hop3: "3-hop count (distinct, <= 3)",
  agg: "filter + aggregate + order",
};
for (const q of ["lookup", "hop1", "hop2", "hop3", "agg"]) {
  const o = ours.find((x) => x.query === q), k = kuzu.find((x) => x.query === q);
  if (!o || !k) continue;
  rows.push({
    what: `${LABEL[q]}, warm median (${o.samples} samples)`,
    ours: fmtUs(o.median_us), kuzu: fmtUs(k.median_us), ratio: o.median_us / k.median_us,
    note: "latency: > 1 = we are slower",
  });
  rows.push({
    what: `${LABEL[q]}, first call in the process`,
    ours: fmtUs(o.first_us), kuzu: fmtUs(k.first_us), ratio: o.first_us / k.first_us, note: "one sample",
  });
  if (o.first_cpu_us !== undefined && k.first_cpu_us !== undefined)
    rows.push({
      what: `${LABEL[q]}, first call, CPU time of the process`,
      ours: fmtUs(o.first_cpu_us), kuzu: fmtUs(k.first_cpu_us), ratio: o.first_cpu_us / k.first_cpu_us, note: "all threads",
    });
}
for (const q of ["lookup", "hop1", "hop2", "hop3", "agg"]) {
  const o = ours.find((x) => x.query === q), k = kuzu.find((x) => x.query === q);
  if (!o || !k || !o.peak_rss_kb || !k.peak_rss_kb) continue;
  rows.push({
    what: `peak RSS while ${q} ran (anon / file after it: ours ${fmtInt(o.rss_anon_kb / 1024)} / ${fmtInt(o.rss_file_kb / 1024)}, ` +
      `Kùzu ${fmtInt(k.rss_anon_kb / 1024)} / ${fmtInt(k.rss_file_kb / 1024)} MiB)`,
    ours: fmtInt(o.peak_rss_kb / 1024) + " MiB", kuzu: fmtInt(k.peak_rss_kb / 1024) + " MiB",
    ratio: o.peak_rss_kb / k.peak_rss_kb, note: "",
  });
}
const rss = (side) => Math.max(...side.filter((o) => o.max_rss_kb).map((o) => o.max_rss_kb));
rows.push({
  what: "peak RSS of the query process", ours: fmtInt(rss(ours.filter((o) => o.phase === "done")) / 1024) + " MiB",
  kuzu: fmtInt(rss(kuzu.filter((o) => o.phase === "done")) / 1024) + " MiB",
  ratio: rss(ours.filter((o) => o.phase === "done")) / rss(kuzu.filter((o) => o.phase === "done")), note: "",
});

const w = Math.max(...rows.map((r) => r.what.length));
console.log(`graph benchmark, N = ${fmtInt(Number(n))} (ratio = ours / Kùzu)`);
for (const r of rows)
  console.log(`  ${r.what.padEnd(w)}  ours ${r.ours.padStart(12)}  kuzu ${r.kuzu.padStart(12)}  ratio ${(isNaN(r.ratio) ? "-" : r.ratio.toFixed(2)).padStart(7)}  ${r.note}`);
console.log("\nMarkdown:\n");
console.log("| measurement | omnigraph-c | Kùzu 0.11.3 | ours / Kùzu |");
console.log("|---|---|---|---|");
for (const r of rows) console.log(`| ${r.what} | ${r.ours} | ${r.kuzu} | ${isNaN(r.ratio) ? "—" : `**${r.ratio.toFixed(2)}**`} |`);
