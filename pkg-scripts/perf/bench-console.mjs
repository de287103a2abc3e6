// Browser benchmark of the console's live grid (figures in BENCHMARKS.md): a pool server on
// 127.0.0.1 holding N resources × C contexts (every cell reported on, a fifth of them cooling),
// served with www/; Debian's Chromium (headless) connects as an operator, then the grid is
// scrolled from top to bottom and back at a fixed step per animation frame while the page
// records every frame interval and every long task, and a Chromium trace gives the renderer
// main thread's CPU time (thread time, so waiting for a busy CPU is not counted), per frame. Prints: the size of `GET /api/resources`,
// the time from Connect to a drawn grid, a re-sort and a search over all rows, the frame
// interval percentiles and the main thread's work per frame while scrolling (BENCH_FRAMES,
// default 1500; BENCH_TOP=1 also lists where the thread's time went and how much each layout
// touched), with the machine's load average: wall-clock frame times are only meaningful
// on an idle machine, the main thread's work per frame less affected. Asserts nothing.
//   pkg-scripts/build && node pkg-scripts/perf/bench-console.mjs [resources=10000] [contexts=10]
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { Pool } from "repute";
import { openPool } from "../lib/node/open-pool.js";
import { serve } from "../lib/node/http-server.js";

const N = Number(process.argv[2] ?? 10000);
const C = Number(process.argv[3] ?? 10);
const STEP_PX = 96; // three rows per frame: a brisk scroll
const FRAMES = Number(process.env.BENCH_FRAMES ?? 1500);
const T0 = 1_700_000_000_000;
const TOKEN = "opr-bench-0123456789abcdef";
const www = fileURLToPath(new URL("../../www/", import.meta.url));

/** The pool's state built in memory, imported in one durable write. */
function snapshot() {
  const pool = new Pool({ seed: 1, now: () => T0, config: { maxCells: N * C } });
  for (let i = 0; i < N; i++) pool.register(i % 5 === 0 ? "ACCOUNT" : "PROXY", `proxy-${i}.example.net:8080`);
  for (let i = 0; i < N; i++) {
    const kind = i % 5 === 0 ? "ACCOUNT" : "PROXY";
    for (let c = 0; c < C; c++) {
      const v = `proxy-${i}.example.net:8080`;
      pool.report(kind, v, `site-${c}`, { ok: true, latencyMs: 50 + ((i * 7 + c) % 400) });
      if ((i + c) % 5 === 0) {
        pool.report(kind, v, `site-${c}`, { ok: false, failure: "TIMEOUT" });
        pool.report(kind, v, `site-${c}`, { ok: false, failure: "BLOCKED" });
      }
    }
  }
  const json = pool.snapshot();
  pool.free();
  return json;
}

/**
 * Thread CPU time (trace events' `tdur`, µs: time on the CPU, not waiting for it) by event
 * name, on the busiest renderer main thread of a Chromium trace; nested events of the same
 * name are counted once.
 */
