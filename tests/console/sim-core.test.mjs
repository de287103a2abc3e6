// Simulation mode's logic in Node (www/sim/core/: no DOM), on the real engine: runs are
// deterministic from the seed, policies change results, the workload and the world's luck are
// the same under every policy, Stop keeps what ran, a snapshot start, scenario and policy checks
// naming their fields, the summary's numbers, CSV, workspace files and masked snapshots.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "repute";
import { createRun, START_AT } from "../../www/sim/core/simulate.js";
import { SCENARIOS, checkScenario, defaultProfile, clone } from "../../www/sim/core/scenario.js";
import { outcomeOf, TIMEOUT_MS } from "../../www/sim/core/world.js";
import { fieldsOf, fieldOfError, checkPolicy, plainRotation, parseText, withField, policyFile, diffConfigs } from "../../www/sim/core/policies.js";
import { summaryRows, pairVerdict, formatValue } from "../../www/sim/core/compare.js";
import { seriesCsv, summaryCsv } from "../../www/sim/core/csv.js";
import { chartsFor } from "../../www/sim/core/chart-data.js";
import { maskSnapshot } from "../../www/sim/core/snapshot.js";
import { newWorkspace, readWorkspace, workspaceFile } from "../../www/sim/core/workspace.js";

const defaults = new Pool({ seed: 0 }).config();
const plain = plainRotation(defaults);

function simulate(id, config = defaults, seed = 42, edit = (s) => s) {
  const run = createRun({ Pool, scenario: edit(SCENARIOS[id].make()), config, seed });
  run.advance();
  return run.finish();
}

test("the same seed gives the same results; another seed other results", () => {
  const a = simulate("flaky-set");
  const b = simulate("flaky-set");
  assert.deepEqual(b.summary, a.summary);
  assert.deepEqual(b.series, a.series);
  assert.ok(a.meta.requests > 40_000, `an hour of traffic: ${a.meta.requests}`);
  const c = simulate("flaky-set", defaults, 43);
  assert.notDeepEqual(c.summary, a.summary);
});

test("reputation and plain rotation give different results, on the same workload", () => {
  for (const id of Object.keys(SCENARIOS)) {
    const rep = simulate(id);
    const rot = simulate(id, plain);
    assert.notDeepEqual(rep.summary, rot.summary, id);
    assert.equal(rot.summary.cooldowns, 0, `${id}: plain rotation never cools`);
    assert.ok(rep.summary.cooldowns > 0, `${id}: reputation cools`);
    // Common random numbers: the same acquires arrive, bucket by bucket, under both policies.
    assert.deepEqual(rep.series.contexts.map((c) => c.attempts), rot.series.contexts.map((c) => c.attempts), id);
  }
  // Where some resources are bad, reputation routes around them and does better.
  for (const id of ["flaky-set", "datacenter-ban", "slow-tier"]) {
    const rep = simulate(id).summary;
    const rot = simulate(id, plain).summary;
    assert.ok(rep.successRate > rot.successRate + 0.02, `${id}: ${rep.successRate} vs ${rot.successRate}`);
  }
  const flaky = simulate("flaky-set").summary.setShare.flaky;
  assert.ok(flaky < 0.1, `reputation sends little to the flaky set: ${flaky}`);
  assert.ok(Math.abs(simulate("flaky-set", plain).summary.setShare.flaky - 0.2) < 0.08, "plain rotation spreads evenly");
});

test("a site-wide outage: reputation cools and rejects, then recovers; plain rotation is back the moment the site is", () => {
  const rep = simulate("site-outage").summary;
  const rot = simulate("site-outage", plain).summary;
  assert.equal(rep.incidents.length, 1);
  const [inc] = rep.incidents;
  assert.deepEqual([inc.context, inc.type, inc.startS, inc.endS, inc.sets.length], ["shop-us", "outage", 600, 1200, 3]);
  assert.ok(rep.perContext["shop-us"].rejected > 0);
  assert.ok(rep.incidents[0].recoverS > 0, `reputation takes time to trust shop-us again: ${rep.incidents[0].recoverS}`);
  // Counted from the incident's start: a site down for 10 minutes fails everything for 10 minutes.
  assert.equal(rot.incidents[0].recoverS, 600);
  assert.ok(rep.incidents[0].recoverS > 600);
  assert.equal(rep.worstRecoverS, rep.incidents[0].recoverS);
});

