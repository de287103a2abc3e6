// The recovery prober of the Node runtime (SPEC §3 "Leaving COOLING").
//
// A cell whose cooldown has expired and whose cause is not a half-open cause is never offered
// to `acquire`: it waits in `pool.dueForRecoveryProbe()` for a host to test it. `startProber`
// is that host loop: every round it lists the due cells, leases each one for real with
// `acquireResource` (so no worker can take it while it is being tested), runs the probe for its
// kind, reports the outcome through the normal `report` and releases the lease. The ready-made
// probe for PROXY resources, `httpProbe`, is http-probe.js; the errors and option checks both
// use are probe-error.js.

import { isKind } from "../vocabulary.js";
import { ProbeError, fn, invalid, positive } from "./probe-error.js";

export { ProbeError };

/**
 * @typedef {import("../../types/pool.d.ts").Kind} Kind
 * @typedef {import("../../types/pool.d.ts").FailureType} FailureType
 * @typedef {{ ok: true, latencyMs?: number } | { ok: false, failure: FailureType, latencyMs?: number }} Outcome
 * @typedef {{ kind: Kind, value: string, context: string, token: number, leasedAt: number, expiresAt: number }} Lease
 */

/**
 * What a probe is asked to test. `signal` aborts when the prober stops or loses the lease; a
 * probe should pass it on to whatever I/O it does.
 * @typedef {object} ProbeRequest
 * @property {Kind} kind
 * @property {string} value   the resource's value (for a proxy, its URL — credentials included)
 * @property {string} context the context whose cell is being tested
 * @property {Lease} lease    the lease the prober holds for the probe's whole duration, as
 *   granted (the prober renews it; the copy given here keeps its first `expiresAt`)
 * @property {AbortSignal} signal
 */

/**
 * A probe: resolves with the outcome to report, or with `null` when it cannot test this
 * resource in this context (nothing is reported and the cell stays due). A probe that throws
 * (or rejects) reports nothing either; the error goes to `onError`.
 * @typedef {(request: ProbeRequest) => Promise<Outcome | null> | Outcome | null} ProbeFn
 */

/**
 * A cell the prober works on: an entry of `dueForRecoveryProbe()` (it has `cooldownUntil`), or
 * a cell on probation that the prober follows up (see `startProber`).
 * @typedef {{ kind: Kind, value: string, context: string, cooldownUntil?: number }} ProbeEntry
 */

/**
 * The pool methods the prober uses: a `Pool` of the `repute` package, or anything with the
 * same methods. `config()` is optional (read for `recoverAfter`).
 * @typedef {object} ProbedPool
 * @property {() => { kind: Kind, value: string, context: string, cooldownUntil: number }[]} dueForRecoveryProbe
 * @property {(kind: Kind, value: string, context: string) => Lease | null} acquireResource
 * @property {(kind: Kind, value: string, context: string, outcome: Outcome) => void} report
 * @property {(lease: Lease) => boolean} release
 * @property {(lease: Lease) => Lease | null} renew
 * @property {() => { recoverAfter: number }} [config]
 */

/**
 * @typedef {object} ProberOptions
 * @property {{ PROXY?: ProbeFn, ACCOUNT?: ProbeFn, SESSION?: ProbeFn }} probes
 *   the probe for each kind; due cells of a kind without a probe are left alone
 * @property {number} [intervalMs=5000] time between the end of a round and the next one
 * @property {number} [jitterMs=1000]   plus a random delay in [0, jitterMs), drawn from `random`
 * @property {number} [concurrency=4]   probes in flight at once, across overlapping rounds too
 * @property {number} [recoverAfter]    successes that end probation; default: `pool.config()`'s
 *   `recoverAfter` when the pool has `config()`, else 2
 * @property {() => number} [random=Math.random]
 * @property {(error: unknown, entry: ProbeEntry | null) => void} [onError]
 *   called with every error the prober swallows: a probe that threw, a `report` that refused
 *   the probe's outcome, a failing pool call; `entry` is null for a round that failed as a whole.
 *   Never called for the aborts caused by `stop()` or a lost lease. `entry.value` may hold proxy
 *   credentials: pass it through `redactCredentials` before logging it.
 * @property {(callback: () => void, ms: number) => unknown} [setTimer=setTimeout]
 * @property {(timer: unknown) => void} [clearTimer=clearTimeout]
 */

/**
 * @typedef {object} Prober
 * @property {() => Promise<void>} stop
 *   cancels the timer, aborts the probes in flight (their `signal`) and resolves once every
 *   lease they held has been released. Nothing is reported for an aborted probe. A probe that
 *   ignores its signal does not hold `stop()` up: its lease is released at the abort and its
 *   result ignored. Idempotent.
 * @property {() => Promise<number>} runOnce
 *   runs one round now; resolves with the number of probes run (probe functions called,
 *   whatever they returned or threw). Rejects only if `dueForRecoveryProbe()` throws. After
 *   `stop()` it resolves with 0 and does nothing.
 */

