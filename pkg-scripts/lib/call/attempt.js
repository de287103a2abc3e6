// One attempt of a call (call.js): runs the caller's `attempt` under its own timeout, the
// call's deadline and signal, and a hedge's cancel; renews its lease every half TTL (a refused
// renewal aborts it); marks its phase; and classifies what happened — by the caller's
// `classify` when it answers, else by the table (lib/outcome/classify.js). Never rejects. Reports nothing
// itself: call.js reports, releases and decides what comes next. `discard` frees an answer
// nobody will read (one that came after its attempt was cut, a retried or losing one).

import { classifyError, classifyResult, phaseName } from "../outcome/classify.js";
import { CallError, invalidOption } from "./errors.js";
import { FAILURE_TYPES } from "../vocabulary.js";

/** Discards a result the caller will not see (frees its connection). */
export function discard(result) {
  try {
    const body = result?.body;
    if (typeof body?.cancel === "function") body.cancel().catch(() => {});
    else if (typeof body?.dump === "function") body.dump().catch(() => {});
  } catch {
    // nothing to free
  }
}

/** One attempt under its own timeout and the call's signal; never rejects: whatever throws in
 * its own bookkeeping (a caller's `now` or `timers`, a result whose headers cannot be read) is
 * the attempt's error, as if the attempt had thrown it. `pool`: the call's pool port
 * (pool-port.js). */
