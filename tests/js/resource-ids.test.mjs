// Resource ids through the WebAssembly facade (src/ids.rs): the number `register` and a lease
// give for a resource is refused with UNKNOWN_RESOURCE once that resource is deregistered, also
// when the next resource registered takes its slot — a call by the old number never reaches
// the new resource. And the package's `Pool`, which caches these numbers, keeps addressing the
// right resource across deregistrations.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { initSync, RawPool } from "../../pkg-scripts/pkg/repute.js";
import { Pool } from "../../pkg-scripts/node.js";

initSync({ module: readFileSync(new URL("../../pkg-scripts/pkg/repute_bg.wasm", import.meta.url)) });

const PROXY = 0;

/** A hot-path export's answer: NaN leaves the call's error for `takeError`. */
function must(raw, answer) {
  if (Number.isNaN(answer)) throw raw.takeError();
  return answer;
}
const SUCCESS = 0;

test("an id held across a deregistration and a registration in its slot is refused", () => {
  const raw = new RawPool(undefined, undefined, 1);
  const a = raw.register(1, PROXY, "a");
  const b = raw.register(1, PROXY, "b");
  assert.ok(a > 0 && b > 0 && a !== b);
  const x = raw.context("x");
  must(raw, raw.report(2, a, x, SUCCESS, NaN));
  assert.equal(raw.deregister(3, PROXY, "a"), true);
  const c = raw.register(4, PROXY, "c");
  assert.equal(c % 2 ** 32, a % 2 ** 32, "c takes a's slot");
  assert.notEqual(c, a, "with another generation");
  const before = raw.snapshot(5);
  for (const call of [
    () => must(raw, raw.report(5, a, x, SUCCESS, NaN)),
    () => must(raw, raw.renew(5, a, x, 1)),
    () => must(raw, raw.release(5, a, x, 1)),
  ]) {
    assert.throws(call, (e) => e instanceof Error && e.code === "UNKNOWN_RESOURCE");
  }
  assert.equal(raw.snapshot(5), before, "the refused calls changed nothing: c has no cell");
  must(raw, raw.report(6, c, x, SUCCESS, NaN));
  const cells = JSON.parse(raw.resource(6, PROXY, "c")).cells;
  assert.deepEqual(cells.map((cell) => cell.context), ["x"]);
  assert.throws(() => must(raw, raw.report(6, 0, x, SUCCESS, NaN)), (e) => e.code === "UNKNOWN_RESOURCE");
  assert.throws(() => must(raw, raw.report(6, 1.5, x, SUCCESS, NaN)), (e) => e.code === "UNKNOWN_RESOURCE");
  assert.equal(raw.takeError(), undefined, "an error is taken once");
  assert.ok(Number.isNaN(raw.report(6, 1.5, x, SUCCESS, NaN)), "a failed hot-path call answers NaN");
  const again = raw.takeError();
  assert.ok(again instanceof Error && again.code === "UNKNOWN_RESOURCE");
  raw.free();
});

test("the Pool's cached ids follow deregistrations", () => {
  let t = 1000;
  const pool = new Pool({ seed: 1, now: () => t });
  pool.register("PROXY", "a");
  const lease = pool.acquire("x");
  assert.equal(lease.value, "a");
  pool.deregister("PROXY", "a");
  pool.register("PROXY", "c");
  t += 1;
  // The lease's resource is gone: its report names it, not the resource now in its slot.
  assert.throws(
    () => pool.report("PROXY", "a", "x", { ok: true }),
    (e) => e.code === "UNKNOWN_RESOURCE" && /PROXY\/a/.test(e.message),
  );
  assert.equal(pool.release(lease), false);
  assert.equal(pool.renew(lease), null);
  assert.deepEqual(pool.resource("PROXY", "c").cells, []);
  const next = pool.acquire("x");
  assert.equal(next.value, "c");
  pool.report("PROXY", "c", "x", { ok: true });
  assert.equal(pool.release(next), true);
  pool.deregister("PROXY", "c");
  pool.register("PROXY", "d");
  const third = pool.acquire("x");
  assert.equal(third.value, "d", "a value read under a reused slot is the new resource's");
  assert.equal(pool.release(third), true);
  pool.free();
});

