// The requests repute/crawlee has given a proxy, one attempt per try of a request (README
// "Crawlee"): which hold (holds.js) it goes through, when it was sent and how long the proxy
// leg took (the latency every outcome reports), its outcome reported at most once, and its end
// — when the request ends, when Crawlee asks again for the same request, or after `maxHoldMs`
// as a safety net for an end no hook saw. A failure reported on a session's hold ends that hold
// (the pool judges the proxy now; the session goes with it). Owns the attempt records; what an
// outcome means is outcome.js's, when to judge it crawler-binding.js's.

const SYSTEM_TIMERS = Object.freeze({
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  monotonicMs: () => performance.now(),
});

/** One try of a request, and what is known of its outcome. */
class Attempt {
  constructor(request, hold) {
    this.request = request;
    this.hold = hold;
    /** When the request was sent (the last preNavigationHook), on the monotonic clock. */
    this.sentAt = null;
    /** The proxy leg: from `sentAt` to the answer's head (the first postNavigationHook). */
    this.legMs = null;
    /** The verdict on the answer's head, until the body is judged. */
    this.answer = null;
    /** An outcome was reported, or judged not the resource's fault: nothing more is reported. */
    this.settled = false;
    this.closed = false;
    this.holdTimer = null;
  }

  get lease() {
    return this.hold.lease;
  }

  get context() {
    return this.hold.context;
  }
}

export { SYSTEM_TIMERS };

export class Attempts {
  #pool;
  #holds;
  #onError;
  #maxHoldMs;
  #timers;
  /** request → its open attempt */
  #open = new Map();

  constructor({ pool, holds, onError, maxHoldMs, timers = SYSTEM_TIMERS }) {
    this.#pool = pool;
    this.#holds = holds;
    this.#onError = onError;
    this.#maxHoldMs = maxHoldMs;
    this.#timers = timers;
  }

  now() {
    return this.#timers.monotonicMs();
  }

  get(request) {
    return this.#open.get(request);
  }

  /** The resource as messages name it (credentials masked, as events show it). */
  name(lease) {
    return this.#pool.name(lease);
  }

  /** An attempt of `request` through a hold taken with `take` (holds.js); an earlier attempt of
   * the same request is ended first. */
  async open(request, take) {
    const earlier = this.#open.get(request);
    if (earlier) await this.close(earlier);
    const attempt = new Attempt(request, await this.#holds.take(take));
    this.#open.set(request, attempt);
    if (Number.isFinite(this.#maxHoldMs)) {
      attempt.holdTimer = this.#timers.setTimeout(() => {
        this.#onError(new Error(`repute/crawlee: the lease of ${this.name(attempt.lease)} for ${JSON.stringify(attempt.context)} was held ${this.#maxHoldMs} ms without its request ending; released`));
        void this.#holds.end(attempt.hold, "failed"); // a session's too: something is wrong with it
        void this.close(attempt);
      }, Math.min(this.#maxHoldMs, 2 ** 31 - 1));
      attempt.holdTimer?.unref?.();
    }
    return attempt;
  }

  /** The request went out now. */
  sent(attempt) {
    attempt.sentAt = this.now();
  }

  /** Its answer's head arrived now (or `legMs` says how long it took, as the browser timed it). */
  answered(attempt, legMs = null) {
    if (attempt.legMs !== null) return;
    attempt.legMs = legMs ?? (attempt.sentAt === null ? 0 : this.now() - attempt.sentAt);
  }

  /** The latency to report: the proxy leg, or for a request that failed before its head came,
   * the time from sending it to the failure (0 if it never went out). Time spent waiting for the
   * lease, reading the body or in the user's handler is not the proxy's. */
  latency(attempt) {
    if (attempt.legMs !== null) return attempt.legMs;
    return attempt.sentAt === null ? 0 : this.now() - attempt.sentAt;
  }

  /** Reports `report` (a failure type or "ok") once; null reports nothing. A failure ends the
   * session's hold it went through. */
  async settle(attempt, report, latencyMs) {
    if (attempt.settled) return;
    attempt.settled = true;
    if (report === null || report === undefined) return;
    const ms = Math.max(0, Math.round(latencyMs));
    const outcome = report === "ok" ? { ok: true, latencyMs: ms } : { ok: false, failure: report, latencyMs: ms };
    if (report !== "ok") void this.#holds.end(attempt.hold, report === "BLOCKED" ? "blocked" : "failed");
    try {
      await this.#pool.report(attempt.lease, attempt.context, outcome);
    } catch (e) {
      this.#onError(e);
    }
  }

  /** Ends the attempt (once): its request no longer goes through its hold. */
  async close(attempt) {
    if (attempt.closed) return;
    attempt.closed = true;
    if (this.#open.get(attempt.request) === attempt) this.#open.delete(attempt.request);
    if (attempt.holdTimer !== null) this.#timers.clearTimeout(attempt.holdTimer);
    attempt.holdTimer = null;
    await this.#holds.leave(attempt.hold);
  }

  /** Ends every attempt still open. */
  async closeAll() {
    await Promise.all([...this.#open.values()].map((a) => this.close(a)));
  }
}
