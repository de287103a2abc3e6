// The JS contract of SPEC §9 through the `repute` package's Node entry: every method and the
// shapes it returns (Lease, ResourceView/CellView, PoolEvent, stats, the default config of §3);
// errors as real `Error`s with a stable `code` for every kind of bad input from JavaScript
// (types, kinds, failure types, blank and over-long strings, latencies, outcomes, block specs,
// tampered leases, options, configs, snapshots), and that a failed call changes nothing; lease
// copies; the host clock (read once per call, validated) and randomness (crypto seeding, seeds,
// a `random` outside [0, 1)); redaction of credentials in events and error messages; and the
// wrapper's hot-path caches (deregister/re-register, more than 4096 contexts).
// Deterministic: every pool has a fixed clock and a seed or a scripted `random`, except the one
// test about crypto seeding, which compares two unseeded pools.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "repute";

const T = 1_700_000_000_000;
const KINDS = ["PROXY", "ACCOUNT", "SESSION"];
const FAILURES = ["BLOCKED", "TLS_HANDSHAKE", "CONNECTION_RESET", "TIMEOUT", "SLOW"];

const DEFAULT_CONFIG = {
  coolAfter: 2,
  recoverAfter: 2,
  successReward: 5,
  penalties: { BLOCKED: 30, TLS_HANDSHAKE: 15, CONNECTION_RESET: 10, TIMEOUT: 5, SLOW: 2 },
  cooldownBaseMs: {
    BLOCKED: 3_600_000,
    TLS_HANDSHAKE: 300_000,
    CONNECTION_RESET: 120_000,
    TIMEOUT: 60_000,
    SLOW: 30_000,
  },
  maxBackoffExponent: 6,
  explorationFloor: 1,
  leaseTtlMs: 30_000,
  windowSize: 10,
  halfOpenCauses: ["BLOCKED", "TLS_HANDSHAKE", "CONNECTION_RESET", "TIMEOUT", "SLOW"],
  maxResources: 100_000,
  maxCells: 500_000,
  eventBufferSize: 65_536,
  minGapMs: 0,
  minGapMsByContext: {},
  maxCoolingPercent: 100,
};

const LEASE_KEYS = ["context", "expiresAt", "group", "kind", "leasedAt", "token", "value"];
const VIEW_KEYS = ["blocked", "cells", "group", "kind", "lease", "leases", "maxLeases", "value"];
const CELL_KEYS = [
  "consecutiveFailures",
  "consecutiveSuccesses",
  "context",
  "cooldownCause",
  "cooldownUntil",
  "held",
  "p50LatencyMs",
  "p95LatencyMs",
  "pacedUntil",
  "score",
  "state",
  "updatedAt",
];
const STATS_KEYS = [
  "available",
  "blocked",
  "cells",
  "contexts",
  "eventsDropped",
  "eventsPending",
  "fencingHighWater",
  "leased",
  "nextEventSeq",
  "now",
  "registered",
  "revision",
];
const EVENT_KEYS = new Set(["seq", "type", "at", "kind", "value", "group", "context", "until", "permanent", "cause", "token"]);

/** A clock that stays where it is put and counts its readings. */
function clock(t = T) {
  const c = { t, calls: 0, now: () => (c.calls++, c.t) };
  return c;
}

/** A pool with some of everything: cells, a cooldown, a block, a held lease. */
function fixture(extra = {}) {
  const c = clock();
  const pool = new Pool({ seed: 7, now: c.now, ...extra });
  for (const v of ["a", "b", "c"]) pool.register("PROXY", v);
  pool.register("ACCOUNT", "acct");
  pool.register("SESSION", "sess");
  pool.report("PROXY", "a", "checkout", { ok: false, failure: "TIMEOUT", latencyMs: 40 });
  pool.report("PROXY", "a", "checkout", { ok: false, failure: "TIMEOUT" });
  pool.report("PROXY", "b", "search", { ok: true, latencyMs: 12 });
  pool.block("ACCOUNT", "acct", { seconds: 60 });
  const lease = pool.acquireResource("PROXY", "b", "search");
  assert.ok(lease, "fixture lease");
  return { pool, clock: c, lease };
}

/** Everything observable about a pool's state at its current clock reading. */
function observe(pool) {
  return { snapshot: pool.snapshot(), stats: pool.stats(), resources: pool.resources() };
}

/** A label for any value, BigInts and functions included. */
function describe(v) {
  try {
    return JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : typeof x === "function" ? "<fn>" : x)) ?? String(v);
  } catch {
    return String(v);
  }
}

/** Asserts `fn` throws a real `Error` with `code` (and a message matching `pattern`). */
function expectCode(fn, code, pattern, label) {
  const at = label === undefined ? "" : `${label}: `;
  let threw = false;
  let err;
  try {
    fn();
  } catch (e) {
    threw = true;
    err = e;
  }
  assert.ok(threw, `${at}expected ${code}, but the call returned normally`);
  assert.ok(err instanceof Error, `${at}expected an Error, got ${typeof err}: ${String(err)}`);
  assert.equal(err.code, code, `${at}code of: ${err.message}`);
  assert.equal(typeof err.message, "string");
  assert.ok(err.message.length > 0, "an error message");
  if (pattern) assert.match(err.message, pattern, `${at}message`);
  return err;
}

/** Asserts `fn` fails with `code` and leaves snapshot, stats (revision…) and views as they were. */
function expectUnchanged(pool, fn, code, pattern, label = "") {
  const before = observe(pool);
  try {
    expectCode(fn, code, pattern);
  } catch (e) {
    e.message = `${label}: ${e.message}`;
    throw e;
  }
  const after = observe(pool);
  assert.equal(after.stats.revision, before.stats.revision, `${label}: revision moved`);
  assert.deepEqual(after, before, `${label}: state changed`);
}

function assertLease(lease, { kind, value, context, leasedAt, ttl = DEFAULT_CONFIG.leaseTtlMs, renewed = false }) {
  assert.ok(lease !== null && typeof lease === "object", "a lease object");
  assert.deepEqual(Object.keys(lease).sort(), LEASE_KEYS);
  assert.ok(KINDS.includes(lease.kind));
  assert.equal(typeof lease.value, "string");
  assert.equal(typeof lease.context, "string");
  for (const f of ["token", "leasedAt", "expiresAt"]) {
    assert.ok(Number.isSafeInteger(lease[f]) && lease[f] >= 0, `${f} is a non-negative integer`);
  }
  assert.ok(lease.token >= 1);
  if (kind !== undefined) assert.equal(lease.kind, kind);
  if (value !== undefined) assert.equal(lease.value, value);
  if (context !== undefined) assert.equal(lease.context, context);
  if (leasedAt !== undefined) assert.equal(lease.leasedAt, leasedAt);
  if (!renewed) assert.equal(lease.expiresAt, lease.leasedAt + ttl);
  else assert.ok(lease.expiresAt > lease.leasedAt);
}

// ---------------------------------------------------------------------------------------------
// Methods and shapes

test("the Pool class has every method of SPEC §9", () => {
  assert.equal(typeof Pool, "function");
  assert.equal(typeof Pool.restore, "function");
  const pool = new Pool({ seed: 1, now: () => T });
  for (const m of [
    "register",
    "deregister",
    "acquire",
    "acquireResource",
    "report",
    "renew",
    "release",
    "block",
    "unblock",
    "snapshot",
    "drainEvents",
    "resources",
    "dueForRecoveryProbe",
    "nextChangeAt",
    "stats",
    "config",
    "free",
  ]) {
    assert.equal(typeof pool[m], "function", m);
  }
  assert.ok(new Pool() instanceof Pool, "options are optional");
  assert.ok(Pool.restore(pool.snapshot()) instanceof Pool);
});

test("config() returns the full default config of SPEC §3", () => {
  const config = new Pool({ seed: 1 }).config();
  assert.deepEqual(config, DEFAULT_CONFIG);
  // A fresh object each time: mutating it does not reach the pool.
  const pool = new Pool({ seed: 1 });
  pool.config().penalties.SLOW = 99;
  assert.equal(pool.config().penalties.SLOW, 2);
});

test("a partial config fills the rest from the defaults, nested maps too", () => {
  const pool = new Pool({
    seed: 1,
    config: { coolAfter: 3, penalties: { SLOW: 1 }, cooldownBaseMs: { TIMEOUT: 5_000 }, halfOpenCauses: ["BLOCKED"] },
  });
  assert.deepEqual(pool.config(), {
    ...DEFAULT_CONFIG,
    coolAfter: 3,
    penalties: { ...DEFAULT_CONFIG.penalties, SLOW: 1 },
    cooldownBaseMs: { ...DEFAULT_CONFIG.cooldownBaseMs, TIMEOUT: 5_000 },
    halfOpenCauses: ["BLOCKED"],
  });
  // The boundaries of every range are accepted.
  const edges = {
    coolAfter: 1000,
    recoverAfter: 1,
    successReward: 200,
    penalties: { BLOCKED: 0, SLOW: 200 },
    cooldownBaseMs: { BLOCKED: 2 ** 31, SLOW: 1 },
    maxBackoffExponent: 21,
    explorationFloor: 1e6,
    leaseTtlMs: 1,
    windowSize: 1024,
    halfOpenCauses: [],
    maxResources: 1e7,
    maxCells: 1e8,
    eventBufferSize: 1,
  };
  const c = new Pool({ seed: 1, config: edges }).config();
  assert.equal(c.coolAfter, 1000);
  assert.equal(c.penalties.BLOCKED, 0);
  assert.equal(c.penalties.TIMEOUT, 5);
  assert.equal(c.cooldownBaseMs.BLOCKED, 2 ** 31);
  assert.equal(c.maxBackoffExponent, 21);
  assert.deepEqual(c.halfOpenCauses, []);
  assert.equal(new Pool({ seed: 1, config: { maxBackoffExponent: 0 } }).config().maxBackoffExponent, 0);
});

