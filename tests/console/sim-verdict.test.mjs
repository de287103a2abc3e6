// The verdict on an A/B comparison (www/sim/core/verdict.js, compare.js), in Node: a policy is
// better only when it scores higher on every seed, the score weighs requests wasted on refusals
// against successes, seeds that disagree give "no clear difference", a measure's row is
// "better"/"worse" only when every seed agrees, and the spread of a measure over seeds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "repute";
import { verdictOf, scoreOf, spreadOf, seedsFrom, agreeingVerdict, MIN_DIFFERENCE } from "../../www/sim/core/verdict.js";
import { summaryRows, spreadText } from "../../www/sim/core/compare.js";
import { createRun } from "../../www/sim/core/simulate.js";
import { SCENARIOS, FAILURES } from "../../www/sim/core/scenario.js";
import { POLICIES } from "../../www/sim/core/policies.js";

/** A summary with `successes`, `wasted` failures (all BLOCKED) and `rejected` out of `attempts`. */
function summary({ attempts = 1000, successes, wasted = 0, rejected = 0 }) {
  const failures = Object.fromEntries(FAILURES.map((f) => [f, 0]));
  failures.BLOCKED = wasted;
  return { attempts, successes, rejected, failures, successRate: successes / attempts, rejectedShare: rejected / attempts, incidents: [], perContext: {}, setShare: {} };
}

test("a request wasted on a refusal costs what a success earns; a rejection earns nothing", () => {
  assert.equal(scoreOf(summary({ successes: 900, wasted: 100 })), 0.8);
  assert.equal(scoreOf(summary({ successes: 900, rejected: 100 })), 0.9);
  assert.equal(scoreOf(summary({ attempts: 0, successes: 0 })), null);
});

test("B is better only when it holds on every seed", () => {
  const a = [0, 1, 2, 3, 4].map((i) => summary({ successes: 800 + i }));
  const allB = a.map((x) => summary({ successes: x.successes + 20 }));
  const v = verdictOf(a, allB);
  assert.equal(v.winner, "B");
  assert.match(v.text, /^Policy B did better on all 5 seeds: 2\.0 more useful requests per 100 acquires/);
  // One seed out of five the other way: no clear difference, whatever the mean says.
  const mixed = allB.map((x, i) => (i === 3 ? summary({ successes: a[i].successes - 5 }) : x));
  const m = verdictOf(a, mixed);
  assert.equal(m.winner, null);
  assert.match(m.text, /^No clear difference: the seeds disagree/);
  assert.deepEqual(m.differences.map((d) => Math.round(d * 1000)), [20, 20, 20, -5, 20]);
  // A difference under MIN_DIFFERENCE on one seed is no difference either.
  const tiny = allB.map((x, i) => (i === 0 ? summary({ successes: a[0].successes + MIN_DIFFERENCE * 1000 - 1 }) : x));
  assert.equal(verdictOf(a, tiny).winner, null);
  // A and B swapped: A wins by the same rule.
  assert.equal(verdictOf(allB, a).winner, "A");
});

test("a higher success rate bought with requests wasted on refusals is not better", () => {
  // B succeeds more often (86 % vs 84 %) but sends 3.5× more requests into refusals.
  const a = [0, 1, 2, 3, 4].map(() => summary({ successes: 840, wasted: 40, rejected: 120 }));
  const b = [0, 1, 2, 3, 4].map(() => summary({ successes: 860, wasted: 140, rejected: 0 }));
  assert.equal(verdictOf(a, b).winner, "A", "80 − 72 useful requests per 100 acquires");
  const rows = Object.fromEntries(summaryRows([
    { summary: a[0], seeds: a.map((s, i) => ({ seed: i, summary: s })) },
    { summary: b[0], seeds: b.map((s, i) => ({ seed: i, summary: s })) },
  ]).map((r) => [r.key, r]));
  assert.equal(rows.successRate.verdict, "better");
  assert.equal(rows.failures.verdict, "worse");
});

test("a measure's row: better or worse only when every seed agrees; its spread over the seeds", () => {
  assert.equal(agreeingVerdict(["better", "better", "better"]), "better");
  assert.equal(agreeingVerdict(["better", "worse", "better"]), "unclear");
  assert.equal(agreeingVerdict(["same", "same"]), "same");
  assert.equal(agreeingVerdict(["better", "same"]), "unclear");
  const s = spreadOf([1, 2, 3, null]);
  assert.deepEqual({ ...s, sd: Number(s.sd.toFixed(4)) }, { n: 3, mean: 2, sd: 0.8165, min: 1, max: 3, missing: 1 });
  assert.equal(spreadOf([null, undefined]), null);
  assert.equal(spreadText("seconds", spreadOf([600, 900, null])), "mean 12 min 30 s, 10 min – 15 min over 3 seeds; not recovered on 1 seed");
  assert.equal(spreadText("percent", spreadOf([0.5, 0.5])), "the same on all 2 seeds");
  assert.deepEqual(seedsFrom(42), [42, 43, 44, 45, 46]);
});

test("real runs: reputation beats plain rotation on the datacenter ban on every seed; a policy against itself is no difference", () => {
  const defaults = new Pool({ seed: 0 }).config();
  const runs = (config) => seedsFrom(42).map((seed) => {
    const r = createRun({ Pool, scenario: SCENARIOS["datacenter-ban"].make(), config, seed });
    r.advance();
    return r.finish().summary;
  });
  const a = runs(defaults);
  const b = runs(POLICIES["plain-rotation"].make(defaults));
  assert.equal(verdictOf(a, b).winner, "A");
  assert.equal(verdictOf(a, a).winner, null);
  assert.match(verdictOf(a, a).text, /^No clear difference/);
  // Time to recover counts from the ban's start: success dips when the ban starts.
  const [ban] = a[0].incidents;
  assert.ok(a.every((s) => s.incidents[0].recoverS > 0), `a ban's dip is counted: ${a.map((s) => s.incidents[0].recoverS)}`);
  assert.ok(b[0].incidents[0].recoverS >= ban.endS - ban.startS, "plain rotation keeps failing for the whole ban");
});
