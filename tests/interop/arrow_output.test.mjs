// arrow_output.test.mjs — Apache Arrow's own reader (npm apache-arrow, pinned by
// package-lock.json here) reads what `omnigraph query --format arrow` writes and what the server
// answers to `Accept: application/vnd.apache.arrow.stream`: every column type checked column by
// column — ints of each width and sign, floats, bools, dates, datetimes, strings, lists,
// vectors, nulls — against the rows the JSON format gives for the same query.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { arrow, binDir, tempRoot } from "./lib.mjs";

const og = path.join(binDir, "omnigraph");
const server = path.join(binDir, "omnigraph-server");

const schema = `
node T {
    name: String @key
    i32: I32?
    i64: I64?
    u32: U32?
    u64: U64?
    f32: F32?
    f64: F64?
    ok: Bool?
    day: Date?
    at: DateTime?
    raw: Blob?
    tags: [String]?
    nums: [I32]?
    emb: Vector(3)?
}
node P {
    slug: String @key
}
edge Likes: T -> P
`;

const seed = [
  { type: "T", data: { name: "a", i32: -2147483648, i64: "BIG_I64", u32: 4294967295, u64: "18446744073709551615",
    f32: 1.5, f64: -0.25, ok: true, day: "2024-02-29", at: "2024-02-29T12:34:56.789Z", raw: "base64:AAEC/w==",
    tags: ["x", "yé"], nums: [1, -2, 3], emb: [0.5, 1, -2] } },
  { type: "T", data: { name: "b", i32: 7, i64: -5, u32: 0, u64: 3, f32: -0.5, f64: 1e300, ok: false, day: "1969-12-31",
    at: "1970-01-01T00:00:00.000Z", raw: "base64:", tags: [], nums: [], emb: [0, 0, 0] } },
  { type: "T", data: { name: "c" } }, // every optional property null
  { type: "P", data: { slug: "p1" } },
  { edge: "Likes", from: "a", to: "p1" },
];

function run(args, opts = {}) {
  return execFileSync(og, args, { maxBuffer: 1 << 28, ...opts });
}

const root = tempRoot("arrow");
const g = path.join(root, "g");
fs.writeFileSync(path.join(root, "schema.pg"), schema);
// 2^53 + 1 cannot be a JavaScript number: spliced into the text as digits
fs.writeFileSync(path.join(root, "seed.jsonl"),
  seed.map((r) => JSON.stringify(r)).join("\n").replace('"BIG_I64"', "9007199254740993") + "\n");
run(["init", "--schema", path.join(root, "schema.pg"), g]);
run(["load", "--data", path.join(root, "seed.jsonl"), "--mode", "overwrite", g]);

const q = `query all() { match { $t: T } return { $t.name, $t.i32, $t.i64, $t.u32, $t.u64, $t.f32, $t.f64, $t.ok,
  $t.day, $t.at, $t.tags, $t.nums, $t.emb } order { $t.name } }`;

function table(bytes) {
  return arrow.tableFromIPC(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

// column name -> [Arrow type check, nullable]
const expectTypes = {
  "t.name": [(t) => arrow.DataType.isUtf8(t), false],
  "t.i32": [(t) => arrow.DataType.isInt(t) && t.bitWidth === 32 && t.isSigned, true],
  "t.i64": [(t) => arrow.DataType.isInt(t) && t.bitWidth === 64 && t.isSigned, true],
  "t.u32": [(t) => arrow.DataType.isInt(t) && t.bitWidth === 32 && !t.isSigned, true],
  "t.u64": [(t) => arrow.DataType.isInt(t) && t.bitWidth === 64 && !t.isSigned, true],
  "t.f32": [(t) => arrow.DataType.isFloat(t) && t.precision === arrow.Precision.SINGLE, true],
  "t.f64": [(t) => arrow.DataType.isFloat(t) && t.precision === arrow.Precision.DOUBLE, true],
  "t.ok": [(t) => arrow.DataType.isBool(t), true],
  "t.day": [(t) => arrow.DataType.isDate(t) && t.unit === arrow.DateUnit.DAY, true],
  "t.at": [(t) => arrow.DataType.isTimestamp(t) && t.unit === arrow.TimeUnit.MILLISECOND && t.timezone === "UTC", true],
  "t.tags": [(t) => arrow.DataType.isList(t) && arrow.DataType.isUtf8(t.children[0].type), true],
  "t.nums": [(t) => arrow.DataType.isList(t) && arrow.DataType.isInt(t.children[0].type) && t.children[0].type.bitWidth === 32, true],
  "t.emb": [(t) => arrow.DataType.isFixedSizeList(t) && t.listSize === 3 && arrow.DataType.isFloat(t.children[0].type) &&
    t.children[0].type.precision === arrow.Precision.SINGLE, true],
};

// Arrow's JS values -> plain JSON-comparable values.
function plain(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === "bigint") return v.toString();
  if (v instanceof Uint8Array) return Array.from(v);
  if (typeof v === "object" && typeof v.toArray === "function") return Array.from(v.toArray(), plain);
  return v;
}

const expected = [
  { "t.name": "a", "t.i32": -2147483648, "t.i64": "9007199254740993", "t.u32": 4294967295, "t.u64": "18446744073709551615",
    "t.f32": 1.5, "t.f64": -0.25, "t.ok": true, "t.day": Date.UTC(2024, 1, 29), "t.at": Date.UTC(2024, 1, 29, 12, 34, 56, 789),
    "t.tags": ["x", "yé"], "t.nums": [1, -2, 3], "t.emb": [0.5, 1, -2] },
  { "t.name": "b", "t.i32": 7, "t.i64": "-5", "t.u32": 0, "t.u64": "3", "t.f32": -0.5, "t.f64": 1e300, "t.ok": false,
    "t.day": -86400000, "t.at": 0, "t.tags": [], "t.nums": [], "t.emb": [0, 0, 0] },
  Object.fromEntries(Object.keys(expectTypes).map((k) => [k, k === "t.name" ? "c" : null])),
];

function checkTable(tb) {
  assert.equal(tb.numRows, 3);
  assert.deepEqual(tb.schema.fields.map((f) => f.name), Object.keys(expectTypes));
  for (const f of tb.schema.fields) {
    const [isType, nullable] = expectTypes[f.name];
    assert.ok(isType(f.type), `column ${f.name}: unexpected Arrow type ${f.type}`);
    assert.equal(f.nullable, nullable, `column ${f.name}: nullable`);
  }
  for (const f of tb.schema.fields) {
    const col = tb.getChild(f.name);
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(plain(col.get(i)), expected[i][f.name], `row ${i} column ${f.name}`);
    }
  }
  assert.equal(tb.getChild("t.i32").nullCount, 1);
}

