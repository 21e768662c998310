// The search playground: a ranked query built from the schema — BM25 over a text property,
// nearest over a vector property, or both fused by reciprocal rank (docs/search.md) — run
// through POST …/query like any other read, its score projected as a column.  The query it
// sends is shown, so the playground also teaches the .gq to write.
import { parseJson } from "./json.js";

// A property's declared type is text like "String? @index" or "Vector(3)? @embed(blurb)".
const isText = (p) => /^String\??(\s|$)/.test(p.type);
const vectorDim = (p) => { const m = p.type.match(/^Vector\((\d+)\)/); return m ? Number(m[1]) : 0; };
const isKey = (p) => /@key\b/.test(p.type);
const indexed = (p) => /@index\b/.test(p.type);

// The node types that can be searched, each with its text and vector properties (indexed
// text properties first: the ones the schema marks for search).
export function searchableTypes(schema) {
  const out = [];
  for (const t of schema.nodes) {
    const text = t.props.filter(isText).sort((a, b) => indexed(b) - indexed(a));
    const vector = t.props.filter((p) => vectorDim(p) > 0);
    if (text.length || vector.length) out.push({ name: t.name, text, vector, props: t.props });
  }
  return out;
}

export const modesOf = (t) => [
  ...(t.text.length ? ["bm25"] : []),
  ...(t.vector.length ? ["nearest"] : []),
  ...(t.text.length && t.vector.length ? ["rrf"] : []),
];

// The .gq of one search and its parameters.  `vector` is the text typed for the vector: a
// JSON list of numbers is a Vector(N) parameter, anything else a String the server embeds.
export function buildSearch({ type, mode, textProp, vectorProp, text, vector, limit }) {
  const t = type;
  const vp = t.vector.find((p) => p.name === vectorProp) || t.vector[0];
  const tp = t.text.find((p) => p.name === textProp) || t.text[0];
  const params = {}, decls = [];
  let score;
  const bm25 = () => `bm25($d.${tp.name}, $q)`;
  const near = () => `nearest($d.${vp.name}, $v)`;
  if (mode !== "nearest") { decls.push("$q: String"); params.q = text; }
  if (mode !== "bm25") {
    let v = null;
    try { v = parseJson(vector); } catch { v = null; }
    if (Array.isArray(v) && v.every((x) => typeof x === "number")) {
      decls.push(`$v: Vector(${vectorDim(vp)})`);
      params.v = v;
    } else {
      decls.push("$v: String");
      params.v = vector;
    }
  }
  if (mode === "bm25") score = bm25();
  else if (mode === "nearest") score = near();
  else score = `rrf(${near()}, ${bm25()})`;
  // the columns: the key, a name-like property, and the searched text
  const key = t.props.find(isKey);
  const cols = [];
  for (const p of [key, t.props.find((p) => p.name === "name"), t.props.find((p) => p.name === "title"), mode === "nearest" ? null : tp])
    if (p && !cols.includes(p.name)) cols.push(p.name);
  const order = mode === "nearest" ? score : `${score} desc`;
  const n = Math.max(1, Math.min(1000, Number(limit) || 10));
  const query = `query search_${mode}(${decls.join(", ")}) {
    match { $d: ${t.name} }
    return { ${[...cols.map((c) => `$d.${c}`), `${score} as score`].join(", ")} }
    order { ${order} }
    limit ${n}
}`;
  return { query, params };
}