test("the world: incidents fail every request they cover; probabilities and latency follow the profile", () => {
  const p = defaultProfile();
  p.failures.BLOCKED = 0.2;
  p.incidents = [{ type: "outage", startS: 10, endS: 20 }, { type: "ban", startS: 30, endS: 40 }];
  assert.deepEqual(outcomeOf(p, 15, 1, 0), { ok: false, failure: "TIMEOUT", latencyMs: TIMEOUT_MS });
  assert.equal(outcomeOf(p, 30, 1, 0).failure, "BLOCKED");
  assert.notEqual(outcomeOf(p, 20, 1, 0).failure, "TIMEOUT", "the end is exclusive");
  const outcomes = Array.from({ length: 20_000 }, (_, n) => outcomeOf(p, 0, 7, n));
  const blocked = outcomes.filter((o) => !o.ok).length / outcomes.length;
  assert.ok(Math.abs(blocked - 0.2) < 0.015, `P(BLOCKED) ≈ 0.2: ${blocked}`);
  const latencies = outcomes.map((o) => o.latencyMs).sort((a, b) => a - b);
  assert.ok(Math.abs(latencies[10_000] - 200) < 10, `median ≈ 200 ms: ${latencies[10_000]}`);
  assert.ok(Math.abs(latencies[19_000] - 600) < 40, `p95 ≈ 600 ms: ${latencies[19_000]}`);
  assert.deepEqual(outcomeOf(p, 0, 7, 123), outcomes[123], "a draw depends only on the seed and the request");
});

test("Stop keeps what ran: the result covers the simulated time reached", () => {
  const run = createRun({ Pool, scenario: SCENARIOS["flaky-set"].make(), config: defaults, seed: 42 });
  assert.equal(run.advance(600_000), false);
  assert.equal(run.doneMs, 600_000);
  const r = run.finish();
  assert.equal(r.meta.stoppedAtS, 600);
  assert.equal(r.series.startS.length, 20, "10 minutes of 30 s points");
  for (const c of r.series.contexts) assert.equal(c.attempts.length, 20);
  const full = simulate("flaky-set");
  assert.deepEqual(r.series.contexts[0].attempts, full.series.contexts[0].attempts.slice(0, 20), "slices change nothing");
});

test("a run starts from a snapshot: its resources, reputation and time", () => {
  let now = START_AT;
  const live = new Pool({ seed: 1, now: () => now });
  for (let i = 0; i < 6; i++) live.register("PROXY", `http://u:pw${i}@10.0.0.${i}:8080`);
  live.register("ACCOUNT", "acct-1");
  const lease = live.acquire("shop-us");
  for (let i = 0; i < 2; i++) live.report(lease.kind, lease.value, "shop-us", { ok: false, failure: "BLOCKED" });
  now += 60_000;
  const snap = maskSnapshot(live.snapshot(), Pool.maskValue);
  assert.ok(!snap.json.includes("pw"), "credentials masked");
  const scenario = SCENARIOS["flaky-set"].make(); // good-1 20, good-2 20, flaky 10 (PROXY)
  const run = createRun({ Pool, scenario, config: defaults, seed: 42, snapshot: snap.json });
  run.advance();
  const r = run.finish();
  assert.equal(r.meta.startAt, now);
  assert.equal(r.meta.resources, 7);
  assert.deepEqual(r.series.sets.map((s) => s.name), ["good-1", "good-2", "flaky", "snapshot ACCOUNT"]);
  assert.equal(r.summary.attempts, simulate("flaky-set").summary.attempts, "same workload");
  // 6 proxies over sets of 20, 20, 10: 2 + 3 + 1 (by position), and the account set of its own.
  assert.ok(r.series.sets.every((s) => s.leases.some((n) => n > 0)), "every set serves");
  assert.ok(r.series.states.COOLING[0] >= 1, "the cell cooling in the snapshot still cools");
});

