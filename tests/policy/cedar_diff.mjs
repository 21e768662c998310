// cedar_diff.mjs — the Cedar side of the policy differential test (test_policy_cedar_diff.c).
//
// Usage: node cedar_diff.mjs CORPUS.jsonl MIN_PAIRS
// The first line holds our Cedar schema; each further line holds one generated bundle: the Cedar text our C compiler wrote, the
// generator's own model (groups, protected branches), and requests with our C evaluator's
// decision and matched rule.  For each bundle the text must parse and validate (strict) against
// our schema; for each request Cedar's decision must equal ours and the smallest rule id among
// Cedar's determining policies (policy id "<rule>:<action>") must equal our matched rule.
// Exits non-zero on any difference, on any Cedar error, or when fewer than MIN_PAIRS pairs ran.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
let cedar;
try {
  cedar = require(path.join(here, 'node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm.js'));
} catch (e) {
  console.error(`FAIL: @cedar-policy/cedar-wasm is not installed in tests/policy (run scripts/install-deps.sh): ${e.message}`);
  process.exit(2);
}

const [corpusPath, minPairsArg] = process.argv.slice(2);
if (!corpusPath) {
  console.error('usage: node cedar_diff.mjs CORPUS.jsonl MIN_PAIRS');
  process.exit(2);
}
const minPairs = Number(minPairsArg || 10000);

