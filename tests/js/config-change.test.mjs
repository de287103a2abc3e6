// `pool.setConfig(patch)` and `pool.resource(kind, value)` through the `repute` package's Node
// entry: a partial config applied over the one in force, returning whether it changed, with one
// revision step and one CONFIG_CHANGED event; an unchanged config changes nothing; bad input
// from JavaScript (not an object, NaN, unknown keys, ranges, capacity) is an Error with a stable
// code naming the field, and nothing changes; and one resource's cells with their windows.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "repute";

const T = 1_700_000_000_000;

function pool(config) {
  let now = T;
  const p = new Pool({ config, seed: 1, now: () => now });
  return { p, tick: (ms) => (now += ms) };
}

const state = (p) => [p.snapshot(), p.stats().revision, p.stats().nextEventSeq];

test("setConfig changes the given fields, returns true, steps the revision once and emits CONFIG_CHANGED", () => {
  const { p, tick } = pool();
  p.register("PROXY", "p1");
  p.drainEvents();
  const before = p.config();
  const revision = p.stats().revision;
  tick(7);
  assert.equal(p.setConfig({ leaseTtlMs: 60_000, cooldownBaseMs: { SLOW: 1000 } }), true);
  assert.deepEqual(p.config(), { ...before, leaseTtlMs: 60_000, cooldownBaseMs: { ...before.cooldownBaseMs, SLOW: 1000 } });
  assert.equal(p.stats().revision, revision + 1);
  assert.deepEqual(p.drainEvents(), [{ seq: 2, type: "CONFIG_CHANGED", at: T + 7 }]);
  const restored = Pool.restore(p.snapshot(), { seed: 1, now: () => T + 7 });
  assert.equal(restored.config().leaseTtlMs, 60_000, "the snapshot carries the new config");
  // The same values again: nothing happens.
  const same = state(p);
  assert.equal(p.setConfig({ leaseTtlMs: 60_000 }), false);
  assert.equal(p.setConfig({}), false);
  assert.deepEqual(state(p), same);
  assert.deepEqual(p.drainEvents(), []);
});

test("setConfig refuses bad input with a code naming the field, and nothing changes", () => {
  const { p } = pool();
  p.register("PROXY", "p1");
  p.register("PROXY", "p2");
  p.report("PROXY", "p1", "c", { ok: true });
  const before = state(p);
  const config = p.config();
  const cases = [
    [undefined, "INVALID_CONFIG", /config must be an object/],
    [null, "INVALID_CONFIG", /config must be an object/],
    [[1], "INVALID_CONFIG", /config must be an object/],
    [{ coolAfter: NaN }, "INVALID_CONFIG", /coolAfter must be a finite number/],
    [{ leaseTTL: 5 }, "INVALID_CONFIG", /leaseTTL/],
    [{ leaseTtlMs: 5000, windowSize: 0 }, "INVALID_CONFIG", /^windowSize/],
    [{ penalties: { SLOW: 201 } }, "INVALID_CONFIG", /^penalties\.SLOW/],
    [{ maxResources: 1, leaseTtlMs: 5000 }, "CAPACITY_EXCEEDED", /maxResources = 1 is below the 2 resources/],
    [{ maxCells: 0 }, "INVALID_CONFIG", /^maxCells/],
  ];
  for (const [patch, code, message] of cases) {
    assert.throws(() => p.setConfig(patch), (e) => e instanceof Error && e.code === code && message.test(e.message), JSON.stringify(patch));
    assert.deepEqual(state(p), before, JSON.stringify(patch));
    assert.deepEqual(p.config(), config);
  }
  assert.equal(p.setConfig({ maxCells: 1 }), true, "exactly what the pool holds is allowed");
});

test("resource(kind, value) gives every cell with its window, oldest first; UNKNOWN_RESOURCE otherwise", () => {
  const { p } = pool();
  p.register("PROXY", "http://user:secret@proxy.example:8080");
  p.register("ACCOUNT", "never");
  p.report("PROXY", "http://user:secret@proxy.example:8080", "b", { ok: true, latencyMs: 12.5 });
  p.report("PROXY", "http://user:secret@proxy.example:8080", "b", { ok: false, failure: "TIMEOUT" });
  p.report("PROXY", "http://user:secret@proxy.example:8080", "a", { ok: true });
  const d = p.resource("PROXY", "http://user:secret@proxy.example:8080");
  const view = p.resources()[0];
  assert.deepEqual({ ...d, cells: d.cells.map(({ window, ...c }) => c) }, view, "the dashboard's view plus windows");
  assert.deepEqual(d.cells.map((c) => [c.context, c.window]), [
    ["a", [["OK", null]]],
    ["b", [["OK", 12.5], ["TIMEOUT", null]]],
  ]);
  assert.deepEqual(p.resource("ACCOUNT", "never").cells, []);
  assert.throws(() => p.resource("SESSION", "never"), { code: "UNKNOWN_RESOURCE" });
  assert.throws(() => p.resource("NOPE", "x"), { code: "INVALID_ARGUMENT" });
  assert.throws(() => p.resource("PROXY", 5), { code: "INVALID_ARGUMENT" });
});