test("version 2 config: pacing gaps and the cooling cap at their bounds; the map is replaced whole", () => {
  const gaps = { "shop-us": 2 ** 31, "a b": 0, é: 5 };
  const pool = new Pool({ seed: 1, config: { minGapMs: 2 ** 31, minGapMsByContext: gaps, maxCoolingPercent: 1 } });
  const c = pool.config();
  assert.equal(c.minGapMs, 2 ** 31);
  assert.equal(c.maxCoolingPercent, 1);
  assert.deepEqual(Object.keys(c.minGapMsByContext), ["a b", "shop-us", "é"], "keys in UTF-8 byte order");
  assert.deepEqual(c.minGapMsByContext, gaps);
  const many = Object.fromEntries(Array.from({ length: 4096 }, (_, i) => [`c${i}`, i]));
  assert.equal(Object.keys(new Pool({ seed: 1, config: { minGapMsByContext: many } }).config().minGapMsByContext).length, 4096);
  assert.equal(new Pool({ seed: 1, config: { maxCoolingPercent: 100, minGapMs: 0 } }).config().maxCoolingPercent, 100);
  // setConfig and a restore override replace the map; they never merge it.
  assert.equal(pool.setConfig({ minGapMsByContext: { other: 7 } }), true);
  assert.deepEqual(pool.config().minGapMsByContext, { other: 7 });
  const restored = Pool.restore(pool.snapshot(), { seed: 1, config: { minGapMsByContext: { third: 9 } } });
  assert.deepEqual(restored.config().minGapMsByContext, { third: 9 });
  assert.equal(restored.config().minGapMs, 2 ** 31, "fields left out keep the snapshot's");
});

test("acquire returns a Lease with exactly the documented fields; tokens increase", () => {
  const c = clock(T + 0.75); // fractional milliseconds are floored
  const pool = new Pool({ seed: 3, now: c.now, config: { leaseTtlMs: 1234 } });
  for (const v of ["a", "b", "c"]) pool.register("PROXY", v);
  const seen = new Set();
  let last = 0;
  for (let i = 0; i < 3; i++) {
    const lease = pool.acquire("ctx");
    assertLease(lease, { kind: "PROXY", context: "ctx", leasedAt: T, ttl: 1234 });
    assert.ok(lease.token > last, "tokens strictly increase");
    last = lease.token;
    assert.ok(!seen.has(lease.value), "never leased twice at once");
    seen.add(lease.value);
  }
  assert.deepEqual([...seen].sort(), ["a", "b", "c"]);
  assert.equal(pool.acquire("ctx"), null, "nothing left: null, not an error");
  assert.equal(pool.acquire("other"), null, "a lease holds in every context");
});

test("acquire with no candidate returns null and emits ACQUISITION_REJECTED naming only the context", () => {
  const pool = new Pool({ seed: 1, now: () => T });
  pool.drainEvents();
  assert.equal(pool.acquire("nowhere"), null);
  const events = pool.drainEvents();
  assert.equal(events.length, 1);
  assert.deepEqual(events[0], { seq: 1, type: "ACQUISITION_REJECTED", at: T, context: "nowhere" });
});

test("acquireResource leases the named resource, or returns null when it is not available", () => {
  const { pool } = fixture();
  const lease = pool.acquireResource("SESSION", "sess", "probe");
  assertLease(lease, { kind: "SESSION", value: "sess", context: "probe", leasedAt: T });
  assert.equal(pool.acquireResource("SESSION", "sess", "probe"), null, "already leased");
  assert.equal(pool.acquireResource("ACCOUNT", "acct", "probe"), null, "blocked");
  assert.equal(pool.acquireResource("PROXY", "a", "checkout"), null, "cooling there");
  assertLease(pool.acquireResource("PROXY", "a", "elsewhere"), { value: "a", context: "elsewhere" });
});

test("register, deregister, unblock return booleans; report and block return undefined", () => {
  const pool = new Pool({ seed: 1, now: () => T });
  assert.equal(pool.register("PROXY", "x"), true);
  assert.equal(pool.register("PROXY", "x"), false, "idempotent");
  assert.equal(pool.register("ACCOUNT", "x"), true, "another kind is another resource");
  assert.equal(pool.report("PROXY", "x", "c", { ok: true }), undefined);
  assert.equal(pool.report("PROXY", "x", "c", { ok: false, failure: "SLOW", latencyMs: 0 }), undefined);
  assert.equal(pool.unblock("PROXY", "x"), false, "not blocked");
  assert.equal(pool.block("PROXY", "x", { seconds: 0.0001 }), undefined);
  assert.equal(pool.block("PROXY", "x", { permanent: true }), undefined);
  assert.equal(pool.unblock("PROXY", "x"), true);
  assert.equal(pool.deregister("PROXY", "x"), true);
  assert.equal(pool.deregister("PROXY", "x"), false);
  assert.equal(pool.deregister("SESSION", "never"), false);
});

test("renew returns the lease extended, same token; release returns true once", () => {
  const c = clock();
  const pool = new Pool({ seed: 1, now: c.now });
  pool.register("PROXY", "a");
  const lease = pool.acquire("ctx");
  c.t += 10_000;
  const renewed = pool.renew(lease);
  assertLease(renewed, { kind: "PROXY", value: "a", context: "ctx", leasedAt: T, renewed: true });
  assert.equal(renewed.token, lease.token);
  assert.equal(renewed.expiresAt, T + 10_000 + DEFAULT_CONFIG.leaseTtlMs);
  assert.equal(pool.release(renewed), true);
  assert.equal(pool.release(renewed), false);
  assert.equal(pool.renew(renewed), null, "nothing to renew once released");
});

test("resources() returns ResourceView and CellView shapes, with the BLOCKLISTED view and filters", () => {
  const { pool, lease } = fixture();
  pool.block("SESSION", "sess", { permanent: true });
  const views = pool.resources();
  assert.ok(Array.isArray(views));
  assert.deepEqual(
    views.map((v) => `${v.kind}/${v.value}`),
    ["PROXY/a", "PROXY/b", "PROXY/c", "ACCOUNT/acct", "SESSION/sess"],
  );
  const by = Object.fromEntries(views.map((v) => [`${v.kind}/${v.value}`, v]));
  for (const v of views) {
    assert.deepEqual(Object.keys(v).sort(), VIEW_KEYS);
    assert.ok(Array.isArray(v.cells));
    for (const cell of v.cells) {
      assert.deepEqual(Object.keys(cell).sort(), CELL_KEYS);
      assert.equal(typeof cell.context, "string");
      assert.ok(["HEALTHY", "COOLING", "RECOVERING", "BLOCKLISTED"].includes(cell.state));
      for (const f of ["score", "consecutiveFailures", "consecutiveSuccesses", "updatedAt"]) {
        assert.equal(typeof cell[f], "number", f);
      }
    }
  }
  assert.deepEqual(by["PROXY/c"].cells, [], "never reported: no cells");
  assert.equal(by["PROXY/c"].blocked, null);
  assert.equal(by["PROXY/c"].lease, null);
  assert.deepEqual(by["ACCOUNT/acct"].blocked, { until: T + 60_000 });
  assert.deepEqual(by["SESSION/sess"].blocked, { permanent: true });
  assert.deepEqual(by["PROXY/b"].lease, lease);
  assert.deepEqual(by["PROXY/a"].cells, [
    {
      context: "checkout",
      state: "COOLING",
      score: -10,
      consecutiveFailures: 2,
      consecutiveSuccesses: 0,
      cooldownUntil: T + 2 * DEFAULT_CONFIG.cooldownBaseMs.TIMEOUT,
      cooldownCause: "TIMEOUT",
      updatedAt: T,
      pacedUntil: null,
      held: false,
      p50LatencyMs: 40,
      p95LatencyMs: 40,
    },
  ]);
  const b = by["PROXY/b"].cells[0];
  assert.equal(b.state, "HEALTHY");
  assert.equal(b.cooldownUntil, null);
  assert.equal(b.cooldownCause, null);

  // While blocked the cell shows BLOCKLISTED; its stored state shows again after unblock.
  pool.block("PROXY", "a", { seconds: 5 });
  assert.equal(pool.resources().find((v) => v.value === "a").cells[0].state, "BLOCKLISTED");
  assert.deepEqual(
    pool.resources({ state: "BLOCKLISTED" }).map((v) => v.value),
    ["a", "acct", "sess"],
  );
  pool.unblock("PROXY", "a");
  assert.equal(pool.resources().find((v) => v.value === "a").cells[0].state, "COOLING");
  assert.deepEqual(pool.resources({ state: "COOLING" }).map((v) => v.value), ["a"]);
  const search = pool.resources({ context: "search" });
  assert.deepEqual(
    search.flatMap((v) => v.cells.map((c) => `${v.value}@${c.context}`)),
    ["b@search"],
    "a context filter keeps only that context's cells",
  );
  assert.deepEqual(pool.resources({ context: "search", state: "HEALTHY" }).map((v) => v.value), ["b"]);
  assert.deepEqual(pool.resources({}), pool.resources(), "an empty filter filters nothing");
});

test("dueForRecoveryProbe() lists {kind, value, group, context, cooldownUntil}", () => {
  const c = clock();
  const pool = new Pool({ seed: 1, now: c.now, config: { halfOpenCauses: ["BLOCKED"] } });
  pool.register("SESSION", "s");
  pool.report("SESSION", "s", "ctx", { ok: false, failure: "TIMEOUT" });
  pool.report("SESSION", "s", "ctx", { ok: false, failure: "TIMEOUT" });
  assert.deepEqual(pool.dueForRecoveryProbe(), [], "still cooling");
  const until = T + 120_000;
  c.t = until;
  assert.deepEqual(pool.dueForRecoveryProbe(), [{ kind: "SESSION", value: "s", group: null, context: "ctx", cooldownUntil: until }]);
});

test("nextChangeAt() returns now, a future instant, or null", () => {
  const c = clock();
  const pool = new Pool({ seed: 1, now: c.now });
  assert.equal(pool.nextChangeAt("ctx"), null, "no resources");
  pool.register("PROXY", "a");
  assert.equal(pool.nextChangeAt("ctx"), T, "a candidate now");
  const lease = pool.acquire("ctx");
  assert.equal(pool.nextChangeAt("ctx"), lease.expiresAt, "when the lease lapses");
  pool.release(lease);
  pool.block("PROXY", "a", { permanent: true });
  assert.equal(pool.nextChangeAt("ctx"), null, "permanently blocked");
});

