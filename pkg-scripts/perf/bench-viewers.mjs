// What dashboard viewers cost the workers (figures in BENCHMARKS.md, "Hardening round two"):
// starts `repute serve` as a child process on a pool of --resources resources × --contexts
// contexts (126,000 cells by default, seeded as a snapshot file in a temporary data folder),
// then for --duration seconds runs --viewers viewers, each fetching the dashboard in a loop
// (`GET /api/resources`, whole; with --page N, page by page: `?limit=N&after=…` to the end), and
// one worker doing acquire + release in a loop on its own connection, plus a `/healthz` probe
// every 50 ms. Prints the worker's acquire+release latency percentiles (one step: both
// requests), the probe's, how many dashboards the viewers read, and the load average.
//
// With --viewers-apart the viewers run in a process of their own (as a dashboard in a browser
// would), so that reading their 31 MB answers does not share the timing process's event loop.
//
// With --operator (and --viewers 0 for it alone) an operator writes in a loop beside the
// worker, each write awaited (on disk before its answer): `deregister` deregisters a resource
// and registers it back (two writes a round; it comes back without its cells), `config` sets
// `leaseTtlMs` back and forth (a change with an inverse), `limits` sets `maxCells` 300,000 and
// 200,000 in turn (the larger one is written ahead, the snapshot's head only), `window` sets
// `windowSize` 9 and 10 in turn (the smaller one cuts every window: written ahead on a copy of
// the pool). Prints how many writes it made and their latency.
//
// Usage: node pkg-scripts/perf/bench-viewers.mjs [--resources 12600] [--contexts 10] [--viewers 4]
//        [--duration 15] [--page N] [--viewers-apart] [--operator deregister|config|limits|window]
//        [--cpu-prof DIR] (the server's CPU profile, written in DIR when it stops)

import { spawn } from "node:child_process";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Pool as HttpPool } from "undici";
import { Pool } from "../node.js";
import { serveChild } from "./bench-serve.mjs";

const { values: o } = parseArgs({
  options: {
    resources: { type: "string", default: "12600" },
    contexts: { type: "string", default: "10" },
    viewers: { type: "string", default: "4" },
    duration: { type: "string", default: "15" },
    page: { type: "string" },
    "viewers-apart": { type: "boolean", default: false },
    operator: { type: "string" },
    /** Internal: this process is the viewers of --viewers-apart, reading the server at this URL
     * until this epoch millisecond. */
    "viewers-at": { type: "string" },
    "viewers-until": { type: "string" },
    "cpu-prof": { type: "string" },
  },
});
const R = Number(o.resources);
const C = Number(o.contexts);
const VIEWERS = Number(o.viewers);
const DURATION_MS = Number(o.duration) * 1000;
const PAGE = o.page === undefined ? null : Number(o.page);

/** The value of proxy `i`, with credentials in its URL, as a fleet's are. */
const resourceValue = (i) => `http://user${i}:pass${i}@proxy-${i}.example.net:8080`;

/** A snapshot of R proxies (credentials in their URLs, as a fleet's are) with a cell in each of C contexts. */
function seed() {
  const pool = new Pool({ config: { maxResources: Math.max(R, 1000), maxCells: Math.max(R * C, 1000) }, seed: 1 });
  const value = resourceValue;
  for (let i = 0; i < R; i++) pool.register("PROXY", value(i));
  for (let c = 0; c < C; c++) {
    for (let i = 0; i < R; i++) {
      const outcome = i % 7 === 0 ? { ok: false, failure: "TIMEOUT" } : { ok: true, latencyMs: 100 + (i % 50) };
      pool.report("PROXY", value(i), `site-${c}.example`, outcome);
    }
  }
  return pool.snapshot();
}

function percentiles(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
  return { n: s.length, p50: at(50), p90: at(90), p99: at(99), max: s[s.length - 1] };
}
const fmt = ({ n, p50, p90, p99, max }) =>
  `n ${n}, p50 ${p50.toFixed(2)} ms, p90 ${p90.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${max.toFixed(2)} ms`;

/** An undici `request(method, path, body)` over `http`, answering `{ status, text }`. */
function requester(http) {
  return async (method, p, body) => {
    const res = await http.request({ method, path: p, headers: body ? { "content-type": "application/json" } : {}, body: body && JSON.stringify(body) });
    const text = await res.body.text();
    return { status: res.statusCode, text };
  };
}

/** VIEWERS viewers reading the dashboard through `request` until `until`: `{ dashboards, pages }`. */
async function readDashboards(request, until) {
  let dashboards = 0;
  let pages = 0;
  const viewer = async () => {
    while (Date.now() < until) {
      if (PAGE === null) {
        const { status } = await request("GET", "/api/resources");
        if (status !== 200) throw new Error(`GET /api/resources: ${status}`);
        pages++;
      } else {
        let after = null;
        do {
          const page = JSON.parse((await request("GET", `/api/resources?limit=${PAGE}${after ? `&after=${after}` : ""}`)).text);
          after = page.next;
          pages++;
        } while (after && Date.now() < until);
      }
      dashboards++;
    }
  };
  await Promise.all(Array.from({ length: VIEWERS }, viewer));
  return { dashboards, pages };
}

