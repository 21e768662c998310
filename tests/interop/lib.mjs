// lib.mjs — helpers shared by the interop tests: loading LanceDB through its CommonJS entry
// (so it gets the CommonJS build of apache-arrow), running lance_tool, normalising values the
// way `lance_tool dump` prints them, and comparing row sets.
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "noop.js"));
export const lancedb = require("@lancedb/lancedb");
export const arrow = require("apache-arrow");

export const binDir = process.env.OG_BIN_DIR
  ? path.resolve(process.env.OG_BIN_DIR)
  : path.resolve(here, "../../build/release");
export const lanceTool = path.join(binDir, "lance_tool");

export function tool(...args) {
  return execFileSync(lanceTool, args, { encoding: "utf8", maxBuffer: 1 << 30 });
}

export function toolJsonLines(...args) {
  return tool(...args).split("\n").filter((l) => l.length).map((l) => JSON.parse(l));
}

// A fresh store root under the OS temp dir; removed by the caller's cleanup.
export function tempRoot(tag) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `og-interop-${tag}-`));
}

// LanceDB values -> the JSON lance_tool prints.
export function norm(v, field) {
  if (v === null || v === undefined) return null;
  if (typeof v === "bigint") return v.toString();
  if (v instanceof Uint8Array) return Array.from(v);
  if (v instanceof Date) return v.getTime();
  if (typeof v === "number") {
    if (field && arrow.DataType.isDate(field.type) && field.type.unit === arrow.DateUnit.DAY && Math.abs(v) < 1e7) {
      return v * 86400000; // in case a reader hands back days
    }
    return Object.is(v, -0) ? 0 : v;
  }
  if (typeof v === "object" && typeof v.get === "function" && typeof v.length === "number") {
    const childField = field && field.type && field.type.children ? field.type.children[0] : undefined;
    const a = [];
    for (let i = 0; i < v.length; i++) a.push(norm(v.get(i), childField));
    return a;
  }
  return v;
}

// All rows of an Arrow table as plain objects (with _rowid when present), sorted by _rowid.
export function arrowRows(tb) {
  const fields = tb.schema.fields;
  const cols = fields.map((f) => tb.getChild(f.name));
  const rows = [];
  for (let i = 0; i < tb.numRows; i++) {
    const r = {};
    fields.forEach((f, j) => { r[f.name] = norm(cols[j].get(i), f); });
    rows.push(r);
  }
  if (fields.some((f) => f.name === "_rowid")) {
    rows.sort((a, b) => (BigInt(a._rowid) < BigInt(b._rowid) ? -1 : BigInt(a._rowid) > BigInt(b._rowid) ? 1 : 0));
  }
  return rows;
}

export async function lanceRows(table, columns) {
  let q = table.query().withRowId();
  if (columns) q = q.select(columns);
  return arrowRows(await q.toArrow());
}

export function same(a, b) {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => same(a[k], b[k]));
  }
  return false;
}

// "" when equal, else a description of the first difference.
export function firstDiff(got, want) {
  if (got.length !== want.length) return `row count ${got.length} != ${want.length}`;
  for (let i = 0; i < want.length; i++) {
    if (!same(got[i], want[i])) {
      const keys = new Set([...Object.keys(got[i]), ...Object.keys(want[i])]);
      for (const k of keys) {
        if (!same(got[i][k], want[i][k])) {
          return `row ${i} (_rowid ${want[i]._rowid}) col ${k}: got ${JSON.stringify(got[i][k])} want ${JSON.stringify(want[i][k])}`;
        }
      }
    }
  }
  return "";
}
