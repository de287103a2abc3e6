// The workload of the Node benchmarks (bench.mjs, profile.mjs): a pool of n resources with a
// cell in every one of 10 contexts, and the acquire + report + release cycle over it with the
// engine benchmark's outcome mix (85 % success), events drained as a host would.

export const CONTEXTS = Array.from({ length: 10 }, (_, i) => `target-${String(i).padStart(2, "0")}.example`);

/** Outcome mix: 85 % success, the rest spread over the failure types, with latencies. */
export function outcomes() {
  const mix = [];
  for (let i = 0; i < 1000; i++) {
    const r = (i * 7919) % 1000;
    const failure = r < 850 ? null : r < 910 ? "TIMEOUT" : r < 950 ? "CONNECTION_RESET" : r < 980 ? "SLOW" : r < 995 ? "BLOCKED" : "TLS_HANDSHAKE";
    mix.push(failure === null ? { ok: true, latencyMs: 50 + (r % 900) } : { ok: false, failure, latencyMs: 50 + (r % 900) });
  }
  return mix;
}

/** A filled pool of the `Pool` class given and its cycle: `cycle(i)` advances the pool's
 * clock by 1 ms and runs cycle number `i`. */
export function cyclingPool(Pool, n) {
  let t = 1_700_000_000_000;
  const pool = new Pool({ seed: 42, now: () => t, config: { maxResources: 1_000_000, maxCells: 10_000_000 } });
  for (let i = 0; i < n; i++) {
    const v = `http://proxy-${String(i).padStart(6, "0")}.pool.example.net:8080`;
    pool.register("PROXY", v);
    for (const c of CONTEXTS) pool.report("PROXY", v, c, { ok: true });
  }
  pool.drainEvents();
  const mix = outcomes();
  const cycle = (i) => {
    t += 1;
    const ctx = CONTEXTS[i % 10];
    const lease = pool.acquire(ctx);
    pool.report(lease.kind, lease.value, ctx, mix[i % 1000]);
    pool.release(lease);
    // A host drains events continuously; every 4 096 cycles (8 192 events) keeps the buffer
    // (65 536 by default) from overflowing, as in the engine benchmark.
    if ((i & 4095) === 0) pool.drainEvents();
  };
  return { pool, cycle };
}