test("stats() has every documented field as a non-negative integer, consistent with the pool", () => {
  const { pool } = fixture();
  const s = pool.stats();
  assert.deepEqual(Object.keys(s).sort(), [...STATS_KEYS, "cellsByState"].sort());
  for (const k of STATS_KEYS) assert.ok(Number.isSafeInteger(s[k]) && s[k] >= 0, `${k}: ${s[k]}`);
  assert.deepEqual(s.cellsByState, { HEALTHY: 1, COOLING: 1, RECOVERING: 0 }, "one cell cooled, one healthy");
  assert.equal(s.registered, 5);
  assert.equal(s.cells, 2);
  assert.equal(s.contexts, 2);
  assert.equal(s.leased, 1);
  assert.equal(s.blocked, 1);
  assert.equal(s.fencingHighWater, 1);
  assert.equal(s.eventsDropped, 0);
  assert.equal(s.now, T);
  assert.equal(s.eventsPending, s.nextEventSeq - 1, "nothing drained yet");
  assert.equal(s.revision, JSON.parse(pool.snapshot()).revision);
});

test("drainEvents() objects print as the engine's event JSON: key order, redaction, any Unicode", () => {
  // The engine hands events over packed (numbers plus a string table cut by UTF-16 lengths);
  // this pins what hosts write to logs and streams with JSON.stringify.
  let t = T;
  const pool = new Pool({ seed: 1, now: () => t });
  const crab = "http://🦀:s3cret@proxy-é.example.net:8080";
  pool.register("PROXY", crab);
  pool.register("SESSION", "tab-𝄞");
  const lease = pool.acquireResource("PROXY", crab, "checkout-ü");
  pool.report("PROXY", crab, "checkout-ü", { ok: false, failure: "TIMEOUT" });
  pool.report("PROXY", crab, "checkout-ü", { ok: false, failure: "TIMEOUT" });
  pool.release(lease);
  pool.block("SESSION", "tab-𝄞", { permanent: true });
  t += 5;
  assert.equal(pool.acquire("checkout-ü"), null);
  const shown = "http://🦀:***@proxy-é.example.net:8080";
  assert.deepEqual(
    pool.drainEvents().map((e) => JSON.stringify(e)),
    [
      `{"seq":1,"type":"RESOURCE_REGISTERED","at":${T},"kind":"PROXY","value":"${shown}","group":null}`,
      `{"seq":2,"type":"RESOURCE_REGISTERED","at":${T},"kind":"SESSION","value":"***","group":null}`,
      `{"seq":3,"type":"RESOURCE_LEASED","at":${T},"kind":"PROXY","value":"${shown}","context":"checkout-ü","until":${T + 30_000},"token":1}`,
      `{"seq":4,"type":"RESOURCE_COOLED","at":${T},"kind":"PROXY","value":"${shown}","context":"checkout-ü","cause":"TIMEOUT","until":${T + 120_000}}`,
      `{"seq":5,"type":"LEASE_RELEASED","at":${T},"kind":"PROXY","value":"${shown}","context":"checkout-ü","token":1}`,
      `{"seq":6,"type":"RESOURCE_BLOCKLISTED","at":${T},"kind":"SESSION","value":"***","permanent":true}`,
      `{"seq":7,"type":"ACQUISITION_REJECTED","at":${T + 5},"context":"checkout-ü"}`,
    ],
  );
  assert.deepEqual(pool.drainEvents(), []);
  pool.free();
});

test("report, renew and release reach the right resource whichever lease came last, also after re-registration", () => {
  // The wrapper names resources by cached handles (the last lease's, or any it has seen);
  // none of that may change which resource a call reaches.
  const pool = new Pool({ seed: 3, now: () => T });
  pool.register("PROXY", "a");
  pool.register("PROXY", "b");
  const a1 = pool.acquireResource("PROXY", "a", "x");
  assert.equal(pool.release(a1), true);
  const b = pool.acquireResource("PROXY", "b", "x"); // the last lease is now b's
  const a2 = pool.acquireResource("PROXY", "a", "y"); // and now a's again
  pool.report("PROXY", "b", "x", { ok: true });
  pool.report("PROXY", "a", "x", { ok: false, failure: "SLOW" });
  const score = (v, ctx) => pool.resources({ context: ctx }).find((r) => r.value === v).cells[0].score;
  assert.equal(score("b", "x"), 5);
  assert.equal(score("a", "x"), -2);
  assert.equal(pool.release(a1), false, "a's first lease is over");
  assert.notEqual(pool.renew(b), null);
  assert.equal(pool.release(b), true);
  assert.equal(pool.deregister("PROXY", "a"), true);
  assert.equal(pool.release(a2), false, "gone with its resource");
  pool.register("PROXY", "a");
  const a3 = pool.acquireResource("PROXY", "a", "y");
  assert.ok(a3.token > a2.token);
  assert.equal(pool.release(a2), false, "an old lease does not release the new one");
  pool.report("PROXY", "a", "y", { ok: true });
  assert.equal(score("a", "y"), 5, "a new resource: its cells start afresh");
  assert.equal(pool.release(a3), true);
  pool.free();
});

test("drainEvents() returns PoolEvents in seq order from 1, each once", () => {
  const { pool, lease } = fixture();
  pool.release(lease);
  const events = pool.drainEvents();
  assert.equal(events.length, 9, "5 registered, cooled, blocklisted, leased, released");
  events.forEach((e, i) => {
    assert.equal(e.seq, i + 1, "consecutive from 1");
    for (const k of Object.keys(e)) assert.ok(EVENT_KEYS.has(k), `unexpected event field ${k}`);
    assert.equal(typeof e.type, "string");
    assert.equal(e.at, T);
    if ("kind" in e) assert.ok(KINDS.includes(e.kind));
    if ("cause" in e) assert.ok(FAILURES.includes(e.cause));
    if ("until" in e) assert.ok(Number.isSafeInteger(e.until));
    if ("permanent" in e) assert.equal(e.permanent, true);
  });
  const types = events.map((e) => e.type);
  for (const t of ["RESOURCE_REGISTERED", "RESOURCE_COOLED", "RESOURCE_BLOCKLISTED", "RESOURCE_LEASED", "LEASE_RELEASED"]) {
    assert.ok(types.includes(t), t);
  }
  const cooled = events.find((e) => e.type === "RESOURCE_COOLED");
  assert.deepEqual(
    { kind: cooled.kind, value: cooled.value, context: cooled.context, cause: cooled.cause, until: cooled.until },
    { kind: "PROXY", value: "a", context: "checkout", cause: "TIMEOUT", until: T + 120_000 },
  );
  assert.deepEqual(pool.drainEvents(), [], "drained");
  pool.register("PROXY", "z");
  assert.equal(pool.drainEvents()[0].seq, events.length + 1, "seq continues");
});

test("snapshot() is canonical JSON and Pool.restore reproduces it byte for byte", () => {
  const { pool } = fixture();
  const text = pool.snapshot();
  assert.equal(typeof text, "string");
  const doc = JSON.parse(text);
  assert.equal(doc.format, "repute-snapshot");
  assert.equal(doc.version, 3);
  assert.equal(doc.takenAt, T);
  assert.equal(pool.snapshot(), text, "same state, same bytes");
  const restored = Pool.restore(text, { seed: 1, now: () => T });
  assert.equal(restored.snapshot(), text);
  assert.deepEqual(restored.config(), pool.config());
  assert.equal(restored.stats().leased, 0, "leases are not persisted");
  const lease = restored.acquireResource("PROXY", "c", "x");
  assert.ok(lease.token > JSON.parse(text).fencingHighWater, "tokens keep increasing across a restore");
});

test("Pool.restore(json, {atLeast}) raises the counters to a host's floor and changes nothing else", () => {
  const { pool } = fixture();
  const text = pool.snapshot();
  const strip = (t) => {
    const { revision, fencingHighWater, nextEventSeq, ...rest } = JSON.parse(t);
    return rest;
  };
  const floor = { revision: 900, fencingHighWater: 7_000, nextEventSeq: 8_000 };
  const lifted = Pool.restore(text, { seed: 1, now: () => T, atLeast: floor });
  const s = lifted.stats();
  assert.deepEqual([s.revision, s.fencingHighWater, s.nextEventSeq], [900, 7_000, 8_000]);
  assert.deepEqual(strip(lifted.snapshot()), strip(text));
  assert.equal(lifted.acquireResource("PROXY", "c", "x").token, 7_001);
  assert.equal(lifted.drainEvents()[0].seq, 8_000);
  // Below the snapshot's own counters, or empty: the same bytes.
  assert.equal(Pool.restore(text, { seed: 1, now: () => T, atLeast: { revision: 1, fencingHighWater: 0 } }).snapshot(), text);
  assert.equal(Pool.restore(text, { seed: 1, now: () => T, atLeast: {} }).snapshot(), text);
  for (const [atLeast, message] of [
    [5, /atLeast must be an object/],
    [{ fencing: 3 }, /unknown atLeast field fencing/],
    [{ revision: "3" }, /atLeast.revision must be a number/],
    [{ nextEventSeq: 1.5 }, /minNextEventSeq/],
    [{ fencingHighWater: 2 ** 53 }, /minFencingHighWater/],
  ]) {
    assert.throws(() => Pool.restore(text, { seed: 1, atLeast }), (e) => e.code === "INVALID_ARGUMENT" && message.test(e.message), String(atLeast));
  }
  assert.throws(() => new Pool({ seed: 1, atLeast: {} }), (e) => e.code === "INVALID_ARGUMENT" && /unknown option atLeast/.test(e.message));
});

// ---------------------------------------------------------------------------------------------
// Errors

test("every error code comes as a real Error with a stable code, never a string", () => {
  const pool = new Pool({ seed: 1, now: () => T, config: { maxResources: 1 } });
  pool.register("PROXY", "a");
  const cases = [
    ["INVALID_ARGUMENT", () => pool.register("PROXY", "")],
    ["INVALID_CONFIG", () => new Pool({ seed: 1, config: { coolAfter: 0 } })],
    ["INVALID_SNAPSHOT", () => Pool.restore("{")],
    ["UNSUPPORTED_SNAPSHOT_VERSION", () => Pool.restore(pool.snapshot().replace('"version":3', '"version":4'))],
    ["CAPACITY_EXCEEDED", () => pool.register("PROXY", "b")],
    ["UNKNOWN_RESOURCE", () => pool.unblock("PROXY", "zz")],
  ];
  for (const [code, fn] of cases) {
    const err = expectCode(fn, code);
    assert.equal(err.name, "Error");
    assert.equal(typeof err.stack, "string");
    // Same input, same code: stable.
    assert.equal(expectCode(fn, code).code, code);
  }
});

