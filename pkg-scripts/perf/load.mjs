// Load test of the pool server over HTTP (figures in BENCHMARKS.md, "Pool server over HTTP").
//
// Starts `repute serve` as a child process on a fresh temporary data folder (default checkpoint
// interval, i.e. what an operator gets), registers --resources resources over HTTP, then drives
// the worker cycle over loopback with keep-alive connections: POST /api/leases → POST
// /api/outcomes for the resource leased → DELETE /api/leases/{leaseId}, rotating over
// --contexts contexts, with the outcome mix of the engine benchmark (85 % success, then TIMEOUT
// 6 %, CONNECTION_RESET 4 %, SLOW 3 %, BLOCKED 1.5 %, TLS_HANDSHAKE 0.5 %). Prints throughput
// (requests/s, cycles/s) and latency percentiles (p50, p90, p99, max) per request type and
// overall, measured client-side from the request write to the end of the response, for every
// response (a 409 of an acquire included).
//
// The load generator is autocannon: its `requests` sequence with `setupRequest`/`onResponse`
// chains the three requests through a per-connection context (the lease of the acquire's
// response feeds the report and the release; an acquire answered 409 restarts the sequence).
// Per-type latencies come from autocannon's per-response `response` event (the connection's
// current request names the type); autocannon's own table counts only 2xx, so it is printed
// only as a cross-check.
//
// Also printed: where the machine's CPU went during the run (server, load generator, anything
// else, from /proc), so that a run disturbed by other processes shows as such.
//
// --soak MINUTES runs for that long instead of --duration and prints, at 0 s and every 30 s, the
// server process's RSS (/proc/<pid>/status VmRSS) and V8 heap (asked over an IPC channel from a
// preloaded module that only answers process.memoryUsage(); "live" is heapUsed right after a
// full GC, the server running with --expose-gc for it), with the throughput, p99 and CPU split of
// that interval; at the end the relative change of RSS and live heap from the first sample to
// the last (and from the 30 s sample). --cpu-prof DIR starts the server under `node --cpu-prof`
// (the profile is written to DIR when the server stops). --streams N keeps N event-stream
// subscribers (GET /api/events/stream) reading every event during the run, to show what each
// subscriber costs the workers (the server runs with --max-streams N when N is over 32).
//
// --steps measures a worker's whole step in one request instead (load-steps.mjs): each
// connection acquires once, then finishes each lease with the next (POST
// /api/leases/{leaseId}/outcome with "next": {}), each answer's next lease feeding the next
// request. It prints the same table (acquire, finish, all), then one line for scripts:
// LOAD {"stepsPerSecond": …, "p99Ms": …} (p99 over every request, acquires included).
//
// --upload MIB instead sends snapshot uploads of MIB MiB that the server must refuse (PUT
// /api/snapshot over its limit; --snapshot-limit BYTES is passed on to it): one declared by
// content-length, one chunked, then ten of each at once, each client sending until the answer
// comes; it prints the statuses, what the clients sent, and the server's RSS after each (after
// a full GC) and its peak RSS so far (VmHWM).
//
// Usage: pkg-scripts/perf/load [--connections 16] [--duration 10] [--soak MINUTES] [--resources 1000]
//        [--contexts 10] [--warmup 3] [--streams 0] [--cpu-prof DIR] [--steps]
//        [--upload MIB [--snapshot-limit BYTES]]

import { spawn } from "node:child_process";
import http from "node:http";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { Pool as HttpPool } from "undici";
import { mulberry32 } from "../lib/mulberry32.js";
import { runSteps } from "./load-steps.mjs";

const BIN = fileURLToPath(new URL("../bin/repute.js", import.meta.url));
const SAMPLE_MS = 30_000;

