// The in-process Node host `openPool` (pkg-scripts/lib/node/open-pool.js): one `Pool` made
// durable in a folder and observable.
//
// Covered: the same methods and results as a plain `Pool` fed the same calls and clock; events
// through `on(type, cb)` (with a disposer), `addEventListener` (`event.detail`), `on("event")`,
// `onError` for throwing listeners, and the `events()` async iterator (`signal`, `after` replay
// from the audit log, a bounded queue whose drops are counted); leases released by
// `Symbol.dispose`; operator actions on disk before their promise resolves, sharing writes;
// checkpoints by interval, by burst and on close; the folder lock; the never-backwards guard on
// `importSnapshot`; damaged snapshots and `fromBackup`; restarts after a clean close, after a
// crash (a child killed with SIGKILL, a folder copied while open) and after SIGTERM / SIGINT in a
// child; the prober (halfOpenCauses default, probing with a real lease); `stats()` and `metrics()`.
//
// Deterministic: every host gets a manual clock (`now: () => clock.t`), a `seed`,
// `checkpointMs: 0` and `handleSignals: false` unless the test is about them; the prober's timer
// is replaced by a manual one except in the one test that checks it runs on its own. Folders are
// temporary. Wall-clock waits are only polls for something the host does in the background
// (an interval checkpoint, a child process).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Pool, openPool } from "repute";
import { VirtualTimers, manualTimers } from "./_manual-timers.mjs";

const T0 = 1_700_000_000_000;
const SEED = 7;
const NODE_ENTRY = new URL("../../pkg-scripts/node.js", import.meta.url).href;

const root = await mkdtemp(path.join(os.tmpdir(), "repute-open-pool-"));
/** Every host a test opened: closed (idempotent) at the end, whatever happened. */
const opened = new Set();
after(async () => {
  for (const h of opened) await h.close().catch(() => {});
  await rm(root, { recursive: true, force: true });
});
let dirs = 0;
const newDir = () => path.join(root, `pool-${++dirs}`);

/**
 * Opens a host on `dir` with a manual clock (`clock.t`; pass `clock` to share one), a seed, no
 * checkpoint timer, no signal handlers, and `onError` collecting into `errors`. `options`
 * override those.
 */
async function open(dir, options = {}, clock = { t: T0 }) {
  const errors = [];
  const host = await openPool({
    dir,
    now: () => clock.t,
    seed: SEED,
    checkpointMs: 0,
    handleSignals: false,
    onError: (e) => errors.push(e),
    ...options,
  });
  opened.add(host);
  return { host, clock, errors };
}

/** Lets queued microtasks and one turn of the event loop run (events are drained in a microtask). */
const tick = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `cond` every 5 ms until it is true or `ms` pass; resolves with whether it became true. */
async function until(cond, ms = 2000) {
  const end = performance.now() + ms;
  for (;;) {
    if (await cond()) return true;
    if (performance.now() > end) return false;
    await sleep(5);
  }
}

