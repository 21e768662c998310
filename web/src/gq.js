// The .gq query language for the editor: highlighting (a stream tokenizer: the language is
// small and line-local enough that a full grammar buys nothing here), completion from the
// graph's schema, and a light reading of a query's match clause for the graph view.
import { StreamLanguage } from "@codemirror/language";

// docs/query-language.md, docs/search.md (the same list the shell completes)
export const KEYWORDS = [
  "query", "match", "return", "order", "limit", "insert", "update", "delete", "set", "where",
  "not", "and", "or", "is", "null", "true", "false", "as", "asc", "desc", "in", "exists",
];
export const FUNCTIONS = [
  "count", "sum", "avg", "min", "max", "contains", "starts_with", "now", "date", "datetime",
  "search", "fuzzy", "match_text", "bm25", "nearest", "rrf", "upper", "lower",
];
const KW = new Set(KEYWORDS);
const FN = new Set(FUNCTIONS);

export const gqLanguage = StreamLanguage.define({
  name: "gq",
  token(stream) {
    if (stream.eatSpace()) return null;
    if (stream.match("//")) { stream.skipToEnd(); return "comment"; }
    if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return "string";
    if (stream.match(/^\$[A-Za-z_][\w]*/)) return "variableName";
    if (stream.match(/^@[A-Za-z_]\w*/)) return "meta";
    if (stream.match(/^-?\d+(\.\d+)?([eE][+-]?\d+)?/)) return "number";
    const w = stream.match(/^[A-Za-z_][\w-]*/);
    if (w) {
      const word = w[0];
      if (KW.has(word)) return word === "true" || word === "false" || word === "null" ? "atom" : "keyword";
      if (FN.has(word)) return "function(variableName)";
      if (/^[A-Z]/.test(word)) return "typeName";
      return "propertyName";
    }
    if (stream.match(/^[{}()[\]]/)) return "bracket";
    if (stream.match(/^(>=|<=|!=|=|<|>|\+|-|\*|\/|:|,|\.)/)) return "operator";
    stream.next();
    return null;
  },
  languageData: { commentTokens: { line: "//" } },
});

