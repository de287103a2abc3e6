// The console's SPEC v2 logic in Node, on the real engine (no DOM): the simulation's groups
// (a set's group, a context's preference list passed to acquire), the tiered fleet escalating
// to residential for the banned site only and returning once datacenter recovers, a site-wide
// outage with and without the cooling cap, pacing from a policy, the v2 policy fields checked
// by the engine beside their field, the scenario's group checks; and live mode's group and
// paced / held filters and event wording over views and events of a real pool.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "repute";
import { createRun, START_AT } from "../../www/sim/core/simulate.js";
import { SCENARIOS, checkScenario, groupsText, parseGroupsText } from "../../www/sim/core/scenario.js";
import { fieldsOf, checkPolicy, POLICIES } from "../../www/sim/core/policies.js";
import { summaryRows } from "../../www/sim/core/compare.js";
import { chartsFor } from "../../www/sim/core/chart-data.js";
import { seriesCsv } from "../../www/sim/core/csv.js";
import { table, visibleRows, NO_GROUP, FLAGS } from "../../www/live/model.js";
import { describe as describeEvent } from "../../www/live/event-text.js";
import { assertEscalatesAndReturns } from "./_groups-support.mjs";

const defaults = new Pool({ seed: 0 }).config();

function simulate(id, config = defaults, seed = 42, edit = (s) => s) {
  const run = createRun({ Pool, scenario: edit(SCENARIOS[id].make()), config, seed });
  run.advance();
  return run.finish();
}

test("tiered fleet: shop-us escalates to residential during the ban and returns when datacenter recovers; search-eu never moves", () => {
  const r = simulate("tiered-fleet");
  const phases = assertEscalatesAndReturns(assert, r.series);
  // The by-group series add up to the leases (acquires that were not rejected).
  for (const c of r.series.contexts) {
    const byGroup = Object.values(c.byGroup).reduce((n, v) => n + v.reduce((a, b) => a + b, 0), 0);
    const leased = c.attempts.reduce((a, b) => a + b, 0) - c.rejected.reduce((a, b) => a + b, 0);
    assert.equal(byGroup, leased, c.name);
  }
  assert.deepEqual(Object.keys(r.series.contexts[0].byGroup).sort(), ["datacenter", "residential"]);
  // The summary says it per context, and the groups chart applies.
  const rows = new Map(summaryRows([r]).map((row) => [row.key, row.values[0]]));
  const shopRes = rows.get("groupShare.shop-us.residential");
  assert.ok(shopRes > 0.5 && shopRes < 0.95, `shop-us spent most of the run escalated: ${shopRes} (${JSON.stringify(phases)})`);
  assert.equal(rows.get("groupShare.search-eu.residential"), undefined, "search-eu never leased from residential");
  assert.ok(chartsFor([r]).some((c) => c.id === "groups"));
  assert.match(seriesCsv([r], ["A"]).split("\r\n")[0], /shop-us leases group datacenter,shop-us leases group residential/);
  // Without the preference list, the same fleet is one pool: residential serves shop-us before the ban too.
  const flat = simulate("tiered-fleet", defaults, 42, (s) => ({ ...s, contexts: s.contexts.map(({ groups, ...c }) => c) }));
  const flatShare = flat.summary.perContext["search-eu"].groupShare.residential;
  assert.ok(flatShare > 0.1, `without groups residential takes its share everywhere: ${flatShare}`);
});

test("site-wide outage: with the cooling cap most of the pool stays in rotation, held; without it the pool is parked", () => {
  const preset = SCENARIOS["outage-cooling-cap"];
  assert.deepEqual(preset.policies, { A: "defaults", B: "cooling-cap" });
  const capped = POLICIES["cooling-cap"].make(defaults);
  assert.equal(capped.maxCoolingPercent, 10);
  const a = simulate("outage-cooling-cap", POLICIES.defaults.make(defaults)).summary;
  const b = simulate("outage-cooling-cap", capped).summary;
  const text = JSON.stringify({ a: [a.peakCooling, a.peakHeld, a.suppressed], b: [b.peakCooling, b.peakHeld, b.suppressed] });
  assert.ok(a.peakCooling >= 40, `without the cap nearly all 50 cool: ${text}`);
  assert.ok(b.peakCooling <= 6, `with a 10 % cap at most 5 cool at once (at a chart point, in shop-us, plus noise elsewhere): ${text}`);
  assert.equal(a.peakHeld, 0);
  assert.ok(b.peakHeld >= 40, `the rest is held in rotation: ${text}`);
  assert.equal(a.suppressed, 0);
  assert.ok(b.suppressed > 0);
  // In rotation while the site is down, so ready the moment it is back: fewer rejections, a quicker recovery.
  assert.ok(b.perContext["shop-us"].rejected < a.perContext["shop-us"].rejected, `${b.perContext["shop-us"].rejected} vs ${a.perContext["shop-us"].rejected}`);
  assert.ok(b.incidents[0].recoverS < a.incidents[0].recoverS, `${b.incidents[0].recoverS} vs ${a.incidents[0].recoverS}`);
  const rows = summaryRows([{ summary: a }, { summary: b }]);
  const peak = rows.find((r) => r.key === "peakCooling");
  assert.deepEqual(peak.values, [a.peakCooling, b.peakCooling]);
  assert.ok(rows.some((r) => r.key === "peakHeld") && rows.some((r) => r.key === "suppressed"));
});

