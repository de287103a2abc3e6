// The edge worker's figures (bench-edge; BENCHMARKS.md): the worker in real workerd under
// Miniflare, on this machine, over loopback HTTP from Node's fetch (16 requests in flight).
// - acquire, report, release: requests per second, each in its own phase over 1000 resources;
// - checkpoint cost after N reports (N = 1, 10, 100, 1000, 4000 over 10 000 resources): rows and
//   bytes written (counted by the store), and the time of the checkpoint request less that of
//   an empty request (workerd's clocks stand still inside a request, so it is timed outside);
// - restore of a 100k-cell pool (10 000 resources × 10 contexts): the first request after a
//   restart, less the first request to a region with nothing stored; the stored size.
// Prints one `BENCH edge ...` line per figure.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startEdge } from "../lib/edge/dev.js";
import { Pool } from "../node.js";
import { initSync } from "../pkg/repute.js";

const ROUNDS = Number(process.env.BENCH_EDGE_ROUNDS ?? 3);
const IN_FLIGHT = 16;
const T0 = 1_700_000_000_000;
const dir = mkdtempSync(path.join(os.tmpdir(), "repute-bench-edge-"));
const bindings = { REPUTE_TEST_HOOKS: "1", REPUTE_CHECKPOINT_MS: "3600000" };

async function call(base, method, p, body) {
  const res = await fetch(base + p, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 500) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 200)}`);
  return { status: res.status, json: text.startsWith("{") ? JSON.parse(text) : undefined };
}

/** Runs `jobs` (functions) IN_FLIGHT at a time; returns the seconds taken. */
async function timed(jobs) {
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < jobs.length) await jobs[next++]();
  }));
  return (performance.now() - started) / 1000;
}

const value = (r) => `http://user${r}:pw@10.${r >> 16}.${(r >> 8) & 255}.${r & 255}:8080`;
const line = (fields) => console.log(`BENCH edge ${Object.entries(fields).map(([k, v]) => `${k}=${v}`).join(" ")}`);

let edge = await startEdge({ persist: dir, bindings });
try {
  // --- requests per second ---------------------------------------------------------------
  const base = `${edge.url}/regions/rps`;
  await timed(Array.from({ length: 1000 }, (_, r) => () => call(base, "POST", "/api/resources", { kind: "PROXY", value: value(r) })));
  const totals = { acquire: 0, report: 0, release: 0 };
  const n = 1000;
  for (let round = 0; round < ROUNDS; round++) {
    const leases = [];
    totals.acquire += await timed(Array.from({ length: n }, () => async () => {
      const l = await call(base, "POST", "/api/leases", { context: `site-${round}` });
      if (l.status === 201) leases.push(l.json);
    }));
    totals.report += await timed(leases.map((l, i) => () =>
      call(base, "POST", "/api/outcomes", { kind: l.kind, value: l.value, context: l.context, outcome: i % 10 ? { ok: true, latencyMs: 100 } : { ok: false, failure: "SLOW" } })));
    totals.release += await timed(leases.map((l) => () => call(base, "DELETE", `/api/leases/${l.leaseId}`)));
  }
  for (const [op, s] of Object.entries(totals)) line({ op, requests: n * ROUNDS, rps: Math.round((n * ROUNDS) / s) });

  // --- checkpoint cost after N reports ------------------------------------------------------
  const big = `${edge.url}/regions/checkpoint`;
  const snap = bigSnapshot(10_000, 10);
  await call(big, "PUT", "/api/snapshot", snap);
  await call(big, "GET", "/__test/checkpoint");
  const empty = await median(async () => {
    const t = performance.now();
    await call(big, "GET", "/__test/pending");
    return performance.now() - t;
  });
  // Below the host's burst (5000 pending changes), past which a report request checkpoints itself.
  for (const reports of [1, 10, 100, 1000, 4000]) {
    for (let i = 0; i < reports; i += IN_FLIGHT * 8) {
      await timed(Array.from({ length: Math.min(IN_FLIGHT * 8, reports - i) }, (_, j) => () =>
        call(big, "POST", "/api/outcomes", { kind: "PROXY", value: value((i + j) % 10_000), context: "site-3", outcome: { ok: true, latencyMs: 50 } })));
    }
    const t = performance.now();
    const cp = (await call(big, "GET", "/__test/checkpoint")).json;
    const ms = performance.now() - t - empty;
    line({ checkpoint_after_reports: reports, resources_written: cp.resources, rows: cp.rows, bytes: cp.bytes, ms: ms.toFixed(1) });
  }
  const stored = (await call(big, "GET", "/__test/stored")).json;

  // --- restore of 100k cells ----------------------------------------------------------------
  await edge.close();
  edge = await startEdge({ persist: dir, bindings });
  const first = async (region) => {
    const t = performance.now();
    const r = await call(`${edge.url}/regions/${region}`, "GET", "/api/stats");
    return [performance.now() - t, r.json];
  };
  const [emptyMs] = await first("nothing-stored");
  const [restoreMs, stats] = await first("checkpoint");
  line({ restore_cells: stats.cells, resources: stats.registered, ms: (restoreMs - emptyMs).toFixed(0), first_request_ms: restoreMs.toFixed(0), empty_region_ms: emptyMs.toFixed(0) });
  const wasm = initSync({ module: readFileSync(new URL("../pkg/repute_bg.wasm", import.meta.url)) });
  const before = wasm.memory.buffer.byteLength;
  const pool = Pool.restore(snap, { seed: 1, now: () => T0 });
  line({
    stored_cells: stats.cells,
    snapshot_bytes: snap.length,
    resource_rows: stored.size.resourceRows,
    database_bytes: stored.size.databaseBytes,
    wasm_memory_bytes_node: wasm.memory.buffer.byteLength,
    wasm_memory_grown_by_restore: wasm.memory.buffer.byteLength - before,
  });
  pool.free();
} finally {
  await edge.close();
  rmSync(dir, { recursive: true, force: true });
}

async function median(f) {
  const xs = [];
  for (let i = 0; i < 15; i++) xs.push(await f());
  return xs.sort((a, b) => a - b)[7];
}

/** `resources` × `contexts` cells, made by the Node build of the engine (as tests/edge does). */
function bigSnapshot(resources, contexts) {
  let t = T0 - 10_000;
  const p = new Pool({ seed: 3, now: () => t });
  for (let r = 0; r < resources; r++) p.register("PROXY", value(r));
  for (let c = 0; c < contexts; c++) {
    for (let r = 0; r < resources; r++) p.report("PROXY", value(r), `site-${c}`, (r + c) % 7 ? { ok: true, latencyMs: (r * 13 + c) % 500 } : { ok: false, failure: "TIMEOUT" });
  }
  t = T0 - 1;
  const json = p.snapshot();
  p.free();
  return json;
}
