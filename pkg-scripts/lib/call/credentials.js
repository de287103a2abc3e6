// Credentials with single-flight refresh (README "Resilient calls"): `credentialCache({ load })`
// keeps each key's credential (`key(lease)`, default the resource) until `refreshMarginMs`
// before it expires, and when it must be loaded again, concurrent callers share one `load`
// call instead of stampeding the issuer. A caller waits at most until its own signal (the
// call's deadline) ends; a load every waiter has left is aborted and forgotten, so a hung issuer
// does not hold the key for ever. `invalidate(lease)` drops a credential the server refused (a 401).
// A failed load is not cached; its error reaches every waiter with its message redacted. Owns
// the cache; the issuer is the caller's `load`.

import { CallError, invalidOption, redactSecrets } from "./errors.js";

/**
 * @param {object} options
 * @param {(lease: object, signal: AbortSignal) => Promise<{ value: unknown, expiresAt?: number }>} options.load
 *   issues a credential; `expiresAt` on the `now` clock (absent: never expires)
 * @param {(lease: object) => string} [options.key] which leases share a credential
 * @param {number} [options.refreshMarginMs=30000] load again this long before expiry
 * @param {() => number} [options.now=Date.now]
 */
export function credentialCache({ load, key = (lease) => `${lease.kind}\u0000${lease.value}`, refreshMarginMs = 30_000, now = Date.now } = {}) {
  if (typeof load !== "function") throw invalidOption("load must be a function");
  if (typeof key !== "function") throw invalidOption("key must be a function");
  if (!(typeof refreshMarginMs === "number" && refreshMarginMs >= 0)) throw invalidOption("refreshMarginMs must be a number >= 0");
  /** key → { value, expiresAt } */
  const cached = new Map();
  /** key → the load in flight (the single flight, see `flight`) */
  const flights = new Map();
  let loads = 0;

  function fresh(k) {
    const c = cached.get(k);
    return c && (c.expiresAt === undefined || now() < c.expiresAt - refreshMarginMs) ? c : null;
  }

  /** The one load in flight for `k`: { promise, controller, waiters, anchored }. When every
   * waiter has left (their deadlines passed) and none waits without a signal, the load is
   * aborted and forgotten, so a hung issuer does not wedge the key: the next get loads again. */
  function flight(k, lease) {
    let f = flights.get(k);
    if (!f) {
      loads++;
      const controller = new AbortController();
      const entry = { controller, waiters: 0, anchored: false, promise: null };
      // The load is not tied to one waiter's signal: others may still want it.
      entry.promise = Promise.resolve()
        .then(() => load(lease, controller.signal))
        .then(
          (got) => {
            if (got === null || typeof got !== "object" || !("value" in got)) throw invalidOption("load must resolve to { value, expiresAt? }");
            const value = { value: got.value, expiresAt: got.expiresAt };
            cached.set(k, value);
            return value;
          },
          (e) => {
            throw new CallError("CREDENTIAL_UNAVAILABLE", `the credential could not be loaded: ${redactSecrets(e?.message ?? e)}`, { retryable: true, stopReason: "credential" });
          },
        )
        .finally(() => flights.get(k) === entry && flights.delete(k));
      entry.promise.catch(() => {}); // its waiters hear of a failure; none may be left
      flights.set(k, entry);
      f = entry;
    }
    return f;
  }

  return {
    /** The lease's credential value: cached, or from the one load in flight for its key. */
    async get(lease, { signal } = {}) {
      const k = key(lease);
      const c = fresh(k);
      if (c) return c.value;
      signal?.throwIfAborted();
      const f = flight(k, lease);
      if (!signal) {
        f.anchored = true;
        return (await f.promise).value;
      }
      f.waiters++;
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          reject(signal.reason);
          if (--f.waiters === 0 && !f.anchored && flights.get(k) === f) {
            flights.delete(k);
            f.controller.abort(signal.reason);
          }
        };
        signal.addEventListener("abort", onAbort, { once: true });
        f.promise.then((e) => resolve(e.value), reject).finally(() => signal.removeEventListener("abort", onAbort));
      });
    },
    /** Drops the lease's credential (the server refused it): the next `get` loads a new one. */
    invalidate(lease) {
      cached.delete(key(lease));
    },
    stats() {
      return { cached: cached.size, inFlight: flights.size, loads };
    },
  };
}
