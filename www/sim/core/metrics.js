// What a simulation run measures, bucket by bucket of simulated time, and the summary made of
// it. `Recorder` counts (acquires, rejections, leases per set, outcomes, cooldowns, cells by
// state); `summarize` turns its series into the numbers of the summary table: success rate
// (overall and per context), rejections, time to recover after each incident, share served by
// each set. Owns no engine and no world: simulate.js feeds it.
import { FAILURES, profileOf } from "./scenario.js";

/** Cell states counted in the "cells by state" chart, in the order of their severity. */
export const STATES = ["HEALTHY", "RECOVERING", "COOLING", "BLOCKLISTED"];
/** Within this many points of its usual success rate a context counts as recovered. */
export const RECOVERY_TOLERANCE = 0.05;

const zeros = (n) => new Array(n).fill(0);

export class Recorder {
  /** @param {{contexts: string[], sets: string[], bucketMs: number, buckets: number}} shape */
  constructor({ contexts, sets, bucketMs, buckets }) {
    this.bucketMs = bucketMs;
    this.buckets = buckets;
    this.contexts = contexts.map((name) => ({
      name,
      attempts: zeros(buckets),
      rejected: zeros(buckets),
      successes: zeros(buckets),
      failures: Object.fromEntries(FAILURES.map((f) => [f, zeros(buckets)])),
      cooldowns: zeros(buckets),
      recoveries: zeros(buckets),
    }));
    this.contextIndex = new Map(contexts.map((c, i) => [c, i]));
    this.sets = sets.map((name) => ({ name, leases: zeros(buckets) }));
    this.states = Object.fromEntries(STATES.map((s) => [s, zeros(buckets)]));
    this.leaseExpiries = 0;
  }

  /** The bucket of an instant `ms` after the run's start (the last one for the run's tail). */
  bucketOf(ms) {
    return Math.min(this.buckets - 1, Math.max(0, Math.floor(ms / this.bucketMs)));
  }

  /** An acquire in context `c` (index) in bucket `b`: leased through set `s`, or rejected (s < 0). */
  acquired(c, b, s) {
    this.contexts[c].attempts[b]++;
    if (s < 0) this.contexts[c].rejected[b]++;
    else this.sets[s].leases[b]++;
  }

  /** The outcome of a request acquired in bucket `b` of context `c`. */
  completed(c, b, outcome) {
    if (outcome.ok) this.contexts[c].successes[b]++;
    else this.contexts[c].failures[outcome.failure][b]++;
  }

  /** Drained engine events (`at` in epoch ms; the run started at `t0`). */
  events(list, t0) {
    for (const e of list) {
      if (e.type === "RESOURCE_COOLED" || e.type === "RESOURCE_RECOVERED") {
        const c = this.contextIndex.get(e.context);
        if (c === undefined) continue; // a context of a snapshot the workload does not use
        const series = e.type === "RESOURCE_COOLED" ? this.contexts[c].cooldowns : this.contexts[c].recoveries;
        series[this.bucketOf(e.at - t0)]++;
      } else if (e.type === "LEASE_EXPIRED") {
        this.leaseExpiries++;
      }
    }
  }

  /** Cells by state at the end of bucket `b`, from `pool.resources()`. */
  sampleStates(b, resources) {
    for (const r of resources) for (const cell of r.cells) this.states[cell.state][b]++;
  }

  /** The series as plain JSON (what a run's result carries and the charts draw). */
  series() {
    return {
      bucketS: this.bucketMs / 1000,
      startS: Array.from({ length: this.buckets }, (_, b) => (b * this.bucketMs) / 1000),
      contexts: this.contexts,
      sets: this.sets,
      states: this.states,
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
  const failures = Object.fromEntries(FAILURES.map((f) => [f, 0]));
  for (const c of series.contexts) {
    const a = sum(c.attempts);
    const s = sum(c.successes);
    const r = sum(c.rejected);
    perContext[c.name] = { attempts: a, successRate: ratio(s, a), rejected: r };
    attempts += a;
    rejected += r;
    successes += s;
    cooldowns += sum(c.cooldowns);
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
    perContext,
    setShare,
    incidents,
    worstRecoverS: incidents.length === 0 || open ? null : Math.max(...incidents.map((i) => i.recoverS)),
    leaseExpiries: series.leaseExpiries,
  };
}

/**
 * Each incident of the scenario (one entry per context, type and window, listing the sets it
 * hits) with `recoverS`: from its end to the start of the first chart bucket at or after the end
 * whose success rate in that context is back within RECOVERY_TOLERANCE of the context's usual
 * rate (over the buckets no incident of that context touches); null when that never happens
 * within the run (or the incident outlasts it, or there is no usual rate to go back to).
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
    for (let b = 0; b < startS.length; b++) {
      if (startS[b] < inc.endS || rates[b] === null) continue;
      if (rates[b] >= usual - RECOVERY_TOLERANCE) {
        inc.recoverS = startS[b] - inc.endS;
        break;
      }
    }
  }
  return out;
}