/** Rejects if `promise` has not settled within `ms` (so a hang fails the test instead of the run). */
function within(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const snapshotPath = (dir) => path.join(dir, "snapshot.json");
/** `<dir>/snapshot.json` as stored on disk, parsed. */
const onDisk = (dir) => JSON.parse(readFileSync(snapshotPath(dir), "utf8"));
const diskValues = (dir) => onDisk(dir).registered.map((r) => `${r.kind}:${r.value}`);

/** The `repute_checkpoints_total` counter of a host's metrics text. */
async function checkpointsWritten(host) {
  const m = /^repute_checkpoints_total (\d+)$/m.exec(await host.metrics());
  assert.ok(m, "metrics has repute_checkpoints_total");
  return Number(m[1]);
}

/** Records every event a host delivers through `on("event")`. */
function recordEvents(host) {
  const events = [];
  host.on("event", (e) => events.push(e));
  return events;
}

/** Every event of the audit log with seq > after, across pages. */
async function allEvents(host, after = 0) {
  const out = [];
  for (;;) {
    const page = await host.readEvents({ after, limit: 1000 });
    out.push(...page.events);
    if (page.next === null) return out;
    after = page.next;
  }
}

/** Asserts that `seqs` are consecutive integers. */
function assertConsecutive(seqs, what) {
  for (let i = 1; i < seqs.length; i++) {
    assert.equal(seqs[i], seqs[i - 1] + 1, `${what}: seq ${seqs[i]} follows ${seqs[i - 1]}`);
  }
}

/** Cools PROXY `value` in `context` with two TIMEOUT failures (coolAfter 2): a 120 s cooldown. */
function coolWithTimeouts(host, value, context = "ctx") {
  host.report("PROXY", value, context, { ok: false, failure: "TIMEOUT" });
  host.report("PROXY", value, context, { ok: false, failure: "TIMEOUT" });
}
const TIMEOUT_COOLDOWN_MS = 120_000;

/**
 * Runs `code` (an ES module) in a child `node`; `env` is added to its environment. `line()`
 * resolves with the next line it prints on stdout (rejects if it exits first); `exited` resolves
 * with `{code, signal, stdout, stderr}` (`stdout`: everything it printed).
 */
function child(code, env = {}) {
  const p = spawn(process.execPath, ["--input-type=module", "-e", code], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let stdout = "";
  let stderr = "";
  const waiting = [];
  let ended = false;
  const pump = () => {
    for (;;) {
      const nl = out.indexOf("\n");
      if (nl < 0 || waiting.length === 0) break;
      const lineText = out.slice(0, nl);
      out = out.slice(nl + 1);
      waiting.shift().resolve(lineText);
    }
    if (ended) for (const w of waiting.splice(0)) w.reject(new Error(`child exited before printing a line; stderr: ${stderr}`));
  };
  p.stdout.setEncoding("utf8").on("data", (d) => {
    out += d;
    stdout += d;
    pump();
  });
  p.stderr.setEncoding("utf8").on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise((resolve) => {
    p.on("close", (code, signal) => {
      ended = true;
      pump();
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    process: p,
    exited,
    line: () =>
      within(
        new Promise((resolve, reject) => {
          waiting.push({ resolve, reject });
          pump();
        }),
        10_000,
        "child output",
      ),
  };
}

// --- the pool's API ----------------------------------------------------------------------------

test("the host has the methods of Pool and gives the same results for the same calls and clock", async () => {
  const config = { halfOpenCauses: ["BLOCKED"], leaseTtlMs: 10_000 };
  {
    const { host } = await open(newDir(), { config });
    for (const m of Object.getOwnPropertyNames(Pool.prototype)) {
      // The host drains; close frees; snapshotPart is what a host stores with (the edge's),
      // reinstate how it undoes a deregistration it could not store (host-core.js), and
      // registeredByKind what its import thread hands over to make room (import-worker.js).
      if (["constructor", "drainEvents", "free", "snapshotPart", "reinstate", "registeredByKind"].includes(m)) continue;
      // `waiting` is a getter on both.
      const getter = Object.getOwnPropertyDescriptor(Pool.prototype, m).get !== undefined;
      assert.equal(typeof host[m], getter ? "number" : "function", `host.${m}`);
    }
    await host.close();
  }

  /** The same script against a plain Pool and a host; returns every result and error code. */
  async function script(p, clock) {
    const out = [];
    const rec = async (name, f) => {
      try {
        const v = await f();
        out.push([name, v === undefined ? "undefined" : JSON.parse(JSON.stringify(v))]);
      } catch (e) {
        out.push([name, { error: e.code }]);
      }
    };
    for (const v of ["p1", "p2", "p3"]) await rec(`register ${v}`, () => p.register("PROXY", v));
    await rec("register acc", () => p.register("ACCOUNT", "acc1"));
    await rec("register p1 again", () => p.register("PROXY", "p1"));
    const leases = [];
    for (const ctx of ["search", "search", "shop"]) {
      const l = p.acquire(ctx);
      leases.push(l);
      out.push([`acquire ${ctx}`, JSON.parse(JSON.stringify(l))]);
    }
    await rec("report ok", () => p.report("PROXY", "p1", "search", { ok: true, latencyMs: 120 }));
    await rec("report timeout 1", () => p.report("PROXY", "p2", "search", { ok: false, failure: "TIMEOUT" }));
    await rec("report timeout 2", () => p.report("PROXY", "p2", "search", { ok: false, failure: "TIMEOUT", latencyMs: 900 }));
    await rec("report slow", () => p.report("PROXY", "p3", "shop", { ok: false, failure: "SLOW", latencyMs: 5000 }));
    clock.t += 1000;
    await rec("renew", () => p.renew(leases[0]));
    await rec("release", () => p.release(leases[1]));
    await rec("release again", () => p.release(leases[1]));
    await rec("block p3", () => p.block("PROXY", "p3", { seconds: 60 }));
    await rec("unblock p3", () => p.unblock("PROXY", "p3"));
    await rec("unblock p3 again", () => p.unblock("PROXY", "p3"));
    await rec("block acc1", () => p.block("ACCOUNT", "acc1", { permanent: true }));
    await rec("acquireResource", () => p.acquireResource("PROXY", "p1", "other"));
    await rec("acquire account", () => p.acquire("login"));
    clock.t += TIMEOUT_COOLDOWN_MS + 1;
    await rec("nextChangeAt", () => p.nextChangeAt("search"));
    await rec("dueForRecoveryProbe", () => p.dueForRecoveryProbe());
    await rec("resources", () => p.resources());
    await rec("resources search", () => p.resources({ context: "search" }));
    await rec("resources cooling", () => p.resources({ state: "COOLING" }));
    await rec("config", () => p.config());
    await rec("snapshot", () => p.snapshot());
    await rec("acquire after expiry", () => p.acquire("search"));
    await rec("deregister p2", () => p.deregister("PROXY", "p2"));
    await rec("deregister p2 again", () => p.deregister("PROXY", "p2"));
    await rec("report unknown", () => p.report("PROXY", "nope", "x", { ok: true }));
    await rec("block unknown", () => p.block("PROXY", "nope", { seconds: 1 }));
    await rec("bad kind", () => p.register("BOAT", "x"));
    await rec("bad outcome", () => p.report("PROXY", "p1", "x", { ok: "yes" }));
    await rec("bad lease", () => p.release({}));
    const { eventsPending: _, ...stats } = p.stats();
    out.push(["stats", stats]);
    out.push(["final snapshot", p.snapshot()]);
    return out;
  }

  const plainClock = { t: T0 };
  const plain = new Pool({ now: () => plainClock.t, seed: SEED, config });
  const expected = await script(plain, plainClock);
  const expectedEvents = plain.drainEvents();
  // The script reaches the interesting states (so that equal results mean something).
  const result = (name) => expected.find(([n]) => n === name)[1];
  assert.equal(result("dueForRecoveryProbe").length, 1, "a probe-due cell");
  assert.ok(result("acquire after expiry").token > 0, "a lease after the others expired");
  assert.ok(expectedEvents.some((e) => e.type === "LEASE_EXPIRED"));

  const { host, clock, errors } = await open(newDir(), { config });
  const events = recordEvents(host);
  const got = await script(host, clock);
  await tick();
  for (const [[name, v], [, w]] of got.map((g, i) => [g, expected[i]])) {
    if (name === "stats") {
      for (const k of Object.keys(w)) assert.deepEqual(v[k], w[k], `stats().${k}`);
    } else {
      assert.deepEqual(v, w, name);
    }
  }
  assert.equal(got.length, expected.length);
  // ... each about a resource with the resource's id beside its value.
  for (const e of events.filter((x) => x.kind)) assert.equal(e.id, host.resourceId(e.kind, e.value), e.type);
  const withoutIds = events.map(({ id, ...e }) => e);
  assert.deepEqual(withoutIds, expectedEvents, "the host delivers exactly the events the plain pool emits");
  assert.deepEqual(errors, []);
  // Errors are the engine's: synchronous calls throw synchronously, operator actions reject.
  assert.throws(() => host.report("PROXY", "nope", "x", { ok: true }), { code: "UNKNOWN_RESOURCE" });
  assert.throws(() => host.acquire(""), { code: "INVALID_ARGUMENT" });
  await assert.rejects(host.register("BOAT", "x"), { code: "INVALID_ARGUMENT" });
  await host.close();
});

// --- events ------------------------------------------------------------------------------------

test("on(type, cb) delivers events of that type only; its disposer stops delivery", async () => {
  const { host } = await open(newDir());
  const leased = [];
  const dispose = host.on("RESOURCE_LEASED", (e) => leased.push(e));
  assert.equal(typeof dispose, "function");
  await host.register("PROXY", "p1");
  const l1 = host.acquire("ctx");
  host.release(l1);
  await tick();
  assert.equal(leased.length, 1);
  assert.equal(leased[0].type, "RESOURCE_LEASED");
  assert.equal(leased[0].value, "p1");
  assert.equal(leased[0].context, "ctx");
  assert.equal(leased[0].at, T0);
  assert.ok(Number.isSafeInteger(leased[0].seq) && leased[0].seq > 0);

  dispose();
  const l2 = host.acquire("ctx");
  host.release(l2);
  await tick();
  assert.equal(leased.length, 1, "no delivery after the disposer ran");
  dispose(); // idempotent
  await host.close();
});

test("addEventListener gets a CustomEvent with the event in detail; on('event') gets every type", async () => {
  const { host } = await open(newDir());
  const details = [];
  const listener = (ev) => {
    assert.ok(ev instanceof Event);
    assert.equal(ev.type, "RESOURCE_LEASED");
    details.push(ev.detail);
  };
  host.addEventListener("RESOURCE_LEASED", listener);
  const all = recordEvents(host);
  await host.register("PROXY", "p1");
  const lease = host.acquire("ctx");
  host.report("PROXY", "p1", "ctx", { ok: false, failure: "BLOCKED" });
  host.release(lease);
  await host.block("PROXY", "p1", { seconds: 60 });
  await tick();
  assert.equal(details.length, 1);
  assert.equal(details[0].type, "RESOURCE_LEASED");
  assert.equal(details[0].value, "p1");
  assert.equal(details[0].context, "ctx");
  const types = all.map((e) => e.type);
  for (const t of ["RESOURCE_REGISTERED", "RESOURCE_LEASED", "LEASE_RELEASED", "RESOURCE_BLOCKLISTED"]) {
    assert.ok(types.includes(t), `on("event") got ${t}: ${types}`);
  }
  assertConsecutive(all.map((e) => e.seq), 'on("event")');
  assert.deepEqual(all, await allEvents(host), "the same events as the audit log");
  host.removeEventListener("RESOURCE_LEASED", listener);
  await host.unblock("PROXY", "p1");
  host.release(host.acquire("other"));
  await tick();
  assert.equal(details.length, 1);
  await host.close();
});

test("a throwing listener is reported to onError; the pool call succeeds and later events still arrive", async () => {
  const { host, errors } = await open(newDir());
  const boom = new Error("listener failed");
  let calls = 0;
  host.on("RESOURCE_REGISTERED", () => {
    calls++;
    throw boom;
  });
  const seen = recordEvents(host);
  assert.equal(await host.register("PROXY", "p1"), true);
  assert.equal(await host.register("PROXY", "p2"), true);
  const lease = host.acquire("ctx");
  assert.ok(lease);
  await tick();
  assert.equal(calls, 2, "the throwing listener still gets later events");
  assert.deepEqual(errors, [boom, boom]);
  assert.deepEqual(seen.map((e) => e.type), ["RESOURCE_REGISTERED", "RESOURCE_REGISTERED", "RESOURCE_LEASED"]);
  assert.deepEqual(diskValues(host.dir), ["PROXY:p1", "PROXY:p2"]);
  await host.close();
});

test("events({signal}) yields live events in seq order and ends on abort", async () => {
  const { host } = await open(newDir());
  await host.register("PROXY", "p1");
  await tick();
  const startSeq = host.stats().nextEventSeq;
  const ac = new AbortController();
  const got = [];
  const done = (async () => {
    for await (const e of host.events({ signal: ac.signal })) got.push(e);
  })();
  for (let i = 0; i < 5; i++) host.release(host.acquire("ctx"));
  await host.register("PROXY", "p2");
  assert.ok(await until(() => got.length >= 11), `got ${got.length} events`);
  ac.abort();
  await within(done, 2000, "the iterator ending after abort");
  assert.equal(got.length, 11, "5 leases, 5 releases, 1 registration");
  assert.equal(got[0].seq, startSeq, "only live events: nothing from before the iteration");
  assertConsecutive(got.map((e) => e.seq), "events()");
  assert.equal(got.at(-1).type, "RESOURCE_REGISTERED");
  // Nothing more is delivered after the abort.
  host.release(host.acquire("ctx"));
  await tick();
  assert.equal(got.length, 11);
  await host.close();
});

test("events({after}) replays the audit log, then continues live without gaps or duplicates", async () => {
  const { host } = await open(newDir());
  await host.register("PROXY", "p1");
  for (let i = 0; i < 20; i++) host.release(host.acquire("ctx"));
  await tick();
  const last = host.stats().nextEventSeq - 1;
  assert.equal(last, 41);
  const ac = new AbortController();
  const got = [];
  const done = (async () => {
    for await (const e of host.events({ signal: ac.signal, after: 10 })) got.push(e);
  })();
  // Live events while the replay is still reading the log.
  for (let i = 0; i < 5; i++) host.release(host.acquire("ctx"));
  assert.ok(await until(() => got.length >= 41), `got ${got.length}`);
  // And after it.
  await host.register("PROXY", "p2");
  for (let i = 0; i < 3; i++) host.release(host.acquire("other"));
  const end = host.stats().nextEventSeq - 1;
  assert.ok(await until(() => got.at(-1)?.seq === end), `last seq ${got.at(-1)?.seq}, want ${end}`);
  ac.abort();
  await within(done, 2000, "the iterator ending after abort");
  assert.equal(got[0].seq, 11);
  assertConsecutive(got.map((e) => e.seq), "events({after: 10})");
  assert.equal(got.length, end - 10);
  await host.close();
});

test("a consumer that never reads loses the oldest events beyond queue; deliveryDropped counts them; calls never wait for it", async () => {
  const { host } = await open(newDir());
  await host.register("PROXY", "p1");
  await tick();
  assert.equal(host.stats().deliveryDropped, 0);
  const it = host.events({ queue: 5 })[Symbol.asyncIterator]();
  const first = it.next(); // starts the iterator (it subscribes), then never reads again for a while
  const all = recordEvents(host);
  // The calls are synchronous and never wait for a consumer: they all return before the
  // stalled iterator could read anything, and what it holds stays bounded by its queue.
  for (let i = 0; i < 2000; i++) {
    const l = host.acquire("ctx");
    host.report("PROXY", "p1", "ctx", { ok: true });
    host.release(l);
  }
  await tick();
  assert.equal(all.length, 4000, "leases and releases");
  assert.equal(host.stats().deliveryDropped, all.length - 5, "all but the newest 5 dropped and counted");
  const kept = [(await first).value];
  for (let i = 0; i < 4; i++) kept.push((await it.next()).value);
  assert.deepEqual(kept.map((e) => e.seq), all.slice(-5).map((e) => e.seq), "the newest events are kept, in order");
  await it.return();
  // Other consumers and the audit log lost nothing.
  assert.equal(host.stats().auditDropped, 0);
  assert.equal((await allEvents(host)).length, 4001);
  await host.close();
});

test(
  "an events() iterator waiting for events ends when the host closes",
  async () => {
    const { host } = await open(newDir());
    await host.register("PROXY", "p1");
    const got = [];
    const done = (async () => {
      for await (const e of host.events()) got.push(e);
    })();
    host.release(host.acquire("ctx"));
    assert.ok(await until(() => got.length === 2));
    await host.close();
    await within(done, 1000, "the iterator ending after close()");
  },
);

test(
  "a throwing addEventListener listener is reported to onError and does not take the process down",
  async () => {
    const c = child(
      `import { openPool } from ${JSON.stringify(NODE_ENTRY)};
       const host = await openPool({ dir: process.env.DIR, now: () => ${T0}, seed: 1, checkpointMs: 0, handleSignals: false,
         onError: (e) => console.log("onError " + e.message) });
       host.addEventListener("RESOURCE_REGISTERED", () => { throw new Error("raw listener failed"); });
       const seen = [];
       host.on("event", (e) => seen.push(e.type));
       await host.register("PROXY", "p1");
       host.release(host.acquire("ctx"));
       await new Promise((r) => setImmediate(r)); // events are delivered in a microtask
       console.log("survived " + seen.join(","));
       await host.close();`,
      { DIR: newDir() },
    );
    const { code, stdout, stderr } = await within(c.exited, 10_000, "the child");
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^onError raw listener failed$/m);
    assert.match(stdout, /^survived RESOURCE_REGISTERED,RESOURCE_LEASED,LEASE_RELEASED$/m);
  },
);

// --- leases ------------------------------------------------------------------------------------

test("a lease's Symbol.dispose releases it", async () => {
  const { host } = await open(newDir());
  await host.register("PROXY", "p1");
  const lease = host.acquire("ctx");
  assert.equal(typeof lease[Symbol.dispose], "function");
  assert.ok(!Object.keys(lease).includes(Symbol.dispose.toString()), "not an enumerable field");
  assert.deepEqual(Object.keys(lease), ["kind", "value", "group", "context", "token", "leasedAt", "expiresAt"]);
  assert.equal(host.resources()[0].lease.token, lease.token);
  assert.equal(host.acquire("ctx"), null, "held");
  lease[Symbol.dispose]();
  assert.equal(host.resources()[0].lease, null, "released");
  assert.equal(host.release(lease), false, "already released");
  lease[Symbol.dispose](); // a second dispose is harmless
  // Renewed and named leases are disposable too.
  const named = host.acquireResource("PROXY", "p1", "ctx");
  const renewed = host.renew(named);
  assert.equal(typeof renewed[Symbol.dispose], "function");
  renewed[Symbol.dispose]();
  assert.equal(host.resources()[0].lease, null);
  await tick();
  const types = (await allEvents(host)).map((e) => e.type);
  assert.deepEqual(types, [
    "RESOURCE_REGISTERED",
    "RESOURCE_LEASED",
    "ACQUISITION_REJECTED",
    "LEASE_RELEASED", // by Symbol.dispose
    "RESOURCE_LEASED",
    "LEASE_RELEASED", // the renewed lease, by Symbol.dispose
  ]);
  await host.close();
});

// --- durability --------------------------------------------------------------------------------

test("operator actions are on disk when their promise resolves", async () => {
  const dir = newDir();
  const { host, clock } = await open(dir);
  assert.deepEqual(onDisk(dir).registered, [], "a snapshot is written at open");

  assert.equal(await host.register("PROXY", "p1"), true);
  assert.deepEqual(diskValues(dir), ["PROXY:p1"]);
  assert.equal(await host.register("ACCOUNT", "a1"), true);
  assert.deepEqual(diskValues(dir), ["PROXY:p1", "ACCOUNT:a1"]);

  await host.block("PROXY", "p1", { seconds: 60 });
  assert.deepEqual(onDisk(dir).blocklist, [{ kind: "PROXY", value: "p1", until: T0 + 60_000 }]);
  await host.block("ACCOUNT", "a1", { permanent: true });
  assert.equal(onDisk(dir).blocklist.length, 2);

  assert.equal(await host.unblock("PROXY", "p1"), true);
  assert.deepEqual(onDisk(dir).blocklist.map((b) => b.value), ["a1"]);

  assert.equal(await host.deregister("ACCOUNT", "a1"), true);
  assert.deepEqual(diskValues(dir), ["PROXY:p1"]);
  assert.deepEqual(onDisk(dir).blocklist, []);

  // Config changes, each way (operator-undo.js `configUndoable`): with an inverse; written
  // ahead (larger limits, a smaller event buffer; a smaller window, which cuts every cell's
  // window as each part is written) — not in force before stored. Each is on disk once it resolves,
  // with the cells as they are (the report's window of 3 outcomes cut to 2 by the last).
  for (let i = 0; i < 3; i++) host.report("PROXY", "p1", "shop", { ok: true, latencyMs: 10 + i });
  await host.checkpoint();
  const cells = onDisk(dir).cells;
  for (const [patch, ahead] of [[{ leaseTtlMs: 42_000 }, false], [{ maxCells: 123_456, eventBufferSize: 999 }, true], [{ windowSize: 2 }, true]]) {
    const pending = host.setConfig(patch);
    const [field, value] = Object.entries(patch)[0];
    assert.equal(host.config()[field] === value, !ahead, `${field}: in force before it is stored: ${!ahead}`);
    assert.equal((await pending)[field], value);
    assert.equal(onDisk(dir).config[field], value, `${field} on disk`);
    const body = (json) => json.slice(json.indexOf(',"registered":'));
    assert.equal(body(readFileSync(snapshotPath(dir), "utf8")), body(host.snapshot()), `${field}: what was stored is what the live pool holds once it is applied`);
    assert.deepEqual(onDisk(dir).cells.map((c) => c.window.length), field === "windowSize" ? [2] : cells.map((c) => c.window.length));
    await host.checkpoint();
    assert.equal(JSON.stringify(onDisk(dir)), JSON.stringify(JSON.parse(host.snapshot())), `${field}: the live pool is what is stored`);
  }

  // Import: a snapshot of another pool with a higher revision.
  const other = new Pool({ now: () => clock.t, seed: 1 });
  for (let i = 0; i < 20; i++) other.register("SESSION", `s${i}`);
  const imported = other.snapshot();
  assert.ok(JSON.parse(imported).revision > onDisk(dir).revision);
  await host.importSnapshot(imported);
  assert.equal(onDisk(dir).registered.length, 20);
  assert.equal(onDisk(dir).revision, JSON.parse(imported).revision);
  assert.equal(host.stats().registered, 20);
  assert.equal(onDisk(dir).revision, host.stats().revision);
  await host.close();
});

test(
  "an operator action that reports an existing state resolves only once that state is on disk",
  async () => {
    const dir = newDir();
    const { host } = await open(dir);
    const first = host.register("PROXY", "p1");
    const second = host.register("PROXY", "p1");
    assert.equal(await second, false, "already registered");
    const registered = diskValues(dir);
    await first;
    assert.deepEqual(registered, ["PROXY:p1"], "acknowledged as registered: it must be on disk");
    await host.close();
  },
);

test("concurrent operator actions share snapshot writes", async () => {
  const dir = newDir();
  const { host } = await open(dir);
  const before = await checkpointsWritten(host);
  assert.equal(before, 1, "the snapshot written at open");
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => host.register("PROXY", `p${i}`)));
  assert.deepEqual(results, Array(50).fill(true));
  const writes = (await checkpointsWritten(host)) - before;
  assert.ok(writes >= 1 && writes <= 3, `50 concurrent registrations took ${writes} snapshot writes`);
  assert.equal(onDisk(dir).registered.length, 50);
  // Mixed actions too.
  const mark = await checkpointsWritten(host);
  await Promise.all([
    host.block("PROXY", "p0", { permanent: true }),
    host.unblock("PROXY", "p1"),
    host.deregister("PROXY", "p2"),
    ...Array.from({ length: 20 }, (_, i) => host.block("PROXY", `p${10 + i}`, { seconds: 30 })),
  ]);
  const mixed = (await checkpointsWritten(host)) - mark;
  assert.ok(mixed >= 1 && mixed <= 3, `23 concurrent actions took ${mixed} writes`);
  assert.equal(onDisk(dir).registered.length, 49);
  assert.equal(onDisk(dir).blocklist.length, 21);
  await host.close();
});

test("the checkpoint interval writes reports to disk without any operator action, at checkpointMs", async () => {
  const dir = newDir();
  const timers = new VirtualTimers();
  const { host } = await open(dir, { checkpointMs: 50, timers });
  await host.register("PROXY", "p1");
  const revision = onDisk(dir).revision;
  const base = await checkpointsWritten(host);
  host.report("PROXY", "p1", "ctx", { ok: true, latencyMs: 10 });
  assert.equal(onDisk(dir).cells.length, 0, "not written synchronously");
  await timers.advance(49);
  assert.equal(await checkpointsWritten(host), base, "no write started before 50 ms");
  assert.equal(onDisk(dir).cells.length, 0);
  await timers.advance(1);
  assert.ok(await until(() => onDisk(dir).cells.length === 1), "the report reached the disk");
  assert.ok(onDisk(dir).revision > revision);
  assert.ok(await until(async () => (await checkpointsWritten(host)) === base + 1));
  assert.equal(host.stats().checkpointAgeMs, 0, "written at this (virtual) instant");
  await timers.advance(30);
  assert.equal(host.stats().checkpointAgeMs, 30);
  await host.close();
  assert.equal(timers.pending, 0, "close() cleared every timer");
});

test("a burst of mutations triggers a write without the interval", async () => {
  const dir = newDir();
  const { host } = await open(dir, { burst: 10, checkpointMs: 0 });
  await host.register("PROXY", "p1");
  const base = await checkpointsWritten(host);
  const revision = onDisk(dir).revision;
  for (let i = 0; i < 9; i++) host.report("PROXY", "p1", "ctx", { ok: true });
  await sleep(30); // real time: a write started too early would show only after real file-system turns
  assert.equal(await checkpointsWritten(host), base, "9 mutations: no write yet");
  assert.equal(onDisk(dir).revision, revision);
  host.report("PROXY", "p1", "ctx", { ok: true });
  // (The counter moves once the write, folder fsync included, is complete.)
  assert.ok(await until(async () => (await checkpointsWritten(host)) === base + 1, 2000), "the 10th mutation wrote");
  assert.equal(onDisk(dir).revision, host.stats().revision);
  assert.equal(onDisk(dir).cells[0].consecutiveSuccesses, 10);
  await host.close();
});

test("bursts are written at most once per burstGapMs; a burst inside the gap is written when it ends", async () => {
  const dir = newDir();
  const timers = new VirtualTimers();
  const { host } = await open(dir, { burst: 5, burstGapMs: 400, checkpointMs: 0, timers });
  await host.register("PROXY", "p1");
  const base = await checkpointsWritten(host);
  for (let i = 0; i < 5; i++) host.report("PROXY", "p1", "ctx", { ok: true });
  await timers.advance(0);
  assert.ok(await until(async () => (await checkpointsWritten(host)) === base + 1), "the first burst wrote");
  for (let i = 0; i < 5; i++) host.report("PROXY", "p1", "ctx", { ok: true });
  await timers.advance(399);
  await tick();
  assert.equal(await checkpointsWritten(host), base + 1, "a second burst inside the gap waits");
  assert.equal(onDisk(dir).cells[0].consecutiveSuccesses, 5);
  await timers.advance(1);
  assert.ok(await until(async () => (await checkpointsWritten(host)) === base + 2), "…and is written when the gap ends");
  assert.equal(onDisk(dir).cells[0].consecutiveSuccesses, 10);
  await host.close();
});

test("close() writes a final snapshot and releases the lock; a second openPool fails with POOL_LOCKED while it is open", async () => {
  const dir = newDir();
  const { host } = await open(dir);
  await host.register("PROXY", "p1");
  host.report("PROXY", "p1", "ctx", { ok: false, failure: "SLOW", latencyMs: 3000 });
  assert.equal(onDisk(dir).cells.length, 0);
  assert.ok(existsSync(path.join(dir, "LOCK")));

  // Another openPool in this process…
  const err = await openPool({ dir, now: () => T0, seed: 1, handleSignals: false, checkpointMs: 0 }).then(
    () => assert.fail("a second openPool on an open folder must fail"),
    (e) => e,
  );
  assert.equal(err.code, "POOL_LOCKED");
  assert.equal(err.holder.pid, process.pid);
  assert.equal(err.holder.host, os.hostname());
  assert.match(err.message, new RegExp(`pid ${process.pid}\\b`));
  assert.ok(err.message.includes(os.hostname()), err.message);
  // …and in another process.
  const c = child(
    `import { openPool } from ${JSON.stringify(NODE_ENTRY)};
     try { await openPool({ dir: process.env.DIR, handleSignals: false }); console.log("opened"); }
     catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`,
    { DIR: dir },
  );
  const answer = JSON.parse(await c.line());
  assert.equal((await c.exited).code, 0);
  assert.equal(answer.code, "POOL_LOCKED");
  assert.match(answer.message, new RegExp(`pid ${process.pid}\\b`));
  assert.ok(answer.message.includes(os.hostname()));
  // The failed attempts did not disturb the owner.
  assert.ok(existsSync(path.join(dir, "LOCK")));
  assert.equal(await host.register("PROXY", "p2"), true);

  await host.close();
  assert.equal(host.ready, false);
  assert.ok(!existsSync(path.join(dir, "LOCK")), "the lock is released");
  const disk = onDisk(dir);
  assert.equal(disk.cells.length, 1, "the report is in the final snapshot");
  assert.equal(disk.cells[0].context, "ctx");
  await host.close(); // idempotent

  const { host: again } = await open(dir);
  assert.equal(again.stats().registered, 2);
  assert.equal(again.resources({ context: "ctx" })[0].cells[0].p50LatencyMs, 3000);
  await again.close();
});

test("importSnapshot of a lower revision is refused with STALE_SNAPSHOT and changes nothing", async () => {
  const dir = newDir();
  const { host } = await open(dir);
  await host.register("PROXY", "p1");
  const old = host.snapshot();
  await host.register("PROXY", "p2");
  for (let i = 0; i < 3; i++) host.report("PROXY", "p1", "ctx", { ok: true });
  await host.checkpoint();
  const bytes = readFileSync(snapshotPath(dir), "utf8");
  const state = host.snapshot();
  const events = (await allEvents(host)).length;
  await assert.rejects(host.importSnapshot(old), (e) => {
    assert.equal(e.code, "STALE_SNAPSHOT");
    assert.match(e.message, new RegExp(`revision ${JSON.parse(old).revision}\\b`));
    return true;
  });
  assert.equal(host.snapshot(), state, "the pool is unchanged");
  assert.equal(readFileSync(snapshotPath(dir), "utf8"), bytes, "the file is unchanged");
  assert.equal((await allEvents(host)).length, events);
  // An invalid snapshot changes nothing either.
  await assert.rejects(host.importSnapshot('{"format":"repute-snapshot","version":2,"revision":999}'), {
    code: "INVALID_SNAPSHOT",
  });
  assert.equal(host.snapshot(), state);
  assert.equal(readFileSync(snapshotPath(dir), "utf8"), bytes);
  // The same revision is accepted (not lower).
  await host.importSnapshot(state);
  assert.equal(host.stats().revision, JSON.parse(state).revision);
  await host.close();
});

test(
  "importSnapshot of a lower revision in non-canonical JSON is refused too, and tokens never go back",
  async () => {
    const dir = newDir();
    const { host } = await open(dir);
    await host.register("PROXY", "p1");
    const old = host.snapshot();
    const lease = host.acquire("ctx");
    host.release(lease);
    for (let i = 0; i < 3; i++) host.report("PROXY", "p1", "ctx", { ok: true });
    await host.checkpoint();
    const state = host.snapshot();
    const pretty = JSON.stringify(JSON.parse(old), null, 2);
    await assert.rejects(host.importSnapshot(pretty), { code: "STALE_SNAPSHOT" });
    assert.equal(host.snapshot(), state, "the pool is unchanged");
    const next = host.acquire("ctx");
    assert.ok(next.token > lease.token, `token ${next.token} after ${lease.token}`);
    await host.close().catch(() => {});
  },
);

test(
  "importSnapshot is refused when a checkpoint in flight stores a higher revision than the import",
  async () => {
    const dir = newDir();
    const { host } = await open(dir);
    await host.register("PROXY", "p1");
    for (let i = 0; i < 3; i++) host.report("PROXY", "p1", "ctx", { ok: true });
    const mid = host.snapshot();
    for (let i = 0; i < 3; i++) host.report("PROXY", "p1", "ctx", { ok: true });
    const state = host.snapshot();
    const writing = host.checkpoint(); // takes the snapshot in a microtask, then writes
    await Promise.resolve();
    await Promise.resolve();
    await assert.rejects(host.importSnapshot(mid), { code: "STALE_SNAPSHOT" });
    await writing;
    assert.equal(host.snapshot(), state, "the pool did not go back");
    assert.equal(onDisk(dir).revision, JSON.parse(state).revision);
    await host.close().catch(() => {});
  },
);

test("a damaged snapshot stops start-up with SNAPSHOT_DAMAGED naming the file, and the files are left as they are", async () => {
  for (const damage of ["garbage", "truncated", "not a snapshot"]) {
    const dir = newDir();
    const { host } = await open(dir);
    await host.register("PROXY", "p1");
    await host.register("PROXY", "p2");
    await host.close();
    const good = readFileSync(snapshotPath(dir), "utf8");
    const bad = {
      garbage: "\u0000\u0001garbage{{",
      truncated: good.slice(0, Math.floor(good.length / 2)),
      "not a snapshot": JSON.stringify({ hello: "world" }),
    }[damage];
    writeFileSync(snapshotPath(dir), bad);
    const backup = readFileSync(path.join(dir, "snapshot.prev.json"), "utf8");
    const files = readdirSync(dir).sort();

    const err = await openPool({ dir, now: () => T0, seed: SEED, checkpointMs: 0, handleSignals: false }).then(
      () => assert.fail(`${damage}: openPool must fail`),
      (e) => e,
    );
    assert.equal(err.code, "SNAPSHOT_DAMAGED", damage);
    assert.ok(err.message.includes(snapshotPath(dir)), `${damage}: the message names the file: ${err.message}`);
    assert.ok(err.message.includes("snapshot.prev.json"), `${damage}: the message names the backup: ${err.message}`);
    assert.equal(readFileSync(snapshotPath(dir), "utf8"), bad, `${damage}: the damaged file is untouched`);
    assert.equal(readFileSync(path.join(dir, "snapshot.prev.json"), "utf8"), backup, `${damage}: the backup is untouched`);
    assert.deepEqual(readdirSync(dir).sort(), files, `${damage}: no file added or removed (the lock is released)`);
    assert.ok(!existsSync(path.join(dir, "LOCK")));
  }
});

test("fromBackup: true starts from snapshot.prev.json; the damaged file is kept aside; tokens and seqs do not go back", async () => {
  const dir = newDir();
  const { host } = await open(dir);
  await host.register("PROXY", "p1"); // the backup will hold this state
  const lease = host.acquire("ctx"); // a token the backup does not know of
  host.release(lease);
  await host.register("PROXY", "p2"); // this write makes the one above the backup
  await tick();
  const lastSeq = host.stats().nextEventSeq - 1;
  await host.close();
  const backup = JSON.parse(readFileSync(path.join(dir, "snapshot.prev.json"), "utf8"));
  assert.deepEqual(backup.registered.map((r) => r.value), ["p1"]);
  writeFileSync(snapshotPath(dir), "{ truncated");

  const { host: restored } = await open(dir, { fromBackup: true });
  assert.deepEqual(restored.resources().map((r) => r.value), ["p1"]);
  assert.equal(restored.stats().revision, backup.revision);
  const aside = readdirSync(dir).filter((f) => f.startsWith("snapshot.damaged-") && f.endsWith(".json"));
  assert.equal(aside.length, 1, "the damaged snapshot is kept aside");
  assert.equal(readFileSync(path.join(dir, aside[0]), "utf8"), "{ truncated");
  assert.deepEqual(diskValues(dir), ["PROXY:p1"], "snapshot.json is good again");
  const next = restored.acquire("ctx");
  assert.ok(next.token > lease.token, `token ${next.token} after ${lease.token}`);
  await tick();
  const events = await allEvents(restored, lastSeq);
  assert.equal(events.length, 1);
  assert.ok(events[0].seq > lastSeq, `seq ${events[0].seq} after ${lastSeq}`);
  await restored.close();

  // Without a backup, fromBackup fails and says so.
  const empty = newDir();
  await assert.rejects(openPool({ dir: empty, fromBackup: true, handleSignals: false, seed: 1 }), { code: "NO_BACKUP" });
  assert.ok(!existsSync(path.join(empty, "LOCK")));
});

// --- restarts ----------------------------------------------------------------------------------

test("a restart after close() keeps the state, continues tokens, and continues event seqs without a jump", async () => {
  const dir = newDir();
  const clock = { t: T0 };
  const { host } = await open(dir, {}, clock);
  for (const v of ["p1", "p2", "p3"]) await host.register("PROXY", v);
  await host.block("PROXY", "p3", { seconds: 600 });
  let lastToken = 0;
  for (let i = 0; i < 10; i++) {
    const l = host.acquire(i % 2 ? "a" : "b");
    lastToken = l.token;
    host.report(l.kind, l.value, l.context, i % 3 ? { ok: true, latencyMs: 10 * i } : { ok: false, failure: "TIMEOUT" });
    host.release(l);
    clock.t += 1000;
  }
  await tick();
  const resources = host.resources();
  const stats = host.stats();
  const config = host.config();
  const lastSeq = stats.nextEventSeq - 1;
  const before = await allEvents(host);
  assert.equal(before.at(-1).seq, lastSeq);
  await host.close();

  const { host: again } = await open(dir, {}, clock);
  assert.deepEqual(again.resources(), resources, "the same state");
  assert.equal(again.stats().revision, stats.revision);
  assert.equal(again.stats().fencingHighWater, stats.fencingHighWater);
  assert.deepEqual(again.config(), config);
  const l = again.acquire("a");
  assert.ok(l.token > lastToken, `token ${l.token} after ${lastToken}`);
  assert.equal(l.token, lastToken + 1, "after a clean close tokens continue without a jump");
  await again.register("PROXY", "p4");
  await tick();
  const after = await allEvents(again, lastSeq);
  assert.ok(after.length >= 2);
  assert.equal(after[0].seq, lastSeq + 1, "seqs continue without a jump after a clean close");
  assertConsecutive(after.map((e) => e.seq), "after the restart");
  // The audit log reads across the restart by seq range.
  const all = await allEvents(again);
  assertConsecutive(all.map((e) => e.seq), "the whole log");
  assert.deepEqual(all.slice(0, before.length), before);
  const span = await again.readEvents({ after: lastSeq - 2, limit: 3 });
  assert.deepEqual(span.events.map((e) => e.seq), [lastSeq - 1, lastSeq, lastSeq + 1]);
  assert.equal(span.next, lastSeq + 1, "more follow");
  const rest = await again.readEvents({ after: span.next, limit: 3 });
  assert.deepEqual(rest.events.map((e) => e.seq), [lastSeq + 2]);
  assert.equal(rest.next, null);
  await again.close();

  // A third run still continues.
  const { host: third } = await open(dir, {}, clock);
  const l3 = third.acquire("b");
  assert.ok(l3.token > l.token);
  await tick();
  const tail = await allEvents(third, all.at(-1).seq);
  assert.equal(tail[0].seq, all.at(-1).seq + 1);
  await third.close();
});

test("a restart after a crash (child killed with SIGKILL) skips ahead: tokens and seqs exceed everything seen", async () => {
  const dir = newDir();
  const c = child(
    `import { openPool } from ${JSON.stringify(NODE_ENTRY)};
     const host = await openPool({ dir: process.env.DIR, now: () => ${T0}, seed: 3, checkpointMs: 0, handleSignals: false });
     let maxSeq = 0;
     host.on("event", (e) => { maxSeq = Math.max(maxSeq, e.seq); });
     await host.register("PROXY", "p1");
     await host.register("PROXY", "p2");
     let maxToken = 0;
     for (let i = 0; i < 200; i++) {
       const l = host.acquire("ctx");
       maxToken = Math.max(maxToken, l.token);
       host.report(l.kind, l.value, l.context, { ok: true });
       host.release(l);
     }
     await new Promise((r) => setImmediate(r));
     console.log(JSON.stringify({ maxSeq, maxToken }));
     setInterval(() => {}, 1000);`,
    { DIR: dir },
  );
  const seen = JSON.parse(await c.line());
  assert.equal(seen.maxToken, 200);
  assert.ok(seen.maxSeq >= 402);
  c.process.kill("SIGKILL");
  const { signal } = await c.exited;
  assert.equal(signal, "SIGKILL");
  assert.ok(existsSync(path.join(dir, "LOCK")), "the dead owner's lock is still there");

  const { host } = await open(dir);
  assert.deepEqual(host.resources().map((r) => r.value), ["p1", "p2"], "operator actions survived");
  const lease = host.acquire("ctx");
  assert.ok(lease.token > seen.maxToken, `token ${lease.token} after ${seen.maxToken}`);
  await tick();
  const last = await host.readEvents({ after: seen.maxSeq, limit: 10 });
  assert.equal(last.events.length, 1, "only the new event is past what the dead process used");
  assert.ok(last.events[0].seq > seen.maxSeq);
  assert.equal(last.events[0].type, "RESOURCE_LEASED");
  await host.close();
});

test("a restart from a crash image (the folder copied while the host is open) skips ahead", async () => {
  const dir = newDir();
  const { host } = await open(dir);
  await host.register("PROXY", "p1");
  let maxToken = 0;
  for (let i = 0; i < 5; i++) {
    const l = host.acquire("ctx");
    maxToken = l.token;
    host.report("PROXY", "p1", "ctx", { ok: true });
    host.release(l);
  }
  await tick();
  const maxSeq = host.stats().nextEventSeq - 1;
  const image = newDir();
  cpSync(dir, image, { recursive: true });
  assert.ok(existsSync(path.join(image, "reserve.json")), "reserve.json copied as it is");
  // The copied lock names this (live) process; a crashed owner's stale lock is taken over
  // (lock.test.mjs), so the image is opened without it.
  rmSync(path.join(image, "LOCK"));
  const { host: crashed } = await open(image);
  assert.deepEqual(crashed.resources().map((r) => r.value), ["p1"]);
  assert.equal(crashed.resources()[0].cells.length, 0, "the reports were not checkpointed before the crash");
  const l = crashed.acquire("ctx");
  assert.ok(l.token > maxToken, `token ${l.token} after ${maxToken}`);
  await tick();
  const events = await allEvents(crashed, 0);
  assert.ok(events.at(-1).seq > maxSeq, `seq ${events.at(-1).seq} after ${maxSeq}`);
  const seqs = events.map((e) => e.seq);
  assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b), "the log stays in seq order");
  await crashed.close();
  await host.close();
});