test("query --format arrow: Arrow's reader sees every type, value and null", () => {
  const bytes = run(["query", "-e", q, "--format", "arrow", g]);
  checkTable(table(bytes));
});

test("query --format arrow --out FILE writes the same stream to the file", () => {
  const out = path.join(root, "r.arrow");
  const stdout = run(["query", "-e", q, "--format", "arrow", "--out", out, g]);
  assert.equal(stdout.length, 0);
  checkTable(table(fs.readFileSync(out)));
});

test("an empty result is a schema and no rows", () => {
  const bytes = run(["query", "-e", 'query none() { match { $t: T  $t.name = "zz" } return { $t.name, $t.emb } }',
    "--format", "arrow", g]);
  const tb = table(bytes);
  assert.equal(tb.numRows, 0);
  assert.deepEqual(tb.schema.fields.map((f) => f.name), ["t.name", "t.emb"]);
  assert.ok(arrow.DataType.isFixedSizeList(tb.schema.fields[1].type));
});

test("a node as an object is Utf8 JSON text with the arrow.json extension name", () => {
  const bytes = run(["query", "-e", 'query o() { match { $p: P } return { $p } }', "--format", "arrow", g]);
  const tb = table(bytes);
  const f = tb.schema.fields[0];
  assert.ok(arrow.DataType.isUtf8(f.type));
  assert.equal(f.metadata.get("ARROW:extension:name"), "arrow.json");
  assert.deepEqual(JSON.parse(tb.getChild(f.name).get(0)), { "@id": "p1", slug: "p1" });
});

test("more rows than one record batch arrive in order across batches", () => {
  const big = path.join(root, "big");
  run(["init", "--schema", path.join(root, "schema.pg"), big]);
  const n = 70000; // past OG_ARROW_BATCH_ROWS (65536): two record batches
  const lines = [];
  for (let i = 0; i < n; i++) lines.push(JSON.stringify({ type: "T", data: { name: `n${String(i).padStart(6, "0")}`, i64: i, ok: i % 3 === 0 ? null : i % 2 === 0 } }));
  fs.writeFileSync(path.join(root, "big.jsonl"), lines.join("\n") + "\n");
  run(["load", "--data", path.join(root, "big.jsonl"), "--mode", "overwrite", big]);
  const bytes = run(["query", "-e", "query b() { match { $t: T } return { $t.name, $t.i64, $t.ok } order { $t.name } }",
    "--format", "arrow", big]);
  const tb = table(bytes);
  assert.equal(tb.numRows, n);
  assert.equal(tb.batches.length, 2);
  const names = tb.getChild("t.name"), ints = tb.getChild("t.i64"), oks = tb.getChild("t.ok");
  for (const i of [0, 1, 65535, 65536, 65537, n - 1]) {
    assert.equal(names.get(i), `n${String(i).padStart(6, "0")}`);
    assert.equal(ints.get(i), BigInt(i));
    assert.equal(oks.get(i), i % 3 === 0 ? null : i % 2 === 0);
  }
  assert.equal(oks.nullCount, Math.ceil(n / 3));
});

test("the server answers Accept: application/vnd.apache.arrow.stream with the same stream", async (t) => {
  if (!fs.existsSync(server)) return t.skip("omnigraph-server not built");
  const child = spawn(server, ["--graph", `g=${g}`, "--bind", "127.0.0.1:0", "--unauthenticated"],
    { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  try {
    const addr = await new Promise((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        const m = out.match(/OMNIGRAPH_LISTEN_ADDR=(\S+)/);
        if (m) resolve(m[1]);
      });
      child.on("exit", () => reject(new Error(`server exited: ${stderr}`)));
      setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 10000);
    });
    const url = `http://${addr}/graphs/g/query`;
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/vnd.apache.arrow.stream" },
      body: JSON.stringify({ query: q }),
    });
    assert.ok(res, `server did not answer: ${stderr}`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/vnd.apache.arrow.stream");
    checkTable(table(Buffer.from(await res.arrayBuffer())));
    // the CLI against the server: the same stream, passed through
    checkTable(table(run(["query", "-e", q, "--format", "arrow", "--server", `http://${addr}`, "--graph", "g"])));
    // a client that does not ask for Arrow still gets JSON
    const js = await fetch(url, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: q }),
    });
    assert.match(js.headers.get("content-type"), /application\/json/);
    assert.equal((await js.json()).row_count, 3);
  } finally {
    child.kill("SIGTERM");
  }
});

test.after(() => fs.rmSync(root, { recursive: true, force: true }));
