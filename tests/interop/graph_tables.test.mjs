// graph_tables.test.mjs — LanceDB opens the tables of a graph that `omnigraph` built (init +
// load + mutate) at the version each graph commit names, and sees exactly the rows the graph
// shows at that commit (STORAGE.md §1 goal 6).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { lancedb, binDir, tempRoot } from "./lib.mjs";

const og = path.join(binDir, "omnigraph");
const ogq = (...args) => execFileSync(og, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });

test("LanceDB reads a graph's node and edge tables at every commit", async () => {
  const root = tempRoot("graph");
  try {
    const g = path.join(root, "g");
    fs.writeFileSync(path.join(root, "s.pg"),
      "node Person { name: String @key  age: I32? }\nedge Knows: Person -> Person { since: Date? }\n");
    fs.writeFileSync(path.join(root, "d.jsonl"),
      '{"type":"Person","data":{"name":"Ada","age":36}}\n' +
      '{"type":"Person","data":{"name":"Grace","age":45}}\n' +
      '{"type":"Person","data":{"name":"Alan"}}\n' +
      '{"edge":"Knows","from":"Ada","to":"Grace","data":{"since":"2020-01-02"}}\n');
    ogq("init", "--quiet", "--schema", path.join(root, "s.pg"), g);
    ogq("load", "--quiet", "--data", path.join(root, "d.jsonl"), "--mode", "overwrite", g);
    const first = JSON.parse(ogq("snapshot", g));
    ogq("mutate", "--store", g, "-e",
      'query m() { update Person set { age: 37 } where name = "Ada" }');
    ogq("mutate", "--store", g, "-e", 'query d() { delete Person where name = "Alan" }');
    const last = JSON.parse(ogq("snapshot", g));
    assert.notEqual(first.commit, last.commit);

    const db = await lancedb.connect(path.join(g, "tables"));
    for (const [snap, want] of [[first, { Ada: 36, Grace: 45, Alan: null }], [last, { Ada: 37, Grace: 45 }]]) {
      const person = snap.tables.find((t) => t.type === "Person");
      const knows = snap.tables.find((t) => t.type === "Knows");
      assert.match(person.table, /\.lance$/);
      const pt = await db.openTable(person.table.replace(/\.lance$/, ""));
      await pt.checkout(person.version);
      assert.equal(await pt.countRows(), person.rows);
      const rows = await pt.query().select(["id", "name", "age"]).toArray();
      const got = Object.fromEntries(rows.map((r) => [r.name, r.age === null ? null : Number(r.age)]));
      assert.deepEqual(got, want);
      for (const r of rows) assert.equal(r.id, r.name); // keyed nodes: id = the key
      const kt = await db.openTable(knows.table.replace(/\.lance$/, ""));
      await kt.checkout(knows.version);
      const edges = await kt.query().select(["src", "dst"]).toArray();
      assert.deepEqual(edges.map((e) => [e.src, e.dst]), [["Ada", "Grace"]]);
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
