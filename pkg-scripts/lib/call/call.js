// `call(host, context, attempt, options)`: one logical call through the pool (README "Resilient
// calls", SPEC §7). Each attempt leases a resource, runs (attempt.js: its own timeout, lease
// renewal, classification by lib/outcome/classify.js), is reported and released — always, also when the
// attempt throws or the call is aborted — and a retryable failure is tried again, within the
// call's one deadline (deadline.js), `retry.maxAttempts` and the process-wide retry budget
// (budget.js), on a resource the call has not used yet, after a full-jitter exponential backoff
// (or the server's `Retry-After`). Read-only calls may be hedged: a second attempt on another
// resource when the first is slow, first success wins. A `bulkhead` (bulkhead.js) bounds
// concurrent calls; `metrics` (metrics.js) hears of calls, attempts, retries and hedges.
// `groups` goes to every acquire and to the nextChangeAt of POOL_EXHAUSTED. Options:
// options.js. Owns the retry and hedge loop. The pool is reached through pool-port.js only, so
// the same loop runs over an embedded pool and over a remote one (`repute/client`).

import { discard, runAttempt } from "./attempt.js";
import { Deadline } from "./deadline.js";
import { CallError, invalidOption, redactSecrets } from "./errors.js";
import { settings } from "./options.js";
import { poolPort } from "./pool-port.js";

const keyOf = (lease) => `${lease.kind}\u0000${lease.value}`;

/**
 * Runs `attempt` as one logical call through `host` (a PoolHost, a Pool, a `repute/client`
 * connection, anything with acquire / report / release; `renew`, `nextChangeAt`, `resources`
 * and `maskValue` are used when present: see pool-port.js).
 * @returns {Promise<unknown>} what the delivering attempt returned
 */
