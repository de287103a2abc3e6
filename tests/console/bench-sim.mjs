// How long one simulated hour takes: every ready-made scenario under engine defaults and plain
// rotation, in Node (the same core modules) and in Chromium's Web Worker (www/sim/worker.js,
// the page's real path, served with the console's CSP); then what the page's Compare costs now
// that it runs every policy on SEEDS seeds, against one seed per policy as it did before.
// Prints figures; asserts nothing.
// Run: pkg-scripts/perf/bench-sim (figures in BENCHMARKS.md).
import { Pool } from "repute";
import { createRun } from "../../www/sim/core/simulate.js";
import { SCENARIOS } from "../../www/sim/core/scenario.js";
import { plainRotation } from "../../www/sim/core/policies.js";
import { SEEDS } from "../../www/sim/core/verdict.js";
import { launchChromium } from "./_support.mjs";
import { serveWww } from "./_sim-support.mjs";

const defaults = new Pool({ seed: 0 }).config();
const policies = { defaults, "plain rotation": plainRotation(defaults) };
const REPEAT = Number(process.env.BENCH_REPEAT ?? 5);
const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const jobs = [];
for (const [id, s] of Object.entries(SCENARIOS)) for (const [name, config] of Object.entries(policies)) jobs.push({ id, name, scenario: s.make(), config });

const node = [];
for (const j of jobs) {
  const times = [];
  let requests = 0;
  for (let i = 0; i < REPEAT; i++) {
    const t = performance.now();
    const run = createRun({ Pool, scenario: j.scenario, config: j.config, seed: 42 });
    run.advance();
    requests = run.finish().meta.requests;
    times.push(performance.now() - t);
  }
  node.push({ ...j, requests, ms: median(times) });
}

const www = await serveWww();
const browser = await launchChromium();
const page = await browser.newPage();
await page.goto(`${www.url}/index.html`);
const chromium = await page.evaluate(async ({ jobs, repeat }) => {
  const worker = new Worker("/sim/worker.js", { type: "module" });
  await new Promise((ok) => worker.addEventListener("message", function ready(e) {
    if (e.data.type === "ready") ok(worker.removeEventListener("message", ready));
  }));
  const once = (job, id) => new Promise((ok, fail) => {
    const t = performance.now();
    worker.onmessage = ({ data }) => {
      if (data.type === "result") ok(performance.now() - t);
      if (data.type === "error") fail(new Error(data.message));
    };
    const list = job.jobs ?? [job];
    worker.postMessage({ type: "run", id, jobs: list.map((j) => ({ scenario: j.scenario, config: j.config, seed: 42, snapshot: null, seeds: j.seeds ?? 1 })) });
  });
  const out = [];
  let id = 0;
  for (const job of jobs) {
    const times = [];
    for (let i = 0; i < repeat; i++) times.push(await once(job, ++id));
    out.push(times.sort((a, b) => a - b)[Math.floor(times.length / 2)]);
  }
  return out;
}, { jobs: [
  ...jobs.map(({ scenario, config }) => ({ scenario, config })),
  // A Compare (defaults against plain rotation) of each scenario: one seed per policy, then SEEDS.
  ...Object.values(SCENARIOS).flatMap((s) => [1, SEEDS].map((seeds) => ({ jobs: Object.values(policies).map((config) => ({ scenario: s.make(), config, seeds })) }))),
], repeat: REPEAT });
await browser.close();
await www.close();

console.log(`one simulated hour, seed 42, median of ${REPEAT}:`);
console.log("| scenario | policy | acquires | Node | Chromium worker |");
console.log("|---|---|---:|---:|---:|");
node.forEach((r, i) => console.log(`| ${SCENARIOS[r.id].title} | ${r.name} | ${r.requests.toLocaleString("en-US")} | ${(r.ms / 1000).toFixed(2)} s | ${(chromium[i] / 1000).toFixed(2)} s |`));
console.log(`\nCompare in the Chromium worker (defaults against plain rotation), median of ${REPEAT}:`);
console.log(`| scenario | 1 seed per policy | ${SEEDS} seeds per policy |`);
console.log("|---|---:|---:|");
Object.values(SCENARIOS).forEach((s, k) => {
  const [one, many] = chromium.slice(node.length + 2 * k, node.length + 2 * k + 2);
  console.log(`| ${s.title} | ${(one / 1000).toFixed(2)} s | ${(many / 1000).toFixed(2)} s |`);
});
