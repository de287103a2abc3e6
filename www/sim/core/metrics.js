// What a simulation run measures, bucket by bucket of simulated time, and the summary made of
// it. `Recorder` counts (acquires, rejections, leases per set and — when groups are in play —
// per context and group, outcomes, cooldowns started and suppressed by the cooling cap, cells
// by state, cells cooling with their cooldown running, held and paced cells); `summarize` turns its series into the numbers of the summary
// table: success rate (overall and per context), rejections, time to recover after each
// incident (from its start), share served by each set and by each group per context, cooling and held cells at
// their peak. Owns no engine and no world: simulate.js feeds it.
import { FAILURES, profileOf } from "./scenario.js";

/** Cell states counted in the "cells by state" chart, in the order of their severity. */
export const STATES = ["HEALTHY", "RECOVERING", "COOLING", "BLOCKLISTED"];
/** How a lease of a resource without a group is counted in the by-group series. */
export const NO_GROUP_LABEL = "no group";
/** Within this many points of its usual success rate a context counts as recovered. */
export const RECOVERY_TOLERANCE = 0.05;

const zeros = (n) => new Array(n).fill(0);

export class Recorder {
  /** @param {{contexts: string[], sets: string[], bucketMs: number, buckets: number, grouped?: boolean}} shape
   * `grouped`: count leases per context and group (`byGroup`, groups in order of first lease). */
  constructor({ contexts, sets, bucketMs, buckets, grouped = false }) {
    this.bucketMs = bucketMs;
    this.buckets = buckets;
    this.contexts = contexts.map((name) => ({
      name,
      attempts: zeros(buckets),
      rejected: zeros(buckets),
      successes: zeros(buckets),
      failures: Object.fromEntries(FAILURES.map((f) => [f, zeros(buckets)])),
      cooldowns: zeros(buckets),
      suppressed: zeros(buckets),
      recoveries: zeros(buckets),
      ...(grouped ? { byGroup: {} } : {}),
    }));
    this.contextIndex = new Map(contexts.map((c, i) => [c, i]));
    this.sets = sets.map((name) => ({ name, leases: zeros(buckets) }));
    this.states = Object.fromEntries(STATES.map((s) => [s, zeros(buckets)]));
    this.cooling = zeros(buckets);
    this.held = zeros(buckets);
    this.paced = zeros(buckets);
    this.grouped = grouped;
    this.leaseExpiries = 0;
  }

  /** The bucket of an instant `ms` after the run's start (the last one for the run's tail). */
  bucketOf(ms) {
    return Math.min(this.buckets - 1, Math.max(0, Math.floor(ms / this.bucketMs)));
  }

  /** An acquire in context `c` (index) in bucket `b`: leased through set `s` (a resource in
   * `group`, null for none), or rejected (s < 0). */
  acquired(c, b, s, group = null) {
    const ctx = this.contexts[c];
    ctx.attempts[b]++;
    if (s < 0) {
      ctx.rejected[b]++;
      return;
    }
    this.sets[s].leases[b]++;
    if (this.grouped) (ctx.byGroup[group ?? NO_GROUP_LABEL] ??= zeros(this.buckets))[b]++;
  }

  /** The outcome of a request acquired in bucket `b` of context `c`. */
  completed(c, b, outcome) {
    if (outcome.ok) this.contexts[c].successes[b]++;
    else this.contexts[c].failures[outcome.failure][b]++;
  }

  /** Drained engine events (`at` in epoch ms; the run started at `t0`). */
  events(list, t0) {
    for (const e of list) {
      if (e.type === "RESOURCE_COOLED" || e.type === "RESOURCE_RECOVERED" || e.type === "COOLDOWN_SUPPRESSED") {
        const c = this.contextIndex.get(e.context);
        if (c === undefined) continue; // a context of a snapshot the workload does not use
        const ctx = this.contexts[c];
        const series = e.type === "RESOURCE_COOLED" ? ctx.cooldowns : e.type === "RESOURCE_RECOVERED" ? ctx.recoveries : ctx.suppressed;
        series[this.bucketOf(e.at - t0)]++;
      } else if (e.type === "LEASE_EXPIRED") {
        this.leaseExpiries++;
      }
    }
  }

  /** Cells by state, those cooling with their cooldown still running (not yet a half-open
   * candidate), and those held or paced, at pool time `now`, the end of bucket `b`, from
   * `pool.resources()`. */
  sampleStates(b, resources, now) {
    for (const r of resources) {
      for (const cell of r.cells) {
        this.states[cell.state][b]++;
        if (cell.state === "COOLING" && cell.cooldownUntil > now) this.cooling[b]++;
        if (cell.held === true) this.held[b]++;
        if (cell.pacedUntil !== null && cell.pacedUntil !== undefined) this.paced[b]++;
      }
    }
  }

