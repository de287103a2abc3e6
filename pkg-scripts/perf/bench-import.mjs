// What a large snapshot upload and a refused large config cost the server (figures in
// BENCHMARKS.md, "Big answers in pieces"): starts `repute serve` as a child process on an empty
// pool sized for --resources resources, then (1) PUTs a snapshot of that many resources with
// ~1 KB values (--mib MiB in all), and (2) PUTs a config of 4,097 `minGapMsByContext` entries
// (6 MiB, every key `\u`-escaped), which is refused. Meanwhile a `/healthz` probe every 20 ms
// and the child's resident memory (VmRSS, and its peak VmHWM, from /proc) every 20 ms. Prints
// each upload's time, the probe's worst latency during it, and the memory before, at peak and
// after. Linux only (/proc).
//
// The pool holds 1,000 proxies with cells before the upload, and a worker does acquire +
// release over HTTP in a loop on its own connection all along: its latency percentiles (one
// step: both requests) before the upload and while it is being imported are printed. The
// upload is sent by a child process reading the snapshot from a file, so that sending 370 MiB
// does not share the loop that times the worker and the probe.
//
// With --config-only the snapshot upload is left out (the pool stays small) and the refused
// config is sent --repeat times (default 1): the medians and worsts of its time and of the
// probe's worst latency during it are printed too, and the worker's steps that overlapped the
// requests (the config is sent by a child process too, like the snapshot).
//
// With --timeline the worker's steps during the upload are also printed by 2-second spans (how
// many, their p99, how many over 10 ms), beside when the uploader finished sending; with
// --trace-gc the server runs under `node --trace-gc` and its collections are printed as they
// come, each with the time since the upload began.
//
// Usage: node pkg-scripts/perf/bench-import.mjs [--mib 400] [--config-only] [--repeat N] [--cpu-prof DIR]
//        [--timeline] [--trace-gc]

import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Pool as HttpPool } from "undici";
import { Pool } from "../node.js";
import { serveChild } from "./bench-serve.mjs";