const uid = (type, id) => ({ type: `Omnigraph::${type}`, id });
// The actor namespace of a branch name: its first '/'-separated segment ('' without a '/').
const namespaceOf = (b) => (b.indexOf('/') >= 0 ? b.slice(0, b.indexOf('/')) : '');
// Rust's String order (bytes of UTF-8), not JavaScript's UTF-16 order.
const byteLess = (a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')) < 0;

let pairs = 0;
let allows = 0;
let forbids = 0; // denied by a matching `deny` rule (Cedar forbid)
let byOwned = 0; // decided by an `owned` scope's policy (creator == principal)
let byNamespace = 0; // decided by an `actor_namespace` scope's policy
let failures = 0;
const fail = (msg) => {
  failures++;
  if (failures <= 20) console.error(`DIFF: ${msg}`);
};

const lines = readFileSync(corpusPath, 'utf8').split('\n').filter((l) => l.length > 0);
// The first line carries the Cedar schema our library compiles against (og_policy_cedar_schema).
const schema = JSON.parse(lines.shift()).schema;
const sch = cedar.preparseSchema('omnigraph', schema);
if (sch.type !== 'success') {
  console.error('FAIL: our Cedar schema does not parse:', JSON.stringify(sch.errors));
  process.exit(1);
}

for (const line of lines) {
  const b = JSON.parse(line);
  // Split the text into policies and key each by its @id annotation.
  const parts = cedar.policySetTextToParts(b.cedar);
  if (parts.type !== 'success') {
    fail(`bundle ${b.bundle}: Cedar cannot parse our text: ${JSON.stringify(parts.errors)}\n${b.cedar}`);
    continue;
  }
  const staticPolicies = {};
  for (const text of parts.policies) {
    const j = cedar.policyToJson(text);
    if (j.type !== 'success' || !j.json.annotations || typeof j.json.annotations.id !== 'string') {
      fail(`bundle ${b.bundle}: a policy without an @id: ${text}`);
      continue;
    }
    const id = j.json.annotations.id;
    if (id in staticPolicies) fail(`bundle ${b.bundle}: duplicate policy id ${id}`);
    staticPolicies[id] = text;
  }
  const policies = { staticPolicies };
  const v = cedar.validate({ schema, policies, validationSettings: { mode: 'strict' } });
  if (v.type !== 'success' || v.validationErrors.length > 0) {
    fail(`bundle ${b.bundle}: strict validation failed: ${JSON.stringify(v)}`);
    continue;
  }
  const pre = cedar.preparsePolicySet('bundle', policies);
  if (pre.type !== 'success') {
    fail(`bundle ${b.bundle}: preparse failed: ${JSON.stringify(pre.errors)}`);
    continue;
  }
  // Entities from the generator's model, not from our parser.
  const parents = new Map();
  for (const [g, members] of Object.entries(b.groups)) {
    for (const m of members) {
      if (!parents.has(m)) parents.set(m, []);
      parents.get(m).push(uid('Group', g));
    }
  }
  const entities = [
    ...Object.keys(b.groups).map((g) => ({ uid: uid('Group', g), attrs: {}, parents: [] })),
    ...[...parents].map(([a, ps]) => ({ uid: uid('Actor', a), attrs: {}, parents: ps })),
    { uid: uid('Graph', b.graph), attrs: {}, parents: [] },
    { uid: uid('Server', 'root'), attrs: {}, parents: [] },
  ];
  // og_policy_cedar_entities must describe the same entities as the model.
  const canon = (list) => JSON.stringify(list.map((e) => JSON.stringify([e.uid.type, e.uid.id,
    e.parents.map((p) => p.type + '\u0000' + p.id).sort()])).sort());
  if (canon(b.our_entities) !== canon(entities)) {
    fail(`bundle ${b.bundle}: og_policy_cedar_entities differs from the model:\n${JSON.stringify(b.our_entities)}\n${JSON.stringify(entities)}`);
  }
  const prot = new Set(b.protected);
  for (const r of b.requests) {
    pairs++;
    const hasB = r.branch !== undefined;
    const hasT = r.target_branch !== undefined;
    const context = {
      has_branch: hasB,
      branch: hasB ? r.branch : '',
      has_target_branch: hasT,
      target_branch: hasT ? r.target_branch : '',
      // Whether a branch is protected is computed outside Cedar (og_policy_is_protected: exact
      // or confusable names, docs/policy.md), so the C side reports it; an exact protected
      // name must always count.
      branch_is_protected: hasB && r.branch_is_protected,
      target_branch_is_protected: hasT && r.target_branch_is_protected,
      has_query: r.query !== undefined,
      query: r.query !== undefined ? r.query : '',
      // Who created each branch comes from the graph (the surface looks it up); an unknown
      // creator is Actor::"" (no actor id is blank).  The namespace is the branch name's first
      // '/'-separated segment, computed here from the name alone (the `actor_namespace` scope).
      branch_creator: { __entity: uid('Actor', hasB && r.branch_creator ? r.branch_creator : '') },
      target_branch_creator: { __entity: uid('Actor', hasT && r.target_branch_creator ? r.target_branch_creator : '') },
      branch_namespace: { __entity: uid('Actor', hasB ? namespaceOf(r.branch) : '') },
      target_branch_namespace: { __entity: uid('Actor', hasT ? namespaceOf(r.target_branch) : '') },
    };
    if ((hasB && prot.has(r.branch) && !r.branch_is_protected) ||
        (hasT && prot.has(r.target_branch) && !r.target_branch_is_protected)) {
      fail(`bundle ${b.bundle}: a protected name was not reported protected: ${JSON.stringify(r)}`);
    }
    const resource = r.action === 'graph_list' ? uid('Server', 'root') : uid('Graph', b.graph);
    const ans = cedar.statefulIsAuthorized({
      principal: uid('Actor', r.actor),
      action: uid('Action', r.action),
      resource,
      context,
      preparsedSchemaName: 'omnigraph',
      validateRequest: true,
      preparsedPolicySetId: 'bundle',
      entities,
    });
    const what = `bundle ${b.bundle} actor=${JSON.stringify(r.actor)} action=${r.action} branch=${JSON.stringify(r.branch)} target=${JSON.stringify(r.target_branch)} query=${JSON.stringify(r.query)}`;
    if (ans.type !== 'success') {
      fail(`${what}: Cedar failed: ${JSON.stringify(ans.errors)}`);
      continue;
    }
    if (ans.response.diagnostics.errors.length > 0) {
      fail(`${what}: Cedar evaluation errors: ${JSON.stringify(ans.response.diagnostics.errors)}`);
      continue;
    }
    const allowed = ans.response.decision === 'allow';
    if (allowed) allows++;
    if (!allowed && ans.response.diagnostics.reason.length > 0) forbids++;
    let rule = null;
    for (const pid of ans.response.diagnostics.reason) {
      const rid = pid.slice(0, pid.lastIndexOf(':'));
      if (rule === null || byteLess(rid, rule)) rule = rid;
      const text = staticPolicies[pid] || '';
      if (text.includes('creator == principal')) byOwned++;
      if (text.includes('namespace == principal')) byNamespace++;
    }
    if (allowed !== r.allowed) fail(`${what}: Cedar says ${allowed ? 'allow' : 'deny'}, we say ${r.allowed ? 'allow' : 'deny'}\n${b.cedar}`);
    else if (rule !== r.rule) fail(`${what}: Cedar's matched rule ${JSON.stringify(rule)}, ours ${JSON.stringify(r.rule)}`);
  }
}

console.log(`cedar-wasm ${cedar.getCedarVersion()}: ${lines.length} bundles, ${pairs} (bundle, request) pairs (${allows} allowed, ${forbids} forbidden by a deny rule; ${byOwned} decisions by an owned scope, ${byNamespace} by an actor_namespace scope), ${failures} differences`);
if (failures > 0) process.exit(1);
if (forbids === 0) {
  console.error('FAIL: no request was decided by a deny rule (the corpus does not cover forbid)');
  process.exit(1);
}
if (byOwned === 0 || byNamespace === 0) {
  console.error(`FAIL: the corpus does not cover the owned (${byOwned}) and actor_namespace (${byNamespace}) scopes`);
  process.exit(1);
}
if (pairs < minPairs) {
  console.error(`FAIL: only ${pairs} pairs ran (want >= ${minPairs})`);
  process.exit(1);
}
