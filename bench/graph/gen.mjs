// gen.mjs — deterministic graph generator for the graph benchmark (bench/graph/run.sh).
//
// usage: node gen.mjs OUTDIR [N]        (N nodes, default 1,000,000; exactly 5N edges)
//
// Writes, from one fixed seed (so every run and both systems see the same graph):
//   OUTDIR/graph.ndjson  nodes then edges, OmniGraph-C load envelopes (reference-language §6.1)
//   OUTDIR/nodes.csv     key,val,cat          (header line) for Kùzu COPY Node
//   OUTDIR/edges.csv     from,to              (header line) for Kùzu COPY Link
//   OUTDIR/starts.txt    100 start-node keys, one a line (the traversal and lookup inputs)
//   OUTDIR/params.json   {"n":N,"agg_lo":...,"agg_hi":...} the filter bounds of the aggregate
//
// Graph shape: node i has key "k" + i (zero-padded to 8 digits), val a pseudo-random int in
// [0, 1e6), cat one of 8 enum-like words drawn with a skew (alpha most frequent).  Every node
// has exactly 5 out-edges to 5 distinct other nodes (no self-loops, no parallel edges); half of
// the destinations are uniform, half skewed towards low ids (u^3), so some nodes are in-degree
// hubs.  Forward k-hop neighbourhoods therefore stay bounded (<= 5 + 25 + 125) while their
// overlap varies.
import fs from "node:fs";
import path from "node:path";

const CATS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];
const DEGREE = 5;
const STARTS = 100;

// xorshift128+ style 32-bit generator (xoshiro128**), seeded with fixed constants.
let s0 = 0x9e3779b9 | 0, s1 = 0x243f6a88 | 0, s2 = 0xb7e15162 | 0, s3 = 0x3c6ef372 | 0;
function next32() {
  const r = Math.imul(rotl(Math.imul(s1, 5), 7), 9);
  const t = s1 << 9;
  s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t; s3 = rotl(s3, 11);
  return r >>> 0;
}
function rotl(x, k) { return (x << k) | (x >>> (32 - k)); }
function uniform() { return next32() / 4294967296; }            // [0, 1)
function below(n) { return Math.floor(uniform() * n); }

function key(i) { return "k" + String(i).padStart(8, "0"); }

class Out {
  constructor(file) { this.fd = fs.openSync(file, "w"); this.parts = []; this.size = 0; }
  write(s) {
    this.parts.push(s); this.size += s.length;
    if (this.size >= 1 << 20) this.flush();
  }
  flush() { if (this.parts.length) fs.writeSync(this.fd, this.parts.join("")); this.parts = []; this.size = 0; }
  close() { this.flush(); fs.closeSync(this.fd); }
}

function main() {
  const dir = process.argv[2];
  const n = Number(process.argv[3] || 1000000);
  if (!dir || !Number.isInteger(n) || n < DEGREE + 2) {
    console.error("usage: node gen.mjs OUTDIR [N>=7]");
    process.exit(2);
  }
  fs.mkdirSync(dir, { recursive: true });
  for (let i = 0; i < 16; i++) next32();                        // burn in the seed

  const nd = new Out(path.join(dir, "graph.ndjson"));
  const nc = new Out(path.join(dir, "nodes.csv"));
  const ec = new Out(path.join(dir, "edges.csv"));
  nc.write("key,val,cat\n");
  ec.write("from,to\n");
  for (let i = 0; i < n; i++) {
    const k = key(i), val = below(1000000), cat = CATS[Math.floor(CATS.length * uniform() ** 2)];
    nd.write(`{"type":"Node","data":{"key":"${k}","val":${val},"cat":"${cat}"}}\n`);
    nc.write(`${k},${val},${cat}\n`);
  }
  nc.close();
  const dst = new Int32Array(DEGREE);
  for (let i = 0; i < n; i++) {
    const from = key(i);
    for (let e = 0; e < DEGREE; e++) {
      let d;
      for (;;) {
        d = e % 2 === 0 ? below(n) : Math.floor(n * uniform() ** 3);
        if (d === i) continue;
        let dup = false;
        for (let f = 0; f < e; f++) if (dst[f] === d) dup = true;
        if (!dup) break;
      }
      dst[e] = d;
      const to = key(d);
      nd.write(`{"edge":"Link","from":"${from}","to":"${to}"}\n`);
      ec.write(`${from},${to}\n`);
    }
  }
  nd.close();
  ec.close();

  const starts = [];
  const seen = new Set();
  while (starts.length < Math.min(STARTS, n)) {
    const i = below(n);
    if (!seen.has(i)) { seen.add(i); starts.push(key(i)); }
  }
  fs.writeFileSync(path.join(dir, "starts.txt"), starts.join("\n") + "\n");
  // The aggregate's filter keeps about a third of the nodes.
  fs.writeFileSync(path.join(dir, "params.json"), JSON.stringify({ n, agg_lo: 250000, agg_hi: 580000 }) + "\n");
  console.log(JSON.stringify({ nodes: n, edges: n * DEGREE, dir }));
}

main();
