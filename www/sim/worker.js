// The simulation's Web Worker: loads the engine's web entry and runs simulations (one, or an
// A/B pair one after the other) and replays off the page's thread, so the page stays
// responsive. A job with `seeds: n` is run on its seed and the n − 1 seeds after it (the
// result is the first seed's, with `seeds: [{ seed, summary }]` of all n). A run goes in slices of simulated time; between slices it reports progress and
// reads messages, so Stop ends it there (its result covers what ran).
//
// Page → worker: { type: "run", id, jobs: [{ scenario, config, seed, snapshot, seeds? }] },
//                { type: "replay", id, log, config, seed }, { type: "stop", id }.
// Worker → page: { type: "ready" }, { type: "progress", id, done, total },
//                { type: "result", id, runs, stopped } | { type: "replayed", id, result },
//                { type: "error", id, message, code, problems }.
import { init, Pool } from "../vendor/repute/web.js";
import { createRun } from "./core/simulate.js";
import { replay } from "./core/replay.js";
import { seedsFrom } from "./core/verdict.js";

/** Slices per run: progress moves in steps of 1 %. */
const SLICES = 100;
const stops = new Set();

/** Lets queued messages (a Stop) in: resolves in a new task, without timer clamping. */
const channel = new MessageChannel();
const pause = () => new Promise((resolve) => {
  channel.port1.onmessage = () => resolve();
  channel.port2.postMessage(null);
});

async function run({ id, jobs }) {
  // One run per job and seed, in order: every job's first seed (the charted runs), then the rest.
  const plan = jobs.map((job) => seedsFrom(job.seed, job.seeds ?? 1).map((seed) => createRun({ Pool, ...job, seed })));
  const created = [...plan.map((p) => p[0]), ...plan.flatMap((p) => p.slice(1))];
  const total = created.reduce((n, r) => n + r.totalMs, 0);
  const results = new Map();
  let before = 0;
  let stopped = false;
  for (const r of created) {
    for (let i = 1; !stopped && !r.advance((r.totalMs * i) / SLICES); i++) {
      postMessage({ type: "progress", id, done: before + r.doneMs, total });
      await pause();
      if (stops.has(id)) stopped = true;
    }
    if (!stopped) before += r.totalMs;
    results.set(r, r.finish()); // frees the engine, also of a run never started
  }
  const runs = plan.map((p, j) => {
    const [first, ...rest] = p.map((r) => results.get(r));
    if (rest.length === 0 || stopped) return first;
    const seeds = [first, ...rest].map((x, i) => ({ seed: jobs[j].seed + i, summary: x.summary }));
    return { ...first, seeds };
  });
  postMessage({ type: "progress", id, done: stopped ? before : total, total });
  postMessage({ type: "result", id, runs, stopped });
}

onmessage = async ({ data }) => {
  if (data.type === "stop") {
    stops.add(data.id);
    return;
  }
  try {
    await ready;
    if (data.type === "run") await run(data);
    else if (data.type === "replay") postMessage({ type: "replayed", id: data.id, result: replay({ Pool, ...data }) });
  } catch (e) {
    postMessage({ type: "error", id: data.id, message: e.message, code: e.code ?? null, problems: e.problems ?? null });
  } finally {
    stops.delete(data.id);
  }
};

const ready = init().then(
  () => postMessage({ type: "ready" }),
  (e) => postMessage({ type: "error", id: null, message: `the engine did not load: ${e.message}`, code: "ENGINE_LOAD" }),
);
