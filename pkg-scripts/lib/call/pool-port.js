// The pool as the resilient-call layer (call.js, attempt.js) sees it: one small interface, so a
// call runs the same over an embedded pool (a Pool or a PoolHost, synchronous) and over a remote
// one (a `repute/client` connection, asynchronous). Every method returns a promise, whatever the
// pool answers; nothing here decides anything about retrying.
//
//   acquire(context, options)   → { lease: Lease | null, retryAfterMs? }  (options: { groups } or undefined)
//   retryAfterMs(context, options, answer) → ms until something may be eligible, or undefined
//   report(lease, context, outcome), release(lease), renew(lease) → Lease | null (null: refused)
//   p95(context, options)       → the context's p95 latency (median of its cells', of the listed
//                                 groups' resources only with `groups`), or null
//   name(lease)                 → the resource as events show it (credentials masked)
//   renews                      → whether the pool renews leases at all
//
// A remote pool says so by having `tryAcquire(context, options)` (the 409's `Retry-After` comes
// with its answer); any other pool is embedded, and the wait comes from its `nextChangeAt`.

import { redactSecrets } from "./errors.js";

/** The port of `host` (a Pool, a PoolHost, a client, anything with acquire / report / release). */
export function poolPort(host) {
  const remote = typeof host.tryAcquire === "function";
  return {
    renews: typeof host.renew === "function",
    async acquire(context, options) {
      if (remote) return host.tryAcquire(context, options);
      const lease = options ? host.acquire(context, options) : host.acquire(context);
      return { lease: lease ?? null };
    },
    async retryAfterMs(context, options, answer) {
      if (remote) return answer?.retryAfterMs ?? undefined;
      if (typeof host.nextChangeAt !== "function") return undefined;
      const next = options ? host.nextChangeAt(context, options) : host.nextChangeAt(context);
      if (next === null || next === undefined) return undefined;
      // The pool's own clock: a host's now(), or an embedded Pool's (it has stats().now only).
      const now = typeof host.now === "function" ? host.now() : host.stats?.().now;
      return typeof now === "number" ? Math.max(0, next - now) : undefined;
    },
    report: async (lease, context, outcome) => host.report(lease.kind, lease.value, context, outcome),
    release: async (lease) => host.release(lease),
    renew: async (lease) => host.renew(lease),
    async p95(context, options) {
      const views = (await host.resources?.({ context })) ?? [];
      // With `groups`, only the resources the call may be given (a hedge goes to one of them).
      const groups = options?.groups;
      const p95 = [];
      for (const v of views) {
        if (groups && !groups.includes(v.group ?? null)) continue;
        for (const c of v.cells) if (c.context === context && typeof c.p95LatencyMs === "number") p95.push(c.p95LatencyMs);
      }
      p95.sort((a, b) => a - b);
      return p95.length === 0 ? null : p95[p95.length >> 1];
    },
    name(lease) {
      try {
        return typeof host.maskValue === "function" ? host.maskValue(lease.kind, lease.value) : redactSecrets(lease.value);
      } catch {
        return "***";
      }
    },
  };
}