test("a context id is the engine's: checked once, stable, one acquire export", () => {
  const raw = new RawPool(undefined, undefined, 1);
  raw.register(1, PROXY, "a");
  for (const twin of ["acquireNamed", "reportHandle", "renewHandle", "releaseHandle"]) {
    assert.equal(typeof raw[twin], "undefined", `no twin ${twin}: one export per call, by ids`);
  }
  assert.equal(raw.resourceId(PROXY, "a", false), raw.resourceId(PROXY, "a", true), "a resolved name");
  assert.equal(raw.resourceId(PROXY, "nope", false), 0, "not registered");
  assert.throws(() => raw.resourceId(PROXY, "nope", true), (e) => e.code === "UNKNOWN_RESOURCE" && /PROXY\/nope/.test(e.message));
  assert.throws(() => raw.resourceId(PROXY, "", false), (e) => e.code === "INVALID_ARGUMENT", "the value is checked");
  assert.throws(() => raw.context(""), (e) => e.code === "INVALID_ARGUMENT");
  const x = raw.context("x");
  assert.ok(x > 0);
  assert.notEqual(raw.context("y"), x);
  assert.equal(raw.context("x"), x, "the same id for the same name");
  for (const never of [99, 0, -1, 1.5, NaN]) {
    assert.throws(() => must(raw, raw.acquire(2, never)), (e) => e.code === "INVALID_ARGUMENT", `an id never given: ${never}`);
  }
  const a = must(raw, raw.acquire(2, x));
  assert.ok(a > 0);
  assert.equal(must(raw, raw.release(3, a, x, raw.leaseFields()[1])), 1);
  raw.deregister(4, PROXY, "a");
  raw.register(5, PROXY, "b");
  assert.equal(raw.context("x"), x, "a context's id outlives its cells while the table has room");
  const hb = must(raw, raw.acquire(6, x));
  assert.ok(hb > 0);
  assert.equal(raw.resourceValue(hb), "b");
  assert.equal(raw.resourceGroup(hb), undefined, "ungrouped");
  assert.throws(() => raw.resourceValue(a), (e) => e.code === "UNKNOWN_RESOURCE", "a's id ended with it");
  for (const getter of ["leaseKind", "leaseValue", "leaseGroup", "leaseToken", "leaseLeasedAt", "leaseExpiresAt"]) {
    assert.equal(typeof raw[getter], "undefined", `${getter}: the facade keeps no copy of the last lease`);
  }
  raw.free();
});

test("the engine's table of context names is bounded, and the Pool's cache follows it", () => {
  const raw = new RawPool(undefined, undefined, 1);
  raw.register(1, PROXY, "a");
  const held = raw.context("held");
  const h = must(raw, raw.acquire(2, held));
  const token = raw.leaseFields()[1];
  const idle = raw.context("idle");
  let forgot = 0;
  for (let i = 0; i < 10_000; i++) if (raw.context(`c${i}`) < 0) forgot++;
  assert.ok(forgot >= 2, `forgot ${forgot} times over 10 000 new names`);
  assert.equal(raw.context("held"), held, "a leased context keeps its id");
  assert.throws(() => must(raw, raw.acquire(3, idle)), (e) => e.code === "INVALID_ARGUMENT", "a forgotten id is refused");
  assert.equal(must(raw, raw.release(3, h, held, token)), 1);
  raw.free();

  // Through the package: contexts named by clients' requests come and go; every call keeps
  // reaching the right context.
  const pool = new Pool({ seed: 1, now: () => 1 });
  pool.register("PROXY", "p");
  const lease = pool.acquire("kept");
  pool.report("PROXY", "p", "scored", { ok: true });
  for (let i = 0; i < 10_000; i++) assert.equal(pool.acquire(`request-${i}`), null, "p is leased");
  pool.report("PROXY", "p", "scored", { ok: true });
  assert.equal(pool.release(lease), true);
  const again = pool.acquire("request-0");
  assert.equal(again.context, "request-0");
  pool.report("PROXY", "p", "request-0", { ok: true });
  assert.equal(pool.release(again), true);
  const cells = JSON.parse(pool.snapshot()).cells.map((c) => c.context).sort();
  assert.deepEqual(cells, ["request-0", "scored"]);
  const scored = JSON.parse(pool.snapshot()).cells.find((c) => c.context === "scored");
  assert.equal(scored.score > 0, true, "both reports reached the scored context");
  pool.free();
});

test("the Pool resolves a resource it has no id of once (after a restore), and drops only a deregistered one's", () => {
  const first = new Pool({ seed: 1, now: () => 1 });
  for (const v of ["a", "b"]) first.register("PROXY", v);
  const lease = first.acquire("x");
  const pool = Pool.restore(first.snapshot(), { seed: 1, now: () => 2 });
  first.free();
  // The restored Pool has seen no id: each call resolves the name once.
  pool.report("PROXY", "a", "x", { ok: true });
  pool.report("PROXY", "b", "x", { ok: false, failure: "TIMEOUT" });
  assert.equal(pool.release(lease), false, "leases are not in snapshots");
  assert.throws(() => pool.report("PROXY", "zz", "x", { ok: true }), (e) => e.code === "UNKNOWN_RESOURCE" && /zz/.test(e.message));
  assert.equal(pool.deregister("PROXY", "b"), true);
  assert.equal(pool.release({ ...lease, value: "b" }), false, "no holder once deregistered");
  assert.equal(pool.renew({ ...lease, value: "b" }), null);
  assert.throws(() => pool.report("PROXY", "b", "x", { ok: true }), (e) => e.code === "UNKNOWN_RESOURCE");
  // "a" keeps its id and its cell.
  pool.report("PROXY", "a", "x", { ok: true });
  const cells = JSON.parse(pool.snapshot()).cells;
  assert.deepEqual(cells.map((c) => [c.kind, c.value, c.context]), [["PROXY", "a", "x"]]);
  pool.free();
});
