// A read's answer as a table and as a node-link drawing.
//
// The graph view works from what the rows hold: a column `b` holding a node object
// ({"@id": …}) or columns `b.name`, `b.year` are one node per distinct value of variable b;
// the traversals written in the query's match clause (`$a wrote $b`, `$a $w:wrote $b`) are
// its edges, labelled by the traversal and the edge variable's columns.  Rows of variables
// that no traversal joins are chained in column order, so any multi-variable row draws.
import { toJson } from "./json.js";

export function tableOf(r) {
  const columns = r.columns.map((c) => (typeof c === "string" ? c : c.name));
  const rows = r.rows.map((row) => (Array.isArray(row) ? row.slice() : columns.map((c) => (row[c] === undefined ? null : row[c]))));
  return { columns, rows };
}

export function toCsv({ columns, rows }) {
  const q = (v) => {
    if (v === null || v === undefined) return "";
    const s = typeof v === "object" ? toJson(v) : String(v);
    return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [columns.map(q).join(","), ...rows.map((r) => r.map(q).join(","))].join("\n") + "\n";
}

// Tab-separated text for the clipboard: a tab, newline or carriage return inside a value
// becomes a space (a spreadsheet's paste has no quoting), objects are JSON, null is empty.
export function toTsv({ columns, rows }) {
  const c = (v) => (v === null || v === undefined ? "" : (typeof v === "object" ? toJson(v) : String(v)).replace(/[\t\n\r]/g, " "));
  return [columns.map(c).join("\t"), ...rows.map((r) => r.map(c).join("\t"))].join("\n") + "\n";
}

// One colour per type: the schema's types take the palette in order (setTypeOrder), so the
// few types of a graph look distinct; any other name gets a stable hashed hue.
const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
let order = new Map();
export function setTypeOrder(names) { order = new Map(names.map((n, i) => [n, i])); }
export function typeColor(name) {
  if (order.has(name)) return PALETTE[order.get(name) % PALETTE.length];
  let h = 0;
  for (const ch of String(name || "")) h = (h * 31 + ch.codePointAt(0)) >>> 0;
  return `hsl(${h % 360}, 55%, 55%)`;
}

const LABEL_KEYS = ["name", "title", "label", "slug", "card", "isbn", "@id"];

export function labelOf(props) {
  for (const k of LABEL_KEYS) if (props[k] !== undefined && props[k] !== null) return String(props[k]);
  const first = Object.values(props).find((v) => v !== null && typeof v !== "object");
  return first === undefined ? "?" : String(first);
}

// Cytoscape elements from a read's answer, the query's traversals, its `$v: Type` bindings
// and the schema's edges (a traversal's ends take the edge's endpoint types when unbound).
export function graphElements(r, travs, bound, schema) {
  const types = { ...bound };
  for (const t of travs) {
    const e = schema.edges.find((x) => x.name.charAt(0).toLowerCase() + x.name.slice(1) === t.label);
    if (!e) continue;
    if (!types[t.src]) types[t.src] = e.from;
    if (!types[t.dst]) types[t.dst] = e.to;
  }
  const { columns, rows } = tableOf(r);
  // variable -> the columns that read it
  const vars = new Map();
  columns.forEach((c, i) => {
    const dot = c.indexOf(".");
    const v = dot > 0 ? c.slice(0, dot) : c;
    const field = dot > 0 ? c.slice(dot + 1) : null;
    if (!vars.has(v)) vars.set(v, []);
    vars.get(v).push({ i, field });
  });
  const edgeVars = new Set(travs.map((t) => t.edgeVar).filter(Boolean));
  const nodeVars = [...vars.keys()].filter((v) => !edgeVars.has(v));
  const nodes = new Map(), edges = new Map();
  for (const row of rows) {
    const ids = {};
    for (const v of nodeVars) {
      let props = {};
      for (const { i, field } of vars.get(v)) {
        const val = row[i];
        if (field === null && val && typeof val === "object") props = { ...val, ...props };
        else if (field !== null) props[field] = val;
        else props[v] = val;
      }
      if (Object.values(props).every((x) => x === null || x === undefined)) continue;
      const type = types[v] || props["@type"] || v;
      const key = props["@id"] !== undefined ? `${type}/${props["@id"]}` : `${v}/${toJson(props)}`;
      ids[v] = key;
      if (!nodes.has(key)) nodes.set(key, { data: { id: key, label: labelOf(props), type, props, color: typeColor(type) } });
    }
    const joined = travs.filter((t) => ids[t.src] && ids[t.dst]);
    if (joined.length) {
      for (const t of joined) {
        let label = t.label;
        if (t.edgeVar && vars.has(t.edgeVar)) {
          const extra = vars.get(t.edgeVar).map(({ i }) => row[i]).filter((x) => x !== null && x !== undefined);
          if (extra.length) label += ` (${extra.join(", ")})`;
        }
        const id = `${ids[t.src]}→${ids[t.dst]}:${label}`;
        if (!edges.has(id)) edges.set(id, { data: { id, source: ids[t.src], target: ids[t.dst], label } });
      }
    } else {
      const present = nodeVars.filter((v) => ids[v]);
      for (let k = 1; k < present.length; k++) {
        const id = `${ids[present[k - 1]]}→${ids[present[k]]}`;
        if (!edges.has(id)) edges.set(id, { data: { id, source: ids[present[k - 1]], target: ids[present[k]], label: "" } });
      }
    }
  }
  return [...nodes.values(), ...edges.values()];
}