test("pacing from a policy: paced cells are counted and charted, and acquires are spaced out", () => {
  const paced = simulate("flaky-set", { ...defaults, minGapMs: 20_000 });
  const plain = simulate("flaky-set");
  assert.ok(Math.max(...paced.series.paced) > 0, "cells paced at chart points");
  assert.equal(Math.max(...plain.series.paced), 0);
  assert.ok(chartsFor([paced]).some((c) => c.id === "held"), "the held / paced chart applies");
  assert.ok(!chartsFor([plain]).some((c) => c.id === "held" || c.id === "groups"), "a v1-style run shows the charts it always did");
  // 50 resources, two contexts at 8 and 4 per second, one use per cell per 20 s: far fewer than asked.
  assert.ok(paced.summary.rejected > plain.summary.rejected + 1000, `${paced.summary.rejected} vs ${plain.summary.rejected}`);
});

test("the v2 policy fields come from the engine and its errors are put beside them", () => {
  const paths = fieldsOf(defaults).map((f) => f.path);
  for (const p of ["minGapMs", "minGapMsByContext", "maxCoolingPercent"]) assert.ok(paths.includes(p), p);
  const cases = [
    [{ maxCoolingPercent: 0 }, "maxCoolingPercent"],
    [{ maxCoolingPercent: 101 }, "maxCoolingPercent"],
    [{ minGapMs: -1 }, "minGapMs"],
    [{ minGapMsByContext: { "shop-us": -5 } }, "minGapMsByContext"],
    [{ minGapMsByContext: { "shop \"x\"": 1.5 } }, "minGapMsByContext"],
    [{ minGapMsByContext: { "checkout.shop-us.example": -1 } }, "minGapMsByContext"],
    [{ minGapMsByContext: { "a b": 2 ** 40 } }, "minGapMsByContext"],
    [{ minGapMsByContext: [] }, "minGapMsByContext"],
  ];
  for (const [patch, path] of cases) {
    const problem = checkPolicy(Pool, { ...defaults, ...patch });
    assert.equal(problem?.path, path, `${JSON.stringify(patch)}: ${problem?.message}`);
  }
  assert.equal(checkPolicy(Pool, { ...defaults, minGapMs: 1000, minGapMsByContext: { "shop-us": 0 }, maxCoolingPercent: 25 }), null);
});

test("scenario groups: checked with their field's path; the preference list as text round-trips", () => {
  const s = SCENARIOS["tiered-fleet"].make();
  assert.deepEqual(checkScenario(s), []);
  assert.deepEqual(s.contexts[0].groups, ["datacenter", "residential"]);
  assert.equal(s.sets[2].group, "residential");
  s.sets[0].group = "  ";
  s.sets[1].group = "x".repeat(65);
  s.contexts[0].groups = ["datacenter", "datacenter"];
  s.contexts[1].groups = [];
  const problems = checkScenario(s);
  assert.deepEqual(problems.map((p) => p.path), ["sets[0].group", "sets[1].group", "contexts[0].groups", "contexts[1].groups"]);
  assert.match(problems[2].message, /entry 2 repeats the group datacenter/);
  s.sets[0].group = null; // null: no group
  s.sets[1].group = "é".repeat(32); // 64 bytes
  s.contexts[0].groups = Array.from({ length: 16 }, (_, i) => `g${i}`);
  s.contexts[1].groups = [null, "residential"];
  assert.deepEqual(checkScenario(s), []);
  s.contexts[0].groups.push("g16");
  assert.deepEqual(checkScenario(s).map((p) => p.path), ["contexts[0].groups"]);
  assert.equal(groupsText(["dc", null, "res"]), "dc, (none), res");
  assert.deepEqual(parseGroupsText(" dc ,(none), res"), ["dc", null, "res"]);
  assert.equal(parseGroupsText("  "), undefined);
  assert.equal(groupsText(undefined), "");
  // A context preferring the resources without a group, in a fleet with none, acquires as before.
  const plain = simulate("site-outage", defaults, 7, (x) => ({ ...x, durationS: 900 }));
  const none = simulate("site-outage", defaults, 7, (x) => ({ ...x, durationS: 900, contexts: x.contexts.map((c) => ({ ...c, groups: [null] })) }));
  // The same candidates and draws: the same picks.
  assert.deepEqual([none.summary.successRate, none.summary.setShare], [plain.summary.successRate, plain.summary.setShare]);
  assert.equal(none.summary.perContext["shop-us"].groupShare["no group"], 1);
});