test(
  "a folder whose snapshot files are gone never reuses tokens or seqs of its audit log",
  async () => {
    const dir = newDir();
    const { host } = await open(dir);
    await host.register("PROXY", "p1");
    const lease = host.acquire("ctx");
    host.release(lease);
    await tick();
    const lastSeq = host.stats().nextEventSeq - 1;
    await host.close();
    rmSync(snapshotPath(dir));
    rmSync(path.join(dir, "snapshot.prev.json"), { force: true });

    // Either refusing to start (naming what is missing) or starting past what was used is
    // acceptable; starting over from token and seq 1 is not.
    let again;
    try {
      ({ host: again } = await open(dir));
    } catch (e) {
      assert.ok(e.message.includes("snapshot.json"), `the refusal names the missing file: ${e.message}`);
      return;
    }
    await again.register("PROXY", "p2");
    const l = again.acquire("ctx");
    assert.ok(l.token > lease.token, `token ${l.token} after ${lease.token}`);
    await tick();
    const events = await allEvents(again, lastSeq);
    assert.equal(events.length, 2, "the new events are in the audit log");
    await again.close();
  },
);

test("SIGTERM and SIGINT in a child: a final snapshot is written, the lock released, and the process exits", async () => {
  const run = (signal) => {
    const dir = newDir();
    const c = child(
      `import { openPool } from ${JSON.stringify(NODE_ENTRY)};
       const host = await openPool({ dir: process.env.DIR, now: () => ${T0}, seed: 5, checkpointMs: 0, onError: () => {} });
       await host.register("PROXY", "p1");
       host.report("PROXY", "p1", "ctx", { ok: true, latencyMs: 42 }); // not written until the final snapshot
       console.log("ready");
       setInterval(() => {}, 1000);`,
      { DIR: dir },
    );
    return { dir, c, signal };
  };
  const runs = [run("SIGTERM"), run("SIGINT")];
  for (const { dir, c, signal } of runs) {
    assert.equal(await c.line(), "ready");
    assert.deepEqual(diskValues(dir), ["PROXY:p1"], "the registration was on disk before it resolved");
    assert.equal(onDisk(dir).cells.length, 0);
    c.process.kill(signal);
  }
  for (const { dir, c, signal } of runs) {
    const { code, stderr } = await within(c.exited, 10_000, `the child exiting on ${signal}`);
    assert.equal(code, signal === "SIGINT" ? 130 : 143, `${signal}: ${stderr}`);
    const disk = onDisk(dir);
    assert.deepEqual(disk.registered, [{ kind: "PROXY", value: "p1" }]);
    assert.equal(disk.cells.length, 1, `${signal}: the report is in the final snapshot`);
    assert.ok(!existsSync(path.join(dir, "LOCK")), `${signal}: the lock is released`);
  }
});