const { values: opt } = parseArgs({
  options: {
    connections: { type: "string", default: "16" },
    duration: { type: "string", default: "10" },
    soak: { type: "string" },
    resources: { type: "string", default: "1000" },
    contexts: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    streams: { type: "string", default: "0" },
    "cpu-prof": { type: "string" },
    upload: { type: "string" },
    "snapshot-limit": { type: "string" },
    steps: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
});
if (opt.help) {
  process.stdout.write(readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n\nimport")[0].replace(/^\/\/ ?/gm, "") + "\n");
  process.exit(0);
}
const num = (name) => {
  const n = Number(opt[name]);
  if (!(n >= 0) || !Number.isFinite(n)) throw new Error(`--${name} must be a non-negative number`);
  return n;
};
const CONNECTIONS = num("connections");
const RESOURCES = num("resources");
const CONTEXTS = Array.from({ length: num("contexts") }, (_, i) => `site-${i}.example`);
const WARMUP = num("warmup");
const STREAMS = num("streams");
const SOAK_MIN = opt.soak === undefined ? null : num("soak");
const DURATION = SOAK_MIN === null ? num("duration") : SOAK_MIN * 60;

/** Seeded, so every run sends the same outcome mix. */
const rand = mulberry32(1);

/** The engine benchmark's outcome mix, with latencies. */
function outcome() {
  const x = rand() * 100;
  const latencyMs = 50 + Math.floor(rand() * 400);
  if (x < 85) return { ok: true, latencyMs };
  const failure = x < 91 ? "TIMEOUT" : x < 95 ? "CONNECTION_RESET" : x < 98 ? "SLOW" : x < 99.5 ? "BLOCKED" : "TLS_HANDSHAKE";
  return { ok: false, failure, latencyMs };
}

/** Latency histogram: 1 µs buckets below 10 ms, 100 µs buckets up to 10 s, then one overflow. */
class Histogram {
  #fine = new Uint32Array(10_000);
  #coarse = new Uint32Array(100_000);
  #over = [];
  count = 0;
  max = 0;
  record(ms) {
    const us = Math.round(ms * 1000);
    if (us < 10_000) this.#fine[us]++;
    else if (us < 10_000_000) this.#coarse[Math.floor(us / 100)]++;
    else this.#over.push(us);
    this.count++;
    if (ms > this.max) this.max = ms;
  }
  /** The p-th percentile in ms (the bucket's lower edge). */
  percentile(p) {
    if (this.count === 0) return NaN;
    const rank = Math.ceil((p / 100) * this.count);
    let seen = 0;
    for (let i = 0; i < this.#fine.length; i++) if ((seen += this.#fine[i]) >= rank) return i / 1000;
    for (let i = 100; i < this.#coarse.length; i++) if ((seen += this.#coarse[i]) >= rank) return (i * 100) / 1000;
    const over = this.#over.slice().sort((a, b) => a - b);
    return over[rank - seen - 1] / 1000;
  }
}

// --- the server ---------------------------------------------------------------------------

/** Preloaded into the server: answers "mem" over the IPC channel with process.memoryUsage()
 * before and after a full GC (the live heap; the server runs with --expose-gc for it). */
const MEM_PROBE =
  'process.on("message",(m)=>{if(m!=="mem")return;const mem=process.memoryUsage();globalThis.gc();' +
  'process.send({mem,live:process.memoryUsage().heapUsed})});process.channel?.unref();';

async function startServer(dir) {
  const flags = ["--expose-gc", "--import", `data:text/javascript,${encodeURIComponent(MEM_PROBE)}`];
  if (opt["cpu-prof"]) flags.push("--cpu-prof", "--cpu-prof-dir", path.resolve(opt["cpu-prof"]));
  const limit = opt["snapshot-limit"] === undefined ? [] : ["--snapshot-limit", opt["snapshot-limit"]];
  const args = ["serve", "--data", dir, "--port", "0", "--max-streams", String(Math.max(32, STREAMS)), ...limit];
  const child = spawn(process.execPath, [...flags, BIN, ...args], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
  const url = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /repute: serving (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]);
    });
    exited.then((c) => reject(new Error(`the server exited (${c}) before serving:\n${out}`)));
  });
  const memory = () =>
    new Promise((resolve) => {
      child.once("message", (m) => resolve({ ...m.mem, live: m.live }));
      child.send("mem");
    });
  const status = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))[1]) * 1024;
  const rss = () => status("VmRSS");
  const peak = () => status("VmHWM");
  return { child, url, exited, memory, rss, peak };
}