  /** The series as plain JSON (what a run's result carries and the charts draw). */
  series() {
    return {
      bucketS: this.bucketMs / 1000,
      startS: Array.from({ length: this.buckets }, (_, b) => (b * this.bucketMs) / 1000),
      contexts: this.contexts,
      sets: this.sets,
      states: this.states,
      cooling: this.cooling,
      held: this.held,
      paced: this.paced,
      grouped: this.grouped,
      leaseExpiries: this.leaseExpiries,
    };
  }
}

const sum = (a) => a.reduce((x, y) => x + y, 0);
const ratio = (n, d) => (d > 0 ? n / d : null);

/** Successes over attempts of a context in each bucket (null where it had no attempt). */
export function successRates(ctx) {
  return ctx.attempts.map((n, b) => ratio(ctx.successes[b], n));
}

/**
 * The summary of a run from its series: every number of the summary table, and the run's
 * incidents with the time each took to recover from. `scenario` gives the incidents.
 */
export function summarize(series, scenario) {
  const perContext = {};
  let attempts = 0;
  let rejected = 0;
  let successes = 0;
  let cooldowns = 0;
  let suppressed = 0;
  const failures = Object.fromEntries(FAILURES.map((f) => [f, 0]));
  for (const c of series.contexts) {
    const a = sum(c.attempts);
    const s = sum(c.successes);
    const r = sum(c.rejected);
    perContext[c.name] = { attempts: a, successRate: ratio(s, a), rejected: r };
    if (c.byGroup) {
      const served = a - r;
      perContext[c.name].groupShare = Object.fromEntries(Object.entries(c.byGroup).map(([g, v]) => [g, ratio(sum(v), served)]));
    }
    attempts += a;
    rejected += r;
    successes += s;
    cooldowns += sum(c.cooldowns);
    suppressed += sum(c.suppressed);
    for (const f of FAILURES) failures[f] += sum(c.failures[f]);
  }
  const leases = series.sets.map((s) => sum(s.leases));
  const served = sum(leases);
  const setShare = Object.fromEntries(series.sets.map((s, i) => [s.name, ratio(leases[i], served)]));
  const incidents = recoveries(series, scenario);
  const open = incidents.some((i) => i.recoverS === null);
  return {
    attempts,
    served,
    rejected,
    rejectedShare: ratio(rejected, attempts),
    successes,
    successRate: ratio(successes, attempts),
    failures,
    cooldowns,
    suppressed,
    peakCooling: Math.max(0, ...(series.cooling ?? [])),
    peakHeld: Math.max(0, ...series.held),
    perContext,
    setShare,
    incidents,
    worstRecoverS: incidents.length === 0 || open ? null : Math.max(...incidents.map((i) => i.recoverS)),
    leaseExpiries: series.leaseExpiries,
  };
}

/**
 * Each incident of the scenario (one entry per context, type and window, listing the sets it
 * hits) with `recoverS`: the time from the incident's START until the context's success rate is
 * back to usual for good — the end of the last chart bucket below RECOVERY_TOLERANCE of the
 * context's usual rate (over the buckets no incident of that context touches) before the first
 * bucket at or after the incident's end that is back within it; 0 when the rate never dipped.
 * null when it never gets back within the run (or the incident outlasts it, or there is no
 * usual rate to go back to).
 */
function recoveries(series, scenario) {
  const byKey = new Map();
  for (const set of scenario.sets) {
    for (const ctx of scenario.contexts) {
      for (const inc of profileOf(scenario, set.name, ctx.name).incidents) {
        const key = JSON.stringify([ctx.name, inc.type, inc.startS, inc.endS]);
        const entry = byKey.get(key) ?? { context: ctx.name, type: inc.type, startS: inc.startS, endS: inc.endS, sets: [] };
        entry.sets.push(set.name);
        byKey.set(key, entry);
      }
    }
  }
  const out = [...byKey.values()].sort((a, b) => a.startS - b.startS || a.context.localeCompare(b.context));
  for (const inc of out) {
    const ctx = series.contexts.find((c) => c.name === inc.context);
    const windows = out.filter((i) => i.context === inc.context);
    const { bucketS, startS } = series;
    const quiet = startS.map((s, b) => b).filter((b) => windows.every((w) => startS[b] + bucketS <= w.startS || startS[b] >= w.endS));
    const usual = ratio(sum(quiet.map((b) => ctx.successes[b])), sum(quiet.map((b) => ctx.attempts[b])));
    inc.usualSuccessRate = usual;
    inc.recoverS = null;
    if (usual === null) continue;
    const rates = successRates(ctx);
    const low = (b) => rates[b] !== null && rates[b] < usual - RECOVERY_TOLERANCE;
    let lastLow = -1;
    for (let b = 0; b < startS.length; b++) {
      if (startS[b] + bucketS <= inc.startS || rates[b] === null) continue;
      if (startS[b] >= inc.endS && !low(b)) {
        inc.recoverS = lastLow < 0 ? 0 : Math.max(0, startS[lastLow] + bucketS - inc.startS);
        break;
      }
      if (low(b)) lastLow = b;
    }
  }
  return out;
}