/** Values of wrong types where a string is expected. */
const NOT_STRINGS = [undefined, null, 42, 0, NaN, true, {}, [], ["a"], new String("a"), 1n, Symbol("s"), () => "a"];

test("wrong types where strings are expected → INVALID_ARGUMENT, and nothing changes", () => {
  const { pool, lease } = fixture();
  const ok = { ok: true };
  for (const bad of NOT_STRINGS) {
    const calls = {
      "register kind": () => pool.register(bad, "a"),
      "register value": () => pool.register("PROXY", bad),
      "deregister kind": () => pool.deregister(bad, "a"),
      "deregister value": () => pool.deregister("PROXY", bad),
      "acquire context": () => pool.acquire(bad),
      "acquireResource kind": () => pool.acquireResource(bad, "c", "x"),
      "acquireResource value": () => pool.acquireResource("PROXY", bad, "x"),
      "acquireResource context": () => pool.acquireResource("PROXY", "c", bad),
      "report kind": () => pool.report(bad, "a", "x", ok),
      "report value": () => pool.report("PROXY", bad, "x", ok),
      "report context": () => pool.report("PROXY", "a", bad, ok),
      "renew lease.kind": () => pool.renew({ ...lease, kind: bad }),
      "renew lease.value": () => pool.renew({ ...lease, value: bad }),
      "renew lease.context": () => pool.renew({ ...lease, context: bad }),
      "release lease.kind": () => pool.release({ ...lease, kind: bad }),
      "release lease.value": () => pool.release({ ...lease, value: bad }),
      "release lease.context": () => pool.release({ ...lease, context: bad }),
      "block kind": () => pool.block(bad, "a", { seconds: 1 }),
      "block value": () => pool.block("PROXY", bad, { seconds: 1 }),
      "unblock kind": () => pool.unblock(bad, "acct"),
      "unblock value": () => pool.unblock("ACCOUNT", bad),
      "nextChangeAt context": () => pool.nextChangeAt(bad),
      "Pool.restore snapshotJson": () => Pool.restore(bad),
    };
    if (bad !== undefined) {
      calls["resources filter.context"] = () => pool.resources({ context: bad });
      calls["resources filter.state"] = () => pool.resources({ state: bad });
    }
    for (const [label, fn] of Object.entries(calls)) {
      expectUnchanged(pool, fn, "INVALID_ARGUMENT", undefined, `${label} = ${typeof bad}`);
    }
  }
  // Wrong types where objects are expected.
  for (const bad of [undefined, null, 42, "x", true, [], () => ({})]) {
    expectUnchanged(pool, () => pool.report("PROXY", "a", "x", bad), "INVALID_ARGUMENT", undefined, "outcome");
    expectUnchanged(pool, () => pool.renew(bad), "INVALID_ARGUMENT", undefined, "renew lease");
    expectUnchanged(pool, () => pool.release(bad), "INVALID_ARGUMENT", undefined, "release lease");
    expectUnchanged(pool, () => pool.block("PROXY", "a", bad), "INVALID_ARGUMENT", undefined, "block spec");
    if (bad !== undefined) {
      expectUnchanged(pool, () => pool.resources(bad), "INVALID_ARGUMENT", undefined, "resources filter");
    }
  }
  expectUnchanged(pool, () => pool.resources({ state: "FOO" }), "INVALID_ARGUMENT", undefined, "unknown state");
  expectUnchanged(pool, () => pool.resources({ kind: "PROXY" }), "INVALID_ARGUMENT", undefined, "unknown filter");
});

test("unknown kinds → INVALID_ARGUMENT in every method, and nothing changes", () => {
  const { pool, lease } = fixture();
  for (const kind of ["FOO", "proxy", "Proxy", "", " PROXY", "PROXY ", "PROXIES"]) {
    const calls = {
      register: () => pool.register(kind, "a"),
      deregister: () => pool.deregister(kind, "a"),
      acquireResource: () => pool.acquireResource(kind, "c", "x"),
      report: () => pool.report(kind, "a", "x", { ok: true }),
      renew: () => pool.renew({ ...lease, kind }),
      release: () => pool.release({ ...lease, kind }),
      block: () => pool.block(kind, "a", { seconds: 1 }),
      unblock: () => pool.unblock(kind, "acct"),
    };
    for (const [label, fn] of Object.entries(calls)) {
      expectUnchanged(pool, fn, "INVALID_ARGUMENT", /kind/, `${label}(${JSON.stringify(kind)})`);
    }
  }
});

test(
  "kind names inherited from Object.prototype are unknown kinds too",
  () => {
    const { pool } = fixture();
    for (const kind of ["toString", "constructor", "valueOf", "__proto__", "hasOwnProperty"]) {
      expectUnchanged(pool, () => pool.register(kind, "zzz"), "INVALID_ARGUMENT", /kind/, `register(${kind})`);
      expectUnchanged(pool, () => pool.report(kind, "a", "x", { ok: true }), "INVALID_ARGUMENT", /kind/, `report(${kind})`);
    }
  },
);

test("unknown failure types → INVALID_ARGUMENT, and nothing changes", () => {
  const { pool } = fixture();
  for (const failure of ["FOO", "slow", "Slow", "", " SLOW", "SUCCESS", 1, 0, null, undefined, {}, true]) {
    expectUnchanged(
      pool,
      () => pool.report("PROXY", "a", "x", { ok: false, failure }),
      "INVALID_ARGUMENT",
      /failure/,
      `failure ${String(failure)}`,
    );
  }
});

test(
  "failure type names inherited from Object.prototype are unknown failure types too",
  () => {
    const { pool } = fixture();
    for (const failure of ["toString", "constructor", "valueOf", "__proto__"]) {
      expectUnchanged(
        pool,
        () => pool.report("PROXY", "c", "x", { ok: false, failure }),
        "INVALID_ARGUMENT",
        /failure/,
        `failure ${failure}`,
      );
    }
  },
);