// --- the prober --------------------------------------------------------------------------------


test("with a prober, halfOpenCauses defaults to BLOCKED unless config sets it; without one, the engine default", async () => {
  const probes = { PROXY: async () => ({ ok: true }) };
  const engineDefault = new Pool({ seed: 1 }).config().halfOpenCauses;
  assert.deepEqual(engineDefault, ["BLOCKED", "TLS_HANDSHAKE", "CONNECTION_RESET", "TIMEOUT", "SLOW"]);

  const dir = newDir();
  const { host } = await open(dir, { prober: { probes, intervalMs: 1e9 } });
  assert.deepEqual(host.config().halfOpenCauses, ["BLOCKED"]);
  assert.deepEqual(onDisk(dir).config.halfOpenCauses, ["BLOCKED"]);
  await host.close();
  // A restart with the prober and a config that does not mention halfOpenCauses keeps it.
  const { host: again } = await open(dir, { prober: { probes, intervalMs: 1e9 }, config: { leaseTtlMs: 5000 } });
  assert.deepEqual(again.config().halfOpenCauses, ["BLOCKED"]);
  assert.equal(again.config().leaseTtlMs, 5000);
  await again.close();

  const { host: overridden } = await open(newDir(), {
    prober: { probes, intervalMs: 1e9 },
    config: { halfOpenCauses: ["BLOCKED", "SLOW"], coolAfter: 3 },
  });
  assert.deepEqual(overridden.config().halfOpenCauses, ["BLOCKED", "SLOW"]);
  assert.equal(overridden.config().coolAfter, 3);
  await overridden.close();

  const { host: plain } = await open(newDir(), { config: { coolAfter: 3 } });
  assert.deepEqual(plain.config().halfOpenCauses, engineDefault);
  await plain.close();
});