/** The viewers in a child process of this script (--viewers-apart): its `{ dashboards, pages }`. */
function viewersApart(url, until) {
  const args = [fileURLToPath(import.meta.url), "--viewers-at", url, "--viewers-until", String(until), "--viewers", String(VIEWERS)];
  if (PAGE !== null) args.push("--page", String(PAGE));
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  return new Promise((resolve, reject) =>
    child.once("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`the viewers' process exited with ${code}`)))),
  );
}

/** The operator of --operator: writes of `kind` in a loop until `until()`, each awaited; their
 * latencies go to `writes`. */
async function operate(request, kind, until, writes) {
  const timed = async (method, p, body, want) => {
    const t = performance.now();
    const res = await request(method, p, body);
    writes.push(performance.now() - t);
    if (res.status !== want) throw new Error(`${method} ${p}: ${res.status} ${res.text}`);
  };
  for (let i = 0; Date.now() < until(); i++) {
    if (kind === "deregister") {
      const value = resourceValue(i % R);
      await timed("DELETE", `/api/resources/PROXY/${encodeURIComponent(value)}`, undefined, 204);
      await timed("POST", "/api/resources", { kind: "PROXY", value }, 201);
    } else if (kind === "config") {
      await timed("PUT", "/api/config", { leaseTtlMs: i % 2 === 0 ? 45_000 : 30_000 }, 200);
    } else if (kind === "limits") {
      await timed("PUT", "/api/config", { maxCells: i % 2 === 0 ? 300_000 : 200_000 }, 200);
    } else if (kind === "window") {
      await timed("PUT", "/api/config", { windowSize: i % 2 === 0 ? 9 : 10 }, 200);
    } else {
      throw new Error(`--operator ${kind}: deregister, config, limits or window`);
    }
  }
}

if (o["viewers-at"] !== undefined) {
  const http = new HttpPool(o["viewers-at"], { connections: VIEWERS });
  console.log(JSON.stringify(await readDashboards(requester(http), Number(o["viewers-until"]))));
  await http.close();
  process.exit(0);
}

const server = await serveChild(seed(), { cpuProf: o["cpu-prof"] });
try {
  const { url } = server;
  const http = new HttpPool(url, { connections: VIEWERS + 2 });
  const request = requester(http);
  /** The end of the measured run, which starts after the baseline below. */
  let until = 0;
  const steps = [];
  const worker = async () => {
    while (Date.now() < until) {
      const t = performance.now();
      const lease = await request("POST", "/api/leases", { context: "site-1.example" });
      if (lease.status === 201) await request("DELETE", `/api/leases/${JSON.parse(lease.text).leaseId}`);
      steps.push(performance.now() - t);
    }
  };
  const probes = [];
  const prober = async () => {
    while (Date.now() < until) {
      const t = performance.now();
      await request("GET", "/healthz");
      probes.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const quiet = [];
  // The worker alone first (2 s), as the baseline.
  const quietUntil = Date.now() + 2000;
  while (Date.now() < quietUntil) {
    const t = performance.now();
    const lease = await request("POST", "/api/leases", { context: "site-1.example" });
    if (lease.status === 201) await request("DELETE", `/api/leases/${JSON.parse(lease.text).leaseId}`);
    quiet.push(performance.now() - t);
  }
  until = Date.now() + DURATION_MS;
  const reading = VIEWERS === 0 ? { dashboards: 0, pages: 0 } : o["viewers-apart"] ? viewersApart(url, until) : readDashboards(request, until);
  const writes = [];
  const [{ dashboards, pages }] = await Promise.all([reading, worker(), prober(), o.operator ? operate(request, o.operator, () => until, writes) : null]);
  const others = [VIEWERS > 0 ? `${VIEWERS} viewers${o["viewers-apart"] ? " in a process of their own" : ""}, ${PAGE === null ? "whole dashboards" : `pages of ${PAGE}`}` : null, o.operator ? `an operator (${o.operator})` : null].filter(Boolean).join(" and ");
  console.log(`pool: ${R} resources × ${C} contexts = ${R * C} cells; ${others}, ${DURATION_MS / 1000} s`);
  console.log(`worker alone, acquire+release:        ${fmt(percentiles(quiet))}`);
  console.log(`worker beside them, acquire+release:  ${fmt(percentiles(steps))}`);
  console.log(`/healthz beside them:                 ${fmt(percentiles(probes))}`);
  if (o.operator) console.log(`operator writes (${o.operator}):       ${fmt(percentiles(writes))}`);
  console.log(`viewers read ${dashboards} dashboards (${pages} requests); load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  await http.close();
} finally {
  await server.stop();
}
