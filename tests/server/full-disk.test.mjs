// The pool server when its disk refuses writes (pkg-scripts/lib/node/open-pool.js,
// storage-health.js, reservations.js, change-log.js): the data folder on a small tmpfs, filled
// up (ENOSPC) or remounted read-only (EROFS), with the real server on 127.0.0.1.
//
// - `repute serve` (a child process) on a 2 MiB tmpfs, filled: operator actions are refused
//   with 503 storage-unavailable and Retry-After and change nothing; /readyz says why; workers
//   are served until the crash reservation is used up — 65 000 refused acquires cross it, which
//   used to end the process with an uncaught ENOSPC — and then refused with 503; the process
//   lives; once space is freed everything works again by itself, and the events held back while
//   the reservation could not be written are delivered, none lost.
// - In process, with a small reservation step: no token and no event seq is ever handed out
//   past what reserve.json covers (the seqs running out first, or the tokens with them), the
//   failing reservation is reported long before the edge, and every event is delivered exactly
//   once, in order.
// - Out of inodes (free bytes, so the action is admitted, but the write's temporary file cannot
//   be created): each operator action is rolled back — register, block, unblock (and a move
//   to another group), deregister and a config change by their inverse; a config change that
//   loses state and an import are written ahead and so never applied — and answers 503;
//   two changes of one resource waiting for the same failed write are undone newest first.
// - A deregistration is applied to the live pool at once (no copy of the whole pool) and, when
//   its write fails, the resource comes back from its snapshot part with its cells and their
//   history; a lease that was on it stays ended, and no token is handed out twice. A config
//   change with an inverse is applied at once too, and set back when its write fails; one
//   without (a smaller window; a larger limit) is applied only once stored.
//
// Mounting needs root: without it these tests are skipped with a message (CI runs as root).
// Every tmpfs is unmounted after its test.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "undici";
import { openPool } from "../../pkg-scripts/lib/node/open-pool.js";
import { serve } from "../../pkg-scripts/lib/node/http-server.js";
import { call, assertProblem, resourcePath, spawnServe, T0 } from "./_http-support.mjs";

const TAKEN_AT = /"takenAt":\d+/;
const SKIP = process.getuid?.() === 0 ? false : "needs root to mount a small tmpfs (CI runs as root); skipped";

