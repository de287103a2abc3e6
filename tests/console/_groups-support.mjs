// Helpers of the console's tests of groups, pacing and the cooling cap (not a test file): the
// share of a context's leases that a group served over a stretch of a run, read from a run's
// series (`byGroup`), and the phases of the ready-made tiered fleet in which to read it.

/** The tiered fleet's phases (s): before the ban, during it (after a minute to escalate), and
 * once the banned cells' 2 h cooldowns have ended and half-open trials have brought them back. */
export const TIERED = { before: [0, 600], during: [660, 1800], returned: [8400, 10800] };

/**
 * The share of `context`'s leases served by `group` in the buckets wholly inside [fromS, toS),
 * and how many leases that is; null share when there were none.
 */
export function groupShare(series, context, group, [fromS, toS]) {
  const c = series.contexts.find((x) => x.name === context);
  let mine = 0;
  let all = 0;
  series.startS.forEach((t, b) => {
    if (t < fromS || t + series.bucketS > toS) return;
    for (const [g, values] of Object.entries(c.byGroup)) {
      all += values[b];
      if (g === group) mine += values[b];
    }
  });
  return { share: all > 0 ? mine / all : null, leases: all };
}

/** The residential share of shop-us and search-eu in each phase of the tiered fleet. */
export function tieredPhases(series) {
  const out = {};
  for (const ctx of ["shop-us", "search-eu"]) {
    out[ctx] = Object.fromEntries(Object.entries(TIERED).map(([phase, span]) => [phase, groupShare(series, ctx, "residential", span)]));
  }
  return out;
}

/** Asserts escalation for shop-us only, and the return: `assert` is node:assert/strict. */
export function assertEscalatesAndReturns(assert, series) {
  const p = tieredPhases(series);
  const text = JSON.stringify(p);
  for (const phase of Object.keys(TIERED)) assert.ok(p["shop-us"][phase].leases > 500, `shop-us is served in every phase: ${text}`);
  assert.ok(p["shop-us"].before.share < 0.02, `before the ban shop-us uses datacenter: ${text}`);
  assert.ok(p["shop-us"].during.share > 0.98, `during the ban shop-us escalates to residential: ${text}`);
  assert.ok(p["shop-us"].returned.share < 0.05, `once datacenter recovers shop-us returns to it: ${text}`);
  for (const phase of Object.keys(TIERED)) assert.ok(p["search-eu"][phase].share < 0.02, `search-eu stays on datacenter (${phase}): ${text}`);
  return p;
}
