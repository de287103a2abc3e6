// `Pool.restoreInParts` as the Node host's import drives it (lib/node/import-steps.js), and
// `registeredByKind()`, the counts the import thread hands over so that the build makes room
// first: the pool built from parts is `Pool.restore`'s whether the room made is the counts,
// none, or counts off the mark; a bad count is refused before anything is added. The engine's
// side (equal to the one-call restore on random pools, refusals) is tests/parts_restore.rs's.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "repute";

const T = 1_700_000_000_000;
const encoder = new TextEncoder();

function mixedPool() {
  const pool = new Pool({ seed: 3, now: () => T });
  for (let i = 0; i < 40; i++) pool.register("PROXY", `proxy-${i}.example:8080`);
  for (let i = 0; i < 7; i++) pool.register("SESSION", `session-${i}`);
  pool.report("PROXY", "proxy-3.example:8080", "shop.example", { ok: false, failure: "BLOCKED" });
  return pool;
}

/** The pool's parts as `add` takes them, a batch of `size` resources at a time. */
function batches(pool, size) {
  const out = [];
  let batch = [[], [], []];
  const cut = () => {
    out.push(batch.map((lines) => encoder.encode(lines.join(","))));
    batch = [[], [], []];
  };
  for (const { kind, value } of pool.resources()) {
    pool.snapshotPart(kind, value).split("\n").forEach((line, i) => line && batch[i].push(line));
    if (batch[0].length === size) cut();
  }
  if (batch[0].length > 0) cut();
  return out;
}

function built(pool, reserve) {
  const restore = Pool.restoreInParts(pool.snapshotPart(), { seed: 3, now: () => T });
  if (reserve !== undefined) restore.reserve(reserve);
  for (const sections of batches(pool, 6)) restore.add(...sections);
  while (!restore.step());
  return restore.finish();
}

test("registeredByKind counts each kind's registered resources", () => {
  const pool = mixedPool();
  assert.deepEqual(pool.registeredByKind(), { PROXY: 40, ACCOUNT: 0, SESSION: 7 });
  pool.deregister("SESSION", "session-0");
  assert.deepEqual(pool.registeredByKind(), { PROXY: 40, ACCOUNT: 0, SESSION: 6 });
  assert.deepEqual(new Pool().registeredByKind(), { PROXY: 0, ACCOUNT: 0, SESSION: 0 });
});

test("a restore in parts is the one-call restore, whatever room was made first", () => {
  const pool = mixedPool();
  const expected = Pool.restore(pool.snapshot(), { seed: 3, now: () => T }).snapshot();
  for (const reserve of [undefined, pool.registeredByKind(), { SESSION: 1 }, { PROXY: 5000, ACCOUNT: 3 }]) {
    const restored = built(pool, reserve);
    assert.equal(restored.snapshot(), expected, JSON.stringify(reserve));
    assert.deepEqual(restored.registeredByKind(), pool.registeredByKind());
  }
});

test("reserve refuses a count that is not one, and an unknown kind, naming it", () => {
  const pool = mixedPool();
  const restore = Pool.restoreInParts(pool.snapshotPart(), { now: () => T });
  for (const [bad, named] of [
    [{ PROXY: -1 }, /byKind\.PROXY must be an integer from 0/],
    [{ SESSION: 1.5 }, /byKind\.SESSION must be an integer/],
    [{ ACCOUNT: 2 ** 32 }, /byKind\.ACCOUNT must be an integer/],
    [{ PROXIES: 3 }, /byKind\.PROXIES is not a kind/],
    [null, /byKind/],
  ]) {
    assert.throws(() => restore.reserve(bad), (e) => e.code === "INVALID_ARGUMENT" && named.test(e.message), JSON.stringify(bad));
  }
  // Still usable: nothing was changed by the refusals.
  restore.reserve(pool.registeredByKind());
  for (const sections of batches(pool, 100)) restore.add(...sections);
  while (!restore.step());
  assert.equal(restore.finish().snapshot(), Pool.restore(pool.snapshot(), { now: () => T }).snapshot());
});
