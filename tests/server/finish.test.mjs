// Finishing a step over HTTP (SPEC §3 "Capacity, waiting and finishing a step", §8): `POST
// /api/leases/{leaseId}/outcome` reports the outcome on the lease's cell, releases the lease and,
// with `next`, answers the next lease (or `null` with Retry-After) — once per lease: a repeated
// finish is 409 lease-finished and reports nothing again; a lapsed lease's outcome still counts.
// Its body is read as strictly as the other routes' (each wrong field named), an id this server
// never issued is 404, and the metrics call the route `finish`. Also `maxLeases` on `POST
// /api/resources`. Runs against the Node server and, through tests/edge/finish.test.mjs, the
// edge worker; each test has its own pool with a clock it moves by hand.
import { test } from "node:test";
import assert from "node:assert/strict";
import { withServer, call, assertProblem } from "./_http-support.mjs";

const register = (s, value, extra = {}) => call(s.url, "POST", "/api/resources", { body: { kind: "PROXY", value, ...extra } });
const acquire = (s, context, extra = {}) => call(s.url, "POST", "/api/leases", { body: { context, ...extra } });
const finish = (s, id, body) => call(s.url, "POST", `/api/leases/${id}/outcome`, { body });
/** The cell of `value` in `context` (consecutive counts tell how many outcomes were reported). */
async function cell(s, value, context) {
  const r = await call(s.url, "GET", `/api/resources?context=${encodeURIComponent(context)}`);
  assert.equal(r.status, 200, r.text);
  const view = r.json.resources.find((v) => v.value === value);
  return { lease: view.lease, cell: view.cells.find((c) => c.context === context) ?? null };
}
const TIMEOUT = { ok: false, failure: "TIMEOUT", latencyMs: 20 };

test("finish with next: 200 and the next lease with its own leaseId; the outcome is on the cell", async () => {
  await withServer({}, async (s) => {
    assert.equal((await register(s, "p1")).status, 201);
    const first = await acquire(s, "shop");
    assert.equal(first.status, 201, first.text);
    const r = await finish(s, first.json.leaseId, { outcome: TIMEOUT, next: {} });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get("content-type"), "application/json");
    assert.equal(r.headers.get("retry-after"), null);
    const next = r.json.next;
    assert.deepEqual(Object.keys(r.json), ["next"]);
    assert.equal(next.value, "p1");
    assert.equal(next.context, "shop", "next.context defaults to the lease's");
    assert.ok(next.token > first.json.token);
    assert.equal(typeof next.leaseId, "string");
    assert.notEqual(next.leaseId, first.json.leaseId);
    const now = await cell(s, "p1", "shop");
    assert.equal(now.cell.consecutiveFailures, 1, "the outcome was reported");
    assert.equal(now.lease.token, next.token, "the next lease is the one held");
    // The next lease works like any other: it finishes in turn, without next.
    const last = await finish(s, next.leaseId, { outcome: { ok: true, latencyMs: 7 } });
    assert.equal(last.status, 200, last.text);
    assert.deepEqual(last.json, { next: null });
    assert.equal(last.headers.get("retry-after"), null, "no Retry-After when next was not asked for");
    const after = await cell(s, "p1", "shop");
    assert.equal(after.lease, null, "released");
    assert.equal(after.cell.consecutiveSuccesses, 1);
  });
});

test("finish: next in another context and groups; next null with Retry-After when nothing is eligible", async () => {
  await withServer({ config: { leaseTtlMs: 30_000 } }, async (s) => {
    assert.equal((await register(s, "dc-1", { group: "dc" })).status, 201);
    assert.equal((await register(s, "res-1", { group: "res" })).status, 201);
    const a = await acquire(s, "shop", { groups: ["dc"] });
    assert.equal(a.json.value, "dc-1");
    const b = await finish(s, a.json.leaseId, { outcome: { ok: true }, next: { context: "news", groups: ["res"] } });
    assert.equal(b.status, 200, b.text);
    assert.deepEqual([b.json.next.value, b.json.next.context], ["res-1", "news"]);
    // Hold dc-1 in "news" too: then nothing of group dc is free there.
    const held = await acquire(s, "news", { groups: ["dc"] });
    assert.equal(held.status, 201, held.text);
    const c = await finish(s, b.json.next.leaseId, { outcome: { ok: true }, next: { groups: ["dc"] } });
    assert.equal(c.status, 200, c.text);
    assert.deepEqual(c.json, { next: null });
    assert.equal(c.headers.get("retry-after"), "30", "when the held lease of group dc expires");
    assert.equal((await cell(s, "res-1", "news")).lease, null, "the finished lease was released all the same");
  });
});

