// The profiling half of pkg-scripts/perf/profile: loads the named module from the folder given,
// runs the benchmark's cycle (bench-workload.mjs) to warm up, then samples the steady loop
// through node:inspector and prints where the time went. Prints figures; asserts nothing.
//   node profile.mjs <folder with repute.js and repute_bg.wasm> [sizes…]
import { readFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { makePool } from "../lib/pool.js";
import { cyclingPool } from "./bench-workload.mjs";

const [dir, ...args] = process.argv.slice(2);
const glue = await import(pathToFileURL(path.join(dir, "repute.js")).href);
glue.initSync({ module: readFileSync(path.join(dir, "repute_bg.wasm")) });
const Pool = makePool(glue.RawPool);
const CYCLES = Number(process.env.PROFILE_CYCLES ?? 1_000_000);
const WARM_UP = 200_000;

/** Self time per group and per function, as fractions of all samples. */
function summarise(profile) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const groups = { module: 0, javascript: 0, gc: 0, other: 0 };
  const fns = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const { functionName: f, url } = nodes.get(id);
    if (f === "(idle)") return;
    total += dt;
    const group = url.includes(".wasm") || f.startsWith("js-to-wasm") || f.startsWith("wasm-to-js") ? "module"
      : f === "(garbage collector)" ? "gc"
      : f === "(program)" || f === "(root)" ? "other"
      : "javascript";
    groups[group] += dt;
    const name = group === "module" ? f.replace(/::h[0-9a-f]{16}$/, "") : `${f || "(anonymous)"} ${path.basename(url)}`;
    fns.set(name, (fns.get(name) ?? 0) + dt);
  });
  return { groups, fns, total };
}

const pct = (x, total) => `${((100 * x) / total).toFixed(1).padStart(5)} %`;

for (const n of args.length ? args.map(Number) : [10_000]) {
  const { pool, cycle } = cyclingPool(Pool, n);
  for (let i = 0; i < WARM_UP; i++) cycle(i);
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  const start = performance.now();
  for (let i = WARM_UP; i < WARM_UP + CYCLES; i++) cycle(i);
  const seconds = (performance.now() - start) / 1000;
  const { profile } = await session.post("Profiler.stop");
  session.disconnect();
  pool.free();
  const { groups, fns, total } = summarise(profile);
  console.log(`${n} resources: ${Math.round(CYCLES / seconds).toLocaleString("en")} cycles/s while profiled (${CYCLES.toLocaleString("en")} cycles)`);
  for (const [g, t] of Object.entries(groups)) console.log(`  ${pct(t, total)}  ${g}`);
  console.log("  most self time:");
  for (const [f, t] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${pct(t, total)}  ${f}`);
}