async function register(url) {
  const http = new HttpPool(url, { connections: 32 });
  let next = 0;
  const one = async () => {
    for (let i; (i = next++) < RESOURCES; ) {
      const res = await http.request({
        method: "POST",
        path: "/api/resources",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ kind: "PROXY", value: `http://user:pass@proxy-${i}.example.net:8080` }),
      });
      await res.body.dump();
      if (res.statusCode !== 201) throw new Error(`register answered ${res.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, one));
  await http.close();
}

/** Opens `n` event streams that read (and count) every byte; `close()` ends them. */
async function subscribe(url, n) {
  const counted = { bytes: 0 };
  const requests = await Promise.all(
    Array.from({ length: n }, () =>
      new Promise((resolve, reject) => {
        const req = http.get(`${url}/api/events/stream`, { agent: false }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`a stream was answered ${res.statusCode}`));
          res.on("data", (d) => (counted.bytes += d.length));
          res.on("error", () => {});
          resolve(req);
        });
        req.on("error", reject);
      })),
  );
  return { counted, close: () => requests.forEach((r) => r.destroy()) };
}

// --- the load -----------------------------------------------------------------------------

const JSON_HEADERS = { "content-type": "application/json" };
const REQUESTS = [
  {
    name: "acquire",
    method: "POST",
    path: "/api/leases",
    headers: JSON_HEADERS,
    setupRequest(req, ctx) {
      ctx.context = CONTEXTS[Math.floor(rand() * CONTEXTS.length)];
      ctx.lease = null;
      return { ...req, body: JSON.stringify({ context: ctx.context }) };
    },
    onResponse(status, body, ctx) {
      if (status === 201) ctx.lease = JSON.parse(body);
    },
  },
  {
    name: "report",
    method: "POST",
    path: "/api/outcomes",
    headers: JSON_HEADERS,
    setupRequest(req, ctx) {
      if (!ctx.lease) return null; // the acquire got no lease: start the cycle again
      const { kind, value } = ctx.lease;
      return { ...req, body: JSON.stringify({ kind, value, context: ctx.context, outcome: outcome() }) };
    },
  },
  {
    name: "release",
    method: "DELETE",
    path: "/api/leases/",
    setupRequest(req, ctx) {
      if (!ctx.lease) return null;
      return { ...req, path: `/api/leases/${ctx.lease.leaseId}` };
    },
  },
];
const EXPECTED = { acquire: [201, 409], report: [204], release: [204] };

/** One autocannon run; `onSample(stats)` every SAMPLE_MS when given. */
async function drive(url, pid, seconds, onSample) {
  const before = cpuTicks(pid);
  const { port } = new URL(url);
  const stats = {};
  for (const { name } of REQUESTS) stats[name] = { hist: new Histogram(), status: {}, unexpected: 0 };
  stats.all = { hist: new Histogram() };
  let interval = { hist: new Histogram(), cycles: 0 };
  const instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    requests: REQUESTS,
    timeout: 10,
  });
  instance.on("response", (client, status, bytes, ms) => {
    const name = client.requestIterator.currentRequest.name;
    const s = stats[name];
    s.hist.record(ms);
    s.status[status] = (s.status[status] ?? 0) + 1;
    if (!EXPECTED[name].includes(status)) s.unexpected++;
    stats.all.hist.record(ms);
    interval.hist.record(ms);
    if (name === "release" && status === 204) interval.cycles++;
  });
  let timer = null;
  if (onSample) {
    timer = setInterval(() => {
      const done = interval;
      interval = { hist: new Histogram(), cycles: 0 };
      onSample(done);
    }, SAMPLE_MS);
  }
  const result = await instance;
  clearInterval(timer);
  const after = cpuTicks(pid);
  return { stats, result, cpu: cpuShare(before, after), serverCpuSeconds: (after.server - before.server) / 100 };
}

/** CPU time (ticks) of the whole machine (busy, not idle) and of one process. */
function cpuTicks(pid) {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const machine = cpu.reduce((a, b) => a + b, 0) - cpu[3] - cpu[4]; // minus idle and iowait
  const proc = (p) => {
    const f = readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ");
    return Number(f[11]) + Number(f[12]); // utime + stime
  };
  const sys = (p) => Number(readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ")[12]);
  return { machine, server: proc(pid), serverSys: sys(pid), self: proc(process.pid), wall: performance.now() };
}

/** Where the machine's CPU went between two `cpuTicks` readings, in cores. */
function cpuShare(a, b) {
  const hz = 100; // USER_HZ on Linux
  const s = (b.wall - a.wall) / 1000;
  const cores = (d) => (d / hz / s).toFixed(2);
  const other = b.machine - a.machine - (b.server - a.server) - (b.self - a.self);
  return `CPU (of ${os.cpus().length} cores): server ${cores(b.server - a.server)}, load generator ${cores(b.self - a.self)}, ` +
    `everything else ${cores(Math.max(0, other))}`;
}

const fmt = (ms) => (Number.isNaN(ms) ? "-" : ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const mib = (b) => `${(b / 2 ** 20).toFixed(1)} MiB`;
const pct = (a, b) => `${(((b - a) / a) * 100).toFixed(1)} %`;

function report({ stats, result, cpu, serverCpuSeconds }) {
  const seconds = result.duration;
  const rows = [["", "requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "statuses"]];
  for (const name of [...REQUESTS.map((r) => r.name), "all"]) {
    const s = stats[name];
    const h = s.hist;
    const statuses = s.status ? Object.entries(s.status).map(([k, v]) => `${k}×${v}`).join(" ") : "";
    rows.push([name, String(h.count), (h.count / seconds).toFixed(0), fmt(h.percentile(50)), fmt(h.percentile(90)),
      fmt(h.percentile(99)), fmt(h.max), statuses]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => (i === 0 || i === 7 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "));
  const cycles = stats.release.status[204] ?? 0;
  console.log(`cycles (acquire 201 → report → release 204): ${cycles} in ${seconds.toFixed(1)} s = ${(cycles / seconds).toFixed(0)} cycles/s; ` +
    `acquires answered 409: ${stats.acquire.status[409] ?? 0}`);
  const unexpected = REQUESTS.reduce((n, r) => n + stats[r.name].unexpected, 0);
  console.log(`unexpected statuses: ${unexpected}; transport errors: ${result.errors}; timeouts: ${result.timeouts}`);
  console.log(cpu);
  // Less sensitive than throughput to other processes on the machine (a 10 ms tick resolution).
  console.log(`server CPU per cycle: ${((serverCpuSeconds * 1000) / Math.max(1, cycles)).toFixed(3)} ms`);
  console.log(`autocannon's own figures (2xx only): ${result.requests.average.toFixed(0)} req/s average, latency ` +
    `p50 ${result.latency.p50} ms, p90 ${result.latency.p90} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`);
}

