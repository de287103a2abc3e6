// Node benchmark: acquire + report + release cycles through the `repute` package, beside the
// native engine running the same cycle (examples/cycle_rate.rs, the engine benchmark's
// workload) and Crawlee's SessionPool (getSession + markGood/markBad, persistence off, its
// usage caps removed), in the same run, at 1k / 10k / 100k resources; then the cost of a
// rejected acquire and its `nextChangeAt` on a saturated pool. Prints figures, and for each size
// one line `BENCH {"size","nativeNs","nodeNs","ratio","crawleeNs","wasmNs","wasmRatio"}` (medians
// of the rounds; `wasmNs`: the same cycle run inside WebAssembly by one call, pkg-scripts/perf/wasm-cycle.mjs,
// the bound the package's Node cycle could reach with no glue; `wasmRatio` = wasmNs ÷ nativeNs);
// asserts nothing.
//   pkg-scripts/perf/bench            (all sizes)     pkg-scripts/perf/bench 10000     (one size)
// BENCH_CYCLES (default 1 000 000): cycles per round, the same number natively and in Node, so
//   both cover the same simulated period (1 ms a cycle; far longer runs exhaust a 1k pool:
//   every cell cools). BENCH_ROUNDS (default 3): rounds per size, each on a fresh pool.
// BENCH_SECONDS (default 3): the time per Crawlee round. REPUTE_NATIVE_BIN, REPUTE_WASM_CYCLE:
//   the built example and module (pkg-scripts/perf/bench builds them).
import { spawnSync } from "node:child_process";
import { SessionPool } from "@crawlee/core";
import { Pool } from "repute";
import { cyclingPool, outcomes } from "./bench-workload.mjs";
import { wasmCycleNs } from "./wasm-cycle.mjs";

const CYCLES = Number(process.env.BENCH_CYCLES ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const NATIVE = process.env.REPUTE_NATIVE_BIN;
const WASM_CYCLE = process.env.REPUTE_WASM_CYCLE;
const WARM_UP = 20_000;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Nanoseconds per cycle of the native engine over CYCLES cycles after the warm-up. */
function nativeNs(n) {
  const run = spawnSync(NATIVE, [String(n), String(CYCLES)], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`${NATIVE} ${n} ${CYCLES} failed: ${run.stderr.trim()}`);
  return JSON.parse(run.stdout.trim()).ns;
}

/** Nanoseconds per cycle through the package: a fresh pool, the warm-up, then CYCLES cycles. */
function nodeNs(n) {
  const { pool, cycle } = cyclingPool(Pool, n);
  for (let i = 0; i < WARM_UP; i++) cycle(i);
  const start = performance.now();
  for (let i = WARM_UP; i < WARM_UP + CYCLES; i++) cycle(i);
  const ns = ((performance.now() - start) * 1e6) / CYCLES;
  pool.free();
  return ns;
}

/** A pre-filled Crawlee SessionPool whose sessions never retire by use or age (only by their
 * error score, which is its reputation), and its cycle. */
async function crawleePool(n) {
  const pool = await SessionPool.open({
    maxPoolSize: n,
    persistenceOptions: { enable: false },
    sessionOptions: { maxUsageCount: Number.MAX_SAFE_INTEGER, maxAgeSecs: 10 * 365 * 86_400 },
  });
  for (let i = 0; i < n; i++) await pool.addSession();
  const mix = outcomes();
  return async (i) => {
    const session = await pool.getSession();
    if (mix[i % 1000].ok) session.markGood();
    else session.markBad();
  };
}

/** Nanoseconds per awaited cycle over SECONDS after a warm-up. */
async function crawleeNs(cycle) {
  for (let i = 0; i < WARM_UP; i++) await cycle(i);
  let n = 0;
  const start = performance.now();
  const end = start + SECONDS * 1000;
  while (performance.now() < end) {
    for (let i = n; i < n + 1000; i++) await cycle(i);
    n += 1000;
  }
  return ((performance.now() - start) * 1e6) / n;
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
  const rounds = 20_000;
  let x = 12345;
  const round = () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const i = x % leases.length;
    t += 1;
    pool.release(leases[i]);
    leases[i] = pool.acquire("c");
    if (pool.acquire("c") !== null || pool.nextChangeAt("c") === null) throw new Error("not saturated");
  };
  // Warmed up first: 2 000 cold rounds measured the JIT (13–37 µs a round), not the pool.
  for (let k = 0; k < WARM_UP; k++) round();
  const start = performance.now();
  for (let k = 0; k < rounds; k++) round();
  const us = ((performance.now() - start) * 1000) / rounds;
  pool.free();
  return us;
}

if (!NATIVE || !WASM_CYCLE) throw new Error("REPUTE_NATIVE_BIN or REPUTE_WASM_CYCLE is not set: run pkg-scripts/perf/bench, which builds them");
const sizes = process.argv.slice(2).map(Number);
const fmt = (ns) => `${ns.toFixed(0).padStart(7)} ns`;
console.log(`acquire + report + release, ns per cycle, median of ${ROUNDS} rounds (${CYCLES.toLocaleString("en")} cycles a round natively and in Node, ${SECONDS} s for Crawlee; 10 contexts, 85 % success)`);
console.log("resources    native    repute (Node)   ratio   crawlee SessionPool   wasm, no JS   ratio");
const lines = [];
for (const n of sizes.length ? sizes : [1_000, 10_000, 100_000]) {
  const native = [];
  const node = [];
  const crawlee = [];
  const wasm = [];
  const crawleeCycle = await crawleePool(n);
  for (let r = 0; r < ROUNDS; r++) {
    node.push(nodeNs(n));
    native.push(nativeNs(n));
    crawlee.push(await crawleeNs(crawleeCycle));
    wasm.push(await wasmCycleNs(WASM_CYCLE, n, CYCLES));
  }
  const row = { size: n, nativeNs: +median(native).toFixed(1), nodeNs: +median(node).toFixed(1) };
  row.ratio = +(row.nodeNs / row.nativeNs).toFixed(2);
  row.crawleeNs = +median(crawlee).toFixed(1);
  row.wasmNs = +median(wasm).toFixed(1);
  row.wasmRatio = +(row.wasmNs / row.nativeNs).toFixed(2);
  console.log(`${String(n).padStart(9)}   ${fmt(row.nativeNs)}   ${fmt(row.nodeNs)}   ${row.ratio.toFixed(2).padStart(5)}×   ${fmt(row.crawleeNs)}          ${fmt(row.wasmNs)}   ${row.wasmRatio.toFixed(2).padStart(5)}×`);
  lines.push(row);
}
for (const row of lines) console.log(`BENCH ${JSON.stringify(row)}`);
console.log("\nsaturated pool: release + acquire + rejected acquire + nextChangeAt, per round");
for (const n of sizes.length ? sizes : [1_000, 10_000, 100_000]) {
  console.log(`${String(n).padStart(9)}   ${saturated(n).toFixed(1).padStart(8)} µs`);
}
process.exit(0);