// A schema's types as the studio needs them: read from the .pg source GET …/schema returns.
export function parseSchema(src) {
  const nodes = [], edges = [];
  const text = src.replace(/\/\/[^\n]*/g, "");
  const re = /\b(node|edge|interface)\s+([A-Za-z_]\w*)\s*(?::\s*([A-Za-z_]\w*)\s*->\s*([A-Za-z_]\w*))?([^{]*)\{/g;
  const ifaces = {};
  let m;
  while ((m = re.exec(text))) {
    let depth = 1, i = re.lastIndex;
    while (i < text.length && depth) { if (text[i] === "{") depth++; else if (text[i] === "}") depth--; i++; }
    const body = text.slice(re.lastIndex, i - 1);
    const props = [];
    for (const line of body.split("\n")) {
      const p = line.match(/^\s*([A-Za-z_]\w*)\s*:\s*(.+?)\s*$/);
      if (p) props.push({ name: p[1], type: p[2] });
    }
    const t = { kind: m[1], name: m[2], props };
    const impl = (m[5] || "").match(/\bimplements\s+([\w\s,]+)/);
    if (impl) t.implements = impl[1].split(",").map((x) => x.trim()).filter(Boolean);
    if (m[1] === "edge") { t.from = m[3]; t.to = m[4]; edges.push(t); } else if (m[1] === "node") nodes.push(t); else ifaces[t.name] = t;
    re.lastIndex = i;
  }
  // an interface's properties belong to every node that implements it
  for (const n of nodes) for (const i of n.implements || []) if (ifaces[i]) n.props.push(...ifaces[i].props.filter((p) => !n.props.some((q) => q.name === p.name)));
  // an edge without a body (`edge Cites: Book -> Book`)
  const bare = /\bedge\s+([A-Za-z_]\w*)\s*:\s*([A-Za-z_]\w*)\s*->\s*([A-Za-z_]\w*)/g;
  while ((m = bare.exec(text))) if (!edges.some((e) => e.name === m[1])) edges.push({ kind: "edge", name: m[1], from: m[2], to: m[3], props: [] });
  return { nodes, edges };
}

// Traversal names are the edge type with a lower-case first letter (`$a wrote $b`).
export const traversalName = (edge) => edge.charAt(0).toLowerCase() + edge.slice(1);

// `$v: Type` bindings of a query text.
export function bindings(text) {
  const out = {};
  for (const m of text.matchAll(/\$([A-Za-z_]\w*)\s*:\s*([A-Z]\w*)/g)) out[m[1]] = m[2];
  return out;
}

// Completion from the schema: keywords, functions, types, traversals; after `$v.` the
// properties of v's type (every property when v's type is not written in the text).
export function schemaCompletion(getSchema) {
  return (ctx) => {
    const schema = getSchema();
    const prop = ctx.matchBefore(/\$[A-Za-z_]\w*\.[\w@]*/);
    if (prop) {
      const v = prop.text.slice(1, prop.text.indexOf("."));
      const type = bindings(ctx.state.doc.toString())[v];
      const all = [...schema.nodes, ...schema.edges];
      const types = all.filter((t) => !type || t.name === type);
      const seen = new Set();
      const options = [];
      for (const t of types) for (const p of t.props) if (!seen.has(p.name)) { seen.add(p.name); options.push({ label: p.name, type: "property", detail: `${t.name}: ${p.type}` }); }
      for (const meta of ["@id", "@type", "@src", "@dst"]) options.push({ label: meta, type: "constant" });
      return { from: prop.from + prop.text.indexOf(".") + 1, options, validFor: /^[\w@]*$/ };
    }
    const word = ctx.matchBefore(/[A-Za-z_][\w]*/);
    if (!word && !ctx.explicit) return null;
    const from = word ? word.from : ctx.pos;
    const options = [
      ...KEYWORDS.map((k) => ({ label: k, type: "keyword" })),
      ...FUNCTIONS.map((f) => ({ label: f, type: "function" })),
      ...schema.nodes.map((t) => ({ label: t.name, type: "type", detail: "node" })),
      ...schema.edges.map((e) => ({ label: e.name, type: "type", detail: `edge ${e.from} -> ${e.to}` })),
      ...schema.edges.map((e) => ({ label: traversalName(e.name), type: "method", detail: `traversal ${e.from} -> ${e.to}` })),
    ];
    return { from, options, validFor: /^\w*$/ };
  };
}

// The traversals a query's match clause writes: `$a wrote $b`, `$a $w:wrote $b`,
// `$b cites{1,2} $c` → [{src, dst, label, edgeVar}].
export function traversals(text) {
  const out = [];
  const re = /\$([A-Za-z_]\w*)\s+(?:\$([A-Za-z_]\w*)\s*:\s*)?([a-z_]\w*)(?:\{[^}]*\})?\s+\$([A-Za-z_]\w*)/g;
  for (const m of text.matchAll(re)) {
    if (KW.has(m[3]) || FN.has(m[3])) continue;
    out.push({ src: m[1], edgeVar: m[2] || null, label: m[3], dst: m[4] });
  }
  return out;
}

// Is the statement a mutation (it goes to /mutate, a read to /query)?
export function isMutation(text) {
  const code = text.replace(/\/\/[^\n]*/g, "").replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return /\b(insert|update|delete)\b/.test(code);
}

// The query (by name) whose text holds the cursor, when the editor holds several; the
// named query's own text.
export function queryAt(text, pos) {
  const re = /\bquery\s+([A-Za-z_]\w*)\s*\(/g;
  const starts = [...text.matchAll(re)].map((m) => ({ name: m[1], at: m.index }));
  if (starts.length <= 1) return { name: starts[0]?.name ?? null, text };
  let pick = starts[0];
  for (const s of starts) if (s.at <= pos) pick = s;
  const next = starts.find((s) => s.at > pick.at);
  return { name: pick.name, text: text.slice(pick.at, next ? next.at : text.length) };
}