export async function call(host, context, attempt, options = {}) {
  if (typeof attempt !== "function") throw invalidOption("attempt must be a function");
  const s = settings(options);
  const pool = poolPort(host);
  const deadline = new Deadline({ now: s.now, timers: s.timers, deadlineMs: s.deadlineMs, signal: s.signal });
  const hedging = s.hedge !== null;
  const failures = [];
  const tried = new Set();
  /** Attempts not yet ended: a call that ends by an error cancels them before it settles. */
  const running = new Set();
  /** Runs `fn` (sync or async): a failure goes to onError and gives undefined. */
  const guard = async (fn) => {
    try {
      return await fn();
    } catch (e) {
      s.onError(e);
      return undefined;
    }
  };
  const guardSync = (fn) => {
    try {
      return fn();
    } catch (e) {
      s.onError(e);
      return undefined;
    }
  };
  /** A metrics hook (metrics.js), guarded: a failing metric never affects the call. */
  const observe = (hook, ...args) => {
    if (s.metrics && typeof s.metrics[hook] === "function") guardSync(() => s.metrics[hook](...args));
  };
  const began = s.now();
  const stop = (code, message, fields = {}) =>
    new CallError(code, message, { attempts: failures.length, failures: [...failures], ...fields });
  const ended = () =>
    deadline.callerAborted
      ? stop("ABORTED", "the caller aborted the call", { stopReason: "aborted" })
      : stop("DEADLINE_EXCEEDED", `the call's deadline passed after ${failures.length} attempt(s)`, { retryable: true, stopReason: "deadline" });

  /** Runs one attempt on `lease`: reports its outcome (unless it was cancelled because another
   * attempt won), releases the lease, lists a failure. `done` never rejects. */
  const start = (lease, number, timeoutMs) => {
    const cancel = new AbortController();
    const done = (async () => {
      let run;
      try {
        run = await runAttempt(pool, attempt, lease, number, timeoutMs, deadline, s, cancel.signal);
        const v = run.verdict;
        if (v.report !== null && !run.cancelled) {
          const outcome = v.report === "ok" ? { ok: true, latencyMs: run.latencyMs } : { ok: false, failure: v.report, latencyMs: run.latencyMs };
          await guard(() => pool.report(lease, context, outcome));
        }
      } finally {
        await guard(() => pool.release(lease));
      }
      const v = run.verdict;
      observe("attempt", context, run.cancelled ? "cancelled" : (v.report ?? "none"), v.phase, run.latencyMs / 1000);
      if (!v.deliver && !run.cancelled) {
        failures.push({
          attempt: number,
          resource: pool.name(lease),
          failure: v.report === "ok" ? null : v.report,
          phase: v.phase,
          reason: redactSecrets(v.reason),
          ...(v.status === undefined ? {} : { status: v.status }),
          ...(v.code === undefined ? {} : { code: v.code }),
        });
      }
      return run;
    })();
    const handle = { cancel, done };
    running.add(handle);
    done.finally(() => running.delete(handle));
    return handle;
  };

  /** Hedging (read-only calls): when `primary` has not ended after the hedge delay, a second
   * attempt starts on another resource, budget permitting; the first to deliver wins and the
   * other is cancelled (nothing reported for it). Gives the decisive run and the last number. */
  const hedgeRound = async (primary, number) => {
    const delay = s.hedge.delayMs ?? (await guard(() => pool.p95(context, s.acquire))) ?? null;
    if (delay === null || !s.budget.enabled) return { run: await primary.done, number };
    let timer;
    const waited = new Promise((resolve) => (timer = s.timers.setTimeout(() => resolve(null), delay)));
    const first = await Promise.race([primary.done, waited]);
    s.timers.clearTimeout(timer);
    if (first !== null) return { run: first, number };
    const timeoutMs = deadline.attemptTimeout(s.attemptTimeoutMs, number + 1 < s.maxAttempts ? s.reserveMs : 0);
    if (timeoutMs <= 0) return { run: await primary.done, number };
    if (!s.hedge.budget.tryHedge()) {
      observe("hedge", context, "refused");
      return { run: await primary.done, number };
    }
    let lease = null;
    try {
      lease = (await leaseOther(pool, context, tried, guard, s.acquire)).lease;
    } catch (e) {
      s.onError(e); // the pool refused (storage): no hedge, the primary goes on
    }
    if (lease === null) {
      s.hedge.budget.refund();
      return { run: await primary.done, number };
    }
    tried.add(keyOf(lease));
    const second = start(lease, number + 1, timeoutMs);
    const run = await firstDelivering([primary, second]);
    // The other attempt's answer (a 503 the winner made moot, or a success that came too late)
    // is nobody's: its body is cancelled so its connection is freed.
    for (const other of [primary, second]) other.done.then((r) => r !== run && discard(r.result));
    second.done.then((r) => observe("hedge", context, r === run && run.verdict.deliver ? "won" : "lost"));
    return { run, number: number + 1 };
  };

  let leave = null;
  let admitted = false; // past the bulkhead: only such calls give a hedge token back
  let result = "ok";
  let pendingRetry = false; // a retry token taken for an attempt that has not started yet
  try {
    if (s.bulkhead) {
      try {
        leave = await s.bulkhead.enter(deadline.signal);
      } catch (e) {
        if (e instanceof CallError && e.code === "CAPACITY_EXCEEDED") {
          observe("bulkheadRejected");
          throw e;
        }
        throw ended(); // the deadline passed, or the caller aborted, while queued
      }
    }
    admitted = true;
    s.budget.onCall();
    for (let number = 1; ; number++) {
      // The reserve keeps time back for a retry; a deadline too short to hold it still gets
      // its first attempt (with all that is left), not a failure before anything was tried.
      const reserve = number < s.maxAttempts && (number > 1 || deadline.remaining() > s.reserveMs) ? s.reserveMs : 0;
      const timeoutMs = deadline.attemptTimeout(s.attemptTimeoutMs, reserve);
      if (timeoutMs <= 0) throw ended();
      const answer = await leaseOther(pool, context, tried, guard, s.acquire);
      const lease = answer.lease;
      if (lease === null) {
        const retryAfterMs = await guard(() => pool.retryAfterMs(context, s.acquire, answer));
        const why = tried.size === 0 ? "no resource is available" : "no resource the call has not tried is available";
        throw stop("POOL_EXHAUSTED", `${why} in context ${JSON.stringify(context)}`, {
          retryable: true,
          stopReason: tried.size === 0 ? "pool-exhausted" : "no-other-resource",
          ...(retryAfterMs === undefined || Number.isNaN(retryAfterMs) ? {} : { retryAfterMs }),
        });
      }
      tried.add(keyOf(lease));
      pendingRetry = false; // the retry (if this is one) starts: its token is spent
      const primary = start(lease, number, timeoutMs);
      let run;
      if (hedging && number < s.maxAttempts) {
        const hedge = await hedgeRound(primary, number);
        number = hedge.number;
        run = hedge.run;
      } else {
        run = await primary.done;
      }
      const v = run.verdict;
      if (v.deliver) return run.result;
      const last = (code, message, fields) => stop(code, message, { ...fields, ...(run.result === undefined ? {} : { response: run.result }), ...(run.error ? { cause: run.ownError ? run.error : undefined } : {}) });
      if (deadline.callerAborted) {
        discard(run.result);
        throw ended();
      }
      if (!v.retryable) throw last("NOT_RETRYABLE", `attempt ${number} failed and may not be retried: ${v.reason}`, { stopReason: "not-retryable" });
      if (v.reached && !s.repeatable) {
        throw last("NOT_RETRYABLE", `attempt ${number} failed after the request may have reached the server, and the call is not idempotent: ${v.reason}`, {
          stopReason: "not-idempotent",
        });
      }
      if (number >= s.maxAttempts) throw last("ATTEMPTS_EXHAUSTED", `${number} attempt(s) failed; the last: ${v.reason}`, { retryable: true, stopReason: "max-attempts" });
      // Full jitter: uniform in [0, min(maxDelay, base × 2^(retry − 1))); Retry-After as a floor.
      let delay = Math.floor(s.random() * Math.min(s.maxDelayMs, s.baseDelayMs * 2 ** (number - 1)));
      if (v.retryAfterMs !== undefined) {
        if (v.retryAfterMs > s.maxRetryAfterMs) {
          throw last("NOT_RETRYABLE", `the server asked to wait ${v.retryAfterMs} ms, more than retry.maxRetryAfterMs`, { retryable: true, stopReason: "retry-after", retryAfterMs: v.retryAfterMs });
        }
        delay = Math.max(delay, v.retryAfterMs);
      }
      // The next attempt must still get time after the wait (less the reserve it keeps back).
      const nextReserve = number + 1 < s.maxAttempts ? s.reserveMs : 0;
      if (delay >= deadline.remaining() - nextReserve) throw last("DEADLINE_EXCEEDED", `the next attempt would start after the deadline (${number} attempt(s) failed)`, { retryable: true, stopReason: "deadline" });
      if (!s.budget.tryRetry()) {
        observe("budgetExhausted", s.budget.enabled ? "budget" : "disabled");
        throw s.budget.enabled
          ? last("RETRY_BUDGET_EXHAUSTED", "the process-wide retry budget is exhausted", { retryable: true, stopReason: "retry-budget" })
          : last("NOT_RETRYABLE", "retries are switched off (kill switch)", { stopReason: "retries-disabled" });
      }
      pendingRetry = true;
      observe("retry", context);
      discard(run.result);
      try {
        if (delay > 0) await deadline.sleep(delay);
      } catch {
        throw ended();
      }
    }
  } catch (e) {
    result = e instanceof CallError ? e.code : "error";
    throw e;
  } finally {
    if (pendingRetry) guardSync(() => s.budget.refund?.());
    // A call that threw while an attempt ran (its `now`, `timers` or budget broke in a hedge
    // round) stops that attempt and settles once its lease is back.
    for (const a of running) a.cancel.abort();
    await Promise.all([...running].map((a) => a.done));
    guardSync(() => observe("call", context, result, (s.now() - began) / 1000));
    leave?.();
    deadline.dispose();
    if (hedging && admitted) s.hedge.budget.onCallDone();
  }
}

