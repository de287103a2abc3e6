// The leases repute/crawlee holds (README "Crawlee"). A hold is one lease and the requests going
// through it: a request's own (`sessionLeases: false`, or a request without a Crawlee session),
// or a Crawlee session's for one destination (context and groups), shared by the session's
// requests for as long as the session lives, so that its cookies never reach the site from
// another exit IP. Every hold is renewed at half its TTL while it is held, and released:
// - a request's own, when its request ends;
// - a session's, once it is ended and its last request has ended. It is ended when Crawlee
//   retires the session; when a request through it fails (the pool now judges that proxy on
//   that site; the session goes with it); when the pool refuses its renewal; when it is idle —
//   no request through it — and the crawler will not hand the session to a new request (its
//   session pool still has room: Crawlee then makes a new session for each request), or has
//   been idle for half a TTL at a renewal; when a request of this process needs its proxy
//   (nothing else is free, or the pick fell to a later group than its proxy's: idle sessions
//   never starve the crawl nor push it to a pricier tier); and on `closeAll()`. The hold's
//   owner (proxy-configuration.js) is told, to retire the session where Crawlee has not, and
//   the session is remembered as ended: a request of it gets a `SessionLeaseEnded`, never a new
//   lease, since a new one could be another IP.
// Acquiring is the only place a lease is taken: when nothing is free, the request waits in the
// pool's own queue (`pool.acquireWait`: first come, first served, woken by releases, expiries
// and the pool's other changes, never polling) for at most `waitMs`; a wait that ends empty, or
// a pool that cannot wait (no `acquireWait`), gives the crawler a POOL_EXHAUSTED error with
// `retryAfterMs` where known. `closeAll()` ends the waits (an AbortError). The pool is reached
// through the call layer's port (lib/call/pool-port.js: every call awaited), the wait on the
// pool itself. Owns the holds; what a request did is attempts.js's.

import { CallError } from "../call/errors.js";

/** How many ended sessions are remembered (a session is asked for again only by requests that
 * took it before it ended, so the newest few are the ones that matter). */
const ENDED_KEPT = 10_000;

class Hold {
  constructor(key, sessionId, context, groups, lease, now) {
    /** The session's key (session, context, groups), or null for a request's own hold. */
    this.key = key;
    this.sessionId = sessionId;
    this.context = context;
    this.groups = groups;
    this.lease = lease;
    /** Requests going through it now. */
    this.users = 0;
    this.lastUsedAt = now;
    /** No new request goes through it; released when `users` reaches 0. */
    this.ended = false;
    this.released = false;
    /** The Crawlee session (seen by a hook), to retire when the hold ends. */
    this.session = null;
    /** Whether the crawler may hand the session to a new request again (crawler-binding.js
     * knows its session pool); until a hook has seen it, it may. */
    this.mayReturn = () => true;
    this.renewTimer = null;
    /** The lease's TTL when granted: renewals come every half of it. */
    this.ttl = lease.expiresAt - lease.leasedAt;
  }

  get shared() {
    return this.key !== null;
  }
}

export class Holds {
  #pool;
  #raw;
  #timers;
  #onError;
  #onEnded;
  /** key → a session's hold, or the promise of one being acquired */
  #shared = new Map();
  #live = new Set();
  /** Session holds with no request going through them, longest idle first. */
  #idle = new Set();
  /** Session ids whose lease ended, oldest first. */
  #ended = new Set();
  /** Requests of this process waiting for a lease now. */
  #waiting = 0;
  /** Aborted by `closeAll()`: ends the waits then running (a new one serves later waits). */
  #closing = new AbortController();

  /**
   * @param {object} o
   * @param {object} o.pool the call layer's pool port
   * @param {object} o.raw the pool as given (its `acquireWait`, when it has one)
   * @param {object} o.timers setTimeout / clearTimeout / monotonicMs
   * @param {(error) => void} o.onError hears of refused releases and renewals
   * @param {(hold, reason) => void} o.onEnded a session's hold ended ("retired", "blocked",
   *   "failed", "refused", "idle", "evicted", "closed")
   */
  constructor({ pool, raw, timers, onError, onEnded }) {
    this.#pool = pool;
    this.#raw = raw;
    this.#timers = timers;
    this.#onError = onError;
    this.#onEnded = onEnded;
  }

  /** Leases held now. */
  get size() {
    return this.#live.size;
  }