test("scenario problems name their fields", () => {
  const s = SCENARIOS["flaky-set"].make();
  s.sets[1].count = 0;
  s.contexts[0].rate = -1;
  s.profiles.flaky["shop-us"].failures.BLOCKED = 0.9;
  s.profiles["good-1"]["search-eu"].incidents = [{ type: "storm", startS: 10, endS: 5 }];
  const paths = checkScenario(s).map((p) => p.path);
  assert.deepEqual(paths, ["sets[1].count", "contexts[0].rate", "profiles.good-1.search-eu.incidents[0].type",
    "profiles.good-1.search-eu.incidents[0].endS", "profiles.flaky.shop-us.failures"]);
  assert.deepEqual(checkScenario(SCENARIOS["flaky-set"].make()), []);
  assert.throws(() => createRun({ Pool, scenario: s, config: defaults, seed: 1 }), (e) => e.code === "INVALID_SCENARIO" && e.problems.length === 5);
});

test("policy fields come from the engine's config; the engine's errors are put beside their field", () => {
  const paths = fieldsOf(defaults).map((f) => f.path);
  for (const key of Object.keys(defaults)) assert.ok(paths.some((p) => p === key || p.startsWith(`${key}.`)), key);
  assert.ok(paths.includes("penalties.BLOCKED") && paths.includes("halfOpenCauses"));
  // A field the engine adds later appears by itself, typed by its value.
  const later = fieldsOf({ ...defaults, laterGapMs: 0, laterByContext: {}, flag: true });
  assert.deepEqual(later.slice(-3).map((f) => [f.path, f.type]), [["laterGapMs", "number"], ["laterByContext", "json"], ["flag", "boolean"]]);
  const cases = [
    [{ coolAfter: 0 }, "coolAfter"],
    [{ penalties: { BLOCKED: -1 } }, "penalties.BLOCKED"],
    [{ halfOpenCauses: ["NOPE"] }, "halfOpenCauses"],
    [{ coolAfter: "x" }, "coolAfter"],
    [{ cooldownBaseMs: { SLOW: 0.5 } }, "cooldownBaseMs.SLOW"],
  ];
  for (const [patch, path] of cases) {
    const config = { ...defaults, ...patch, ...(patch.penalties ? { penalties: { ...defaults.penalties, ...patch.penalties } } : {}),
      ...(patch.cooldownBaseMs ? { cooldownBaseMs: { ...defaults.cooldownBaseMs, ...patch.cooldownBaseMs } } : {}) };
    const problem = checkPolicy(Pool, config);
    assert.equal(problem?.path, path, JSON.stringify(patch));
    assert.match(problem.message, new RegExp(`^${path.replace(".", "\\.")}`));
  }
  assert.equal(checkPolicy(Pool, defaults), null);
  assert.equal(fieldOfError("something else went wrong", paths), null);
  assert.deepEqual(withField(defaults, "penalties.SLOW", parseText("number", "1.5")).penalties.SLOW, 1.5);
  assert.deepEqual(parseText("list", "BLOCKED, SLOW,"), ["BLOCKED", "SLOW"]);
  assert.equal(parseText("number", "12abc"), "12abc", "left for the engine to refuse");
  assert.deepEqual(diffConfigs(defaults, plain).map((d) => d.path).sort(), [
    "coolAfter", "cooldownBaseMs.BLOCKED", "cooldownBaseMs.CONNECTION_RESET", "cooldownBaseMs.SLOW", "cooldownBaseMs.TIMEOUT",
    "cooldownBaseMs.TLS_HANDSHAKE", "maxBackoffExponent", "penalties.BLOCKED", "penalties.CONNECTION_RESET", "penalties.SLOW",
    "penalties.TIMEOUT", "penalties.TLS_HANDSHAKE", "successReward"]);
  // The exported file is a config the engine takes as it is, and it round-trips.
  assert.deepEqual(new Pool({ config: JSON.parse(policyFile(plain)), seed: 0 }).config(), plain);
});

test("plain rotation keeps every score at 0: picks are uniform", () => {
  let now = START_AT;
  const pool = new Pool({ config: plain, seed: 5, now: () => now });
  for (let i = 0; i < 4; i++) pool.register("PROXY", `p${i}`);
  const picks = new Map();
  for (let i = 0; i < 4000; i++) {
    const l = pool.acquire("c");
    picks.set(l.value, (picks.get(l.value) ?? 0) + 1);
    pool.report(l.kind, l.value, "c", l.value === "p0" ? { ok: false, failure: "BLOCKED" } : { ok: true });
    pool.release(l);
    now += 1;
  }
  for (const n of picks.values()) assert.ok(Math.abs(n - 1000) < 120, `uniform: ${[...picks.values()]}`);
  assert.ok(pool.resources().every((r) => r.cells.every((c) => c.score === 0 && c.state === "HEALTHY")));
});