/** The first run that delivers (the others are cancelled, and awaited, so their leases are
 * back); when none does, the run that ended last. */
function firstDelivering(attempts) {
  return new Promise((resolve) => {
    let left = attempts.length;
    attempts.forEach((a, i) =>
      a.done.then((run) => {
        if (run.verdict.deliver && !run.cancelled) {
          attempts.forEach((b, j) => j !== i && b.cancel.abort());
          Promise.all(attempts.map((b) => b.done)).then(() => resolve(run));
        } else if (--left === 0) resolve(run);
      }),
    );
  });
}

/** Leases a resource in `context` that is not in `tried`: one that was tried is kept leased
 * while asking again (so acquire cannot return it), and all of those are released after.
 * `options`: the call's `{ groups }`, or undefined. Gives the pool's last answer
 * (`{ lease: null, … }` when nothing untried could be leased). */
async function leaseOther(pool, context, tried, guard, options) {
  const held = [];
  try {
    for (let i = 0; i <= tried.size; i++) {
      const answer = await pool.acquire(context, options);
      if (answer.lease === null) return answer;
      if (!tried.has(keyOf(answer.lease))) return answer;
      held.push(answer.lease);
    }
    return { lease: null };
  } finally {
    for (const lease of held) await guard(() => pool.release(lease));
  }
}