test("a repeated finish of one lease is 409 lease-finished and reports nothing twice", async () => {
  await withServer({}, async (s) => {
    await register(s, "p1");
    const a = await acquire(s, "shop");
    const first = await finish(s, a.json.leaseId, { outcome: TIMEOUT, next: {} });
    assert.equal(first.status, 200, first.text);
    for (const body of [{ outcome: TIMEOUT, next: {} }, { outcome: TIMEOUT }, { outcome: { ok: true } }]) {
      const again = await finish(s, a.json.leaseId, body);
      assertProblem(again, 409, "lease-finished", JSON.stringify(body));
    }
    const now = await cell(s, "p1", "shop");
    assert.equal(now.cell.consecutiveFailures, 1, "reported once");
    assert.equal(now.lease.token, first.json.next.token, "the next lease of the first finish is still held");
  });
});

test("finish of a lapsed lease still reports its outcome (and leases the next)", async () => {
  await withServer({ config: { leaseTtlMs: 10_000 } }, async (s) => {
    await register(s, "p1");
    const a = await acquire(s, "shop");
    s.clock.now += 10_001; // the lease has lapsed
    const r = await finish(s, a.json.leaseId, { outcome: TIMEOUT, next: {} });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.next.value, "p1");
    const now = await cell(s, "p1", "shop");
    assert.equal(now.cell.consecutiveFailures, 1, "the outcome counted");
    // And a lapsed lease whose resource was leased again meanwhile: reported, the holder kept.
    s.clock.now += 10_001;
    const holder = await acquire(s, "shop");
    assert.equal(holder.status, 201, holder.text);
    const late = await finish(s, r.json.next.leaseId, { outcome: TIMEOUT });
    assert.equal(late.status, 200, late.text);
    const then = await cell(s, "p1", "shop");
    assert.equal(then.cell.consecutiveFailures, 2);
    assert.equal(then.lease.token, holder.json.token, "only the current holder's release releases");
  });
});

