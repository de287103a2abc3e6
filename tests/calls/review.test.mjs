// Defects found by the adversarial review of the resilient-call layer (pkg-scripts/lib/call),
// each pinned by the test that failed before its fix: a real Pool, virtual time (_support.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { call } from "../../pkg-scripts/lib/call/call.js";
import { answer, drive, recorded, setup } from "./_support.mjs";

test("a deadline shorter than retry.reserveMs still runs its one attempt (it used to fail with 0 attempts)", async () => {
  const { pool, timers, options } = setup();
  const host = recorded(pool);
  const given = [];
  // reserveMs defaults to baseDelayMs (100): a 80 ms deadline leaves no room for a retry, but
  // the first attempt must still be tried, with what is left.
  const p = call(host, "shop", ({ timeoutMs }) => (given.push(timeoutMs), answer(200)), { ...options, readOnly: true, deadlineMs: 80 });
  const res = await drive(timers, p, { stepMs: 1 });
  assert.equal(res.status, 200);
  assert.deepEqual(given, [80]);
  assert.equal(pool.stats().leased, 0);
});
