// Credentials with single-flight refresh (README "Resilient calls"): `credentialCache({ load })`
// keeps each key's credential (`key(lease)`, default the resource) until `refreshMarginMs`
// before it expires, and when it must be loaded again, concurrent callers share one `load`
// call instead of stampeding the issuer. A caller waits at most until its own signal (the
// call's deadline) ends. `invalidate(lease)` drops a credential the server refused (a 401).
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
  /** key → Promise of the entry being loaded (the single flight) */
  const flights = new Map();
  let loads = 0;

  function fresh(k) {
    const c = cached.get(k);
    return c && (c.expiresAt === undefined || now() < c.expiresAt - refreshMarginMs) ? c : null;
  }

  function flight(k, lease) {
    let f = flights.get(k);
    if (!f) {
      loads++;
      // The load is not tied to one waiter's signal: others may still want it.
      f = Promise.resolve()
        .then(() => load(lease, new AbortController().signal))
        .then(
          (got) => {
            if (got === null || typeof got !== "object" || !("value" in got)) throw invalidOption("load must resolve to { value, expiresAt? }");
            const entry = { value: got.value, expiresAt: got.expiresAt };
            cached.set(k, entry);
            return entry;
          },
          (e) => {
            throw new CallError("CREDENTIAL_UNAVAILABLE", `the credential could not be loaded: ${redactSecrets(e?.message ?? e)}`, { retryable: true, stopReason: "credential" });
          },
        )
        .finally(() => flights.delete(k));
      flights.set(k, f);
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
      if (!signal) return (await f).value;
      return new Promise((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        f.then((e) => resolve(e.value), reject).finally(() => signal.removeEventListener("abort", onAbort));
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
