// The engine's cycle inside WebAssembly with no JavaScript per cycle (benches/wasm-cycle, built
// by pkg-scripts/perf/bench): a fresh instance per measurement, `init(n)` (the pool and the 20 000
// warm-up cycles), then `run(cycles)` timed around the one call. Imports the module does not
// call on this path (wasm-bindgen's, from the engine's facade) are stubs that throw.
import { readFileSync } from "node:fs";

const stubs = new Proxy({}, {
  get: () => new Proxy({}, { get: (_, name) => () => { throw new Error(`wasm-cycle called import ${String(name)}`); } }),
});

/** Nanoseconds per cycle of `cycles` cycles on a fresh pool of `n` resources. */
export async function wasmCycleNs(path, n, cycles) {
  const { instance } = await WebAssembly.instantiate(readFileSync(path), stubs);
  const { init, run } = instance.exports;
  init(n);
  const start = performance.now();
  run(cycles);
  return ((performance.now() - start) * 1e6) / cycles;
}
