// summarize.mjs — the bulk-load benchmark's summary (bench/load/run.sh): medians of each
// system's load seconds and peak RSS, ours / Kùzu per round and of the medians, where our load
// time goes (stages), the first queries after the load alone, and load.tsv for load.gp.
// usage: node summarize.mjs OURS.jsonl KUZU.jsonl N OUT.tsv
import fs from "node:fs";

const lines = (f) => fs.readFileSync(f, "utf8").split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const [oursFile, kuzuFile, n, tsv] = process.argv.slice(2);
const ours = lines(oursFile), kuzu = lines(kuzuFile);
const nd = ours.filter((o) => o.phase === "load"), csv = ours.filter((o) => o.phase === "load_csv");
const ku = kuzu.filter((o) => o.phase === "load");
const mib = (kb) => (kb / 1024).toFixed(0) + " MiB";
const sec = (s) => s.toFixed(2) + " s";
const ratio = (a, b) => (a / b).toFixed(2);
const cpu = (side, label) => side.filter((o) => o.cpu === label).map((o) => o.cpu_s);
const perRound = (side) => side.map((o, i) => (ku[i] ? ratio(o.seconds, ku[i].seconds) : "-")).join(" / ");

const rows = [
  ["time to a graph at full speed (median of " + ku.length + "; Kùzu: COPY)", "NDJSON", sec(median(nd.map((o) => o.seconds))),
    sec(median(ku.map((o) => o.seconds))), ratio(median(nd.map((o) => o.seconds)), median(ku.map((o) => o.seconds)))],
  ["", "CSV", sec(median(csv.map((o) => o.seconds))), "", ratio(median(csv.map((o) => o.seconds)), median(ku.map((o) => o.seconds)))],
  ["ours / Kùzu in each round", "NDJSON", perRound(nd), "", ""],
  ["", "CSV", perRound(csv), "", ""],
  ["CPU seconds of the load process, all threads (median)", "NDJSON", sec(median(cpu(ours, "ndjson"))), sec(median(cpu(kuzu, "kuzu"))),
    ratio(median(cpu(ours, "ndjson")), median(cpu(kuzu, "kuzu")))],
  ["", "CSV", sec(median(cpu(ours, "csv"))), "", ratio(median(cpu(ours, "csv")), median(cpu(kuzu, "kuzu")))],
  ["peak RSS of the load process (median)", "NDJSON", mib(median(nd.map((o) => o.max_rss_kb))), mib(median(ku.map((o) => o.max_rss_kb))),
    ratio(median(nd.map((o) => o.max_rss_kb)), median(ku.map((o) => o.max_rss_kb)))],
  ["", "CSV", mib(median(csv.map((o) => o.max_rss_kb))), "", ratio(median(csv.map((o) => o.max_rss_kb)), median(ku.map((o) => o.max_rss_kb)))],
];
console.log(`\nN = ${Number(n).toLocaleString("en-US")} nodes, ${(5 * Number(n)).toLocaleString("en-US")} edges`);
console.log("| measurement | input | omnigraph-c | Kùzu 0.11.3 | ours / Kùzu |\n|---|---|---|---|---|");
for (const r of rows) console.log(`| ${r.join(" | ")} |`);

const stages = [["read_s", "read + stage"], ["validate_s", "validate"], ["write_publish_s", "write + publish"], ["index_s", "graph + text indexes"]];
console.log("\nwhere the time goes (medians, s): " +
  ["NDJSON", "CSV"].map((k, j) => k + ": " + stages.map(([f, l]) => `${l} ${median((j ? csv : nd).map((o) => o[f])).toFixed(2)}`).join(", ")).join("; ") +
  `; Kùzu: COPY Node ${median(ku.map((o) => o.nodes_s)).toFixed(2)}, COPY Link ${median(ku.map((o) => o.edges_s)).toFixed(2)}`);

const kinds = ["lookup", "hop1", "hop2", "hop3", "agg"];
const q = (side, from) => Object.fromEntries(side.filter((o) => o.query && (!from || o.from === from)).map((o) => [o.query, o]));
const qn = q(ours, "ndjson"), qc = q(ours, "csv"), qk = q(kuzu);
const us = (x) => (x >= 1000 ? (x / 1000).toFixed(2) + " ms" : x.toFixed(0) + " µs");
console.log("\nqueries right after the load, no optimize: first call / warm median");
console.log("| query | after NDJSON load | after CSV load | Kùzu |\n|---|---|---|---|");
for (const k of kinds)
  if (qn[k] && qk[k])
    console.log(`| ${k} | ${us(qn[k].first_us)} / ${us(qn[k].median_us)} | ${qc[k] ? us(qc[k].first_us) + " / " + us(qc[k].median_us) : "-"} | ${us(qk[k].first_us)} / ${us(qk[k].median_us)} |`);

// load.tsv: one bar per system (the medians), stacked by stage
const cols = ["read + stage", "validate", "write + publish", "graph + text indexes", "COPY Node", "COPY Link"];
const bar = (label, side, kz) => [label, ...stages.map(([f]) => (kz ? 0 : median(side.map((o) => o[f])))),
  kz ? median(ku.map((o) => o.nodes_s)) : 0, kz ? median(ku.map((o) => o.edges_s)) : 0];
const out = [["system", ...cols], bar("ours, NDJSON", nd, false), bar("ours, CSV", csv, false), bar("Kùzu COPY", ku, true)];
fs.writeFileSync(tsv, out.map((r) => r.map((x) => (typeof x === "number" ? x.toFixed(3) : x)).join("\t")).join("\n") + "\n");