const { values: o } = parseArgs({
  options: { mib: { type: "string", default: "400" }, "config-only": { type: "boolean", default: false }, repeat: { type: "string", default: "1" }, "cpu-prof": { type: "string" }, timeline: { type: "boolean", default: false }, "trace-gc": { type: "boolean", default: false } },
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

/** The pool before the upload: 1,000 proxies with a cell each in the worker's context. */
function seed() {
  const pool = new Pool({ config, seed: 1 });
  for (let i = 0; i < 1000; i++) {
    pool.register("PROXY", `live-${i}.example.net:8080`);
    pool.report("PROXY", `live-${i}.example.net:8080`, "site-1.example", { ok: true, latencyMs: 100 });
  }
  const s = pool.snapshot();
  pool.free();
  return s;
}

function percentiles(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
  return `n ${s.length}, p50 ${at(50).toFixed(2)} ms, p99 ${at(99).toFixed(2)} ms, max ${s[s.length - 1].toFixed(2)} ms`;
}

/** The worker's steps by 2-second spans from `t0`: count, p99 and how many took over 10 ms. */
function timeline(t0, starts, steps, sentMs) {
  if (sentMs != null) console.log(`  the uploader had sent every byte at ${(sentMs / 1000).toFixed(1)} s`);
  const spans = new Map();
  starts.forEach((s, i) => {
    const k = Math.floor((s - t0) / 2000);
    if (!spans.has(k)) spans.set(k, []);
    spans.get(k).push(steps[i]);
  });
  for (const [k, ms] of spans) {
    const slow = ms.filter((x) => x > 10).length;
    const s = [...ms].sort((a, b) => a - b);
    console.log(`  ${String(k * 2).padStart(4)} s: n ${String(ms.length).padStart(5)}, p99 ${s[Math.min(s.length - 1, Math.floor(0.99 * s.length))].toFixed(1).padStart(6)} ms, over 10 ms ${slow}, max ${s[s.length - 1].toFixed(0)} ms`);
  }
}

/** PUTs the file's bytes to `route` from a child process (streamed, with its length):
 * `{ status, ms, sentMs, from, to }` (sentMs: when the last byte was read to be sent; from, to:
 * the request's start and end in ms since the epoch, `performance.timeOrigin` based, so that
 * this process can tell which of its samples overlapped it). */
function uploadApart(url, file, route = "/api/snapshot") {
  const code = `
    const { stat } = await import("node:fs/promises");
    const { createReadStream } = await import("node:fs");
    const { request } = await import("undici");
    const size = (await stat(${JSON.stringify(file)})).size;
    const t = performance.now();
    const body = createReadStream(${JSON.stringify(file)});
    let sentMs = null;
    body.on("end", () => (sentMs = performance.now() - t));
    const res = await request(${JSON.stringify(`${url}${route}`)}, {
      method: "PUT",
      headers: { "content-type": "application/json", "content-length": String(size) },
      body,
      headersTimeout: 0, bodyTimeout: 0,
    });
    await res.body.text();
    const end = performance.now();
    console.log(JSON.stringify({ status: res.statusCode, ms: end - t, sentMs, from: performance.timeOrigin + t, to: performance.timeOrigin + end }));`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"], cwd: path.dirname(new URL(import.meta.url).pathname) });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  return new Promise((resolve, reject) =>
    child.once("exit", (c) => (c === 0 ? resolve(JSON.parse(out)) : reject(new Error(`the uploader exited with ${c}`)))),
  );
}

let since = null;
const gcLine = (text) => {
  for (const line of String(text).split("\n")) if (line.trim()) console.log(`  server at ${since === null ? "-" : ((performance.now() - since) / 1000).toFixed(2)} s: ${line.trim()}`);
};
const server = await serveChild(seed(), { cpuProf: o["cpu-prof"], ...(o["trace-gc"] ? { nodeFlags: ["--trace-gc"], onOutput: gcLine } : {}) });
const child = { pid: server.pid };
const tmp = await mkdtemp(path.join(os.tmpdir(), "repute-bench-import-"));
try {
  const { url } = server;
  const http = new HttpPool(url, { connections: 2 });
  const request = async (method, p, body) => {
    const res = await http.request({ method, path: p, headers: body ? { "content-type": "application/json" } : {}, body: body && JSON.stringify(body) });
    return { status: res.statusCode, text: await res.body.text() };
  };
  /** One acquire + release, timed. */
  const cycle = async () => {
    const t = performance.now();
    const lease = await request("POST", "/api/leases", { context: "site-1.example" });
    if (lease.status === 201) await request("DELETE", `/api/leases/${JSON.parse(lease.text).leaseId}`);
    return performance.now() - t;
  };
  const quiet = [];
  for (const until = Date.now() + 2000; Date.now() < until; ) quiet.push(await cycle());
  console.log(`worker alone, acquire+release: ${percentiles(quiet)}`);
  /** `send()` while probing /healthz and sampling memory; prints what they saw. */
  const measure = async (what, send) => {
    const before = await memory(child.pid);
    let done = false;
    let worst = 0;
    let rssMax = before.rss;
    const probe = (async () => {
      while (!done) {
        const t = performance.now();
        await request("GET", "/healthz");
        worst = Math.max(worst, performance.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const steps = [];
    const starts = [];
    const worker = (async () => {
      while (!done) {
        starts.push(performance.now());
        steps.push(await cycle());
      }
    })();
    const sampler = (async () => {
      while (!done) {
        rssMax = Math.max(rssMax, (await memory(child.pid)).rss);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const t = performance.now();
    since = t;
    const answer = await send();
    const status = answer.status ?? answer;
    const ms = answer.ms ?? performance.now() - t;
    done = true;
    await Promise.all([probe, sampler, worker]);
    await new Promise((r) => setTimeout(r, 2000));
    const after = await memory(child.pid);
    console.log(`${what}: ${status} in ${ms.toFixed(0)} ms; /healthz worst ${worst.toFixed(0)} ms; RSS before ${mb(before.rss)}, max sampled ${mb(rssMax)}, peak (VmHWM) ${mb(after.peak)}, 2 s after ${mb(after.rss)}`);
    console.log(`  worker meanwhile, acquire+release: ${percentiles(steps)}`);
    if (o.timeline) timeline(t, starts, steps, answer.sentMs);
    // The steps that overlapped the request itself (the uploader's start-up left out).
    const at = (x) => performance.timeOrigin + x;
    const during = answer.from === undefined ? steps : steps.filter((ms, i) => at(starts[i]) < answer.to && at(starts[i]) + ms > answer.from);
    return { ms, worst, steps: during };
  };
  if (!o["config-only"]) {
    const file = path.join(tmp, "snapshot.json");
    let mib;
    {
      const snapshot = bigSnapshot();
      mib = Buffer.byteLength(snapshot) / 2 ** 20;
      await writeFile(file, snapshot);
    }
    await measure(`PUT /api/snapshot of ${mib.toFixed(0)} MiB (${R} resources)`, async () => uploadApart(url, file));
  }
  const patch = bigConfig();
  const patchFile = path.join(tmp, "config.json");
  await writeFile(patchFile, patch);
  const runs = [];
  for (let i = 0; i < Number(o.repeat); i++) {
    // Sent from a child process too: 6 MiB sent from this process delayed the worker it times.
    runs.push(await measure(`PUT /api/config of 4,097 gaps (${(patch.length / 2 ** 20).toFixed(1)} MiB), refused`, () => uploadApart(url, patchFile, "/api/config")));
  }
  if (runs.length > 1) {
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const ms = runs.map((r) => r.ms);
    const worst = runs.map((r) => r.worst);
    console.log(`  the worker's steps that overlapped the ${runs.length} requests, acquire+release: ${percentiles(runs.flatMap((r) => r.steps))}`);
    console.log(`refused config, ${runs.length} times: median ${median(ms).toFixed(0)} ms (worst ${Math.max(...ms).toFixed(0)}); /healthz worst during it, median ${median(worst).toFixed(0)} ms (worst ${Math.max(...worst).toFixed(0)})`);
  }
  await http.close();
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
} finally {
  await server.stop();
  await rm(tmp, { recursive: true, force: true });
}