test("finish bodies are read strictly: each wrong field is a 400 naming it; nothing is reported", async () => {
  await withServer({}, async (s) => {
    await register(s, "p1");
    const id = (await acquire(s, "shop")).json.leaseId;
    const cases = [
      [{}, /missing field "outcome"/],
      [{ outcome: { ok: true }, extra: 1 }, /unknown field \(the fields are outcome, next\)/],
      [{ outcome: { ok: true }, next: null }, /next must be an object/],
      [{ outcome: { ok: true }, next: [] }, /next must be an object/],
      [{ outcome: { ok: true }, next: { waitms: 5 } }, /unknown field in next \(the fields are context, groups, waitMs\)/],
      [{ outcome: { ok: true }, next: { context: 5 } }, /next\.context must be a string/],
      [{ outcome: { ok: true }, next: { groups: "dc" } }, /next\.groups must be an array/],
      [{ outcome: { ok: true }, next: { groups: [1] } }, /next\.groups\[0\] must be a group name/],
      [{ outcome: { ok: true }, next: { waitMs: -1 } }, /next\.waitMs must be a non-negative integer/],
      [{ outcome: { ok: true }, next: { waitMs: 1.5 } }, /next\.waitMs must be a non-negative integer/],
      [{ outcome: { ok: true }, next: { waitMs: "10" } }, /next\.waitMs must be a non-negative integer/],
      [{ outcome: { ok: true }, next: { waitMs: 30_001 } }, /next\.waitMs is over this server's limit of 30000 ms/],
    ];
    for (const [body, detail] of cases) {
      const r = await finish(s, id, body);
      assertProblem(r, 400, "bad-request", JSON.stringify(body));
      assert.match(r.json.detail, detail, JSON.stringify(body));
    }
    // An outcome the engine refuses: 400 invalid-argument, naming what is wrong.
    const bad = await finish(s, id, { outcome: { ok: false, failure: "EXPLODED" } });
    assertProblem(bad, 400, "invalid-argument");
    assert.match(bad.json.detail, /EXPLODED|failure/);
    const dup = await call(s.url, "POST", `/api/leases/${id}/outcome`, { body: '{"outcome":{"ok":true},"outcome":{"ok":false}}' });
    assertProblem(dup, 400, "bad-request");
    assert.match(dup.json.detail, /outcome: duplicate field/);
    const now = await cell(s, "p1", "shop");
    assert.equal(now.cell, null, "nothing was reported");
    assert.notEqual(now.lease, null, "nor released");
    // The same lease finishes normally afterwards.
    assert.equal((await finish(s, id, { outcome: { ok: true } })).status, 200);
  });
});

test("finish of an id this server never issued is 404 no-such-lease; GET on the route is 405", async () => {
  await withServer({}, async (s) => {
    await register(s, "p1");
    const id = (await acquire(s, "shop")).json.leaseId;
    const flipped = id.slice(0, -2) + (id.at(-2) === "A" ? "B" : "A") + id.at(-1);
    for (const bad of [flipped, "AAAAAAAAAAE.AAAA", "x"]) {
      assertProblem(await finish(s, bad, { outcome: { ok: true } }), 404, "no-such-lease", bad);
    }
    assertProblem(await call(s.url, "GET", `/api/leases/${id}/outcome`), 405, "method-not-allowed");
    assert.equal((await cell(s, "p1", "shop")).cell, null, "nothing was reported");
  });
});

test("finish requests are counted under the route name finish in /metrics", async () => {
  await withServer({}, async (s) => {
    await register(s, "p1");
    const a = await acquire(s, "shop");
    await finish(s, a.json.leaseId, { outcome: { ok: true } });
    await finish(s, a.json.leaseId, { outcome: { ok: true } });
    const m = (await call(s.url, "GET", "/metrics")).text;
    assert.match(m, /repute_http_request_duration_seconds_count\{[^}]*route="finish"[^}]*status="200"[^}]*\} 1/);
    assert.match(m, /repute_http_request_duration_seconds_count\{[^}]*route="finish"[^}]*status="409"[^}]*\} 1/);
  });
});

test("POST /api/resources: maxLeases must be an integer from 1 to 1024", async () => {
  await withServer({}, async (s) => {
    for (const maxLeases of [0, 1025, -1, 2.5, "3", null, true]) {
      const r = await register(s, "p1", { maxLeases });
      assertProblem(r, 400, "bad-request", String(maxLeases));
      assert.match(r.json.detail, /maxLeases must be an integer from 1 to 1024/);
    }
    const r = await call(s.url, "GET", "/api/resources");
    assert.deepEqual(r.json.resources, [], "nothing was registered");
  });
});

test("POST /api/resources: maxLeases is set, echoed, kept when absent, changed when given", async () => {
  await withServer({}, async (s) => {
    const a = await register(s, "p1", { maxLeases: 3 });
    assert.equal(a.status, 201, a.text);
    assert.equal(a.json.maxLeases, 3);
    const plain = await register(s, "p2");
    assert.equal(plain.json.maxLeases, 1, "the default: one lease at a time");
    const kept = await register(s, "p1");
    assert.deepEqual([kept.status, kept.json.maxLeases], [200, 3], "left out: unchanged");
    const changed = await register(s, "p1", { maxLeases: 2, group: "dc" });
    assert.deepEqual([changed.status, changed.json.maxLeases, changed.json.group], [200, 2, "dc"]);
    // Capacity 2: two leases of p1 at once in one context, not three.
    const leases = [];
    for (let i = 0; i < 3; i++) leases.push(await acquire(s, "shop", { groups: ["dc"] }));
    assert.deepEqual(leases.map((l) => l.status), [201, 201, 409]);
    assert.deepEqual(leases.slice(0, 2).map((l) => l.json.value), ["p1", "p1"]);
  });
});
