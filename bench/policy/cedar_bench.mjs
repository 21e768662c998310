// cedar_bench.mjs — Cedar's side of bench/policy/run.sh: the same requests as bench_policy,
// evaluated by @cedar-policy/cedar-wasm (tests/policy's pinned install) with the policy set and
// schema parsed once (statefulIsAuthorized).  Checks every decision equals ours, then prints
// `key: value` lines.  CPU time (process.cpuUsage), like bench_policy.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const cedar = require(path.join(here, '../../tests/policy/node_modules/@cedar-policy/cedar-wasm/nodejs/cedar_wasm.js'));
const [file, nArg] = process.argv.slice(2);
const n = Number(nArg || 200000);
const c = JSON.parse(readFileSync(file, 'utf8'));
const uid = (type, id) => ({ type: `Omnigraph::${type}`, id });
if (cedar.preparseSchema('s', c.schema).type !== 'success') throw new Error('schema');
if (cedar.preparsePolicySet('p', { staticPolicies: c.cedar }).type !== 'success') throw new Error('policies');
const calls = c.requests.map((r) => ({
  principal: uid('Actor', r.actor), action: uid('Action', r.action), resource: uid('Graph', 'bench'),
  context: r.context, preparsedSchemaName: 's', validateRequest: true, preparsedPolicySetId: 'p',
  entities: c.entities,
}));
for (let i = 0; i < calls.length; i++) {
  const a = cedar.statefulIsAuthorized(calls[i]);
  if (a.type !== 'success' || (a.response.decision === 'allow') !== c.requests[i].allowed) {
    console.error(`cedar_bench: request ${i} differs: ${JSON.stringify(a)}`);
    process.exit(1);
  }
}
const t0 = process.cpuUsage();
let allowed = 0;
for (let i = 0; i < n; i++) {
  if (cedar.statefulIsAuthorized(calls[i % calls.length]).response.decision === 'allow') allowed++;
}
const u = process.cpuUsage(t0);
const s = (u.user + u.system) / 1e6;
console.log(`cedar_version: ${cedar.getCedarVersion()}`);
console.log(`cedar_decisions: ${n}`);
console.log(`cedar_ns_per_decision: ${(s / n * 1e9).toFixed(1)}`);