test("the summary table and the winner of a pair", () => {
  const a = simulate("datacenter-ban");
  const b = simulate("datacenter-ban", plain);
  const rows = summaryRows([a, b]);
  const byKey = Object.fromEntries(rows.map((r) => [r.key, r]));
  assert.equal(byKey.successRate.verdict, "worse");
  assert.equal(byKey.attempts.verdict, "same");
  assert.equal(byKey["share.dc-a"].verdict, null);
  assert.equal(pairVerdict([a, b]).winner, "A");
  assert.equal(pairVerdict([b, a]).winner, "B");
  assert.equal(summaryRows([a]).every((r) => r.verdict === null), true);
  assert.equal(formatValue("percent", 0.1234), "12.3 %");
  assert.equal(formatValue("seconds", null), "not recovered");
  assert.equal(formatValue("seconds", 330), "5 min 30 s");
});

test("every chart has data to draw, for every scenario", () => {
  for (const id of Object.keys(SCENARIOS)) {
    const r = simulate(id);
    for (const chart of chartsFor([r])) {
      const series = chart.series(r.series);
      assert.ok(series.length > 0, `${id} ${chart.id}`);
      for (const [, values] of series) assert.equal(values.length, r.series.startS.length);
      if (chart.id !== "rejected") assert.ok(series.some(([, v]) => v.some((x) => x > 0)), `${id} ${chart.id} draws something`);
    }
  }
});

test("CSV: one line per run and bucket; quoting and formula-looking text made safe", () => {
  const r = simulate("flaky-set", defaults, 1, (s) => ({ ...s, durationS: 120 }));
  const named = clone(r);
  named.series.contexts[0].name = '=cmd,"x"';
  const csv = seriesCsv([named, r], ["A", "B"]);
  const lines = csv.trimEnd().split("\r\n");
  assert.equal(lines.length, 1 + 2 * 4);
  assert.ok(lines[0].startsWith(`run,bucket_start_s,"'=cmd,""x"" acquires"`), lines[0]);
  assert.match(lines[1], /^A,0,\d+,/);
  const sum = summaryCsv(summaryRows([r, r]), ["A", "B"]);
  assert.match(sum.split("\r\n")[0], /^measure,A,B,A \(shown\),B \(shown\),B against A$/);
});

test("masked snapshots: no credential, values that mask alike kept apart, restorable", () => {
  const pool = new Pool({ seed: 1, now: () => START_AT });
  pool.register("PROXY", "http://u:s3cret-1@h.example:1");
  pool.register("PROXY", "http://u:s3cret-2@h.example:1");
  pool.block("PROXY", "http://u:s3cret-2@h.example:1", { permanent: true });
  const m = maskSnapshot(pool.snapshot(), Pool.maskValue);
  assert.ok(!m.json.includes("s3cret"));
  const back = Pool.restore(m.json, { seed: 1 });
  assert.deepEqual(back.resources().map((r) => [r.value, r.blocked]), [
    ["http://u:***@h.example:1", null], ["http://u:***@h.example:1 #2", { permanent: true }]]);
  assert.throws(() => maskSnapshot("{}", Pool.maskValue), /not a repute snapshot/);
  assert.throws(() => maskSnapshot("nope", Pool.maskValue), /not valid JSON/);
});

test("workspace files round-trip; bad ones are refused; new engine fields are filled in", () => {
  const ws = newWorkspace(defaults);
  ws.seed = 7;
  assert.deepEqual(readWorkspace(workspaceFile(ws), defaults), ws);
  const old = JSON.parse(workspaceFile(ws));
  delete old.policies.A.windowSize;
  assert.equal(readWorkspace(JSON.stringify(old), defaults).policies.A.windowSize, defaults.windowSize);
  assert.throws(() => readWorkspace("{}", defaults), /not a console workspace/);
  assert.throws(() => readWorkspace(JSON.stringify({ ...ws, version: 9 }), defaults), /version 9/);
  assert.throws(() => readWorkspace(JSON.stringify({ ...ws, seed: -1 }), defaults), /seed/);
  assert.deepEqual(diffConfigs(ws.policies.B, plain), []);
});
