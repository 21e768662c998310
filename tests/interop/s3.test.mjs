// s3.test.mjs — LanceDB opens tables our engine wrote to an S3-compatible store, at the
// versions graph commits name, and returns exactly the rows our reader (lance_tool dump, which
// reads S3 through ranged GETs) returns.  Runs only with the S3 environment of the test store
// (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, OG_S3_BUCKET: what
// scripts/s3-test-store.sh start prints; tests/store/run-s3-tests.sh runs it), else skips.
//
//   1. `bench_s3 graph-table s3://…` writes table people.lance in three versions (append,
//      append, delete) and a graph whose three commits name them; LanceDB checks out the
//      version each commit names: row count = the commit's, rows = our reader's rows.
//   2. `lance_tool write-all-types s3://…` (every column type, seven versions: deletions,
//      added column, compaction): LanceDB's rows = our reader's rows at every version.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { lancedb, binDir, toolJsonLines, lanceRows, firstDiff } from "./lib.mjs";

const env = process.env;
const have = env.AWS_ENDPOINT_URL && env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY && env.OG_S3_BUCKET;
const skip = have ? false : "no S3 test store in the environment (AWS_ENDPOINT_URL, OG_S3_BUCKET, ...)";
const prefix = `interop-${process.pid}-${Date.now()}`;
const root = (name) => `s3://${env.OG_S3_BUCKET}/${prefix}/${name}`;

const storageOptions = () => ({
  endpoint: env.AWS_ENDPOINT_URL,
  region: env.AWS_REGION || "us-east-1",
  access_key_id: env.AWS_ACCESS_KEY_ID,
  secret_access_key: env.AWS_SECRET_ACCESS_KEY,
  allow_http: "true",
  aws_virtual_hosted_style_request: "false",
});

const connect = (r) => lancedb.connect(`${r}/tables`, { storageOptions: storageOptions() });
const dump = (r, name, v) => toolJsonLines("dump", r, name, "--version", String(v));

test("LanceDB reads people.lance on S3 at the version each graph commit names", { skip }, async () => {
  const r = root("graph");
  const out = execFileSync(path.join(binDir, "bench_s3"), ["graph-table", r], { encoding: "utf8" });
  const commits = out.split("\n").filter((l) => l.length).map((l) => JSON.parse(l));
  assert.deepEqual(commits.map((c) => [c.version, c.rows]), [[2, 50], [3, 80], [4, 77]]);
  const db = await connect(r);
  assert.deepEqual(await db.tableNames(), ["people"]);
  const t = await db.openTable("people");
  for (const c of commits) {
    await t.checkout(c.version);
    assert.equal(await t.version(), c.version);
    assert.equal(await t.countRows(), c.rows, `rows at commit ${c.commit}`);
    const want = dump(r, "people", c.version);
    assert.equal(want.length, c.rows);
    assert.equal(firstDiff(await lanceRows(t), want), "", `commit ${c.commit} (version ${c.version})`);
  }
  t.close();
});

test("LanceDB reads every column type on S3 at every version the C writer made", { skip }, async () => {
  const r = root("types");
  const versions = toolJsonLines("write-all-types", r, "all_types");
  assert.deepEqual(versions.map((v) => v.version), [1, 2, 3, 4, 5, 6, 7]);
  const db = await connect(r);
  const t = await db.openTable("all_types");
  for (const { version } of versions) {
    await t.checkout(version);
    const want = dump(r, "all_types", version);
    assert.equal(await t.countRows(), want.length, `countRows at ${version}`);
    assert.equal(firstDiff(await lanceRows(t), want), "", `version ${version}`);
  }
  t.close();
});