test(
  "with a prober, a restored pool's halfOpenCauses does not depend on whether an unrelated config field is given",
  async () => {
    const probes = { PROXY: async () => ({ ok: true }) };
    // Two folders in the same state: created without a prober (the engine's default causes).
    const [one, two] = [newDir(), newDir()];
    for (const dir of [one, two]) await (await open(dir)).host.close();
    const { host: bare } = await open(one, { prober: { probes, intervalMs: 1e9 } });
    const withoutConfig = bare.config().halfOpenCauses;
    await bare.close();
    const { host: configured } = await open(two, { prober: { probes, intervalMs: 1e9 }, config: { leaseTtlMs: 5000 } });
    const withConfig = configured.config().halfOpenCauses;
    await configured.close();
    assert.deepEqual(withConfig, withoutConfig);
  },
);

test("the prober probes a probe-due cell after the interval plus jitter, holding a real lease, and reports through the pool", async () => {
  const timers = manualTimers();
  const calls = [];
  const probeErrors = [];
  const { host, clock } = await open(newDir(), {
    prober: {
      probes: {
        PROXY: async (req) => {
          // While the probe runs, the prober holds the lease: nobody else gets the resource.
          const view = host.resources().find((r) => r.value === req.value);
          calls.push({ req, heldToken: view.lease?.token, other: host.acquireResource("PROXY", req.value, req.context) });
          return { ok: true, latencyMs: 25 };
        },
      },
      intervalMs: 1000,
      jitterMs: 400,
      random: () => 0.5,
      setTimer: timers.setTimer,
      clearTimer: timers.clearTimer,
      onError: (e) => probeErrors.push(e),
    },
  });
  const events = recordEvents(host);
  await host.register("PROXY", "p1");
  await host.register("PROXY", "p2"); // healthy: never probed
  coolWithTimeouts(host, "p1");
  assert.deepEqual([...timers.pending].map((x) => x.ms), [1200], "interval + random() * jitterMs");
  // Not due yet: a round probes nothing.
  assert.equal(timers.fire(1200), 1);
  await tick();
  assert.equal(calls.length, 0);
  clock.t += TIMEOUT_COOLDOWN_MS + 1;
  assert.equal(host.dueForRecoveryProbe().length, 1);
  assert.ok(await until(() => timers.pending.size === 1), "the next round is scheduled");
  assert.equal(timers.fire(1200), 1);
  assert.ok(await until(() => calls.length === 1 && host.resources()[0].lease === null), "probed and released");

  const [{ req, heldToken, other }] = calls;
  assert.equal(req.kind, "PROXY");
  assert.equal(req.value, "p1");
  assert.equal(req.context, "ctx");
  assert.ok(req.signal instanceof AbortSignal);
  assert.equal(heldToken, req.lease.token, "the probe ran under a real lease");
  assert.equal(other, null, "the resource could not be leased by anyone else meanwhile");
  const cell = host.resources({ context: "ctx" }).find((r) => r.value === "p1").cells[0];
  assert.equal(cell.state, "RECOVERING", "the outcome went through report");
  assert.equal(cell.p50LatencyMs, 25);
  assert.deepEqual(host.dueForRecoveryProbe(), []);
  await tick();
  const mine = events.filter((e) => e.value === "p1" && e.seq > 3).map((e) => e.type);
  assert.deepEqual(mine.slice(0, 2), ["RESOURCE_LEASED", "LEASE_RELEASED"]);
  assert.deepEqual(probeErrors, []);

  await host.close();
  assert.equal(timers.pending.size, 0, "close() stops the prober");
});