/** A tmpfs of `size` mounted on a fresh folder, unmounted (and removed) after the test. */
async function tmpfs(t, size) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "repute-disk-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]);
  t.after(() => {
    execFileSync("umount", ["-l", dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Fills the file system of `dir` with a file until it refuses a single byte more; its path. */
function fill(dir) {
  const file = path.join(dir, "filler");
  const fd = openSync(file, "w");
  try {
    for (const size of [1 << 16, 1 << 12, 1]) {
      const buf = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, buf);
      } catch (e) {
        if (e.code !== "ENOSPC") throw e;
      }
    }
  } finally {
    closeSync(fd);
  }
  return file;
}

/** Creates empty files in `dir` until the file system has no inode left; a function that
 * removes them again. */
function exhaustInodes(dir) {
  const files = [];
  try {
    for (;;) {
      const file = path.join(dir, `inode-${files.length}`);
      closeSync(openSync(file, "w"));
      files.push(file);
    }
  } catch (e) {
    if (e.code !== "ENOSPC") throw e;
  }
  return () => {
    for (const f of files) rmSync(f);
  };
}
const reserveOf = (dir) => JSON.parse(readFileSync(path.join(dir, "reserve.json"), "utf8"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `/readyz` until it answers `status` (within `ms`); its last answer. */
async function readyz(url, status, ms = 15000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await call(url, "GET", "/readyz");
    if (r.status === status || Date.now() > deadline) return r;
    await sleep(50);
  }
}

function assertRefused(res, what) {
  assertProblem(res, 503, "storage-unavailable", what);
  assert.equal(res.headers.get("retry-after"), "5", `${what}: Retry-After`);
  assert.match(res.json.detail, /nothing was changed/, what);
}

/** The operator actions of the API, each on resources of this shape: p1 free, p2 leased or not,
 * p3 blocked permanently. */
const OPERATOR_ACTIONS = [
  ["register p4", (url) => call(url, "POST", "/api/resources", { body: { kind: "PROXY", value: "p4" } })],
  ["move p2 into a group", (url) => call(url, "POST", "/api/resources", { body: { kind: "PROXY", value: "p2", group: "dc-us" } })],
  ["deregister p1", (url) => call(url, "DELETE", resourcePath("PROXY", "p1"))],
  ["block p1", (url) => call(url, "POST", resourcePath("PROXY", "p1", "/block?seconds=60"))],
  ["block p3 for a minute (was permanent)", (url) => call(url, "POST", resourcePath("PROXY", "p3", "/block?seconds=60"))],
  ["unblock p3", (url) => call(url, "DELETE", resourcePath("PROXY", "p3", "/block"))],
  ["set the config (penalties, pacing)", (url) => call(url, "PUT", "/api/config", { body: { penalties: { BLOCKED: 60 }, minGapMsByContext: { shop: 250 }, maxCells: 50 } })],
  ["set a smaller window (written ahead)", (url) => call(url, "PUT", "/api/config", { body: { windowSize: 3 } })],
  ["raise maxResources (written ahead, the head only)", (url) => call(url, "PUT", "/api/config", { body: { maxResources: 5000 } })],
  ["import", async (url) => {
    const snap = (await call(url, "GET", "/api/snapshot")).json;
    return call(url, "PUT", "/api/snapshot", { body: { ...snap, revision: snap.revision + 1, registered: [], blocklist: [], cells: [] } });
  }],
];

/** p1 (with a cell in "shop"), p2, p3 blocked permanently. */
async function seed(url) {
  for (const value of ["p1", "p2", "p3"]) {
    assert.equal((await call(url, "POST", "/api/resources", { body: { kind: "PROXY", value } })).status, 201);
  }
  assert.equal((await call(url, "POST", resourcePath("PROXY", "p3", "/block?permanent=true"))).status, 204);
  const out = { kind: "PROXY", value: "p1", context: "shop", outcome: { ok: true, latencyMs: 10 } };
  assert.equal((await call(url, "POST", "/api/outcomes", { body: out })).status, 204);
}

const resources = async (url) => (await call(url, "GET", "/api/resources")).json.resources;

/** What "nothing changed" compares: the resources, and the revision and event seq (an action
 * applied and then undone would have moved both). */
async function state(url) {
  const { revision, nextEventSeq } = (await call(url, "GET", "/api/snapshot")).json;
  return { resources: await resources(url), revision, nextEventSeq };
}

test("repute serve on a full 2 MiB disk: refuses durable steps cleanly, lives, and recovers by itself", { skip: SKIP, timeout: 240_000 }, async (t) => {
  const mnt = await tmpfs(t, "2m");
  const data = path.join(mnt, "data");
  const server = spawnServe(["--data", data, "--port", "0"]);
  t.after(() => server.child.kill("SIGKILL"));
  const url = await server.ready;
  await seed(url);
  const baseline = await state(url);
  const filler = fill(mnt);

  // Operator actions: refused before they change anything — not even applied and undone.
  for (const [what, act] of OPERATOR_ACTIONS) {
    assertRefused(await act(url), what);
    assert.deepEqual(await state(url), baseline, `${what} changed nothing`);
  }
  const notReady = await call(url, "GET", "/readyz");
  assert.equal(notReady.status, 503);
  assert.equal(notReady.json.reason, "storage-unavailable");
  assert.match(notReady.json.detail, /ENOSPC|bytes free/);

  // Workers: p1 and p2 are leased, p3 is blocked, so acquires in "shop" are refused (409), each
  // one an event; past the reservation (65 536 events) they are refused with 503.
  const client = new Client(url, { pipelining: 10, connections: 1 });
  t.after(() => client.destroy());
  const req = async (method, p, body) => {
    const r = await client.request({ method, path: p, headers: body ? { "content-type": "application/json" } : {}, body: body && JSON.stringify(body) });
    const text = await r.body.text();
    return { status: r.statusCode, json: text ? JSON.parse(text) : null, headers: r.headers };
  };
  const tokens = [];
  for (let i = 0; i < 2; i++) {
    const lease = await req("POST", "/api/leases", { context: "shop" });
    assert.equal(lease.status, 201, "served while the reservation lasts");
    tokens.push(lease.json.token);
  }
  const statuses = {};
  for (let sent = 0; sent < 90_000 && !(statuses[503] >= 50); sent += 100) {
    const batch = await Promise.all(Array.from({ length: 100 }, () => req("POST", "/api/leases", { context: "shop" })));
    for (const r of batch) {
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (r.status === 201) tokens.push(r.json.token);
      if (r.status === 503) assert.equal(r.json.type, "urn:repute:problem:storage-unavailable");
    }
  }
  t.diagnostic(`acquires on the full disk: ${JSON.stringify(statuses)}`);
  assert.ok(statuses[503] >= 50, `acquires were refused with 503 past the reservation: ${JSON.stringify(statuses)}`);
  assert.deepEqual(Object.keys(statuses).sort(), Object.keys(statuses).filter((s) => ["201", "409", "503"].includes(s)).sort());
  assert.equal(server.child.exitCode, null, "the process lives");
  assert.equal(server.child.signalCode, null, "the process lives");
  const reserve = reserveOf(data);
  assert.ok(Math.max(...tokens) <= reserve.fencing, `tokens ${Math.max(...tokens)} within reserve.json ${reserve.fencing}`);
  const edge = reserve.eventSeq; // the first seq reserve.json does not cover: held back
  const seen = (await call(url, "GET", `/api/events?after=${edge - 1}`)).json.events;
  assert.deepEqual(seen, [], "no event past the reservation was handed out");

  // Space comes back: everything works again, by itself.
  rmSync(filler);
  const ready = await readyz(url, 200);
  assert.equal(ready.status, 200, `readyz after freeing space: ${JSON.stringify(ready.json)}`);
  assert.deepEqual(ready.json, { ready: true });
  assert.notEqual((await req("POST", "/api/leases", { context: "shop" })).status, 503);
  const held = (await call(url, "GET", `/api/events?after=${edge - 1}&limit=1`)).json.events;
  assert.equal(held[0]?.seq, edge, "the events held back are delivered: the first seq past the old reservation is there");
  assert.equal((await call(url, "POST", "/api/resources", { body: { kind: "PROXY", value: "p4" } })).status, 201);
  assert.equal((await call(url, "POST", resourcePath("PROXY", "p1", "/block?seconds=60"))).status, 204);
  assert.equal((await call(url, "DELETE", resourcePath("PROXY", "p3", "/block"))).json.unblocked, true);
  assert.equal((await call(url, "DELETE", resourcePath("PROXY", "p2"))).status, 204);
  const after = await resources(url);
  assert.deepEqual(after.map((r) => [r.value, r.blocked === null]), [["p1", false], ["p3", true], ["p4", true]]);
  const snap = (await call(url, "GET", "/api/snapshot")).json;
  assert.equal((await call(url, "PUT", "/api/snapshot", { body: { ...snap, revision: snap.revision + 1 } })).status, 204);

  // A clean stop writes the final snapshot; a restart has all of it.
  await client.close();
  server.child.kill("SIGTERM");
  assert.equal((await server.exited).code, 0);
  const again = spawnServe(["--data", data, "--port", "0"]);
  t.after(() => again.child.kill("SIGKILL"));
  const url2 = await again.ready;
  assert.deepEqual((await resources(url2)).map((r) => [r.value, r.blocked === null]), [["p1", false], ["p3", true], ["p4", true]]);
});

/** An in-process pool on `dir`, served on 127.0.0.1 (fixed clock T0, quick storage retries). */
async function inProcess(t, dir, options = {}) {
  const errors = [];
  const pool = await openPool({
    dir,
    now: () => T0,
    seed: 7,
    checkpointMs: 0,
    handleSignals: false,
    storageRetryMs: 20,
    onError: (e) => errors.push(e),
    ...options,
  });
  const server = await serve(pool, { host: "127.0.0.1", port: 0 });
  t.after(async () => {
    await server.close();
    await pool.close().catch(() => {});
  });
  return { pool, url: server.url, errors };
}

test("in process, a small reservation step: nothing past reserve.json is handed out; every event once, in order", { skip: SKIP }, async (t) => {
  const mnt = await tmpfs(t, "4m");
  const dir = path.join(mnt, "data");
  const { pool, url } = await inProcess(t, dir, { reserveStep: 64 });
  const delivered = [];
  pool.on("event", (e) => delivered.push(e.seq));
  for (const value of ["p1", "p2"]) await call(url, "POST", "/api/resources", { body: { kind: "PROXY", value } });
  const filler = fill(mnt);

  const tokens = [];
  const cycles = { done: 0, refused: {} };
  let reported = null; // the cycle at which /readyz first named the reservation
  for (let i = 0; i < 400; i++) {
    if (reported === null && /reservation: ENOSPC/.test((await call(url, "GET", "/readyz")).json.detail ?? "")) reported = i;
    const a = await call(url, "POST", "/api/leases", { body: { context: `c${i % 3}` } });
    if (a.status !== 201) {
      if (!cycles.refused.acquire) cycles.firstRefused = i;
      assertRefused(a, "acquire past the reservation");
      cycles.refused.acquire = (cycles.refused.acquire ?? 0) + 1;
      continue;
    }
    tokens.push(a.json.token);
    const r = await call(url, "DELETE", `/api/leases/${a.json.leaseId}`);
    if (r.status === 503) cycles.refused.release = (cycles.refused.release ?? 0) + 1;
    else cycles.done++;
    const reserve = reserveOf(dir);
    assert.ok(Math.max(...tokens) <= reserve.fencing, `token ${Math.max(...tokens)} past reserve.json ${JSON.stringify(reserve)}`);
    assert.ok(delivered.every((s) => s < reserve.eventSeq), `seq ${delivered.at(-1)} handed out past reserve.json ${JSON.stringify(reserve)}`);
  }
  t.diagnostic(`on a full disk with a 64-step reservation: ${JSON.stringify(cycles)}`);
  assert.ok(cycles.done > 10 && cycles.refused.acquire > 0, JSON.stringify(cycles));
  assert.ok(reported !== null && reported + 10 < cycles.firstRefused,
    `the failing reservation was reported (cycle ${reported}) well before the first refusal (cycle ${cycles.firstRefused})`);
  assert.equal((await call(url, "GET", "/readyz")).status, 503);

  rmSync(filler);
  assert.equal((await readyz(url, 200)).status, 200);
  const a = await call(url, "POST", "/api/leases", { body: { context: "after" } });
  assert.equal(a.status, 201);
  assert.ok(a.json.token > Math.max(...tokens));
  await new Promise((r) => setImmediate(r)); // the microtask that drains
  for (let i = 1; i < delivered.length; i++) {
    assert.equal(delivered[i], delivered[i - 1] + 1, `event seq ${delivered[i]} after ${delivered[i - 1]}: none lost, none twice`);
  }
  assert.equal(delivered.at(-1), pool.stats().nextEventSeq - 1, "every event was delivered");
});

test("a write that fails after the action was admitted (no inode left): each operator action is rolled back, 503", { skip: SKIP }, async (t) => {
  const mnt = await tmpfs(t, "8m,nr_inodes=128");
  const { pool, url } = await inProcess(t, path.join(mnt, "data"));
  await seed(url);
  // A timed block too, to see its end restored exactly.
  await call(url, "POST", "/api/resources", { body: { kind: "PROXY", value: "p5" } });
  await call(url, "POST", resourcePath("PROXY", "p5", "/block?seconds=90"));
  const actions = [
    ...OPERATOR_ACTIONS,
    ["unblock p5 (timed)", (u) => call(u, "DELETE", resourcePath("PROXY", "p5", "/block"))],
    ["block p5 permanently", (u) => call(u, "POST", resourcePath("PROXY", "p5", "/block?permanent=true"))],
  ];
  for (const [what, act] of actions) {
    const before = await resources(url);
    const config = pool.config();
    assert.equal((await call(url, "GET", "/readyz")).status, 200, `${what}: healthy before`);
    const free = exhaustInodes(mnt);
    try {
      assertRefused(await act(url), what);
      assert.deepEqual(await resources(url), before, `${what}: rolled back`);
      assert.deepEqual(pool.config(), config, `${what}: the config as it was`);
      const r = await call(url, "GET", "/readyz");
      assert.equal(r.status, 503, what);
      assert.match(r.json.detail, /snapshot: ENOSPC \(open\)/, what);
      // Known to fail now: refused up front (the probe write fails too).
      assertRefused(await act(url), `${what}, again`);
      assert.deepEqual(await resources(url), before, `${what}, again: nothing changed`);
    } finally {
      free();
    }
    assert.equal((await readyz(url, 200)).status, 200, `${what}: recovered`);
    // The undo changed the live pool (its events touch what it changed): what the next
    // checkpoint stores, from the parts kept, is the live pool, undo included.
    await pool.checkpoint();
    const stored = readFileSync(path.join(mnt, "data", "snapshot.json"), "utf8");
    assert.equal(stored.replace(TAKEN_AT, ""), pool.snapshot().replace(TAKEN_AT, ""), `${what}: the stored snapshot is the live pool's`);
  }
  // After all that, every action goes through (the removals last).
  const last = /^(deregister|import)/;
  for (const [what, act] of [...actions.filter(([w]) => !last.test(w)), ...actions.filter(([w]) => last.test(w))]) {
    const res = await act(url);
    assert.ok(res.status < 300, `${what} after recovery: ${res.status} ${res.text}`);
  }
  assert.equal(pool.stats().registered, 0, "the import (of an empty pool) came last");
});

test("in process, leases held (a token and an event each): no token is handed out past reserve.json", { skip: SKIP }, async (t) => {
  const mnt = await tmpfs(t, "4m");
  const dir = path.join(mnt, "data");
  // Reopened, the pool reserves exactly as many tokens as seqs ahead (64 each); every acquire
  // then takes one of each, so the token reservation runs out with the seq reservation.
  const first = await openPool({ dir, now: () => T0, seed: 7, checkpointMs: 0, handleSignals: false });
  for (let i = 0; i < 150; i++) await first.register("PROXY", `p${i}`);
  await first.close();
  const { url } = await inProcess(t, dir, { reserveStep: 64 });
  const filler = fill(mnt);
  const tokens = [];
  let refused = 0;
  for (let i = 0; i < 150 && refused < 5; i++) {
    const a = await call(url, "POST", "/api/leases", { body: { context: "c" } });
    if (a.status === 201) tokens.push(a.json.token);
    else {
      assertRefused(a, "acquire past the reservation");
      refused++;
    }
  }
  const reserve = reserveOf(dir);
  assert.ok(tokens.length > 10 && refused === 5, `${tokens.length} granted, ${refused} refused`);
  assert.equal(Math.max(...tokens), reserve.fencing, `the last token granted is the last one reserve.json covers`);
  rmSync(filler);
  assert.equal((await readyz(url, 200)).status, 200);
  assert.equal((await call(url, "POST", "/api/leases", { body: { context: "c" } })).json.token, Math.max(...tokens) + 1);
});

test("a failed write undoes every waiting change, newest first: block then unblock of one resource leaves it as it was", { skip: SKIP }, async (t) => {
  const mnt = await tmpfs(t, "8m,nr_inodes=128");
  const { pool } = await inProcess(t, path.join(mnt, "data"));
  await pool.register("PROXY", "p1");
  const before = pool.resources();
  const free = exhaustInodes(mnt);
  try {
    // Both are admitted (bytes are free, no write has failed yet) and applied before the one
    // write they share fails.
    const results = await Promise.allSettled([pool.block("PROXY", "p1", { permanent: true }), pool.unblock("PROXY", "p1")]);
    assert.deepEqual(results.map((r) => r.reason?.code), ["STORAGE_UNAVAILABLE", "STORAGE_UNAVAILABLE"]);
    assert.deepEqual(pool.resources(), before, "p1 is not blocked, as before both");
  } finally {
    free();
  }
});

/** A pool on a tmpfs short of inodes: p1 with history in two contexts (cooled in one) and a
 * lease, p2 free; `fail()` takes every inode (the next write fails), `free()` gives them back. */
async function withHistory(t) {
  const mnt = await tmpfs(t, "8m,nr_inodes=128");
  const { pool, errors } = await inProcess(t, path.join(mnt, "data"), { config: { coolAfter: 2, windowSize: 8 } });
  await pool.register("PROXY", "p1", { group: "dc-eu" });
  await pool.register("PROXY", "p2");
  for (const [context, ok] of [["shop", true], ["shop", false], ["search", false], ["search", false], ["shop", true]]) {
    pool.report("PROXY", "p1", context, ok ? { ok: true, latencyMs: 12 } : { ok: false, failure: "BLOCKED" });
  }
  const lease = pool.acquireResource("PROXY", "p1", "shop");
  assert.ok(lease, "a lease on p1");
  await pool.checkpoint();
  return { pool, errors, lease, fail: () => exhaustInodes(mnt) };
}

test("deregister under a failing write: applied at once, rolled back through its inverse — cells and history back, its lease stays ended", { skip: SKIP }, async (t) => {
  const { pool, errors, lease, fail } = await withHistory(t);
  const before = pool.resource("PROXY", "p1");
  const high = pool.stats().fencingHighWater;
  const free = fail();
  let refused;
  try {
    const pending = pool.deregister("PROXY", "p1");
    // Applied to the live pool at once (not written ahead on a copy of the whole pool).
    assert.equal(pool.resources().some((r) => r.value === "p1"), false, "p1 is gone while the write is in flight");
    refused = await pending.then(() => null, (e) => e);
  } finally {
    free();
  }
  assert.equal(refused?.code, "STORAGE_UNAVAILABLE");
  const after = pool.resource("PROXY", "p1");
  assert.deepEqual(after.cells, before.cells, "every cell with its window, score and cooldown is back");
  assert.deepEqual([after.group, after.maxLeases, after.blocked], [before.group, before.maxLeases, before.blocked]);
  assert.equal(after.leases?.length ?? 0, 0, "its lease is not back");
  assert.equal(pool.release(lease), false, "the lease ended with the deregistration and stays ended");
  assert.equal(pool.renew(lease), null, "nor renewed");
  assert.equal(pool.stats().fencingHighWater, high, "fencing never goes back");
  const again = pool.acquireResource("PROXY", "p1", "shop");
  assert.ok(again.token > lease.token, "a new token, never the old one again");
  assert.deepEqual(errors.filter((e) => e.code !== "STORAGE_UNAVAILABLE" && !/ENOSPC/.test(e.message)), [], "no undo failed");
  // Once the disk is back, what is stored is the live pool, p1 included.
  pool.release(again);
  await waitHealthy(pool);
  await pool.checkpoint();
  const stored = readFileSync(path.join(pool.dir, "snapshot.json"), "utf8");
  assert.equal(stored.replace(TAKEN_AT, ""), pool.snapshot().replace(TAKEN_AT, ""));
  assert.match(stored, /"value":"p1"/);
});

test("a config change with an inverse is applied at once and set back when its write fails; a smaller window waits for its write", { skip: SKIP }, async (t) => {
  const { pool, fail } = await withHistory(t);
  const config = pool.config();
  const cells = pool.resource("PROXY", "p1").cells;
  let free = fail();
  try {
    const pending = pool.setConfig({ penalties: { BLOCKED: 70 }, minGapMsByContext: { shop: 500 }, halfOpenCauses: ["TIMEOUT"] });
    assert.equal(pool.config().penalties.BLOCKED, 70, "in force while the write is in flight");
    await assert.rejects(pending, { code: "STORAGE_UNAVAILABLE" });
  } finally {
    free();
  }
  assert.deepEqual(pool.config(), config, "the config before, set back");
  assert.deepEqual(pool.resource("PROXY", "p1").cells, cells);
  await waitHealthy(pool);
  free = fail();
  try {
    const pending = pool.setConfig({ windowSize: 2 });
    assert.equal(pool.config().windowSize, 8, "a smaller window is not applied before it is stored (windows cut cannot come back)");
    await assert.rejects(pending, { code: "STORAGE_UNAVAILABLE" });
  } finally {
    free();
  }
  assert.deepEqual(pool.config(), config);
  assert.deepEqual(pool.resource("PROXY", "p1").cells, cells, "no window was cut");
  await waitHealthy(pool);
  free = fail();
  try {
    const pending = pool.setConfig({ maxCells: 777_777 });
    assert.equal(pool.config().maxCells, config.maxCells, "a larger limit is not applied before it is stored (an undo could be refused)");
    await assert.rejects(pending, { code: "STORAGE_UNAVAILABLE" });
  } finally {
    free();
  }
  assert.deepEqual(pool.config(), config);
  await waitHealthy(pool);
  assert.equal((await pool.setConfig({ windowSize: 2 })).windowSize, 2, "and goes through once the disk is back");
  assert.equal((await pool.setConfig({ maxCells: 777_777 })).maxCells, 777_777);
});

/** Waits until the pool's storage is healthy again (its retry timer probes the folder). */
async function waitHealthy(pool) {
  const deadline = Date.now() + 15000;
  while (!pool.readiness().ready && Date.now() < deadline) await sleep(20);
  assert.equal(pool.readiness().ready, true, "storage healthy again");
}
