// Single-flight credential refresh (pkg-scripts/lib/call/credentials.js): simultaneous expiry
// makes one load, not one per caller; a credential is reused until its refresh margin; a
// refused one is invalidated; a failed load reaches every waiter, redacted, and is not cached;
// a waiter leaves at its own deadline. Used here the way a call would: ACCOUNT resources whose
// token comes from a provider, on a real Pool with a virtual clock.
import { test } from "node:test";
import assert from "node:assert/strict";
import { credentialCache } from "../../pkg-scripts/lib/call/credentials.js";
import { call } from "../../pkg-scripts/lib/call/call.js";
import { answer, drive, setup } from "./_support.mjs";

test("simultaneous expiry: many callers, one refresh; reused until the margin; invalidate forces a new one", async () => {
  const { timers } = setup({ n: 0 });
  let issued = 0;
  const pending = [];
  const creds = credentialCache({
    now: timers.monotonicMs,
    refreshMarginMs: 1000,
    key: () => "tenant-a", // every account of the tenant shares one token
    load: () => new Promise((resolve) => pending.push(() => resolve({ value: `token-${++issued}`, expiresAt: timers.monotonicMs() + 10_000 }))),
  });
  const lease = (v) => ({ kind: "ACCOUNT", value: v });
  const waiting = Array.from({ length: 20 }, (_, i) => creds.get(lease(`a${i % 3}`)));
  await new Promise((r) => setImmediate(r));
  assert.equal(pending.length, 1, "one load for twenty callers");
  pending[0]();
  assert.deepEqual(new Set(await Promise.all(waiting)), new Set(["token-1"]));
  await timers.advance(8_999);
  assert.equal(await creds.get(lease("a0")), "token-1", "still outside the refresh margin");
  await timers.advance(1);
  const again = [creds.get(lease("a1")), creds.get(lease("a2"))];
  await new Promise((r) => setImmediate(r));
  assert.equal(pending.length, 2, "inside the margin: one new load for both");
  pending[1]();
  assert.deepEqual(await Promise.all(again), ["token-2", "token-2"]);
  creds.invalidate(lease("a0"));
  const third = creds.get(lease("a0"));
  await new Promise((r) => setImmediate(r));
  pending[2]();
  assert.equal(await third, "token-3");
  assert.equal(creds.stats().loads, 3);
});

test("a failed load reaches every waiter with secrets redacted, is not cached, and a waiter leaves at its deadline", async () => {
  let fail = true;
  let loads = 0;
  let release;
  const creds = credentialCache({
    load: () => {
      loads++;
      if (fail) return Promise.reject(new Error("issuer said no to Authorization: Bearer abc.def.ghi for https://bob:pw1234@idp.example/"));
      return new Promise((r) => (release = () => r({ value: "ok-token" })));
    },
  });
  const lease = { kind: "ACCOUNT", value: "acct-1" };
  const errors = await Promise.all([creds.get(lease), creds.get(lease)].map((p) => p.catch((e) => e)));
  assert.equal(loads, 1);
  for (const e of errors) {
    assert.equal(e.code, "CREDENTIAL_UNAVAILABLE");
    assert.ok(!/abc\.def\.ghi|pw1234/.test(e.message), e.message);
  }
  fail = false;
  const ac = new AbortController();
  const impatient = creds.get(lease, { signal: ac.signal }).catch((e) => e.message);
  const patient = creds.get(lease);
  ac.abort(new Error("deadline"));
  assert.equal(await impatient, "deadline");
  release();
  assert.equal(await patient, "ok-token", "the load went on for the other waiter");
  assert.equal(loads, 2);
});

test("inside a call: the attempt asks for its account's token; a 401 invalidates it and the retry loads a new one", async () => {
  const { pool, timers, options } = setup({ n: 0 });
  for (const a of ["acct-1", "acct-2"]) pool.register("ACCOUNT", a);
  let issued = 0;
  const creds = credentialCache({ key: () => "shared", now: timers.monotonicMs, load: async () => ({ value: `t${++issued}` }) });
  const seen = [];
  const res = await drive(timers, call(pool, "shop", async ({ lease, signal }) => {
    const token = await creds.get(lease, { signal });
    seen.push(token);
    if (token === "t1") {
      creds.invalidate(lease);
      return answer(401);
    }
    return answer(200);
  }, { ...options, readOnly: true }));
  assert.equal(res.status, 200);
  assert.deepEqual(seen, ["t1", "t2"]);
});
