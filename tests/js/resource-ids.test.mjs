// Resource ids through the WebAssembly facade (src/ids.rs): a grant answers its resource's id,
// and a call by that id and the lease's token reaches that lease or nothing — never the next
// resource registered in its slot (the call by name then says what is wrong). And the package's
// `Pool`, which passes the last grant's id back, keeps addressing the right resource across
// deregistrations, with no table of names to ids of its own.
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

const BY_NAME = -1;

test("an id held across a deregistration and a registration in its slot is refused", () => {
  const raw = new RawPool(undefined, undefined, 1);
  const a = raw.register(1, PROXY, "a");
  assert.ok(a > 0);
  assert.equal(must(raw, raw.acquire(2, "x", false)), a, "the grant answers its resource's id");
  const token = raw.leaseFields()[1];
  assert.equal(must(raw, raw.reportLease(2, a, token, SUCCESS, undefined)), 0);
  assert.equal(raw.deregister(3, PROXY, "a"), true);
  const c = raw.register(4, PROXY, "c");
  assert.equal(c % 2 ** 32, a % 2 ** 32, "c takes a's slot");
  assert.notEqual(c, a, "with another generation");
  assert.equal(must(raw, raw.acquire(5, "x", false)), c);
  const held = raw.leaseFields()[1];
  const before = raw.snapshot(5);
  assert.equal(must(raw, raw.reportLease(5, a, held, SUCCESS, undefined)), BY_NAME, "left to the call by name");
  assert.equal(must(raw, raw.renewLease(5, a, held)), 0);
  assert.equal(must(raw, raw.releaseLease(5, a, held)), 0);
  assert.equal(must(raw, raw.finishLease(5, a, held, SUCCESS, undefined, false, undefined, undefined, undefined, false)), BY_NAME);
  assert.equal(raw.snapshot(5), before, "no call by a's id reached c");
  assert.throws(() => must(raw, raw.report(5, PROXY, "a", "x", SUCCESS, undefined)), (e) => e.code === "UNKNOWN_RESOURCE" && /PROXY\/a/.test(e.message));
  assert.equal(must(raw, raw.reportLease(6, c, held, SUCCESS, undefined)), 0);
  const cells = JSON.parse(raw.resource(6, PROXY, "c")).cells;
  assert.deepEqual(cells.map((cell) => cell.context), ["x"]);
  assert.throws(() => raw.resourceValue(a), (e) => e.code === "UNKNOWN_RESOURCE", "a's id ended with it");
  assert.throws(() => must(raw, raw.reportLease(6, 0, held, SUCCESS, undefined)), (e) => e.code === "UNKNOWN_RESOURCE");
  assert.throws(() => must(raw, raw.reportLease(6, 1.5, held, SUCCESS, undefined)), (e) => e.code === "UNKNOWN_RESOURCE");
  assert.equal(raw.takeError(), undefined, "an error is taken once");
  assert.ok(Number.isNaN(raw.reportLease(6, 1.5, held, SUCCESS, undefined)), "a failed hot-path call answers NaN");
  const again = raw.takeError();
  assert.ok(again instanceof Error && again.code === "UNKNOWN_RESOURCE");
  raw.free();
});

test("the Pool's ids from the grant follow deregistrations", () => {
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

test("ids come from the engine: no table of names in the facade, contexts by name", () => {
  const raw = new RawPool(undefined, undefined, 1);
  raw.register(1, PROXY, "a");
  for (const gone of ["context", "resourceId", "finishIn", "leaseKind", "leaseValue", "leaseGroup"]) {
    assert.equal(typeof raw[gone], "undefined", `no ${gone}: a context crosses by name, a resource's id from its grant`);
  }
  assert.throws(() => must(raw, raw.acquire(2, "", false)), (e) => e.code === "INVALID_ARGUMENT", "the engine checks the name");
  const a = must(raw, raw.acquire(2, "x", false));
  assert.equal(raw.resourceValue(a), "a");
  assert.equal(raw.resourceGroup(a), undefined, "ungrouped");
  assert.equal(raw.leaseFields()[4], 0, "no group");
  raw.registerWith(3, PROXY, "g", true, "tier-1", NaN);
  assert.equal(must(raw, raw.releaseLease(3, a, raw.leaseFields()[1])), 1);
  raw.deregister(3, PROXY, "a");
  const g = must(raw, raw.acquire(4, "x", false));
  assert.equal(raw.leaseFields()[4], 1, "grouped: the group is the registry's, read by id");
  assert.equal(raw.resourceGroup(g), "tier-1");
  raw.free();
});

test("contexts named by clients' requests come and go; every call keeps reaching the right one", () => {
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

test("a lease other than the last grant, or a copy of it, is served by name", () => {
  const pool = new Pool({ seed: 1, now: () => 1 });
  for (const v of ["a", "b"]) pool.register("PROXY", v);
  const first = pool.acquire("x");
  const second = pool.acquire("y");
  assert.notEqual(first.value, second.value);
  pool.report(first.kind, first.value, "x", { ok: false, failure: "TIMEOUT" });
  assert.equal(pool.renew({ ...first }).token, first.token, "a copy renews");
  assert.equal(pool.release(JSON.parse(JSON.stringify(first))), true, "as does a lease sent as JSON");
  assert.equal(pool.release(first), false, "released once");
  assert.equal(pool.release({ ...second, context: "z" }), false, "not the holder");
  assert.equal(pool.finish(second, { ok: true }), null);
  assert.throws(() => pool.finish(second, { ok: true }), (e) => e.code === "LEASE_FINISHED");
  const cells = JSON.parse(pool.snapshot()).cells.map((c) => [c.value, c.context, c.consecutiveFailures]);
  const want = [[first.value, "x", 1], [second.value, "y", 0]];
  assert.deepEqual(cells.sort(), want.sort());
  pool.free();
});

test("after a restore, calls by name reach the resources; a deregistered one is unknown", () => {
  const first = new Pool({ seed: 1, now: () => 1 });
  for (const v of ["a", "b"]) first.register("PROXY", v);
  const lease = first.acquire("x");
  const pool = Pool.restore(first.snapshot(), { seed: 1, now: () => 2 });
  first.free();
  // The restored Pool has granted nothing: each call goes by name.
  pool.report("PROXY", "a", "x", { ok: true });
  pool.report("PROXY", "b", "x", { ok: false, failure: "TIMEOUT" });
  assert.equal(pool.release(lease), false, "leases are not in snapshots");
  assert.throws(() => pool.report("PROXY", "zz", "x", { ok: true }), (e) => e.code === "UNKNOWN_RESOURCE" && /zz/.test(e.message));
  assert.equal(pool.deregister("PROXY", "b"), true);
  assert.equal(pool.release({ ...lease, value: "b" }), false, "no holder once deregistered");
  assert.equal(pool.renew({ ...lease, value: "b" }), null);
  assert.throws(() => pool.report("PROXY", "b", "x", { ok: true }), (e) => e.code === "UNKNOWN_RESOURCE");
  // "a" keeps its cell.
  pool.report("PROXY", "a", "x", { ok: true });
  const cells = JSON.parse(pool.snapshot()).cells;
  assert.deepEqual(cells.map((c) => [c.kind, c.value, c.context]), [["PROXY", "a", "x"]]);
  pool.free();
});