test("the prober runs on its own timer (short interval, no jitter)", async () => {
  let probed = 0;
  const { host, clock } = await open(newDir(), {
    prober: { probes: { PROXY: async () => (probed++, { ok: true }) }, intervalMs: 10, jitterMs: 0 },
  });
  await host.register("PROXY", "p1");
  coolWithTimeouts(host, "p1");
  clock.t += TIMEOUT_COOLDOWN_MS + 1;
  assert.ok(await until(() => probed >= 1, 3000), "a round ran");
  assert.ok(await until(() => host.resources({ context: "ctx" })[0].cells[0].state !== "COOLING", 1000));
  await host.close();
  const after = probed;
  await sleep(50); // real time: this test is the prober on the host's own (real) timers; 5 intervals pass
  assert.equal(probed, after, "no round after close()");
});

// --- stats, metrics, audit options -------------------------------------------------------------

test("stats() adds auditDropped, deliveryDropped and checkpointAgeMs to the pool's stats", async () => {
  const timers = new VirtualTimers();
  const { host } = await open(newDir(), { timers });
  await host.register("PROXY", "p1");
  const s = host.stats();
  for (const k of ["registered", "cells", "leased", "blocked", "revision", "eventsDropped", "fencingHighWater", "nextEventSeq"]) {
    assert.ok(k in s, k);
  }
  assert.equal(s.registered, 1);
  assert.equal(s.auditDropped, 0);
  assert.equal(s.deliveryDropped, 0);
  assert.equal(typeof s.checkpointAgeMs, "number");
  assert.equal(s.checkpointAgeMs, 0, "the opening write, at this (virtual) instant");
  await timers.advance(30);
  const aged = host.stats().checkpointAgeMs;
  assert.equal(aged, 30, "it ages");
  await host.checkpoint(); // nothing changed: no write
  assert.ok(host.stats().checkpointAgeMs >= aged);
  host.report("PROXY", "p1", "ctx", { ok: true });
  await host.checkpoint();
  assert.ok(host.stats().checkpointAgeMs < aged, "a write resets it");
  await host.close();
});