// --- refused uploads ------------------------------------------------------------------------

/** PUT /api/snapshot of `bytes` spaces, declared by content-length or chunked, sent until the
 * answer comes. Resolves to { status, sent } (status null: the connection was cut first). */
function upload(url, bytes, chunked) {
  return new Promise((resolve) => {
    const headers = { "content-type": "application/json", ...(chunked ? {} : { "content-length": bytes }) };
    const req = http.request(`${url}/api/snapshot`, { method: "PUT", headers });
    const chunk = Buffer.alloc(2 ** 20, 0x20);
    let sent = 0;
    let status = null;
    const done = () => resolve({ status, sent });
    req.on("response", (res) => {
      status = res.statusCode;
      res.resume();
      res.on("end", () => {
        req.destroy();
        done();
      });
    });
    req.on("error", done);
    const pump = () => {
      while (status === null && sent < bytes) {
        const n = Math.min(chunk.length, bytes - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void req.once("drain", pump);
      }
      if (status === null) req.end();
    };
    pump();
  });
}

async function uploads(server, size) {
  const bytes = size * 2 ** 20;
  const settled = async () => (await server.memory(), server.rss()); // after a full GC
  console.log(`server RSS at start: ${mib(await settled())}, peak ${mib(server.peak())}`);
  for (const [label, chunked] of [["content-length", false], ["chunked", true]]) {
    for (const n of [1, 10]) {
      const results = await Promise.all(Array.from({ length: n }, () => upload(server.url, bytes, chunked)));
      const statuses = {};
      for (const r of results) statuses[r.status ?? "cut"] = (statuses[r.status ?? "cut"] ?? 0) + 1;
      const sent = results.map((r) => r.sent);
      console.log(`${n} × ${size} MiB ${label}: ${Object.entries(statuses).map(([k, v]) => `${k}×${v}`).join(" ")}; ` +
        `clients sent ${mib(Math.min(...sent))}–${mib(Math.max(...sent))} before the answer; ` +
        `server RSS after ${mib(await settled())}, peak so far ${mib(server.peak())}`);
    }
  }
}

// --- main ---------------------------------------------------------------------------------

/** The worker load (or soak) on `server`, reported. */
async function workerLoad(server) {
  console.log(`server: ${server.url} (pid ${server.child.pid}, data ${dir}, checkpoint every 30 s or 1000 mutations)`);
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0].model}, Node ${process.version}`);
  const t0 = performance.now();
  await register(server.url);
  console.log(`registered ${RESOURCES} resources in ${((performance.now() - t0) / 1000).toFixed(1)} s; ` +
    `${CONNECTIONS} connections, ${CONTEXTS.length} contexts`);
  const streams = await subscribe(server.url, STREAMS);
  if (STREAMS > 0) console.log(`${STREAMS} event-stream subscribers reading`);
  if (WARMUP > 0) {
    await drive(server.url, server.child.pid, WARMUP);
    console.log(`warm-up: ${WARMUP} s (not counted)`);
  }
  if (SOAK_MIN === null) {
    console.log(`run: ${DURATION} s`);
    report(await drive(server.url, server.child.pid, DURATION));
    if (STREAMS > 0) console.log(`event streams: ${mib(streams.counted.bytes)} received by ${STREAMS} subscribers`);
  } else {
    console.log(`soak: ${SOAK_MIN} min; a sample every ${SAMPLE_MS / 1000} s`);
    const samples = [];
    let ticks = cpuTicks(server.child.pid);
    const sample = async (t, interval) => {
      const now = cpuTicks(server.child.pid);
      const cpu = cpuShare(ticks, now).replace(/^CPU \(of \d+ cores\)/, "CPU");
      ticks = now;
      const rss = server.rss();
      const mem = await server.memory();
      samples.push({ rss, heap: mem.live });
      const load = interval
        ? `; last ${SAMPLE_MS / 1000} s: ${(interval.hist.count / (SAMPLE_MS / 1000)).toFixed(0)} req/s, ` +
          `${(interval.cycles / (SAMPLE_MS / 1000)).toFixed(0)} cycles/s, p99 ${fmt(interval.hist.percentile(99))} ms; ${cpu}`
        : "";
      console.log(`t=${String(t).padStart(4)} s  RSS ${mib(rss)}  heap: live ${mib(mem.live)}, used ${mib(mem.heapUsed)} ` +
        `(total ${mib(mem.heapTotal)}, external ${mib(mem.external)})${load}`);
    };
    await sample(0, null);
    let t = 0;
    const run = await drive(server.url, server.child.pid, DURATION, (interval) => {
      t += SAMPLE_MS / 1000;
      sample(t, interval);
    });
    await new Promise((r) => setTimeout(r, 100)); // the last sample's answer
    report(run);
    const change = (from, label) => {
      const first = samples[from];
      const last = samples[samples.length - 1];
      const rssAll = samples.slice(from).map((s) => s.rss);
      const heapAll = samples.slice(from).map((s) => s.heap);
      console.log(`memory, ${label} → last sample: RSS ${mib(first.rss)} → ${mib(last.rss)} (${pct(first.rss, last.rss)}), ` +
        `live heap ${mib(first.heap)} → ${mib(last.heap)} (${pct(first.heap, last.heap)}); ` +
        `RSS range ${mib(Math.min(...rssAll))}–${mib(Math.max(...rssAll))}, live heap range ${mib(Math.min(...heapAll))}–${mib(Math.max(...heapAll))}`);
    };
    change(0, "first sample (t=0, after the warm-up)");
    if (samples.length > 2) change(1, `second sample (t=${SAMPLE_MS / 1000} s)`);
  }
  streams.close();
}

/** The steps load (--steps, load-steps.mjs) on `server`, reported, with the LOAD line. */
async function stepsLoad(server) {
  console.log(`server: ${server.url} (pid ${server.child.pid}, data ${dir}, checkpoint every 30 s or 1000 mutations)`);
  console.log(`machine: ${os.cpus().length} × ${os.cpus()[0].model}, Node ${process.version}`);
  await register(server.url);
  console.log(`registered ${RESOURCES} resources; ${CONNECTIONS} connections, ${CONTEXTS.length} contexts; ` +
    "each connection: acquire once, then finish with next: {} (one request a step)");
  const { port } = new URL(server.url);
  const run = async (seconds) => {
    const stats = { acquire: { hist: new Histogram(), status: {} }, finish: { hist: new Histogram(), status: {} }, all: { hist: new Histogram() } };
    const record = (kind, status, ms) => {
      const s = stats[kind];
      s.hist.record(ms);
      s.status[status] = (s.status[status] ?? 0) + 1;
      stats.all.hist.record(ms);
    };
    const before = cpuTicks(server.child.pid);
    const ran = await runSteps({ port, connections: CONNECTIONS, seconds, contexts: CONTEXTS, outcome, record });
    const after = cpuTicks(server.child.pid);
    return { stats, ran, cpu: cpuShare(before, after), serverCpuSeconds: (after.server - before.server) / 100, serverSysSeconds: (after.serverSys - before.serverSys) / 100 };
  };
  if (WARMUP > 0) {
    await run(WARMUP);
    console.log(`warm-up: ${WARMUP} s (not counted)`);
  }
  console.log(`run: ${DURATION} s`);
  const { stats, ran, cpu, serverCpuSeconds, serverSysSeconds } = await run(DURATION);
  const rows = [["", "requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "statuses"]];
  for (const name of ["acquire", "finish", "all"]) {
    const h = stats[name].hist;
    const statuses = stats[name].status ? Object.entries(stats[name].status).map(([k, v]) => `${k}×${v}`).join(" ") : "";
    rows.push([name, String(h.count), (h.count / ran).toFixed(0), fmt(h.percentile(50)), fmt(h.percentile(90)), fmt(h.percentile(99)), fmt(h.max), statuses]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => (i === 0 || i === 7 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "));
  const steps = stats.finish.status[200] ?? 0;
  console.log(cpu);
  console.log(`server CPU per step: ${((serverCpuSeconds * 1000) / Math.max(1, steps)).toFixed(3)} ms (${((serverSysSeconds * 1000) / Math.max(1, steps)).toFixed(3)} ms of it in the kernel)`);
  const result = { stepsPerSecond: Math.round(steps / ran), p99Ms: Number(stats.all.hist.percentile(99).toFixed(2)) };
  console.log(`LOAD ${JSON.stringify(result)}`);
}

const dir = await mkdtemp(path.join(os.tmpdir(), "repute-load-"));
const server = await startServer(dir);
try {
  if (opt.upload !== undefined) await uploads(server, num("upload"));
  else if (opt.steps) await stepsLoad(server);
  else await workerLoad(server);
} finally {
  server.child.kill("SIGTERM");
  const code = await server.exited;
  if (code !== 0) console.error(`the server exited with ${code}`);
  await rm(dir, { recursive: true, force: true });
}