const OPTION_KEYS = new Set([
  "probes", "intervalMs", "jitterMs", "concurrency", "recoverAfter", "random", "onError", "setTimer", "clearTimer",
]);
const POOL_METHODS = ["dueForRecoveryProbe", "acquireResource", "report", "release", "renew"];

/** The limiter shared by all rounds: `run(task)` runs at most `n` tasks at once, in FIFO order. */
function limiter(n) {
  let active = 0;
  const waiting = [];
  return async function run(task) {
    if (active < n) active += 1;
    else await new Promise((resolve) => waiting.push(resolve)); // the slot is handed over
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active -= 1;
    }
  };
}

const keyOf = (kind, value, context) => JSON.stringify([kind, value, context]);

/** A promise that never resolves and rejects when `signal` aborts. */
const aborted = (signal) =>
  new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });

/**
 * Starts the recovery prober on `pool`.
 *
 * Each round (the first one `intervalMs` + jitter after the start, each next one `intervalMs` +
 * jitter after the previous round ended, so rounds of the timer never overlap) lists
 * `pool.dueForRecoveryProbe()` and, for every entry whose kind has a probe, at most
 * `concurrency` at a time:
 * 1. takes a real lease with `acquireResource(kind, value, context)` — when that gives `null`
 *    (someone holds the resource, or the cell is no longer due) the entry is skipped;
 * 2. runs the probe, renewing the lease every half lease TTL (`expiresAt − leasedAt` of the
 *    lease granted) while it runs; if a renewal is refused (the resource was blocked, or the
 *    lease lapsed) the probe is aborted and nothing is reported;
 * 3. reports the outcome with `report` (nothing when the probe returned `null` or threw);
 * 4. releases the lease, in a `finally`.
 *
 * Probation follow-up: a successful probe moves a probe-due cell to `RECOVERING` (SPEC §3),
 * which `dueForRecoveryProbe()` no longer lists. So that a cell in a context without real
 * traffic still completes probation, the prober keeps probing such a cell on the following
 * rounds until it has reported `recoverAfter − 1` further successes (the cell is then
 * `HEALTHY`), or a probe of it fails (it is then under the normal rules again: real traffic,
 * which may select a `RECOVERING` cell, judges it, and if it cools it will be due again), or
 * it cannot be leased (real traffic holds it, or it is blocked or gone).
 *
 * Errors never escape the timer loop: they go to `onError`. The timers are `unref`'d when they
 * support it: the prober alone does not keep a process alive.
 *
 * @param {ProbedPool} pool
 * @param {ProberOptions} options
 * @returns {Prober}
 */
