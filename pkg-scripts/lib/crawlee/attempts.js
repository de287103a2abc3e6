// The leases repute/crawlee holds, one per request in flight (README "Crawlee"): acquired in
// the request's context when Crawlee asks for its proxy, renewed every half TTL while the
// request runs, its outcome reported at most once, released exactly once — when the request
// ends, when Crawlee asks again for the same request, or after `maxHoldMs` as a safety net for
// an end no hook saw. Works over any pool with the `Pool` methods, synchronous (an embedded
// `Pool`, `openPool`'s host) or asynchronous (`repute/client`): every call is awaited. A pool
// with nothing to lease gives a `POOL_EXHAUSTED` error with `retryAfterMs` (from the pool's
// `nextChangeAt`, or from the client's own error). Owns the attempt records; what an outcome
// means is outcome.js's, when to judge it proxy-configuration.js's.

import { CallError, redactSecrets } from "../call/errors.js";

const SYSTEM_TIMERS = Object.freeze({
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  monotonicMs: () => performance.now(),
});

/** One request's lease and what is known of its outcome. */
class Attempt {
  constructor(request, context, lease, startedAt) {
    this.request = request;
    this.context = context;
    this.lease = lease;
    this.startedAt = startedAt;
    /** When the navigation started (preNavigationHooks), for the latency. */
    this.navigationAt = null;
    /** The verdict on the answer's head, until the body is judged. */
    this.answer = null;
    /** An outcome was reported, or judged not the resource's fault: nothing more is reported. */
    this.settled = false;
    this.closed = false;
    this.renewTimer = null;
    this.holdTimer = null;
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
    this.#pool = pool;
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

  /** The resource as messages name it: the pool's masking when it has one. */
  name(lease) {
    try {
      if (typeof this.#pool.maskValue === "function") return this.#pool.maskValue(lease.kind, lease.value);
    } catch {
      // fall through to the generic redaction
    }
    return redactSecrets(lease.value);
  }

  /** Leases a resource for `request` in `context` (an earlier attempt of it is ended first). */
  async open(request, context, groups) {
    const earlier = this.#open.get(request);
    if (earlier) await this.close(earlier);
    const options = groups === undefined ? undefined : { groups };
    let lease;
    try {
      lease = await this.#pool.acquire(context, options);
    } catch (e) {
      // A remote pool says "nothing to lease" with an error that carries Retry-After.
      if (e?.code === "POOL_EXHAUSTED") throw exhausted(context, groups, e.retryAfterMs, e);
      throw e;
    }
    if (!lease) throw exhausted(context, groups, await this.#retryAfterMs(context, options));
    const attempt = new Attempt(request, context, lease, this.now());
    this.#open.set(request, attempt);
    this.#scheduleRenewal(attempt);
    if (Number.isFinite(this.#maxHoldMs)) {
      attempt.holdTimer = this.#timers.setTimeout(() => {
        this.#onError(new Error(`repute/crawlee: the lease of ${this.name(attempt.lease)} for ${JSON.stringify(context)} was held ${this.#maxHoldMs} ms without its request ending; released`));
        void this.close(attempt);
      }, Math.min(this.#maxHoldMs, 2 ** 31 - 1));
      attempt.holdTimer?.unref?.();
    }
    return attempt;
  }

  async #retryAfterMs(context, options) {
    try {
      if (typeof this.#pool.nextChangeAt !== "function") return undefined;
      const next = await this.#pool.nextChangeAt(context, options);
      if (typeof next !== "number") return undefined;
      const now = typeof this.#pool.now === "function" ? await this.#pool.now() : Date.now();
      return Math.max(0, Math.ceil(next - now));
    } catch (e) {
      this.#onError(e);
      return undefined;
    }
  }

  /** Renews at half the lease's TTL while the request runs; a refused renewal (the resource
   * was blocked, or the lease lapsed) stops renewing: the outcome is still reported. */
  #scheduleRenewal(attempt) {
    const ttl = attempt.lease.expiresAt - attempt.lease.leasedAt;
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
    }, Math.max(1000, Math.floor(ttl / 2)));
    attempt.renewTimer?.unref?.();
  }

  /** Reports `verdict.report` (a failure type or "ok") once; null reports nothing. */
  async settle(attempt, report, latencyMs) {
    if (attempt.settled) return;
    attempt.settled = true;
    if (report === null || report === undefined) return;
    const ms = Math.max(0, Math.round(latencyMs));
    const outcome = report === "ok" ? { ok: true, latencyMs: ms } : { ok: false, failure: report, latencyMs: ms };
    const { kind, value } = attempt.lease;
    try {
      await this.#pool.report(kind, value, attempt.context, outcome);
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

  /** Releases every lease still held. */
  async closeAll() {
    await Promise.all([...this.#open.values()].map((a) => this.close(a)));
  }
}

/** The error Crawlee retries when no proxy can be leased: it says when one may be. */
function exhausted(context, groups, retryAfterMs, cause) {
  const where = groups === undefined ? "" : ` in groups ${JSON.stringify(groups)}`;
  const when = typeof retryAfterMs === "number" ? `; retry after ${retryAfterMs} ms` : "";
  return new CallError("POOL_EXHAUSTED", `repute: no proxy is available for ${JSON.stringify(context)}${where}${when}`, {
    retryable: true,
    stopReason: "pool-exhausted",
    ...(typeof retryAfterMs === "number" ? { retryAfterMs } : {}),
    ...(cause === undefined ? {} : { cause }),
  });
}
