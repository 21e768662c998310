// sum.js — the per-run numbers of bench_graph query lines (DIR/{base,new}-N.jsonl) side by side, for docs/benchmarks.md "Scaling".
// usage: node sum.js DIR  -> per binary and query kind, each run's value joined by /
const fs=require("fs"),d=process.argv[2];
const runs={base:[],new:[]};
for(const f of fs.readdirSync(d)) { const m=f.match(/^(base|new)-\d+\.jsonl$/); if(!m) continue;
  const L=fs.readFileSync(d+"/"+f,"utf8").trim().split("\n").map(JSON.parse); runs[m[1]].push(L); }
const med=a=>{a=[...a].sort((x,y)=>x-y);return a.length%2?a[(a.length-1)/2]:(a[a.length/2-1]+a[a.length/2])/2};
for(const k of ["base","new"]) {
  console.log("##",k,"runs",runs[k].length);
  for(const q of ["lookup","hop1","hop2","hop3","agg"]) {
    const r=runs[k].map(L=>L.find(l=>l.query==q));
    const f=x=>r.map(x);
    console.log(q.padEnd(7),"warm med us",f(l=>l.median_us).join("/"),"| first cpu us",f(l=>l.first_cpu_us).join("/"),"| first us",f(l=>l.first_us).join("/"),"| anon MiB",f(l=>(l.rss_anon_kb/1024).toFixed(1)).join("/"),"| file MiB",f(l=>(l.rss_file_kb/1024).toFixed(1)).join("/"));
  }
  console.log("peak MiB", runs[k].map(L=>(L.find(l=>l.phase=="done").max_rss_kb/1024).toFixed(1)).join("/"));
}