test("metrics() is Prometheus text with the documented families", async () => {
  const { host } = await open(newDir());
  await host.register("PROXY", "p1");
  host.release(host.acquire("ctx"));
  const held = host.acquire("ctx");
  assert.equal(host.acquire("other"), null, "the only resource is leased");
  host.release(held);
  host.observeRequest("/api/leases", "POST", 201, 0.002);
  await tick();
  const answer = host.metrics();
  assert.ok(answer instanceof Promise, "a promise, as repute.d.ts declares it");
  const text = await answer;
  const families = {
    repute_acquisitions_total: "counter",
    repute_events_total: "counter",
    repute_checkpoints_total: "counter",
    repute_checkpoint_failures_total: "counter",
    repute_stream_cuts_total: "counter",
    repute_http_request_duration_seconds: "histogram",
    repute_resources: "gauge",
    repute_leases: "gauge",
    repute_blocked: "gauge",
    repute_cells: "gauge",
    repute_engine_events_dropped: "gauge",
    repute_audit_dropped: "gauge",
    repute_delivery_dropped: "gauge",
    repute_checkpoint_age_seconds: "gauge",
    repute_checkpoint_duration_seconds: "gauge",
  };
  for (const [name, type] of Object.entries(families)) {
    assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, "m"), name);
    assert.match(text, new RegExp(`^# HELP ${name} \\S`, "m"), `${name} has help`);
  }
  assert.match(text, /^repute_acquisitions_total\{context="ctx",result="granted"\} 2$/m);
  assert.match(text, /^repute_acquisitions_total\{context="other",result="rejected"\} 1$/m);
  assert.match(text, /^repute_events_total\{type="RESOURCE_REGISTERED"\} 1$/m);
  assert.match(text, /^repute_resources 1$/m);
  assert.match(text, /^repute_leases 0$/m);
  assert.match(text, /^repute_checkpoints_total 2$/m, "open + register");
  assert.match(text, /^repute_http_request_duration_seconds_count\{route="\/api\/leases",method="POST",status="201"\} 1$/m);
  await host.close();
});

test("audit options are passed on: the log rotates by size and keeps maxFiles", async () => {
  const dir = newDir();
  const { host } = await open(dir, { audit: { maxFileBytes: 600, maxFiles: 3 } });
  await host.register("PROXY", "p1");
  for (let i = 0; i < 40; i++) host.release(host.acquire("ctx"));
  await host.close(); // flushes the log
  const files = readdirSync(path.join(dir, "audit")).filter((f) => f.endsWith(".jsonl"));
  assert.equal(files.length, 3, `files: ${files}`);
  const { host: again } = await open(dir, { audit: { maxFileBytes: 600, maxFiles: 3 } });
  const events = await allEvents(again);
  assert.ok(events[0].seq > 1, "the oldest files were deleted");
  assert.equal(events.at(-1).seq, 81);
  assertConsecutive(events.map((e) => e.seq), "the kept log");
  await again.close();
});