function mainThreadCpu(trace) {
  const events = trace.traceEvents ?? trace;
  const mains = new Set(events.filter((e) => e.name === "thread_name" && e.args?.name === "CrRendererMain").map((e) => `${e.pid}:${e.tid}`));
  const byThread = new Map();
  for (const e of events) {
    const key = `${e.pid}:${e.tid}`;
    if (e.ph !== "X" || !mains.has(key) || typeof e.tdur !== "number") continue;
    if (!byThread.has(key)) byThread.set(key, []);
    byThread.get(key).push(e);
  }
  const busiest = [...byThread.values()].sort((a, b) => b.length - a.length)[0] ?? [];
  const out = {};
  const openUntil = {};
  for (const e of busiest.sort((a, b) => a.ts - b.ts)) {
    if ((openUntil[e.name] ?? 0) > e.ts) continue; // inside another of the same name
    openUntil[e.name] = e.ts + e.dur;
    out[e.name] = (out[e.name] ?? 0) + e.tdur;
  }
  return out;
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

const dir = await mkdtemp(path.join(os.tmpdir(), "repute-bench-console-"));
const host = await openPool({ dir, now: () => T0, seed: 1, checkpointMs: 0, handleSignals: false, config: { maxCells: N * C } });
await host.importSnapshot(snapshot());
const server = await serve(host, { port: 0, www, tokens: [{ token: TOKEN, role: "operator" }] });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const bytes = Buffer.byteLength(JSON.stringify({ resources: host.resources() }));
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(server.url);
  await page.getByLabel("Server", { exact: true }).fill(server.url);
  await page.getByLabel("Token", { exact: true }).fill(TOKEN);
  let t = performance.now();
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await page.getByText(`${N} of ${N} resources`).waitFor({ timeout: 120000 });
  const loadMs = performance.now() - t;

  t = performance.now();
  await page.getByLabel("Sort by", { exact: true }).selectOption("severity");
  await page.waitForFunction(() => document.querySelector(".grid-body [aria-rowindex='2'] .s-cooling"));
  const sortMs = performance.now() - t;
  t = performance.now();
  await page.getByLabel("Search", { exact: true }).fill("proxy-99");
  await page.getByText(/^\d+ of \d+ resources$/).filter({ hasNotText: `${N} of` }).waitFor();
  const searchMs = performance.now() - t;
  await page.getByLabel("Search", { exact: true }).fill("");
  await page.getByText(`${N} of ${N} resources`).waitFor();

  await browser.startTracing(page, { categories: ["devtools.timeline", "disabled-by-default-devtools.timeline"] });
  const scroll = await page.evaluate(([step, frames]) => new Promise((resolve) => {
    const el = document.querySelector(".grid-scroll");
    const longTasks = [];
    new PerformanceObserver((list) => longTasks.push(...list.getEntries().map((e) => e.duration))).observe({ type: "longtask" });
    const intervals = [];
    let last = performance.now();
    let down = true;
    const max = el.scrollHeight - el.clientHeight;
    const frame = (now) => {
      intervals.push(now - last);
      last = now;
      el.scrollTop = Math.max(0, Math.min(max, el.scrollTop + (down ? step : -step)));
      if (down && el.scrollTop >= max) down = false;
      if (!down && el.scrollTop <= 0) down = true;
      if (intervals.length > frames) {
        resolve({ intervals: intervals.slice(1), longTasks });
        return;
      }
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }), [STEP_PX, FRAMES]);
  const trace = JSON.parse(await browser.stopTracing());
  const cpu = mainThreadCpu(trace);
  if (process.env.BENCH_TOP) {
    const lay = (trace.traceEvents ?? trace).filter((e) => e.name === "Layout" && e.args?.beginData);
    const avg = (f) => (lay.reduce((a, e) => a + (f(e) ?? 0), 0) / lay.length).toFixed(1);
    console.log(`layouts ${lay.length}: dirty ${avg((e) => e.args.beginData.dirtyObjects)} of ${avg((e) => e.args.beginData.totalObjects)}, partial ${lay.filter((e) => e.args.beginData.partialLayout).length}`);
  }
  if (process.env.BENCH_TOP) console.log(Object.entries(cpu).sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => `${k} ${(v / 1000).toFixed(0)}`).join("\n"));
  const per = (name) => (cpu[name] ?? 0) / 1000 / scroll.intervals.length;
  const sorted = [...scroll.intervals].sort((a, b) => a - b);
  const over = (ms) => scroll.intervals.filter((d) => d > ms).length;
  console.log(`grid of ${N} resources × ${C} contexts (${N * C} cells), Chromium ${browser.version()} headless`);
  console.log(`GET /api/resources: ${(bytes / 1e6).toFixed(1)} MB of JSON`);
  console.log(`Connect → grid drawn: ${loadMs.toFixed(0)} ms; sort by severity: ${sortMs.toFixed(0)} ms; search: ${searchMs.toFixed(0)} ms`);
  console.log(`scroll: ${scroll.intervals.length} frames at ${STEP_PX} px/frame (3 rows), load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} cores`);
  console.log(`renderer main thread CPU per frame ms: all tasks ${per("RunTask").toFixed(2)} (script ${per("FunctionCall").toFixed(2)}, style ${per("UpdateLayoutTree").toFixed(2)}, layout ${per("Layout").toFixed(2)}, paint ${per("Paint").toFixed(2)})`);
  console.log(`frame interval ms: p50 ${pct(sorted, 0.5).toFixed(1)}, p95 ${pct(sorted, 0.95).toFixed(1)}, p99 ${pct(sorted, 0.99).toFixed(1)}, max ${sorted.at(-1).toFixed(1)}`);
  console.log(`frames over 16.7 ms: ${over(16.7)}; over 33.4 ms: ${over(33.4)}; long tasks (> 50 ms) while scrolling: ${scroll.longTasks.length}`);
} finally {
  await browser.close();
  await server.close();
  await host.close();
  await rm(dir, { recursive: true, force: true });
}
