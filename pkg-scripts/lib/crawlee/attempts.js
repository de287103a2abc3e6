// The leases repute/crawlee holds, one per request in flight (README "Crawlee"): acquired in
// the request's context when Crawlee asks for its proxy, renewed every half TTL while the
// request runs, its outcome reported at most once, released exactly once — when the request
// ends, when Crawlee asks again for the same request, or after `maxHoldMs` as a safety net for
// an end no hook saw. The pool is reached through the call layer's port (lib/call/pool-port.js),
// the same for an embedded `Pool`, `openPool`'s host and a `repute/client` pool: every call is
// awaited. A pool with nothing to lease gives a `POOL_EXHAUSTED` error with `retryAfterMs`
// (the embedded pool's next change, or the server's Retry-After). Owns the attempt records;
// what an outcome means is outcome.js's, when to judge it proxy-configuration.js's.

import { CallError } from "../call/errors.js";
import { poolPort } from "../call/pool-port.js";

const SYSTEM_TIMERS = Object.freeze({
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  monotonicMs: () => performance.now(),
});

/** One request's lease and what is known of its outcome. */
class Attempt {
  constructor(request, context, lease) {
    this.request = request;
    this.context = context;
    this.lease = lease;
    /** When the request was sent (the last preNavigationHook), on the monotonic clock. */
    this.sentAt = null;
    /** The proxy leg: from `sentAt` to the answer's head (the first postNavigationHook). */
    this.legMs = null;
    /** The verdict on the answer's head, until the body is judged. */
    this.answer = null;
    /** An outcome was reported, or judged not the resource's fault: nothing more is reported. */
    this.settled = false;
    this.closed = false;
    this.renewTimer = null;
    this.holdTimer = null;
    /** The lease's TTL when granted: renewals come every half of it. */
    this.ttl = null;
  }
}

export class Attempts {
  #pool;
  #onError;
  #maxHoldMs;
  #timers;
  /** request → its open attempt */
  #open = new Map();

  constructor({ pool, onError, maxHoldMs, timers = SYSTEM_TIMERS }) {
    this.#pool = poolPort(pool);
    this.#onError = onError;
    this.#maxHoldMs = maxHoldMs;
    this.#timers = timers;
  }

  get size() {
    return this.#open.size;
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

  /** Leases a resource for `request` in `context` (an earlier attempt of it is ended first). */
  async open(request, context, groups) {
    const earlier = this.#open.get(request);
    if (earlier) await this.close(earlier);
    const options = groups === undefined ? undefined : { groups };
    const answer = await this.#pool.acquire(context, options);
    if (!answer.lease) {
      let retryAfterMs;
      try {
        retryAfterMs = await this.#pool.retryAfterMs(context, options, answer);
      } catch (e) {
        this.#onError(e);
      }
      throw exhausted(context, groups, retryAfterMs ?? undefined);
    }
    const attempt = new Attempt(request, context, answer.lease);
    this.#open.set(request, attempt);
    if (this.#pool.renews) this.#scheduleRenewal(attempt);
    if (Number.isFinite(this.#maxHoldMs)) {
      attempt.holdTimer = this.#timers.setTimeout(() => {
        this.#onError(new Error(`repute/crawlee: the lease of ${this.name(attempt.lease)} for ${JSON.stringify(context)} was held ${this.#maxHoldMs} ms without its request ending; released`));
        void this.close(attempt);
      }, Math.min(this.#maxHoldMs, 2 ** 31 - 1));
      attempt.holdTimer?.unref?.();
    }
    return attempt;
  }

  /** Renews at half the lease's TTL while the request runs; a refused renewal (the resource
   * was blocked, or the lease lapsed) stops renewing: the outcome is still reported. */
  #scheduleRenewal(attempt) {
    // The TTL as granted (a renewed lease keeps its leasedAt: expiresAt − leasedAt grows).
    attempt.ttl ??= attempt.lease.expiresAt - attempt.lease.leasedAt;
    const ttl = attempt.ttl;
    if (!(ttl > 0)) return;
    attempt.renewTimer = this.#timers.setTimeout(async () => {
      attempt.renewTimer = null;
      if (attempt.closed) return;
      try {
        const renewed = await this.#pool.renew(attempt.lease);
        if (renewed && !attempt.closed) {
          attempt.lease = renewed;
          this.#scheduleRenewal(attempt);
        }
      } catch (e) {
        this.#onError(e);
      }
    }, Math.max(50, Math.floor(ttl / 2)));
    attempt.renewTimer?.unref?.();
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

  /** Reports `verdict.report` (a failure type or "ok") once; null reports nothing. */
  async settle(attempt, report, latencyMs) {
    if (attempt.settled) return;
    attempt.settled = true;
    if (report === null || report === undefined) return;
    const ms = Math.max(0, Math.round(latencyMs));
    const outcome = report === "ok" ? { ok: true, latencyMs: ms } : { ok: false, failure: report, latencyMs: ms };
    try {
      await this.#pool.report(attempt.lease, attempt.context, outcome);
    } catch (e) {
      this.#onError(e);
    }
  }

  /** Releases the lease (once) and forgets the attempt. */
  async close(attempt) {
    if (attempt.closed) return;
    attempt.closed = true;
    if (this.#open.get(attempt.request) === attempt) this.#open.delete(attempt.request);
    for (const t of [attempt.renewTimer, attempt.holdTimer]) if (t !== null) this.#timers.clearTimeout(t);
    attempt.renewTimer = attempt.holdTimer = null;
    try {
      await this.#pool.release(attempt.lease);
    } catch (e) {
      this.#onError(e);
    }
  }

  /** Resolves after `ms` (the wait for an exhausted pool's next change). */
  wait(ms) {
    return new Promise((resolve) => this.#timers.setTimeout(resolve, ms));
  }

  /** Releases every lease still held. */
  async closeAll() {
    await Promise.all([...this.#open.values()].map((a) => this.close(a)));
  }
}

/** The error Crawlee retries when no proxy can be leased: it says when one may be. */
function exhausted(context, groups, retryAfterMs) {
  const where = groups === undefined ? "" : ` in groups ${JSON.stringify(groups)}`;
  const when = typeof retryAfterMs === "number" ? `; retry after ${retryAfterMs} ms` : "";
  return new CallError("POOL_EXHAUSTED", `repute: no proxy is available for ${JSON.stringify(context)}${where}${when}`, {
    retryable: true,
    stopReason: "pool-exhausted",
    ...(typeof retryAfterMs === "number" ? { retryAfterMs } : {}),
  });
}
