// Node benchmark: acquire + report + release cycles per second through the `repute` package,
// beside the same loop on Crawlee's SessionPool (getSession + markGood/markBad, persistence
// off), in the same run, at 1k / 10k / 100k resources; then the cost of a rejected acquire
// and its `nextChangeAt` on a saturated pool. Prints figures; asserts nothing.
//   pkg-scripts/bench            (all sizes)     pkg-scripts/bench 10000     (one size)
import { SessionPool } from "@crawlee/core";
import { Pool } from "repute";
import { cyclingPool, outcomes } from "./bench-workload.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);

/** Runs `cycle(i)` for SECONDS after a short warm-up; returns cycles per second. A cycle
 * that returns a promise is awaited; a synchronous one is not (awaiting would add a
 * microtask per cycle that the API does not need). */
async function rate(cycle, async = false) {
  const run = async
    ? async (from, k) => { for (let i = from; i < from + k; i++) await cycle(i); }
    : (from, k) => { for (let i = from; i < from + k; i++) cycle(i); };
  await run(0, 20000);
  let n = 0;
  const start = performance.now();
  const end = start + SECONDS * 1000;
  while (performance.now() < end) {
    await run(n, 1000);
    n += 1000;
  }
  return n / ((performance.now() - start) / 1000);
}

async function repute(n) {
  const { pool, cycle } = cyclingPool(Pool, n);
  const r = await rate(cycle);
  pool.free();
  return r;
}

async function crawlee(n) {
  const pool = await SessionPool.open({ maxPoolSize: n, persistenceOptions: { enable: false } });
  for (let i = 0; i < n; i++) await pool.addSession();
  const mix = outcomes();
  return rate(async (i) => {
    const session = await pool.getSession();
    if (mix[i % 1000].ok) session.markGood();
    else session.markBad();
  }, true);
}

/** A saturated pool (every resource leased) where one random lease changes hands and then an
 * acquire is rejected and `nextChangeAt` asked — what an HTTP host does for `Retry-After` on
 * every 409. Returns microseconds per round. */
function saturated(n) {
  let t = 1_700_000_000_000;
  const pool = new Pool({ seed: 1, now: () => t, config: { maxResources: 1_000_000, maxCells: 10_000_000, leaseTtlMs: 3_600_000 } });
  for (let i = 0; i < n; i++) pool.register("PROXY", `p${i}`);
  const leases = [];
  for (let l; (l = pool.acquire("c")) !== null; t += 1) leases.push(l);
  const rounds = 2000;
  let x = 12345;
  const start = performance.now();
  for (let k = 0; k < rounds; k++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const i = x % leases.length;
    t += 1;
    pool.release(leases[i]);
    leases[i] = pool.acquire("c");
    if (pool.acquire("c") !== null || pool.nextChangeAt("c") === null) throw new Error("not saturated");
  }
  const us = ((performance.now() - start) * 1000) / rounds;
  pool.free();
  return us;
}

const sizes = process.argv.slice(2).map(Number);
console.log(`acquire + report + release cycles per second (${SECONDS} s per figure, 10 contexts, 85 % success)`);
console.log("resources   repute (wasm)   crawlee SessionPool");
for (const n of sizes.length ? sizes : [1_000, 10_000, 100_000]) {
  const a = await repute(n);
  const b = await crawlee(n);
  console.log(`${String(n).padStart(9)}   ${Math.round(a).toLocaleString("en").padStart(13)}   ${Math.round(b).toLocaleString("en").padStart(19)}`);
}
console.log("\nsaturated pool: release + acquire + rejected acquire + nextChangeAt, per round");
for (const n of sizes.length ? sizes : [1_000, 10_000, 100_000]) {
  console.log(`${String(n).padStart(9)}   ${saturated(n).toFixed(1).padStart(8)} µs`);
}
process.exit(0);