  /**
   * A hold for one request, which goes through it until `leave`: the session's hold for
   * (context, groups) when `sessionId` is given (acquired by its first request), else a new
   * one of its own. Waits up to `waitMs` for a lease; throws POOL_EXHAUSTED when none came, an
   * AbortError when `closeAll()` ended the wait, and a `SessionLeaseEnded` for a session whose
   * lease has ended.
   */
  async take({ context, groups, sessionId = null, waitMs }) {
    if (sessionId === null) return this.#use(await this.#acquire(null, null, context, groups, waitMs));
    if (this.#ended.has(sessionId)) throw new SessionLeaseEnded(sessionId);
    const key = JSON.stringify([sessionId, context, groups ?? null]);
    let hold = this.#shared.get(key);
    if (hold === undefined) {
      const pending = this.#acquire(key, sessionId, context, groups, waitMs);
      this.#shared.set(key, pending);
      try {
        hold = await pending;
      } finally {
        if (this.#shared.get(key) === pending) this.#shared.delete(key);
      }
      // The session may have ended while its lease was being acquired.
      if (this.#ended.has(sessionId)) await this.end(hold, "retired");
      else this.#shared.set(key, hold);
    } else if (!(hold instanceof Hold)) {
      hold = await hold;
    }
    if (hold.ended) throw new SessionLeaseEnded(sessionId);
    return this.#use(hold);
  }

  #use(hold) {
    hold.users++;
    hold.lastUsedAt = this.#timers.monotonicMs();
    this.#idle.delete(hold);
    return hold;
  }

  /** A request no longer goes through `hold` (the promise: a release this caused). */
  async leave(hold) {
    hold.users = Math.max(0, hold.users - 1);
    hold.lastUsedAt = this.#timers.monotonicMs();
    if (hold.users > 0) return;
    if (!hold.shared || hold.ended) return this.#release(hold);
    if (!hold.mayReturn()) return this.end(hold, "idle"); // no request will come through it
    if (this.#waiting > 0) return this.end(hold, "evicted");
    this.#idle.add(hold);
  }

  /** The Crawlee session of a session's hold, as a hook saw it, and whether the crawler may
   * hand that session to a new request again (`mayReturn()`). */
  seen(hold, session, mayReturn) {
    if (!hold.shared || !session || hold.session !== null) return;
    hold.session = session;
    if (typeof mayReturn === "function") hold.mayReturn = mayReturn;
  }

  /** Ends a session's hold (a request's own ends with its request): no request goes through it
   * again, and its lease is released once the last one has left (the promise: that release). */
  async end(hold, reason) {
    if (!hold.shared || hold.ended) return;
    hold.ended = true;
    if (this.#shared.get(hold.key) === hold) this.#shared.delete(hold.key);
    this.#idle.delete(hold);
    this.#markEnded(hold.sessionId);
    try {
      this.#onEnded(hold, reason);
    } catch (e) {
      this.#onError(e);
    }
    if (hold.users === 0) await this.#release(hold);
  }

  /** Ends every hold of a session (Crawlee retired it); the session gets no lease again. */
  endSession(sessionId, reason) {
    this.#markEnded(sessionId);
    for (const hold of [...this.#live]) if (hold.sessionId === sessionId) void this.end(hold, reason);
  }

  #markEnded(sessionId) {
    this.#ended.delete(sessionId);
    this.#ended.add(sessionId);
    if (this.#ended.size > ENDED_KEPT) this.#ended.delete(this.#ended.values().next().value);
  }

  /** Ends the waits, every hold, and releases every lease (the crawl is over, or torn down). */
  async closeAll() {
    const closing = this.#closing;
    this.#closing = new AbortController();
    closing.abort(new DOMException("repute/crawlee: the configuration was closed while this request waited for a proxy", "AbortError"));
    const all = [...this.#live];
    await Promise.all(all.map((hold) => this.end(hold, "closed")));
    await Promise.all(all.map((hold) => this.#release(hold)));
  }

  /** A new hold: a lease acquired now, or after waiting up to `waitMs` for one. Idle sessions
   * never keep a proxy from a request that needs one: while some are idle, the pool is asked at
   * once, and when nothing is free the longest-idle session's lease is given back first; when
   * the lease comes from a later group than an idle session's (its proxy would have been the
   * pick), that session's lease is given back and the pick made again, once. */
  async #acquire(key, sessionId, context, groups, waitMs) {
    const options = groups === undefined || groups === null ? undefined : { groups };
    let repicked = false;
    while (this.#idle.size > 0) {
      const answer = await this.#pool.acquire(context, options);
      if (answer.lease) {
        const better = repicked ? null : this.#idleInEarlierGroup(groups, answer.lease);
        if (better === null) return this.#hold(key, sessionId, context, groups, answer.lease);
        repicked = true;
        await Promise.all([this.end(better, "evicted"), this.#releaseLease(answer.lease)]);
      } else if (this.#idle.size > 0) {
        await this.end(this.#idle.values().next().value, "evicted");
      }
    }
    this.#waiting++; // from now on, a session's hold that goes idle is given back at once
    try {
      return this.#hold(key, sessionId, context, groups, await this.#wait(context, options, waitMs));
    } finally {
      this.#waiting--;
    }
  }

  /** A lease in `context` within `waitMs`, waited for in the pool's queue (a release, an
   * expiry, a cooldown's end… serves it); POOL_EXHAUSTED when the wait ends empty, or at once
   * from a pool that cannot wait. */
  async #wait(context, options, waitMs) {
    if (typeof this.#raw.acquireWait !== "function") {
      const answer = await this.#pool.acquire(context, options);
      if (answer.lease) return answer.lease;
      throw exhausted(context, options?.groups, await this.#retryAfterMs(context, options, answer), null);
    }
    const lease = await this.#raw.acquireWait(context, { ...options, waitMs, signal: this.#closing.signal });
    if (lease) return lease;
    throw exhausted(context, options?.groups, await this.#retryAfterMs(context, options, null), waitMs);
  }

  /** When the pool may have a candidate again (its next change, or a server's Retry-After). */
  async #retryAfterMs(context, options, answer) {
    try {
      return (await this.#pool.retryAfterMs(context, options, answer)) ?? undefined;
    } catch (e) {
      this.#onError(e);
      return undefined;
    }
  }

  /** The idle session hold whose proxy is of the earliest of `groups` listed before `lease`'s
   * group, or null. */
  #idleInEarlierGroup(groups, lease) {
    if (!Array.isArray(groups) || this.#idle.size === 0) return null;
    let best = null;
    let bestAt = groups.indexOf(lease.group ?? null);
    if (bestAt <= 0) return null;
    for (const hold of this.#idle) {
      const at = groups.indexOf(hold.lease.group ?? null);
      if (at >= 0 && at < bestAt) {
        best = hold;
        bestAt = at;
      }
    }
    return best;
  }

  async #releaseLease(lease) {
    try {
      await this.#pool.release(lease);
    } catch (e) {
      this.#onError(e);
    }
  }

  #hold(key, sessionId, context, groups, lease) {
    const hold = new Hold(key, sessionId, context, groups, lease, this.#timers.monotonicMs());
    this.#live.add(hold);
    if (this.#pool.renews) this.#scheduleRenewal(hold);
    return hold;
  }

  /** Renews at half the lease's TTL while held. A session's hold idle since the last renewal
   * (half a TTL) is ended instead; one whose renewal is refused (the resource was blocked, or
   * the lease lapsed) is ended too. A request's own stops renewing: its outcome is still
   * reported, and its lease released when it ends. */
  #scheduleRenewal(hold) {
    if (!(hold.ttl > 0)) return;
    const every = Math.max(50, Math.floor(hold.ttl / 2));
    hold.renewTimer = this.#timers.setTimeout(async () => {
      hold.renewTimer = null;
      if (hold.released) return;
      if (hold.shared && hold.users === 0 && this.#timers.monotonicMs() - hold.lastUsedAt >= every) return void this.end(hold, "idle");
      let renewed = null;
      try {
        renewed = await this.#pool.renew(hold.lease);
      } catch (e) {
        this.#onError(e);
      }
      if (hold.released) return;
      if (renewed) {
        hold.lease = renewed;
        this.#scheduleRenewal(hold);
      } else {
        void this.end(hold, "refused");
      }
    }, every);
    hold.renewTimer?.unref?.();
  }

  async #release(hold) {
    if (hold.released) return;
    hold.released = true;
    this.#live.delete(hold);
    this.#idle.delete(hold);
    if (hold.renewTimer !== null) this.#timers.clearTimeout(hold.renewTimer);
    hold.renewTimer = null;
    await this.#releaseLease(hold.lease);
  }
}

/** A request asked for the lease of a session whose lease has ended: the session must not go on
 * through another IP (the caller turns this into a session error: Crawlee rotates it). */
export class SessionLeaseEnded extends Error {
  constructor(sessionId) {
    super("repute: this Crawlee session's proxy lease has ended, and a session keeps one exit IP: the request is retried on a new session");
    this.name = "SessionLeaseEnded";
    this.sessionId = sessionId;
  }
}

/** The error Crawlee retries when no proxy could be leased: how long it waited (`waitedMs`;
 * null: the pool cannot wait), and when one may be. */
function exhausted(context, groups, retryAfterMs, waitedMs) {
  const where = groups === undefined ? "" : ` in groups ${JSON.stringify(groups)}`;
  const waited = waitedMs === null
    ? " (this pool cannot wait for one: it has no acquireWait, so the request fails at once)"
    : waitedMs > 0 ? ` within ${waitedMs} ms` : "";
  const when = typeof retryAfterMs === "number" ? `; retry after ${retryAfterMs} ms` : "";
  return new CallError("POOL_EXHAUSTED", `repute: no proxy is available for ${JSON.stringify(context)}${where}${waited}${when}`, {
    retryable: true,
    stopReason: "pool-exhausted",
    ...(typeof retryAfterMs === "number" ? { retryAfterMs } : {}),
  });
}
