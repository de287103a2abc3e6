// How long the Node host's checkpoint holds the event loop (figures in BENCHMARKS.md, "Stepped
// checkpoints"): opens `openPool` on a folder seeded with --resources resources × --contexts
// contexts (126,000 cells by default), then times checkpoints while a probe (one `setImmediate`
// after another, as a waiting request would be served) measures the gaps between its turns:
// - "burst": 1,000 reports on random resources, then a checkpoint (the burst checkpoint);
// - "all touched": a report on every resource, then a checkpoint (every part retaken);
// - "idle": a checkpoint with nothing changed.
// Prints, for each, the checkpoint's wall time, the probe's turns during it and its longest gap
// (the longest hold of the loop), with the load average.
//
// Usage: node pkg-scripts/perf/bench-checkpoint.mjs [--resources 12600] [--contexts 10] [--runs 3]

import os from "node:os";
import path from "node:path";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Pool, openPool } from "../node.js";

const { values: o } = parseArgs({
  options: {
    resources: { type: "string", default: "12600" },
    contexts: { type: "string", default: "10" },
    runs: { type: "string", default: "3" },
  },
});
const R = Number(o.resources);
const C = Number(o.contexts);
const RUNS = Number(o.runs);
const value = (i) => `http://user${i}:pass${i}@proxy-${i}.example.net:8080`;

const dir = mkdtempSync(path.join(os.tmpdir(), "repute-bench-checkpoint-"));
try {
  const config = { maxResources: Math.max(R, 1000), maxCells: Math.max(R * C, 1000) };
  const seeded = new Pool({ config, seed: 1 });
  for (let i = 0; i < R; i++) seeded.register("PROXY", value(i));
  for (let c = 0; c < C; c++) {
    for (let i = 0; i < R; i++) {
      const outcome = i % 7 === 0 ? { ok: false, failure: "TIMEOUT" } : { ok: true, latencyMs: 100 + (i % 50) };
      seeded.report("PROXY", value(i), `site-${c}.example`, outcome);
    }
  }
  const json = seeded.snapshot();
  seeded.free();
  writeFileSync(path.join(dir, "snapshot.json"), json);
  const host = await openPool({ dir, config, checkpointMs: 0, burst: 1e9, handleSignals: false });

  /** One checkpoint after `prepare()`, with the probe running: its figures. */
  async function measured(prepare) {
    prepare();
    let running = true;
    let turns = 0;
    let longest = 0;
    const started = performance.now();
    let last = started;
    const probe = (async () => {
      while (running) {
        await new Promise((r) => setImmediate(r));
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
        turns++;
      }
    })();
    await host.checkpoint();
    const ms = performance.now() - started;
    running = false;
    await probe;
    return { ms, turns, longest };
  }

  let n = 0;
  const cases = {
    burst: () => {
      for (let i = 0; i < 1000; i++) host.report("PROXY", value((n++ * 7919) % R), "site-1.example", { ok: true, latencyMs: 90 });
    },
    "all touched": () => {
      for (let i = 0; i < R; i++) host.report("PROXY", value(i), "site-2.example", { ok: true, latencyMs: 95 });
    },
    idle: () => {},
  };
  console.log(`pool: ${R} resources × ${C} contexts = ${R * C} cells, snapshot ${(json.length / 1e6).toFixed(1)} MB`);
  for (const [name, prepare] of Object.entries(cases)) {
    for (let run = 0; run < RUNS; run++) {
      const { ms, turns, longest } = await measured(prepare);
      console.log(`${name.padEnd(12)} checkpoint ${ms.toFixed(0).padStart(5)} ms, probe turns ${String(turns).padStart(5)}, longest hold ${longest.toFixed(1)} ms`);
    }
  }
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  await host.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