export function startProber(pool, options) {
  if (typeof pool !== "object" || pool === null) throw invalid("pool must be an object");
  for (const m of POOL_METHODS) fn(`pool.${m}`, pool[m]);
  if (typeof options !== "object" || options === null) throw invalid("options must be an object with probes");
  for (const k of Object.keys(options)) if (!OPTION_KEYS.has(k)) throw invalid(`unknown option ${k}`);
  const {
    probes,
    intervalMs = 5000,
    jitterMs = 1000,
    concurrency = 4,
    recoverAfter,
    random = Math.random,
    onError = () => {},
    setTimer = setTimeout,
    clearTimer = clearTimeout,
  } = options;
  if (typeof probes !== "object" || probes === null) throw invalid("probes must be an object");
  for (const k of Object.keys(probes)) {
    if (!isKind(k)) throw invalid(`probes has an unknown kind ${k}`);
    if (probes[k] !== undefined) fn(`probes.${k}`, probes[k]);
  }
  positive("intervalMs", intervalMs);
  positive("jitterMs", jitterMs, { zero: true });
  positive("concurrency", concurrency, { integer: true });
  if (recoverAfter !== undefined) positive("recoverAfter", recoverAfter, { integer: true });
  for (const [name, f] of [["random", random], ["onError", onError], ["setTimer", setTimer], ["clearTimer", clearTimer]]) {
    fn(name, f);
  }

  const probeOf = (kind) => (Object.hasOwn(probes, kind) ? probes[kind] : undefined);
  const limit = limiter(concurrency);
  /** Aborted by stop(); every probe's own controller follows it. */
  const stopper = new AbortController();
  /** Cells on probation the prober follows up: key → { entry, remaining successes }. */
  const followUps = new Map();
  /** Rounds in progress (timer and runOnce): stop() waits for them. */
  const rounds = new Set();
  let timer;
  let stopping;

  const safeOnError = (error, entry) => {
    try {
      onError(error, entry);
    } catch {
      // a failing error handler must not break the loop
    }
  };

  const probationLength = () => {
    if (recoverAfter !== undefined) return recoverAfter;
    if (typeof pool.config === "function") {
      try {
        const n = pool.config()?.recoverAfter;
        if (Number.isInteger(n) && n >= 1) return n;
      } catch {
        // fall through to the default
      }
    }
    return 2;
  };

  /** Probes one cell; resolves with true when the probe function was called. */
  async function probeOne(entry, followUp) {
    const { kind, value, context } = entry;
    const key = keyOf(kind, value, context);
    if (stopper.signal.aborted) return false;
    let lease;
    try {
      lease = pool.acquireResource(kind, value, context);
    } catch (error) {
      if (followUp) followUps.delete(key);
      // A resource deregistered since the listing is not worth an error report.
      if (error?.code !== "UNKNOWN_RESOURCE") safeOnError(error, entry);
      return false;
    }
    if (!lease) {
      if (followUp) followUps.delete(key);
      return false;
    }

    const control = new AbortController();
    const abort = () => control.abort(stopper.signal.reason);
    stopper.signal.addEventListener("abort", abort, { once: true });
    let held = lease;
    let renewTimer;
    const renewEvery = Math.max(1, Math.floor((lease.expiresAt - lease.leasedAt) / 2));
    const scheduleRenewal = () => {
      renewTimer = setTimer(() => {
        renewTimer = undefined;
        if (control.signal.aborted) return;
        let renewed = null;
        try {
          renewed = pool.renew(held);
        } catch (error) {
          safeOnError(error, entry);
        }
        if (renewed) {
          held = renewed;
          scheduleRenewal();
        } else {
          control.abort(new ProbeError("the probe's lease could not be renewed", "LEASE_LOST"));
        }
      }, renewEvery);
      renewTimer?.unref?.();
    };

    try {
      scheduleRenewal();
      let outcome;
      try {
        // Settles on abort even if the probe ignores its signal: the lease is released now,
        // and whatever the probe does later is ignored.
        const running = Promise.resolve().then(() => probeOf(kind)({ kind, value, context, lease, signal: control.signal }));
        running.catch(() => {});
        outcome = await Promise.race([running, aborted(control.signal)]);
      } catch (error) {
        if (followUp) followUps.delete(key);
        if (!control.signal.aborted) safeOnError(error, entry);
        return true;
      }
      // Stopped or lease lost while probing: whatever came back is not evidence.
      if (control.signal.aborted) return true;
      if (outcome === null) {
        if (followUp) followUps.delete(key);
        return true;
      }
      try {
        pool.report(kind, value, context, outcome);
      } catch (error) {
        if (followUp) followUps.delete(key);
        safeOnError(error, entry);
        return true;
      }
      if (outcome.ok !== true) {
        followUps.delete(key);
      } else if (followUp) {
        const f = followUps.get(key);
        if (f && --f.remaining <= 0) followUps.delete(key);
      } else {
        const remaining = probationLength() - 1;
        if (remaining > 0) followUps.set(key, { entry: { kind, value, context }, remaining });
      }
      return true;
    } finally {
      if (renewTimer !== undefined) clearTimer(renewTimer);
      stopper.signal.removeEventListener("abort", abort);
      try {
        pool.release(held);
      } catch (error) {
        safeOnError(error, entry);
      }
    }
  }

  async function round() {
    const due = pool.dueForRecoveryProbe();
    const work = [];
    const seen = new Set();
    for (const entry of due) {
      if (!probeOf(entry.kind)) continue;
      const key = keyOf(entry.kind, entry.value, entry.context);
      if (seen.has(key)) continue;
      seen.add(key);
      followUps.delete(key); // cooled again: the due entry takes over
      work.push([entry, false]);
    }
    for (const { entry } of followUps.values()) {
      if (probeOf(entry.kind)) work.push([entry, true]);
    }
    const ran = await Promise.all(work.map(([entry, followUp]) => limit(() => probeOne(entry, followUp))));
    return ran.filter(Boolean).length;
  }

  function track(promise) {
    rounds.add(promise);
    const done = () => rounds.delete(promise);
    promise.then(done, done);
    return promise;
  }

  function schedule() {
    if (stopper.signal.aborted) return;
    try {
      let r = random();
      if (!(typeof r === "number" && r >= 0 && r < 1)) r = 0;
      timer = setTimer(tick, intervalMs + Math.floor(r * jitterMs));
      timer?.unref?.();
    } catch (error) {
      safeOnError(error, null);
    }
  }

  function tick() {
    timer = undefined;
    if (stopper.signal.aborted) return;
    let p;
    try {
      p = round();
    } catch (error) {
      p = Promise.reject(error);
    }
    track(p.catch((error) => safeOnError(error, null))).then(schedule);
  }

  schedule();

  return {
    runOnce() {
      if (stopper.signal.aborted) return Promise.resolve(0);
      return track(round());
    },
    stop() {
      if (!stopping) {
        stopper.abort(new ProbeError("the prober was stopped", "ABORTED"));
        if (timer !== undefined) clearTimer(timer);
        timer = undefined;
        followUps.clear();
        stopping = Promise.allSettled([...rounds]).then(() => {});
      }
      return stopping;
    },
  };
}