export async function runAttempt(pool, attempt, lease, number, timeoutMs, deadline, s, cancel) {
  const controller = new AbortController();
  let result;
  let timer = null;
  const onCancel = () => controller.abort(new CallError("ABORTED", `attempt ${number} lost the race to a hedge`, { stopReason: "hedge-lost" }));
  cancel.addEventListener("abort", onCancel, { once: true });
  let timedOut = false;
  let lost = false;
  let phase = null;
  // The lease is renewed every half TTL while the attempt runs; a refused renewal (the
  // resource was blocked, or the lease lapsed) aborts the attempt: it no longer holds the
  // resource exclusively.
  const every = Math.floor((lease.expiresAt - lease.leasedAt) / 2);
  let renewal = null;
  let ended = false;
  // A remote pool answers later: a renewal that comes back after the attempt ended does nothing.
  const renew = async () => {
    renewal = null;
    let next = null;
    try {
      next = await pool.renew(lease);
    } catch (e) {
      s.onError(e);
    }
    if (ended) return;
    if (next) {
      renewal = s.timers.setTimeout(renew, every);
      return;
    }
    renewal = null;
    lost = true;
    controller.abort(new CallError("NOT_RETRYABLE", `attempt ${number} lost its lease`, { stopReason: "lease-lost" }));
  };
  const onEnd = () => controller.abort(deadline.signal.reason);
  deadline.signal.addEventListener("abort", onEnd, { once: true });
  const abortedP = new Promise((_, reject) => controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true }));
  abortedP.catch(() => {});
  // The caller's classify and isBlocked: one that throws (or gives a bad verdict) is reported
  // to onError and the default classification applies.
  const byCaller = async (seen) => {
    if (!s.classify) return undefined;
    try {
      const v = await s.classify(seen);
      return v === undefined ? undefined : normal(v);
    } catch (e) {
      s.onError(e);
      return undefined;
    }
  };
  const isBlocked = s.isBlocked && (async (r) => {
    try {
      return (await s.isBlocked(r)) === true;
    } catch (e) {
      s.onError(e);
      return false;
    }
  });
  try {
    if (pool.renews && every > 0 && timeoutMs > every) renewal = s.timers.setTimeout(renew, every);
    timer = s.timers.setTimeout(() => {
      timedOut = true;
      controller.abort(new CallError("DEADLINE_EXCEEDED", `attempt ${number} timed out after ${timeoutMs} ms`, { stopReason: "attempt-timeout" }));
    }, timeoutMs);
    const started = s.now();
    const info = {
      lease,
      signal: controller.signal,
      attemptNumber: number,
      deadline: deadline.at,
      timeoutMs,
      ...(s.idempotencyKey === undefined ? {} : { idempotencyKey: s.idempotencyKey }),
      phase: (p) => {
        phase = phaseName(p);
      },
    };
    let work;
    try {
      work = Promise.resolve(attempt(info));
    } catch (e) {
      work = Promise.reject(e);
    }
    work.catch(() => {}); // an attempt that ignores its signal may settle after the race
    let raced = false;
    // …and an answer it gives then is nobody's: its body is cancelled (its connection freed).
    work.then((late) => raced && discard(late), () => {});
    let error;
    let threw = false;
    try {
      result = await Promise.race([work, abortedP]);
    } catch (e) {
      error = e;
      threw = true;
      raced = true;
    }
    let latencyMs = Math.max(0, s.now() - started);
    if (!threw) {
      // Classifying may read the answer (an isBlocked reading the body): the attempt's timeout,
      // the deadline, a hedge's win or a lost lease still end it, and an answer cut that way
      // (a body that stalled) is a failure, never a success.
      const classified = (async () => (await byCaller({ result, latencyMs, phase, timedOut: false })) ??
        normal(await classifyResult(result, { latencyMs, slowThresholdMs: s.slowThresholdMs, isBlocked, wallNow: s.wallNow() })))();
      classified.catch(() => {});
      let unreadable = null; // classifying threw (headers that cannot be read): the attempt's error
      const verdict = await Promise.race([classified, abortedP]).catch((e) => {
        if (!controller.signal.aborted) unreadable = { error: e };
        return null;
      });
      if (verdict !== null && !controller.signal.aborted) return { result, verdict, latencyMs };
      if (unreadable) error = unreadable.error;
      else {
        error = controller.signal.reason;
        phase ??= "receive";
      }
      latencyMs = Math.max(0, s.now() - started);
    }
    if (deadline.callerAborted) return { result, error, verdict: { report: null, deliver: false, retryable: false, reached: true, phase: phase ?? "send", reason: "aborted by the caller" }, latencyMs };
    if (cancel.aborted) return { result, error, cancelled: true, verdict: { report: null, deliver: false, retryable: true, reached: true, phase: phase ?? "send", reason: "cancelled: another attempt won" }, latencyMs };
    if (lost) return { result, error, verdict: { report: null, deliver: false, retryable: true, reached: true, phase: phase ?? "send", reason: "the lease was lost (blocked, or lapsed)" }, latencyMs };
    const byTimer = timedOut || (controller.signal.aborted && deadline.signal.aborted);
    const verdict = (await byCaller({ error, latencyMs, phase, timedOut: byTimer })) ?? normal(classifyError(error, { phase, timedOut: byTimer }));
    // A timeout the deadline cut short (shorter than both the attempt timeout and the slow
    // threshold) does not blame the resource: it was not given a fair time.
    if (byTimer && verdict.report === "TIMEOUT" && timeoutMs < s.attemptTimeoutMs && timeoutMs < s.slowThresholdMs) verdict.report = null;
    // The caller's own error (a bug, a decode error: nothing reported, not retried) is kept as
    // the call's `cause`, coded (ERR_INVALID_URL) or not.
    return { result, error, ownError: !byTimer && verdict.report === null && (verdict.code === undefined || !verdict.retryable), verdict, latencyMs };
  } catch (error) {
    // The bookkeeping itself threw (the caller's `now` or `timers`): a bug of the caller's, so
    // nothing is reported and nothing retried; the attempt is stopped, its answer freed.
    controller.abort(error);
    discard(result);
    return { error, ownError: true, verdict: { report: null, deliver: false, retryable: false, reached: true, phase: phase ?? "send", reason: "the attempt's clock or timers threw" }, latencyMs: 0 };
  } finally {
    ended = true;
    try {
      if (timer !== null) s.timers.clearTimeout(timer);
      if (renewal !== null) s.timers.clearTimeout(renewal);
    } catch {
      // the caller's timers broke: the outcome stands
    }
    cancel.removeEventListener("abort", onCancel);
    deadline.signal.removeEventListener("abort", onEnd);
  }
}

const FAILURES = new Set(FAILURE_TYPES);

/** A verdict with every field (a custom `classify` may give only some). */
function normal(v) {
  if (v === null || typeof v !== "object") throw invalidOption("classify must return a verdict object or undefined");
  const report = v.report ?? null;
  if (report !== null && report !== "ok" && !FAILURES.has(report)) throw invalidOption(`classify returned an unknown report ${String(report)}`);
  const full = { deliver: false, retryable: false, reached: true, phase: "send", reason: "classified by the caller", ...v, report };
  full.phase = phaseName(full.phase);
  return full;
}
