// What a large snapshot upload and a refused large config cost the server (figures in
// BENCHMARKS.md, "Big answers in pieces"): starts `repute serve` as a child process on an empty
// pool sized for --resources resources, then (1) PUTs a snapshot of that many resources with
// ~1 KB values (--mib MiB in all), and (2) PUTs a config of 4,097 `minGapMsByContext` entries
// (6 MiB, every key `\u`-escaped), which is refused. Meanwhile a `/healthz` probe every 20 ms
// and the child's resident memory (VmRSS, and its peak VmHWM, from /proc) every 20 ms. Prints
// each upload's time, the probe's worst latency during it, and the memory before, at peak and
// after. Linux only (/proc).
//
// With --config-only the snapshot upload is left out (the pool stays small) and the refused
// config is sent --repeat times (default 1): the medians and worsts of its time and of the
// probe's worst latency during it are printed too.
//
// Usage: node pkg-scripts/perf/bench-import.mjs [--mib 400] [--config-only] [--repeat N] [--cpu-prof DIR]

import { readFile } from "node:fs/promises";
import os from "node:os";
import { parseArgs } from "node:util";
import { Pool } from "../node.js";
import { serveChild } from "./bench-serve.mjs";

const { values: o } = parseArgs({
  options: { mib: { type: "string", default: "400" }, "config-only": { type: "boolean", default: false }, repeat: { type: "string", default: "1" }, "cpu-prof": { type: "string" } },
});
const VALUE_BYTES = 1000;
const R = Math.ceil((Number(o.mib) * 2 ** 20) / (VALUE_BYTES + 100));
const config = { maxResources: R, maxCells: R };

/** A snapshot of R resources with ~1 KB values (no cells: the bytes are in the values). */
function bigSnapshot() {
  const pool = new Pool({ config, seed: 1 });
  const pad = "v".repeat(VALUE_BYTES - 40);
  for (let i = 0; i < R; i++) pool.register("PROXY", `proxy-${i}.example.net:8080/${pad}`);
  const s = pool.snapshot();
  pool.free();
  return s;
}

/** A config patch of 4,097 per-context gaps, every key character `\u`-escaped: 6 MiB. */
function bigConfig() {
  const entries = [];
  for (let i = 0; i < 4097; i++) {
    const key = `site-${i}.example/`.padEnd(250, "x");
    entries.push(`"${[...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("")}":1000`);
  }
  return `{"minGapMsByContext":{${entries.join(",")}}}`;
}

const memory = async (pid) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)[1]) / 1024;
  return { rss: kb("VmRSS"), peak: kb("VmHWM") };
};
const mb = (x) => `${x.toFixed(0)} MB`;

const seedPool = new Pool({ config, seed: 1 });
const server = await serveChild(seedPool.snapshot(), { cpuProf: o["cpu-prof"] });
seedPool.free();
const child = { pid: server.pid };
try {
  const { url } = server;
  /** `send()` while probing /healthz and sampling memory; prints what they saw. */
  const measure = async (what, send) => {
    const before = await memory(child.pid);
    let done = false;
    let worst = 0;
    let rssMax = before.rss;
    const probe = (async () => {
      while (!done) {
        const t = performance.now();
        await (await fetch(`${url}/healthz`)).text();
        worst = Math.max(worst, performance.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const sampler = (async () => {
      while (!done) {
        rssMax = Math.max(rssMax, (await memory(child.pid)).rss);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const t = performance.now();
    const status = await send();
    const ms = performance.now() - t;
    done = true;
    await Promise.all([probe, sampler]);
    await new Promise((r) => setTimeout(r, 2000));
    const after = await memory(child.pid);
    console.log(`${what}: ${status} in ${ms.toFixed(0)} ms; /healthz worst ${worst.toFixed(0)} ms; RSS before ${mb(before.rss)}, max sampled ${mb(rssMax)}, peak (VmHWM) ${mb(after.peak)}, 2 s after ${mb(after.rss)}`);
    return { ms, worst };
  };
  if (!o["config-only"]) await upload(measure);
  const patch = bigConfig();
  const runs = [];
  for (let i = 0; i < Number(o.repeat); i++) {
    runs.push(await measure(`PUT /api/config of 4,097 gaps (${(patch.length / 2 ** 20).toFixed(1)} MiB), refused`, async () => {
      const res = await fetch(`${url}/api/config`, { method: "PUT", headers: { "content-type": "application/json" }, body: patch });
      await res.text();
      return res.status;
    }));
  }
  if (runs.length > 1) {
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const ms = runs.map((r) => r.ms);
    const worst = runs.map((r) => r.worst);
    console.log(`refused config, ${runs.length} times: median ${median(ms).toFixed(0)} ms (worst ${Math.max(...ms).toFixed(0)}); /healthz worst during it, median ${median(worst).toFixed(0)} ms (worst ${Math.max(...worst).toFixed(0)})`);
  }
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
} finally {
  await server.stop();
}

/** The snapshot upload, measured by `measure`. */
async function upload(measure) {
  const snapshot = bigSnapshot();
  await measure(`PUT /api/snapshot of ${(Buffer.byteLength(snapshot) / 2 ** 20).toFixed(0)} MiB (${R} resources)`, async () => {
    const res = await fetch(`${server.url}/api/snapshot`, { method: "PUT", headers: { "content-type": "application/json" }, body: snapshot });
    await res.text();
    return res.status;
  });
}