/** Blank per Rust's char::is_whitespace (Unicode White_Space). */
const BLANKS = ["", " ", "   ", "\t", "\n", "\r\n", "\u000b\u000c", "\u0085", "\u00a0", "\u1680", "\u2003", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", " \u00a0\t"];

test("a context that holds a credential (user:pass@host, a URL with userinfo, token@host:port, host:port:user:pass) → INVALID_ARGUMENT naming the field, quoting nothing", () => {
  // Contexts are shown as they are (events, metric labels, leases): a credential in one would
  // show everywhere (issue 26). An e-mail address, a URL without userinfo, `a:b` are names.
  const { pool, lease } = fixture();
  for (const ctx of ["shopper:pw9SeKrit@shop.example", "https://shopper:pw9SeKrit@shop.example/cart", "pw9SeKrit@gate.example:8080", "socks5://pw9SeKrit@10.0.0.1:1080", "gate.example.net:8080:shopper:pw9SeKrit", "shopper:pw9SeKrit:10.0.0.1:1080"]) {
    const calls = {
      acquire: () => pool.acquire(ctx),
      acquireResource: () => pool.acquireResource("PROXY", "c", ctx),
      report: () => pool.report("PROXY", "a", ctx, { ok: true }),
      "finish next.context": () => pool.finish(lease, { ok: true }, { next: { context: ctx } }),
      nextChangeAt: () => pool.nextChangeAt(ctx),
      "resources filter.context": () => pool.resources({ context: ctx }),
    };
    for (const [name, fn] of Object.entries(calls)) {
      expectUnchanged(pool, fn, "INVALID_ARGUMENT", /^context must not hold a credential/, `${name} ${ctx}`);
      try {
        fn();
      } catch (e) {
        assert.doesNotMatch(e.message, /SeKrit/, `${name}: the message quotes nothing of the context`);
      }
    }
  }
  for (const ctx of ["alice@example.com", "shop:eu", "shop.example:443", "https://shop.example/checkout?q=1", "checkout-us"]) {
    pool.register("PROXY", `p-${ctx}`);
    assert.equal(pool.acquireResource("PROXY", `p-${ctx}`, ctx)?.context, ctx, `${ctx} is a name`);
  }
});

test("blank and whitespace-only values and contexts → INVALID_ARGUMENT, and nothing changes", () => {
  const { pool } = fixture();
  for (const blank of BLANKS) {
    const label = JSON.stringify(blank);
    const calls = {
      "register value": () => pool.register("PROXY", blank),
      "deregister value": () => pool.deregister("PROXY", blank),
      "acquire context": () => pool.acquire(blank),
      "acquireResource value": () => pool.acquireResource("PROXY", blank, "x"),
      "acquireResource context": () => pool.acquireResource("PROXY", "c", blank),
      "report value": () => pool.report("PROXY", blank, "x", { ok: true }),
      "report context": () => pool.report("PROXY", "a", blank, { ok: true }),
      "block value": () => pool.block("PROXY", blank, { seconds: 1 }),
      "unblock value": () => pool.unblock("PROXY", blank),
      "nextChangeAt context": () => pool.nextChangeAt(blank),
      "resources filter.context": () => pool.resources({ context: blank }),
    };
    for (const [name, fn] of Object.entries(calls)) {
      expectUnchanged(pool, fn, "INVALID_ARGUMENT", /blank|empty/, `${name} ${label}`);
    }
  }
});

test("characters outside White_Space are not blank, but format characters are refused (zero-width space, BOM)", () => {
  const pool = new Pool({ seed: 1, now: () => T });
  for (const v of ["\u200b", "\ufeff", "a\u200bb"]) {
    assert.throws(() => pool.register("PROXY", v), (e) => e.code === "INVALID_ARGUMENT" && /^value must not contain control or format/.test(e.message));
    assert.throws(() => pool.acquire(v), (e) => e.code === "INVALID_ARGUMENT" && /^context must not contain control or format/.test(e.message));
  }
  assert.equal(pool.stats().registered, 0);
});

test("value over 1024 UTF-8 bytes and context over 256 → INVALID_ARGUMENT (bytes, not characters)", () => {
  const { pool } = fixture();
  const longValues = ["v".repeat(1025), "é".repeat(513), "😀".repeat(256) + "x"]; // 1025, 1026, 1025 bytes
  for (const v of longValues) {
    assert.ok(v.length <= 1025);
    expectUnchanged(pool, () => pool.register("PROXY", v), "INVALID_ARGUMENT", /1024/, `register ${v.length} chars`);
    expectUnchanged(pool, () => pool.report("PROXY", v, "x", { ok: true }), "INVALID_ARGUMENT", /1024/, "report");
  }
  const longContexts = ["c".repeat(257), "é".repeat(129), "😀".repeat(64) + "x"];
  for (const ctx of longContexts) {
    expectUnchanged(pool, () => pool.acquire(ctx), "INVALID_ARGUMENT", /256/, `acquire ${ctx.length} chars`);
    expectUnchanged(pool, () => pool.report("PROXY", "a", ctx, { ok: true }), "INVALID_ARGUMENT", /256/, "report");
    expectUnchanged(pool, () => pool.acquireResource("PROXY", "c", ctx), "INVALID_ARGUMENT", /256/, "acquireResource");
  }
  // Exactly at the limits is fine.
  for (const v of ["v".repeat(1024), "é".repeat(512), "😀".repeat(256)]) {
    assert.equal(pool.register("SESSION", v), true);
    const lease = pool.acquireResource("SESSION", v, "é".repeat(128));
    assert.equal(lease.value, v);
    assert.equal(lease.context, "é".repeat(128));
  }
  assert.equal(pool.acquire("c".repeat(256)).context, "c".repeat(256));
});

test(
  "a value that is not valid Unicode (a lone surrogate) is rejected or kept exactly",
  () => {
    const pool = new Pool({ seed: 1, now: () => T });
    let first;
    try {
      first = pool.register("PROXY", "a\ud800b");
    } catch (e) {
      assert.equal(e.code, "INVALID_ARGUMENT");
      return;
    }
    assert.equal(first, true);
    assert.equal(pool.register("PROXY", "a\udc00b"), true, "a different value is a different resource");
    assert.equal(pool.acquireResource("PROXY", "a\ud800b", "x").value, "a\ud800b");
  },
);

test("latencyMs NaN, ±Infinity, negative or not a number → INVALID_ARGUMENT; 0 and fractions are fine", () => {
  const { pool } = fixture();
  for (const latencyMs of [NaN, Infinity, -Infinity, -1, -0.001, "5", null, true, 5n, {}]) {
    for (const outcome of [{ ok: true, latencyMs }, { ok: false, failure: "SLOW", latencyMs }]) {
      expectUnchanged(pool, () => pool.report("PROXY", "c", "x", outcome), "INVALID_ARGUMENT", /latency/, `latencyMs ${String(latencyMs)}`);
    }
  }
  pool.report("PROXY", "c", "lat", { ok: true, latencyMs: 0 });
  pool.report("PROXY", "c", "lat", { ok: false, failure: "SLOW", latencyMs: 12.5 });
  const cell = pool.resources({ context: "lat" }).find((v) => v.value === "c").cells[0];
  assert.equal(cell.p50LatencyMs, 0);
  assert.equal(cell.p95LatencyMs, 12.5);
});

test("outcomes with unknown fields, a non-boolean ok, or a failure on a success → INVALID_ARGUMENT", () => {
  const { pool } = fixture();
  const bad = [
    {},
    { ok: true, extra: 1 },
    { ok: true, latency: 5 },
    { ok: false, failure: "SLOW", reason: "x" },
    { ok: 1 },
    { ok: 0, failure: "SLOW" },
    { ok: "true" },
    { ok: "false", failure: "SLOW" },
    { ok: null },
    { ok: undefined },
    { ok: true, failure: "SLOW" },
    { ok: false },
    { failure: "SLOW" },
  ];
  for (const outcome of bad) {
    expectUnchanged(pool, () => pool.report("PROXY", "a", "x", outcome), "INVALID_ARGUMENT", undefined, JSON.stringify(outcome));
  }
});

test("block with a bad spec → INVALID_ARGUMENT, and nothing changes", () => {
  const { pool } = fixture();
  const bad = [
    { seconds: NaN },
    { seconds: 0 },
    { seconds: -0 },
    { seconds: -1 },
    { seconds: Infinity },
    { seconds: "5" },
    { seconds: null },
    {},
    { seconds: 1, permanent: true },
    { permanent: false },
    { permanent: "true" },
    { permanent: 1 },
    { seconds: 1, extra: 1 },
    { until: T + 1000 },
    { seconds: 2 ** 52 },
  ];
  for (const how of bad) {
    for (const [kind, value] of [["PROXY", "a"], ["ACCOUNT", "acct"]]) {
      expectUnchanged(pool, () => pool.block(kind, value, how), "INVALID_ARGUMENT", undefined, `${value} ${JSON.stringify(how)}`);
    }
  }
  // Fractional seconds: rounded to ms, at least 1 ms.
  pool.block("PROXY", "c", { seconds: 0.0001 });
  assert.deepEqual(pool.resources().find((v) => v.value === "c").blocked, { until: T + 1 });
  pool.block("PROXY", "c", { seconds: 1.2345 });
  assert.deepEqual(pool.resources().find((v) => v.value === "c").blocked, { until: T + 1235 });
});

test("renew and release with a tampered lease → INVALID_ARGUMENT, and nothing changes", () => {
  const { pool, lease } = fixture();
  const tampered = [];
  // `group` is what the lease says, not what names it: a lease without one (kept by a host from
  // before groups) still names its resource.
  for (const f of LEASE_KEYS.filter((k) => k !== "group")) {
    const copy = { ...lease };
    delete copy[f];
    tampered.push([`without ${f}`, copy]);
  }
  for (const token of [String(lease.token), -1, 0, -0.5, 1.5, lease.token + 0.5, NaN, Infinity, 2 ** 53, null, BigInt(lease.token)]) {
    tampered.push([`token ${String(token)}`, { ...lease, token }]);
  }
  for (const leasedAt of [-1, 1.5, "0", NaN]) tampered.push([`leasedAt ${leasedAt}`, { ...lease, leasedAt }]);
  for (const expiresAt of [-1, 1.5, "0", Infinity]) tampered.push([`expiresAt ${expiresAt}`, { ...lease, expiresAt }]);
  tampered.push(['kind "FOO"', { ...lease, kind: "FOO" }]);
  tampered.push(['kind "proxy"', { ...lease, kind: "proxy" }]);
  for (const [label, bad] of tampered) {
    expectUnchanged(pool, () => pool.renew(bad), "INVALID_ARGUMENT", undefined, `renew ${label}`);
    expectUnchanged(pool, () => pool.release(bad), "INVALID_ARGUMENT", undefined, `release ${label}`);
  }
  // The real lease is untouched by all that.
  const { group, ...withoutGroup } = lease;
  assert.equal(group, null);
  assert.equal(pool.renew(withoutGroup)?.token, lease.token, "a lease without group renews");
  assert.equal(pool.release(lease), true);
});

test(
  "renew and release with a blank or over-long value or context → INVALID_ARGUMENT like every other method",
  () => {
    const { pool, lease } = fixture();
    for (const [label, bad] of [
      ["blank value", { ...lease, value: " " }],
      ["blank context", { ...lease, context: "" }],
      ["over-long value", { ...lease, value: "v".repeat(1025) }],
      ["over-long context", { ...lease, context: "c".repeat(257) }],
    ]) {
      expectUnchanged(pool, () => pool.renew(bad), "INVALID_ARGUMENT", /blank|1024|256/, `renew ${label}`);
      expectUnchanged(pool, () => pool.release(bad), "INVALID_ARGUMENT", /blank|1024|256/, `release ${label}`);
    }
  },
);

test("a lease given back as a copy (JSON round trip) renews and releases", () => {
  const { pool, lease } = fixture();
  const copy = JSON.parse(JSON.stringify(lease));
  assert.notEqual(copy, lease);
  const renewed = pool.renew(copy);
  assert.deepEqual(renewed, lease, "same clock: same lease");
  assert.equal(pool.release(JSON.parse(JSON.stringify(renewed))), true);
  assert.equal(pool.resources().find((v) => v.value === "b").lease, null);
  assert.equal(pool.release(lease), false, "already released");
});

test("a tampered copy naming another valid token, context or resource does nothing", () => {
  const { pool, lease } = fixture();
  const other = pool.acquireResource("PROXY", "c", "search");
  const before = observe(pool);
  const fakes = [
    { ...lease, token: lease.token + 1 },
    { ...lease, token: other.token },
    { ...lease, token: lease.token + 1000 },
    { ...lease, context: "checkout" },
    { ...lease, value: "a" },
    { ...lease, kind: "ACCOUNT" },
    { ...other, value: lease.value },
  ];
  for (const fake of fakes) {
    assert.equal(pool.renew(fake), null, JSON.stringify(fake));
    assert.equal(pool.release(fake), false, JSON.stringify(fake));
  }
  assert.deepEqual(observe(pool), before, "a refused renew/release changes nothing");
  assert.equal(pool.release(lease), true);
  assert.equal(pool.release(other), true);
});

test("options: unknown key, random with seed, bad seed, now or random not a function → INVALID_ARGUMENT", () => {
  const snap = fixture().pool.snapshot();
  const bad = [
    null,
    "x",
    42,
    [],
    { clock: () => T },
    { seed: 1, Seed: 2 },
    { seed: 1, random: () => 0.5 },
    { seed: 1, now: T },
    { seed: 1, now: "Date.now" },
    { seed: 1, now: null },
    { random: 0.5 },
    { random: null },
  ];
  for (const seed of [-1, 1.5, NaN, Infinity, 2 ** 53, Number.MAX_VALUE, "1", null, 1n, true]) bad.push({ seed });
  for (const options of bad) {
    const label = describe(options);
    expectCode(() => new Pool(options), "INVALID_ARGUMENT", undefined, label);
    expectCode(() => Pool.restore(snap, options), "INVALID_ARGUMENT", undefined, label);
  }
  // The edges that are fine.
  for (const seed of [0, 1, Number.MAX_SAFE_INTEGER]) assert.ok(new Pool({ seed }));
  assert.ok(new Pool({}));
  assert.ok(new Pool(undefined));
  assert.ok(new Pool({ random: () => 0.5, now: () => T, config: {} }));
});

test("config that is not an object → INVALID_CONFIG", () => {
  const snap = fixture().pool.snapshot();
  for (const config of [null, "{}", 42, true, [], [["coolAfter", 3]], () => ({})]) {
    expectCode(() => new Pool({ seed: 1, config }), "INVALID_CONFIG", /config/);
    expectCode(() => Pool.restore(snap, { seed: 1, config }), "INVALID_CONFIG", /config/);
  }
});

test("config with an unknown key or an out-of-range value → INVALID_CONFIG naming the field", () => {
  const snap = fixture().pool.snapshot();
  const cases = [
    [{ foo: 1 }, /foo/],
    [{ CoolAfter: 3 }, /CoolAfter/],
    [{ penalties: { FOO: 1 } }, /penalties\.FOO/],
    [{ cooldownBaseMs: { slow: 1 } }, /cooldownBaseMs\.slow/],
    [{ coolAfter: 0 }, /coolAfter/],
    [{ coolAfter: 1001 }, /coolAfter/],
    [{ coolAfter: 2.5 }, /coolAfter/],
    [{ coolAfter: "3" }, /coolAfter/],
    [{ recoverAfter: 0 }, /recoverAfter/],
    [{ recoverAfter: 1001 }, /recoverAfter/],
    [{ successReward: -1 }, /successReward/],
    [{ successReward: 200.5 }, /successReward/],
    [{ penalties: { SLOW: 201 } }, /penalties\.SLOW/],
    [{ penalties: { BLOCKED: -0.5 } }, /penalties\.BLOCKED/],
    [{ penalties: 5 }, /penalties/],
    [{ cooldownBaseMs: { BLOCKED: 0 } }, /cooldownBaseMs\.BLOCKED/],
    [{ cooldownBaseMs: { TIMEOUT: 2 ** 31 + 1 } }, /cooldownBaseMs\.TIMEOUT/],
    [{ cooldownBaseMs: { TIMEOUT: 1000.5 } }, /cooldownBaseMs\.TIMEOUT/],
    [{ maxBackoffExponent: 22 }, /maxBackoffExponent/],
    [{ maxBackoffExponent: -1 }, /maxBackoffExponent/],
    [{ explorationFloor: 0 }, /explorationFloor/],
    [{ explorationFloor: -1 }, /explorationFloor/],
    [{ explorationFloor: 1e6 + 1 }, /explorationFloor/],
    [{ leaseTtlMs: 0 }, /leaseTtlMs/],
    [{ leaseTtlMs: 1.5 }, /leaseTtlMs/],
    [{ leaseTtlMs: 2 ** 31 + 1 }, /leaseTtlMs/],
    [{ windowSize: 0 }, /windowSize/],
    [{ windowSize: 1025 }, /windowSize/],
    [{ halfOpenCauses: ["SLOW", "SLOW"] }, /halfOpenCauses/],
    [{ halfOpenCauses: ["FOO"] }, /halfOpenCauses/],
    [{ halfOpenCauses: "SLOW" }, /halfOpenCauses/],
    [{ maxResources: 0 }, /maxResources/],
    [{ maxResources: 1e7 + 1 }, /maxResources/],
    [{ maxCells: 0 }, /maxCells/],
    [{ maxCells: 1e8 + 1 }, /maxCells/],
    [{ eventBufferSize: 0 }, /eventBufferSize/],
    [{ eventBufferSize: 1e7 + 1 }, /eventBufferSize/],
    [{ minGapMs: -1 }, /minGapMs/],
    [{ minGapMs: 2 ** 31 + 1 }, /minGapMs/],
    [{ minGapMs: 0.5 }, /minGapMs/],
    [{ minGapMsByContext: { shop: 2 ** 31 + 1 } }, /minGapMsByContext\.shop/],
    [{ minGapMsByContext: { " ": 1 } }, /minGapMsByContext/],
    [{ minGapMsByContext: Object.fromEntries(Array.from({ length: 4097 }, (_, i) => [`c${i}`, 1])) }, /minGapMsByContext/],
    [{ minGapMsByContext: [] }, /minGapMsByContext/],
    [{ maxCoolingPercent: 0 }, /maxCoolingPercent/],
    [{ maxCoolingPercent: 101 }, /maxCoolingPercent/],
  ];
  for (const [config, field] of cases) {
    const label = JSON.stringify(config);
    try {
      expectCode(() => new Pool({ seed: 1, config }), "INVALID_CONFIG", field);
      expectCode(() => Pool.restore(snap, { seed: 1, config }), "INVALID_CONFIG", field);
    } catch (e) {
      e.message = `${label}: ${e.message}`;
      throw e;
    }
  }
});

test(
  "config values JSON cannot carry (NaN, ±Infinity, functions, BigInt) → INVALID_CONFIG, not a silent default",
  () => {
    const cases = [
      [{ coolAfter: NaN }, /coolAfter/],
      [{ explorationFloor: Infinity }, /explorationFloor/],
      [{ successReward: -Infinity }, /successReward/],
      [{ penalties: { SLOW: NaN } }, /penalties\.SLOW/],
      [{ leaseTtlMs: () => 1000 }, /leaseTtlMs/],
      [{ coolAfter: 3n }, /coolAfter/],
    ];
    for (const [config, field] of cases) {
      expectCode(() => new Pool({ seed: 1, config }), "INVALID_CONFIG", field);
    }
  },
);

test("CAPACITY_EXCEEDED past maxResources or maxCells, and nothing changes", () => {
  const pool = new Pool({ seed: 1, now: () => T, config: { maxResources: 2, maxCells: 2 } });
  pool.register("PROXY", "a");
  pool.register("PROXY", "b");
  expectUnchanged(pool, () => pool.register("PROXY", "c"), "CAPACITY_EXCEEDED", /maxResources/, "register");
  assert.equal(pool.register("PROXY", "a"), false, "re-registering an existing one is fine at capacity");
  pool.report("PROXY", "a", "x", { ok: true });
  pool.report("PROXY", "a", "y", { ok: true });
  pool.report("PROXY", "a", "y", { ok: false, failure: "SLOW" }); // existing cell: fine
  expectUnchanged(pool, () => pool.report("PROXY", "b", "x", { ok: true }), "CAPACITY_EXCEEDED", /maxCells/, "report");
});

test("UNKNOWN_RESOURCE for report, block, unblock, acquireResource on an unregistered resource", () => {
  const { pool } = fixture();
  const calls = {
    report: () => pool.report("PROXY", "zz", "x", { ok: true }),
    "report, kind differs": () => pool.report("ACCOUNT", "a", "x", { ok: true }),
    block: () => pool.block("PROXY", "zz", { seconds: 1 }),
    "block permanent": () => pool.block("ACCOUNT", "zz", { permanent: true }),
    unblock: () => pool.unblock("PROXY", "zz"),
    acquireResource: () => pool.acquireResource("PROXY", "zz", "x"),
  };
  for (const [label, fn] of Object.entries(calls)) expectUnchanged(pool, fn, "UNKNOWN_RESOURCE", /zz|a/, label);
});

test("a failed call changes nothing: snapshot, revision and event counter stay put", () => {
  const { pool, lease } = fixture();
  pool.drainEvents();
  const snapshot = pool.snapshot();
  const { revision, nextEventSeq, fencingHighWater } = pool.stats();
  const failing = [
    () => pool.register("PROXY", " "),
    () => pool.register("PROXY", "x".repeat(2000)),
    () => pool.acquire(""),
    () => pool.acquireResource("PROXY", "nope", "x"),
    () => pool.report("PROXY", "nope", "x", { ok: true }),
    () => pool.report("PROXY", "a", "x", { ok: false, failure: "NOPE" }),
    () => pool.report("PROXY", "a", "x", { ok: true, latencyMs: -5 }),
    () => pool.block("PROXY", "a", { seconds: 0 }),
    () => pool.block("PROXY", "nope", { permanent: true }),
    () => pool.unblock("PROXY", "nope"),
    () => pool.renew({ ...lease, token: -1 }),
    () => pool.release({ ...lease, kind: "FOO" }),
  ];
  for (const fn of failing) {
    assert.throws(fn, (e) => e instanceof Error && typeof e.code === "string");
  }
  assert.equal(pool.snapshot(), snapshot);
  assert.deepEqual(
    (({ revision, nextEventSeq, fencingHighWater }) => ({ revision, nextEventSeq, fencingHighWater }))(pool.stats()),
    { revision, nextEventSeq, fencingHighWater },
  );
  assert.deepEqual(pool.drainEvents(), [], "no event from a failed call");
});

// ---------------------------------------------------------------------------------------------
// The host clock and random source

test("the now option is read exactly once per call", () => {
  const c = clock();
  const pool = new Pool({ seed: 1, now: c.now });
  assert.equal(c.calls, 0, "making a pool does not read the clock");
  const once = (label, fn) => {
    c.calls = 0;
    const result = fn();
    assert.equal(c.calls, 1, `${label} read the clock ${c.calls} times`);
    return result;
  };
  once("register", () => pool.register("PROXY", "a"));
  once("register", () => pool.register("PROXY", "b"));
  const l1 = once("acquire", () => pool.acquire("ctx"));
  once("report (hot path: handle cached)", () => pool.report("PROXY", l1.value, "ctx", { ok: true, latencyMs: 3 }));
  once("report (new context)", () => pool.report("PROXY", l1.value, "other", { ok: false, failure: "SLOW" }));
  const other = l1.value === "a" ? "b" : "a";
  const l2 = once("acquireResource", () => pool.acquireResource("PROXY", other, "ctx"));
  once("register", () => pool.register("SESSION", "c"));
  once("report (value not cached)", () => pool.report("SESSION", "c", "third", { ok: true }));
  once("renew", () => pool.renew(l1));
  once("renew (copy)", () => pool.renew(JSON.parse(JSON.stringify(l2))));
  once("release", () => pool.release(l1));
  once("release (refused)", () => pool.release(l1));
  once("block", () => pool.block("PROXY", "a", { seconds: 10 }));
  once("unblock", () => pool.unblock("PROXY", "a"));
  once("snapshot", () => pool.snapshot());
  once("drainEvents", () => pool.drainEvents());
  once("resources", () => pool.resources());
  once("resources (filtered)", () => pool.resources({ context: "ctx", state: "HEALTHY" }));
  once("dueForRecoveryProbe", () => pool.dueForRecoveryProbe());
  once("nextChangeAt", () => pool.nextChangeAt("ctx"));
  once("stats", () => pool.stats());
  assert.ok(once("acquire (again)", () => pool.acquire("ctx")));
  assert.ok(once("acquire (the last one)", () => pool.acquire("ctx")));
  assert.equal(once("acquire (nothing available)", () => pool.acquire("ctx")), null);
  once("deregister", () => pool.deregister("PROXY", "b"));
  c.calls = 0;
  pool.config();
  assert.ok(c.calls <= 1, "config() needs no clock");
  const restored = Pool.restore(pool.snapshot(), { seed: 1, now: c.now });
  c.calls = 0;
  restored.acquire("ctx");
  assert.equal(c.calls, 1, "a restored pool reads its clock once per call too");
});

test("a clock returning NaN, ±Infinity, a negative or a too-large value → INVALID_ARGUMENT, nothing changes", () => {
  const { pool, clock: c, lease } = fixture();
  const calls = {
    register: () => pool.register("PROXY", "new"),
    acquire: () => pool.acquire("ctx"),
    acquireResource: () => pool.acquireResource("PROXY", "c", "ctx"),
    report: () => pool.report("PROXY", "a", "ctx", { ok: true }),
    renew: () => pool.renew(lease),
    release: () => pool.release(lease),
    block: () => pool.block("PROXY", "c", { seconds: 1 }),
    unblock: () => pool.unblock("ACCOUNT", "acct"),
    deregister: () => pool.deregister("PROXY", "c"),
    snapshot: () => pool.snapshot(),
    drainEvents: () => pool.drainEvents(),
    stats: () => pool.stats(),
    resources: () => pool.resources(),
    nextChangeAt: () => pool.nextChangeAt("ctx"),
    dueForRecoveryProbe: () => pool.dueForRecoveryProbe(),
  };
  for (const bad of [NaN, Infinity, -Infinity, -1, 2 ** 52 + 1, undefined]) {
    for (const [label, fn] of Object.entries(calls)) {
      const before = observe(pool);
      c.t = bad;
      try {
        expectCode(fn, "INVALID_ARGUMENT", /clock/);
      } catch (e) {
        e.message = `${label} with now() = ${bad}: ${e.message}`;
        throw e;
      }
      c.t = T;
      assert.deepEqual(observe(pool), before, `${label} with now() = ${bad} changed the pool`);
    }
  }
  assert.equal(pool.release(lease), true, "the lease survived");
});

test("a clock that steps backwards does not move the pool's time backwards", () => {
  const c = clock();
  const pool = new Pool({ seed: 1, now: c.now });
  pool.register("PROXY", "a");
  c.t = T - 5_000;
  const lease = pool.acquire("ctx");
  assert.equal(lease.leasedAt, T);
  assert.equal(pool.stats().now, T);
});

/** Fifty resources, 200 acquire/release rounds; the values picked, in order. */
function picks(options) {
  const pool = new Pool({ now: () => T, ...options });
  for (let i = 0; i < 50; i++) pool.register("PROXY", `r${String(i).padStart(2, "0")}`);
  const out = [];
  for (let i = 0; i < 200; i++) {
    const lease = pool.acquire("ctx");
    out.push(lease.value);
    pool.release(lease);
  }
  return { out, snapshot: pool.snapshot() };
}

test("without random or seed, the engine seeds each pool from crypto.getRandomValues when it is made: same history, different picks", () => {
  const realRandom = Math.random;
  Math.random = () => 0.5; // not the source: pools must still differ
  try {
    const a = picks({});
    const b = picks({});
    assert.notDeepEqual(a.out, b.out);
    assert.ok(new Set(a.out).size > 10, "picks spread over the pool");
  } finally {
    Math.random = realRandom;
  }
});

test("the unseeded pool's seed is read by the engine (getrandom), once per pool made, never with a seed or random", () => {
  const crypto = globalThis.crypto;
  const calls = [];
  // Every byte the engine asks for is 7: two pools then pick alike, which they never do with
  // real entropy (the test above). The stand-in is an own property, deleted afterwards.
  crypto.getRandomValues = (bytes) => (calls.push(bytes.length), bytes.fill(7));
  let a, b;
  try {
    a = picks({});
    b = picks({});
    assert.deepEqual(calls, [8, 8], "one 8-byte seed per pool, read when the pool is made");
    picks({ seed: 1 });
    picks({ random: () => 0.5 });
    Pool.restore(a.snapshot, { seed: 2 });
    assert.equal(calls.length, 2, "a seed or a random function: no entropy read");
    Pool.restore(a.snapshot);
    assert.equal(calls.length, 3, "a restore without seed or random reads one too");
  } finally {
    delete crypto.getRandomValues;
  }
  assert.equal(typeof crypto.getRandomValues, "function", "the platform's method is back");
  assert.deepEqual(a.out, b.out, "the same bytes, the same seed, the same picks");
  assert.notDeepEqual(picks({}).out, a.out, "real entropy again");
});

test("with the same seed, pools pick identically and snapshot byte for byte", () => {
  const a = picks({ seed: 42 });
  const b = picks({ seed: 42 });
  assert.deepEqual(a.out, b.out);
  assert.equal(a.snapshot, b.snapshot);
  assert.notDeepEqual(picks({ seed: 43 }).out, a.out, "another seed, other picks");
  assert.ok(new Set(a.out).size > 10);
});

test("random: one draw per acquire with two or more candidates, none otherwise; the draw picks in canonical order", () => {
  const draws = [];
  let next = 0;
  const pool = new Pool({ now: () => T, random: () => (draws.push(next), next) });
  pool.register("ACCOUNT", "a");
  pool.drainEvents();
  assert.equal(pool.acquire("ctx").value, "a");
  assert.equal(draws.length, 0, "one candidate: no draw");
  assert.equal(pool.acquire("ctx"), null);
  assert.equal(draws.length, 0, "no candidate: no draw");
  pool.release(pool.resources()[0].lease);
  pool.register("PROXY", "b");
  pool.register("PROXY", "a");
  // Canonical order: PROXY/a, PROXY/b, ACCOUNT/a; equal weights 1, 1, 1.
  const pickAt = (u) => {
    next = u;
    const n = draws.length;
    const lease = pool.acquire("ctx");
    assert.equal(draws.length, n + 1, "exactly one draw");
    pool.release(lease);
    return `${lease.kind}/${lease.value}`;
  };
  assert.equal(pickAt(0), "PROXY/a");
  assert.equal(pickAt(0.34), "PROXY/b");
  assert.equal(pickAt(0.5), "PROXY/b");
  assert.equal(pickAt(0.7), "ACCOUNT/a");
  assert.equal(pickAt(0.999999), "ACCOUNT/a");
});

test("a random() outside [0, 1) or not a number → INVALID_ARGUMENT from acquire, and nothing changes", () => {
  for (const bad of [1, 1.5, -0.1, -1e-12, NaN, Infinity, "0.5", undefined, null]) {
    const pool = new Pool({ now: () => T, random: () => bad });
    pool.register("PROXY", "a");
    pool.register("PROXY", "b");
    expectUnchanged(pool, () => pool.acquire("ctx"), "INVALID_ARGUMENT", /random/, `random() = ${String(bad)}`);
  }
  const throwing = new Pool({ now: () => T, random: () => { throw new Error("rng down"); } });
  throwing.register("PROXY", "a");
  throwing.register("PROXY", "b");
  const before = observe(throwing);
  assert.throws(() => throwing.acquire("ctx"), (e) => e instanceof Error);
  assert.deepEqual(observe(throwing), before, "a throwing random changes nothing");
});

// ---------------------------------------------------------------------------------------------
// Redaction

test("events carry redacted values; acquire, resources and snapshots keep the real one", () => {
  const secret = "http://user:secret@host.example:1";
  const shown = "http://user:***@host.example:1";
  const pool = new Pool({ seed: 1, now: () => T });
  pool.register("PROXY", secret);
  const lease = pool.acquire("ctx");
  assert.equal(lease.value, secret, "acquire returns the real value");
  pool.report("PROXY", secret, "ctx", { ok: false, failure: "BLOCKED" });
  pool.report("PROXY", secret, "ctx", { ok: false, failure: "BLOCKED" });
  pool.release(lease);
  pool.block("PROXY", secret, { seconds: 5 });
  pool.unblock("PROXY", secret);
  const events = pool.drainEvents();
  assert.ok(events.length >= 6);
  assert.ok(!JSON.stringify(events).includes("secret"), "no secret in any event");
  const withValue = events.filter((e) => "value" in e);
  assert.ok(withValue.length >= 6);
  for (const e of withValue) assert.equal(e.value, shown, e.type);
  assert.equal(pool.resources()[0].value, secret);
  assert.ok(pool.snapshot().includes(secret), "the snapshot keeps the real value to restore it");
  const restored = Pool.restore(pool.snapshot(), { seed: 1, now: () => T + 10_000_000 });
  assert.equal(restored.acquire("elsewhere").value, secret);
});

test("error messages never carry a secret", () => {
  const pool = new Pool({ seed: 1, now: () => T });
  const secret = "socks5://bob:hunter2@10.0.0.1:1080";
  for (const fn of [
    () => pool.report("PROXY", secret, "x", { ok: true }),
    () => pool.block("PROXY", secret, { seconds: 1 }),
    () => pool.unblock("PROXY", secret),
    () => pool.acquireResource("PROXY", secret, "x"),
  ]) {
    const err = expectCode(fn, "UNKNOWN_RESOURCE");
    assert.ok(!err.message.includes("hunter2"), err.message);
    assert.ok(!(err.stack ?? "").includes("hunter2"));
  }
});

// ---------------------------------------------------------------------------------------------
// Snapshots

test("Pool.restore of garbage, a wrong version or an unknown field fails with the JSON path", () => {
  const { pool } = fixture();
  const good = JSON.parse(pool.snapshot());
  const edit = (f) => {
    const doc = structuredClone(good);
    f(doc);
    return JSON.stringify(doc);
  };
  const invalid = [
    ["", undefined],
    ["nope", undefined],
    ["{", undefined],
    ["null", undefined],
    ["[]", undefined],
    ["42", undefined],
    ["{}", /format/],
    [edit((d) => (d.format = "other")), /format/],
    // Unknown keys are not quoted (a damaged document may have a value where a key was).
    [edit((d) => (d.extra = 1)), /^unknown field, expected one of `format`/],
    [edit((d) => (d.cells[0].extra = 1)), /^cells\[0\]: unknown field/],
    [edit((d) => (d.registered[0].kind = "FOO")), /registered\[0\]\.kind/],
    [edit((d) => (d.config.coolAfter = 0)), /config\.coolAfter/],
    [edit((d) => (d.config.bogus = 1)), /^config: unknown field/],
    [edit((d) => delete d.revision), /revision/],
    [edit((d) => (d.version = "1")), /version/],
    [pool.snapshot().replace('"revision":', '"revision":1,"revision":'), /revision/],
  ];
  for (const [text, path] of invalid) {
    expectCode(() => Pool.restore(text, { seed: 1 }), "INVALID_SNAPSHOT", path);
  }
  for (const version of [0, 4, 99]) {
    expectCode(
      () => Pool.restore(edit((d) => (d.version = version)), { seed: 1 }),
      "UNSUPPORTED_SNAPSHOT_VERSION",
      new RegExp(`version.*${version}|${version}.*version`),
    );
  }
  // The source pool is untouched and a good snapshot still restores.
  assert.equal(Pool.restore(pool.snapshot(), { seed: 1, now: () => T }).snapshot(), JSON.stringify(good));
});

// ---------------------------------------------------------------------------------------------
// The wrapper's hot-path caches

test("deregister then re-register: cached handles give the right leases and reports", () => {
  const c = clock();
  const pool = new Pool({ seed: 11, now: c.now });
  pool.register("PROXY", "a");
  pool.register("PROXY", "b");
  pool.register("ACCOUNT", "a");
  const old = {};
  for (const [k, v] of [["PROXY", "a"], ["PROXY", "b"], ["ACCOUNT", "a"]]) {
    old[`${k}/${v}`] = pool.acquireResource(k, v, "ctx"); // fills the handle caches
    pool.report(k, v, "ctx", { ok: true }); // the hot path
  }
  pool.release(old["PROXY/b"]);
  pool.release(old["ACCOUNT/a"]);
  const la = old["PROXY/a"];
  assert.equal(pool.deregister("PROXY", "a"), true);
  expectUnchanged(pool, () => pool.report("PROXY", "a", "ctx", { ok: true }), "UNKNOWN_RESOURCE", undefined, "report after deregister");
  assert.equal(pool.release(la), false, "the old lease went with the resource");
  assert.equal(pool.renew(la), null);
  assert.equal(pool.resources().find((v) => v.kind === "ACCOUNT").cells[0].score, 5, "ACCOUNT/a untouched");

  // New resources may reuse the engine's memory; the caches must not mix them up.
  for (const v of ["z1", "z2", "z3"]) pool.register("PROXY", v);
  assert.equal(pool.register("PROXY", "a"), true);
  const seen = new Map();
  for (let i = 0; i < 12; i++) {
    const lease = pool.acquire("ctx2");
    if (lease === null) break;
    assert.ok(!seen.has(`${lease.kind}/${lease.value}`), "not leased twice");
    seen.set(`${lease.kind}/${lease.value}`, lease);
  }
  assert.deepEqual([...seen.keys()].sort(), ["ACCOUNT/a", "PROXY/a", "PROXY/b", "PROXY/z1", "PROXY/z2", "PROXY/z3"]);
  const na = seen.get("PROXY/a");
  assert.ok(na.token > la.token);
  assert.equal(pool.release(la), false, "an old lease cannot touch the new one");
  // Reports through the cache land on the resource they name.
  pool.report("PROXY", "a", "ctx", { ok: false, failure: "BLOCKED" });
  pool.report("PROXY", "z2", "ctx", { ok: false, failure: "SLOW" });
  const cells = Object.fromEntries(
    pool.resources({ context: "ctx" }).map((v) => [`${v.kind}/${v.value}`, v.cells.map((x) => [x.score, x.consecutiveFailures])]),
  );
  assert.deepEqual(cells, {
    "PROXY/a": [[-30, 1]],
    "PROXY/b": [[5, 0]],
    "PROXY/z1": [],
    "PROXY/z2": [[-2, 1]],
    "PROXY/z3": [],
    "ACCOUNT/a": [[5, 0]],
  });
  for (const lease of seen.values()) {
    assert.equal(pool.renew(lease).token, lease.token, `${lease.kind}/${lease.value} renews`);
    assert.equal(pool.release(lease), true, `${lease.kind}/${lease.value} releases`);
  }
});

test("many register/lease/report/deregister cycles keep the caches right", () => {
  const pool = new Pool({ seed: 5, now: () => T });
  pool.register("SESSION", "keep");
  for (let i = 0; i < 60; i++) {
    const v = `v${i}`;
    pool.register("PROXY", v);
    const direct = pool.acquireResource("PROXY", v, "ctx");
    assert.equal(direct.value, v);
    pool.report("PROXY", v, "ctx", { ok: false, failure: "SLOW" });
    pool.release(direct);
    // Both remaining resources via the hot path, each named correctly.
    const l1 = pool.acquire("other");
    const l2 = pool.acquire("other");
    assert.deepEqual([`${l1.kind}/${l1.value}`, `${l2.kind}/${l2.value}`].sort(), [`PROXY/${v}`, "SESSION/keep"]);
    pool.report("SESSION", "keep", "ctx", { ok: true });
    assert.equal(pool.release(l1), true);
    assert.equal(pool.release(l2), true);
    const view = pool.resources({ context: "ctx" });
    assert.deepEqual(view.find((r) => r.value === v).cells.map((x) => x.consecutiveFailures), [1]);
    assert.equal(pool.deregister("PROXY", v), true);
  }
  const keep = pool.resources()[0];
  assert.equal(keep.value, "keep");
  assert.equal(keep.cells[0].consecutiveSuccesses, 60, "every success landed on SESSION/keep");
  assert.equal(pool.stats().registered, 1);
});

test("thousands of resources leased in random order: each cached handle names its own resource", () => {
  // Handles are small numbers and the wrapper keeps values in an array indexed by them; leases
  // arriving in random order grow it out of order.
  const N = 3000;
  const pool = new Pool({ seed: 21, now: () => T, config: { leaseTtlMs: 3_600_000 } });
  for (let i = 0; i < N; i++) pool.register("PROXY", `r${i}`);
  const leases = [];
  for (let l; (l = pool.acquire("c")) !== null; ) leases.push(l);
  assert.equal(leases.length, N);
  assert.equal(new Set(leases.map((l) => l.value)).size, N, "each resource once");
  assert.notDeepEqual(leases.slice(0, 5).map((l) => l.value), ["r0", "r1", "r2", "r3", "r4"], "random order");
  // Report on each through the hot path, interleaved so the last lease is rarely the one named.
  for (let k = 0; k < N; k++) {
    const l = leases[(k * 7) % N];
    pool.report(l.kind, l.value, "c", { ok: false, failure: "SLOW", latencyMs: Number(l.value.slice(1)) });
  }
  for (const r of pool.resources({ context: "c" })) {
    assert.deepEqual(r.cells.map((c) => [c.consecutiveFailures, c.p50LatencyMs]), [[1, Number(r.value.slice(1))]], r.value);
  }
  for (const l of leases) assert.equal(pool.release(l), true, l.value);
  assert.equal(pool.stats().leased, 0);
  pool.free();
});

test("more than 4096 distinct contexts still lease, renew, release and report correctly", () => {
  const N = 4300;
  const pool = new Pool({ seed: 9, now: () => T });
  pool.register("PROXY", "a");
  pool.register("PROXY", "b");
  pool.release(pool.acquireResource("PROXY", "a", "warm"));
  pool.release(pool.acquireResource("PROXY", "b", "warm"));
  for (let i = 0; i < N; i++) {
    pool.report("PROXY", "a", `ctx-${i}`, { ok: false, failure: "TIMEOUT" });
    pool.report("PROXY", "a", `ctx-${i}`, { ok: false, failure: "TIMEOUT" });
  }
  assert.equal(pool.stats().contexts, N);
  assert.equal(pool.stats().cells, N);
  for (const i of [0, 4095, 4096, 4097, 4250, N - 1]) {
    const ctx = `ctx-${i}`;
    const lease = pool.acquire(ctx);
    assertLease(lease, { kind: "PROXY", value: "b", context: ctx, leasedAt: T });
    assert.equal(pool.acquire(ctx), null, "a is cooling there, b is leased");
    assert.equal(pool.acquireResource("PROXY", "a", ctx), null, "a is cooling there");
    assert.equal(pool.renew(lease)?.token, lease.token);
    assert.equal(pool.renew({ ...lease, token: lease.token + 1 }), null);
    pool.report("PROXY", "b", ctx, { ok: true, latencyMs: i });
    assert.equal(pool.release({ ...lease, context: `ctx-${(i + 1) % N}` }), false, "another context's name");
    assert.equal(pool.release(lease), true);
    assert.equal(pool.release(lease), false);
    const cells = pool.resources({ context: ctx }).map((v) => v.cells.map((x) => [x.state, x.score, x.p50LatencyMs]));
    assert.deepEqual(cells, [[["COOLING", -10, null]], [["HEALTHY", 5, i]]], ctx);
  }
  // Contexts first seen past the table are fine too.
  for (const ctx of ["fresh-1", "fresh-2"]) {
    const lease = pool.acquire(ctx);
    assert.ok(lease);
    pool.report(lease.kind, lease.value, ctx, { ok: false, failure: "BLOCKED" });
    assert.equal(pool.release(lease), true);
    assert.equal(pool.resources({ context: ctx }).find((v) => v.value === lease.value).cells[0].score, -30);
  }
  assert.equal(pool.stats().leased, 0);
});

test("renew and release of a lease whose resource was deregistered still read the clock (SPEC §5: now = max(now, lastNow))", () => {
  for (const call of ["renew", "release"]) {
    const c = clock();
    const pool = new Pool({ seed: 7, now: c.now });
    pool.register("PROXY", "d");
    pool.register("PROXY", "e");
    const lease = pool.acquireResource("PROXY", "d", "x");
    assert.equal(pool.deregister("PROXY", "d"), true);
    c.t += 100_000;
    assert.equal(pool[call](lease), call === "renew" ? null : false);
    c.t -= 40_000; // the host clock steps back
    const next = pool.acquire("x");
    assert.equal(next.value, "e");
    assert.equal(next.leasedAt, T + 100_000, `${call}: the engine saw that call's reading`);
  }
});