/** A small real pool with groups, a paced cell and a held cell, on a fixed clock. */
function v2Pool() {
  const now = START_AT;
  const pool = new Pool({ seed: 3, now: () => now, config: { minGapMsByContext: { "search-eu": 60_000 }, maxCoolingPercent: 10 } });
  for (let i = 1; i <= 6; i++) pool.register("PROXY", `dc-${i}`, { group: "dc" });
  pool.register("PROXY", "res-1", { group: "residential" });
  pool.register("PROXY", "plain-1");
  pool.register("PROXY", "plain-1", { group: "residential" }); // moves it: RESOURCE_REGROUPED
  pool.register("PROXY", "plain-1", { group: null }); // and out again
  const fail = { ok: false, failure: "BLOCKED" };
  for (const v of ["dc-1", "dc-2"]) for (let k = 0; k < 2; k++) pool.report("PROXY", v, "checkout-us", fail);
  pool.report("PROXY", "res-1", "search-eu", { ok: true, latencyMs: 100 });
  return { pool, now };
}

test("live mode's model: group filter (no group too), paced and held filters over a real pool's views", () => {
  const { pool, now } = v2Pool();
  const t = table(pool.resources());
  assert.deepEqual(t.groups, ["dc", "residential"]);
  assert.equal(t.ungrouped, true);
  const names = (filter) => visibleRows(t.rows, filter, now).map((r) => r.resource.value);
  assert.deepEqual(names({ group: "dc" }), ["dc-1", "dc-2", "dc-3", "dc-4", "dc-5", "dc-6"]);
  assert.deepEqual(names({ group: NO_GROUP }), ["plain-1"]);
  assert.deepEqual(names({ group: "residential" }), ["res-1"]);
  // 8 registered, cap 10 %: one cell may cool; dc-2's cooldown is suppressed and it is held.
  assert.deepEqual(names({ flag: FLAGS.held }), ["dc-2"]);
  assert.deepEqual(names({ flag: FLAGS.paced }), ["res-1"]);
  assert.deepEqual(names({ flag: FLAGS.paced, context: "checkout-us" }), [], "paced in search-eu only");
  assert.deepEqual(visibleRows(t.rows, { flag: FLAGS.paced }, now + 60_000).length, 0, "pacing ends");
  assert.deepEqual(names({ state: "COOLING" }), ["dc-1"]);
});

test("live mode's event wording: RESOURCE_REGISTERED with its group, RESOURCE_REGROUPED and COOLDOWN_SUPPRESSED of a real pool", () => {
  const { pool } = v2Pool();
  const events = pool.drainEvents();
  const line = (type, value) => describeEvent(events.find((e) => e.type === type && e.value === value));
  assert.equal(line("RESOURCE_REGISTERED", "dc-1"), "PROXY/dc-1 · group dc");
  assert.equal(line("RESOURCE_REGISTERED", "plain-1"), "PROXY/plain-1 · no group");
  const regrouped = events.filter((e) => e.type === "RESOURCE_REGROUPED").map(describeEvent);
  assert.deepEqual(regrouped, ["PROXY/plain-1 · moved to group residential", "PROXY/plain-1 · moved out of its group (now no group)"]);
  assert.equal(line("COOLDOWN_SUPPRESSED", "dc-2"), "PROXY/dc-2 · in checkout-us · cooldown suppressed by the cooling cap: held in rotation · cause BLOCKED");
});
