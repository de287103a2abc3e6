// A pool with some history, built by the same calls in any host: cells in two contexts, a
// cooldown, a fractional block, leases, a value holding credentials. Used to compare snapshots
// across hosts.
export function history(Pool, now) {
  const pool = new Pool({ seed: 5, now: () => now });
  for (const v of ["a", "b", "http://u:pw@c:1"]) pool.register("PROXY", v);
  pool.register("ACCOUNT", "a");
  pool.report("PROXY", "a", "checkout-us", { ok: false, failure: "BLOCKED", latencyMs: 12.5 });
  pool.report("PROXY", "a", "checkout-us", { ok: false, failure: "BLOCKED" });
  pool.report("PROXY", "b", "search-eu", { ok: true, latencyMs: 80 });
  pool.block("ACCOUNT", "a", { seconds: 90.5 });
  for (let i = 0; i < 5; i++) pool.release(pool.acquire("search-eu"));
  return pool;
}
