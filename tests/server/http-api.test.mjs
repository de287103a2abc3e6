// The HTTP API of SPEC §8 as served by `serve` (http-server.js → handler.js) over an in-process
// `openPool`: every endpoint's success and documented failure responses (status, content-type,
// Retry-After, WWW-Authenticate, lease bodies and ids, problem+json), values with `:` `/` `|` and
// non-ASCII in paths, canonical lease ids, the lease lifecycle against a stale holder, snapshot
// export/import, the metric families, readiness, and the loopback-only rule without tokens.
// Each test has its own server on 127.0.0.1:0, a temporary folder and a clock it moves by hand.
import { test } from "node:test";
import assert from "node:assert/strict";
import { pbkdf2 } from "node:crypto";
import http from "node:http";
import { openPool } from "../../pkg-scripts/lib/node/open-pool.js";
import { serve } from "../../pkg-scripts/lib/node/http-server.js";
import { T0, withServer, call, assertProblem, resourcePath, tempDir, runServeToExit, edgeSkip } from "./_http-support.mjs";
import { rm } from "node:fs/promises";

const JSON_TYPE = "application/json";


const register = (s, kind, value) => call(s.url, "POST", "/api/resources", { body: { kind, value } });
const acquire = (s, context) => call(s.url, "POST", "/api/leases", { body: { context } });
const renew = (s, id) => call(s.url, "POST", `/api/leases/${id}/renewal`);
const release = (s, id) => call(s.url, "DELETE", `/api/leases/${id}`);
const report = (s, kind, value, context, outcome) => call(s.url, "POST", "/api/outcomes", { body: { kind, value, context, outcome } });
const resources = async (s, query = "") => {
  const r = await call(s.url, "GET", `/api/resources${query}`);
  assert.equal(r.status, 200, r.text);
  return r.json.resources;
};
const find = (list, kind, value) => list.find((r) => r.kind === kind && r.value === value);

test("GET /healthz and /readyz answer 200 with JSON once the pool is ready", async () => {
  await withServer({}, async (s) => {
    const h = await call(s.url, "GET", "/healthz");
    assert.equal(h.status, 200);
    assert.equal(h.headers.get("content-type"), JSON_TYPE);
    assert.deepEqual(h.json, { status: "ok" });
    const r = await call(s.url, "GET", "/readyz");
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), JSON_TYPE);
    assert.deepEqual(r.json, { ready: true });
  });
});

test("serve(openPool) resolves with the handler in place: its first request is served, never 503 not-ready", async () => {
  const dir = await tempDir("open");
  const pool = await openPool({ dir, now: () => T0, seed: 7, checkpointMs: 0, handleSignals: false, onError: () => {} });
  // The handler digests its tokens: a trip through the thread pool. Keep every thread of it busy for
  // a while (as a loaded CI machine did), so that trip ends well after the server listens.
  const busy = Array.from({ length: 8 }, () => new Promise((ok) => pbkdf2("x", "y", 200_000, 32, "sha256", ok)));
  const token = "opr-first-request-0123456789";
  const server = await serve(pool, { host: "127.0.0.1", port: 0, tokens: [{ token, role: "operator" }] });
  try {
    const settled = await Promise.race([server.ready.then(() => "settled"), Promise.resolve().then(() => "pending")]);
    assert.equal(settled, "settled");
    const r = await call(server.url, "POST", "/api/resources", { token, body: { kind: "PROXY", value: "p1" } });
    assert.equal(r.status, 201, r.text);
  } finally {
    await Promise.all(busy);
    await server.close();
    await pool.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("the server listens while the pool opens: /healthz 200, /readyz and the API 503 not-ready with Retry-After, then ready", async () => {
  const dir = await tempDir("opening");
  // The real openPool, started only when the test says so: the window is the test's to hold.
  let go;
  const opening = new Promise((r) => (go = r)).then(() =>
    openPool({ dir, now: () => T0, seed: 7, checkpointMs: 0, handleSignals: false, onError: () => {} }));
  const server = await serve(opening, { host: "127.0.0.1", port: 0 });
  try {
    const ready = await call(server.url, "GET", "/readyz");
    assert.equal(ready.status, 503);
    assert.deepEqual(ready.json, { ready: false });
    assert.equal((await call(server.url, "GET", "/healthz")).status, 200);
    for (const [m, p, body] of [["GET", "/api/resources"], ["POST", "/api/leases", { context: "c" }], ["GET", "/metrics"]]) {
      const r = await call(server.url, m, p, { body });
      assertProblem(r, 503, "not-ready", `${m} ${p}`);
      assert.equal(r.headers.get("retry-after"), "1");
    }
    go();
    await server.ready;
    assert.deepEqual((await call(server.url, "GET", "/readyz")).json, { ready: true });
    assert.equal((await call(server.url, "POST", "/api/resources", { body: { kind: "PROXY", value: "p1" } })).status, 201);
  } finally {
    await server.close();
    await (await opening).close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("a pool that fails to open leaves the server not ready, and `ready` rejects with its error", async () => {
  const server = await serve(Promise.reject(Object.assign(new Error("damaged"), { code: "X" })), { host: "127.0.0.1", port: 0 });
  try {
    await assert.rejects(server.ready, /damaged/);
    assert.equal((await call(server.url, "GET", "/readyz")).status, 503);
  } finally {
    await server.close();
  }
});

test("POST /api/resources registers: 201 {created:true}, then 200 {created:false}", async () => {
  await withServer({}, async (s) => {
    const first = await register(s, "PROXY", "p1");
    assert.equal(first.status, 201);
    assert.equal(first.headers.get("content-type"), JSON_TYPE);
    assert.equal(first.json.created, true);
    const again = await register(s, "PROXY", "p1");
    assert.equal(again.status, 200);
    assert.equal(again.json.created, false);
    // Same value, another kind: another resource.
    assert.equal((await register(s, "ACCOUNT", "p1")).status, 201);
    const list = await resources(s);
    assert.deepEqual(
      list.map((r) => [r.kind, r.value]),
      [["PROXY", "p1"], ["ACCOUNT", "p1"]],
    );
    for (const r of list) {
      assert.deepEqual(r.cells, []);
      assert.equal(r.blocked, null);
      assert.equal(r.lease, null);
    }
  });
});

test("GET /api/resources filters by context and state", async () => {
  await withServer({}, async (s) => {
    for (const v of ["a", "b", "c"]) await register(s, "PROXY", v);
    assert.equal((await report(s, "PROXY", "a", "shop", { ok: false, failure: "TIMEOUT" })).status, 204);
    assert.equal((await report(s, "PROXY", "a", "shop", { ok: false, failure: "TIMEOUT" })).status, 204);
    assert.equal((await report(s, "PROXY", "b", "shop", { ok: true, latencyMs: 12 })).status, 204);
    assert.equal((await report(s, "PROXY", "c", "search", { ok: true })).status, 204);

    const all = await resources(s);
    assert.equal(all.length, 3);
    const a = find(all, "PROXY", "a").cells[0];
    assert.equal(a.context, "shop");
    assert.equal(a.state, "COOLING");
    assert.equal(a.score, -10);
    assert.equal(a.consecutiveFailures, 2);
    assert.equal(a.cooldownCause, "TIMEOUT");
    assert.equal(a.cooldownUntil, T0 + 120000);
    const b = find(all, "PROXY", "b").cells[0];
    assert.equal(b.p50LatencyMs, 12);

    const cooling = await resources(s, "?state=COOLING");
    assert.deepEqual(cooling.map((r) => r.value), ["a"]);
    const shop = await resources(s, "?context=shop");
    assert.ok(shop.every((r) => r.cells.every((c) => c.context === "shop")));
    assert.ok(!shop.some((r) => r.cells.some((c) => c.context === "search")));
    const healthyShop = await resources(s, "?context=shop&state=HEALTHY");
    assert.ok(find(healthyShop, "PROXY", "b"), JSON.stringify(healthyShop));
    assert.ok(!healthyShop.some((r) => r.cells.some((c) => c.state !== "HEALTHY")));
  });
});

test("DELETE /api/resources/{kind}/{value}: 204, then 404 unknown-resource", async () => {
  await withServer({}, async (s) => {
    await register(s, "SESSION", "s1");
    await report(s, "SESSION", "s1", "ctx", { ok: true });
    const del = await call(s.url, "DELETE", resourcePath("SESSION", "s1"));
    assert.equal(del.status, 204);
    assert.equal(del.text, "");
    assert.deepEqual(await resources(s), []);
    assertProblem(await call(s.url, "DELETE", resourcePath("SESSION", "s1")), 404, "unknown-resource");
    // Another kind with the same value is another resource.
    await register(s, "PROXY", "s1");
    assertProblem(await call(s.url, "DELETE", resourcePath("ACCOUNT", "s1")), 404, "unknown-resource");
  });
});

test("block ?seconds=N and ?permanent=true: 204; unblock: 200 {unblocked}; unknown resource 404", async () => {
  await withServer({}, async (s) => {
    await register(s, "PROXY", "t");
    await register(s, "PROXY", "p");
    const temp = await call(s.url, "POST", resourcePath("PROXY", "t", "/block?seconds=90"));
    assert.equal(temp.status, 204);
    assert.equal(temp.text, "");
    const perm = await call(s.url, "POST", resourcePath("PROXY", "p", "/block?permanent=true"));
    assert.equal(perm.status, 204);
    let list = await resources(s);
    assert.deepEqual(find(list, "PROXY", "t").blocked, { until: T0 + 90000 });
    assert.deepEqual(find(list, "PROXY", "p").blocked, { permanent: true });
    // Fractional seconds: round(seconds × 1000) ms.
    assert.equal((await call(s.url, "POST", resourcePath("PROXY", "t", "/block?seconds=1.5"))).status, 204);
    list = await resources(s);
    assert.deepEqual(find(list, "PROXY", "t").blocked, { until: T0 + 1500 });

    const un = await call(s.url, "DELETE", resourcePath("PROXY", "p", "/block"));
    assert.equal(un.status, 200);
    assert.equal(un.headers.get("content-type"), JSON_TYPE);
    assert.deepEqual(un.json, { unblocked: true });
    const again = await call(s.url, "DELETE", resourcePath("PROXY", "p", "/block"));
    assert.equal(again.status, 200);
    assert.deepEqual(again.json, { unblocked: false });
    assert.equal(find(await resources(s), "PROXY", "p").blocked, null);

    assertProblem(await call(s.url, "POST", resourcePath("PROXY", "nope", "/block?seconds=5")), 404, "unknown-resource");
    assertProblem(await call(s.url, "DELETE", resourcePath("PROXY", "nope", "/block")), 404, "unknown-resource");
  });
});

test("POST /api/leases: 201 with the lease fields and a leaseId; the resource shows the lease", async () => {
  await withServer({}, async (s) => {
    await register(s, "ACCOUNT", "acc-1");
    const r = await acquire(s, "checkout");
    assert.equal(r.status, 201);
    assert.equal(r.headers.get("content-type"), JSON_TYPE);
    const { leaseId, ...lease } = r.json;
    assert.deepEqual(lease, {
      kind: "ACCOUNT",
      value: "acc-1",
      group: null,
      context: "checkout",
      token: 1,
      leasedAt: T0,
      expiresAt: T0 + 30000,
    });
    assert.equal(typeof leaseId, "string");
    assert.match(leaseId, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    // The id is opaque: the value does not appear in it in clear.
    assert.ok(!leaseId.includes("acc-1"));
    const view = find(await resources(s), "ACCOUNT", "acc-1");
    assert.deepEqual(view.lease, lease);
    // acquire never creates a cell.
    assert.deepEqual(view.cells, []);
  });
});

test("POST /api/leases: 409 nothing-eligible with Retry-After = seconds until nextChangeAt", async () => {
  await withServer({}, async (s) => {
    // No resource at all: nothing can become eligible by time alone → no Retry-After.
    const none = await acquire(s, "c");
    assertProblem(none, 409, "nothing-eligible");
    assert.equal(none.headers.get("retry-after"), null);

    await register(s, "PROXY", "only");
    assert.equal((await acquire(s, "c")).status, 201);
    const busy = await acquire(s, "c");
    assertProblem(busy, 409, "nothing-eligible");
    assert.equal(busy.headers.get("retry-after"), "30"); // the lease's TTL
    s.clock.now = T0 + 29500;
    const soon = await acquire(s, "c");
    assert.equal(soon.status, 409);
    assert.equal(soon.headers.get("retry-after"), "1"); // rounded up, at least 1
    s.clock.now = T0 + 30000; // the lease has expired (expiry is exclusive)
    assert.equal((await acquire(s, "c")).status, 201);
  });
});

test("409 Retry-After follows a temporary block and a half-open cooldown; none for a permanent block", async () => {
  await withServer({}, async (s) => {
    await register(s, "PROXY", "x");
    await call(s.url, "POST", resourcePath("PROXY", "x", "/block?seconds=90"));
    const blocked = await acquire(s, "c");
    assertProblem(blocked, 409, "nothing-eligible");
    assert.equal(blocked.headers.get("retry-after"), "90");

    await call(s.url, "POST", resourcePath("PROXY", "x", "/block?permanent=true"));
    const perm = await acquire(s, "c");
    assertProblem(perm, 409, "nothing-eligible");
    assert.equal(perm.headers.get("retry-after"), null);

    await call(s.url, "DELETE", resourcePath("PROXY", "x", "/block"));
    await report(s, "PROXY", "x", "c", { ok: false, failure: "TIMEOUT" });
    await report(s, "PROXY", "x", "c", { ok: false, failure: "TIMEOUT" });
    const cooling = await acquire(s, "c");
    assertProblem(cooling, 409, "nothing-eligible");
    assert.equal(cooling.headers.get("retry-after"), "120"); // 60 s × 2^1
    // Another context is not affected by the cell of "c".
    assert.equal((await acquire(s, "other")).status, 201);
  });
});

test("renewal: 200 with the same token and leaseId, expiry moved to now + TTL", async () => {
  await withServer({}, async (s) => {
    await register(s, "PROXY", "r");
    const lease = (await acquire(s, "c")).json;
    s.clock.now = T0 + 10000;
    const r = await renew(s, lease.leaseId);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), JSON_TYPE);
    assert.deepEqual(r.json, { ...lease, expiresAt: T0 + 10000 + 30000 });
    assert.equal(r.json.leaseId, lease.leaseId, "one lease, one id");
    // Renewed past the original expiry: still held.
    s.clock.now = T0 + 35000;
    assertProblem(await acquire(s, "c"), 409, "nothing-eligible");
    assert.equal((await renew(s, lease.leaseId)).status, 200);
  });
});

test("release: 204; release again 404 no-such-lease; renewal after release 409 lease-not-renewed", async () => {
  await withServer({}, async (s) => {
    await register(s, "PROXY", "r");
    const lease = (await acquire(s, "c")).json;
    const rel = await release(s, lease.leaseId);
    assert.equal(rel.status, 204);
    assert.equal(rel.text, "");
    assertProblem(await release(s, lease.leaseId), 404, "no-such-lease");
    assertProblem(await renew(s, lease.leaseId), 409, "lease-not-renewed");
    assert.equal(find(await resources(s), "PROXY", "r").lease, null);
    // The resource is free again, under a new token.
    const next = await acquire(s, "c");
    assert.equal(next.status, 201);
    assert.equal(next.json.token, lease.token + 1);
    assert.notEqual(next.json.leaseId, lease.leaseId);
  });
});

test("renewal of a lease on a blocklisted resource is 409; release still works", async () => {
  await withServer({}, async (s) => {
    await register(s, "PROXY", "b");
    const lease = (await acquire(s, "c")).json;
    await call(s.url, "POST", resourcePath("PROXY", "b", "/block?seconds=60"));
    assertProblem(await renew(s, lease.leaseId), 409, "lease-not-renewed");
    assert.equal((await release(s, lease.leaseId)).status, 204);
  });
});

test("a stale holder (its lease expired and the resource was leased again) cannot touch the new lease", async () => {
  await withServer({ config: { leaseTtlMs: 200 } }, async (s) => {
    await register(s, "PROXY", "only");
    const old = (await acquire(s, "c")).json;
    assert.equal(old.expiresAt, T0 + 200);
    s.clock.now = T0 + 250;
    assertProblem(await renew(s, old.leaseId), 409, "lease-not-renewed", "renewing an expired lease");
    const cur = (await acquire(s, "c")).json;
    assert.equal(cur.value, "only");
    assert.ok(cur.token > old.token);
    assertProblem(await renew(s, old.leaseId), 409, "lease-not-renewed");
    assertProblem(await release(s, old.leaseId), 404, "no-such-lease");
    // The current holder is untouched.
    const view = find(await resources(s), "PROXY", "only");
    assert.equal(view.lease.token, cur.token);
    assert.equal((await renew(s, cur.leaseId)).status, 200);
    assert.equal((await release(s, cur.leaseId)).status, 204);
  });
});

test("lease ids are canonical: one id per lease; any altered id is 404/409, never 5xx", async () => {
  await withServer({}, async (s) => {
    await register(s, "PROXY", "one");
    await register(s, "PROXY", "two");
    const a = (await acquire(s, "c")).json;
    const b = (await acquire(s, "c")).json;
    assert.notEqual(a.leaseId, b.leaseId);
    // The same lease always gives the same id (renewal returns it; so does a second renewal).
    assert.equal((await renew(s, a.leaseId)).json.leaseId, a.leaseId);
    assert.equal((await renew(s, a.leaseId)).json.leaseId, a.leaseId);

    const [tokA, sealA] = a.leaseId.split(".");
    const [tokB, sealB] = b.leaseId.split(".");
    const flip = (str, i) => str.slice(0, i) + (str[i] === "A" ? "B" : "A") + str.slice(i + 1);
    // The last character of the 8-byte token part carries 2 unused bits: a different spelling of
    // the same bytes must still be refused (canonical ids).
    const last = tokA[tokA.length - 1];
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const sameBits = alphabet[(alphabet.indexOf(last) & ~3) | ((alphabet.indexOf(last) + 1) & 3)];
    const altered = {
      "flip a token character": `${flip(tokA, 3)}.${sealA}`,
      "flip a sealed character": `${tokA}.${flip(sealA, 10)}`,
      "flip the last sealed character": `${tokA}.${flip(sealA, sealA.length - 1)}`,
      "unused bits of the token part": `${tokA.slice(0, -1)}${sameBits}.${sealA}`,
      "base64 padding added": `${a.leaseId}=`,
      "padding on the token part": `${tokA}=.${sealA}`,
      "truncated by one": a.leaseId.slice(0, -1),
      "truncated to the token part": tokA,
      "token part and dot only": `${tokA}.`,
      "extra segment": `${a.leaseId}.x`,
      "another lease's token part": `${tokB}.${sealA}`,
      "another lease's sealed part": `${tokA}.${sealB}`,
      "upper-cased": a.leaseId.toUpperCase(),
      "token zero": `AAAAAAAAAAA.${sealA}`,
      "token above 2^53": `_____________.${sealA}`,
      "standard base64 alphabet": a.leaseId.replaceAll("-", "+").replaceAll("_", "/").replace(/^/, "+"),
      "a long id": `${tokA}.${"A".repeat(4000)}`,
      "not base64": "%00%01",
    };
    for (const [name, id] of Object.entries(altered)) {
      if (id === a.leaseId) continue;
      const path = encodeURIComponent(id);
      const r1 = await call(s.url, "POST", `/api/leases/${path}/renewal`);
      assertProblem(r1, 409, "lease-not-renewed", `renew with ${name}`);
      const r2 = await call(s.url, "DELETE", `/api/leases/${path}`);
      assertProblem(r2, 404, "no-such-lease", `release with ${name}`);
    }
    // Nothing was disturbed: both leases are still held and work.
    const held = (await resources(s)).map((r) => r.lease?.token).sort();
    assert.deepEqual(held, [a.token, b.token].sort());
    assert.equal((await renew(s, a.leaseId)).status, 200);
    assert.equal((await release(s, b.leaseId)).status, 204);
  });
});

test("deregistering a leased resource ends its lease: the old id is 404/409, a re-registered namesake is unaffected", async () => {
  await withServer({}, async (s) => {
    await register(s, "PROXY", "gone");
    const lease = (await acquire(s, "c")).json;
    assert.equal((await call(s.url, "DELETE", resourcePath("PROXY", "gone"))).status, 204);
    assertProblem(await renew(s, lease.leaseId), 409, "lease-not-renewed");
    assertProblem(await release(s, lease.leaseId), 404, "no-such-lease");
    assert.equal((await register(s, "PROXY", "gone")).status, 201);
    const again = (await acquire(s, "c")).json;
    assert.ok(again.token > lease.token);
    assertProblem(await release(s, lease.leaseId), 404, "no-such-lease");
    assert.equal(find(await resources(s), "PROXY", "gone").lease.token, again.token);
    assert.equal((await release(s, again.leaseId)).status, 204);
  });
});

test("problem details never carry the password of a proxy URL value", async () => {
  await withServer({}, async (s) => {
    for (const v of ["http://alice:S3cretPass@proxy.example:8080", "socks5://bob:S3cretPass@10.0.0.1:1080/"]) {
      const answers = [
        await report(s, "PROXY", v, "c", { ok: true }),
        await call(s.url, "POST", resourcePath("PROXY", v, "/block?seconds=5")),
        await call(s.url, "DELETE", resourcePath("PROXY", v, "/block")),
        await call(s.url, "DELETE", resourcePath("PROXY", v)),
      ];
      for (const r of answers) {
        assertProblem(r, 404, "unknown-resource");
        assert.ok(!r.text.includes("S3cretPass"), r.text);
      }
    }
  });
});

test("ACCOUNT values with a `/`, `=` or `\\` separator show masked in events and problem details (they showed in clear)", async () => {
  await withServer({}, async (s) => {
    const shown = { "login57/qzx57pw": "login57/***", "login58=qzx58pw": "login58=***", "login56\\qzx56pw": "login56\\***" };
    for (const v of Object.keys(shown)) assert.equal((await register(s, "ACCOUNT", v)).status, 201);
    const events = (await call(s.url, "GET", "/api/events")).json.events.filter((e) => e.type === "RESOURCE_REGISTERED");
    assert.deepEqual(events.map((e) => e.value), Object.values(shown));
    const unknown = await report(s, "ACCOUNT", "login59/qzx59pw", "c", { ok: true });
    assertProblem(unknown, 404, "unknown-resource");
    assert.doesNotMatch(unknown.text, /qzx59pw/);
    assert.doesNotMatch(JSON.stringify(events), /qzx5\dpw/);
  });
});

test("POST /api/outcomes: 204; unknown resource 404; the cell reflects the report", async () => {
  await withServer({}, async (s) => {
    await register(s, "PROXY", "o");
    const ok = await report(s, "PROXY", "o", "ctx", { ok: true, latencyMs: 40 });
    assert.equal(ok.status, 204);
    assert.equal(ok.text, "");
    assert.equal((await report(s, "PROXY", "o", "ctx", { ok: false, failure: "BLOCKED" })).status, 204);
    const cell = find(await resources(s), "PROXY", "o").cells[0];
    assert.equal(cell.score, 5 - 30);
    assert.equal(cell.consecutiveFailures, 1);
    assert.equal(cell.state, "HEALTHY");
    assert.equal(cell.p50LatencyMs, 40);
    assertProblem(await report(s, "PROXY", "missing", "ctx", { ok: true }), 404, "unknown-resource");
    assertProblem(await report(s, "ACCOUNT", "o", "ctx", { ok: true }), 404, "unknown-resource");
  });
});

test("GET /api/events: {events, next} in seq order, keyset pagination with after and limit", async () => {
  await withServer({}, async (s) => {
    await register(s, "PROXY", "e");
    const lease = (await acquire(s, "c")).json;
    await acquire(s, "c"); // rejected
    await release(s, lease.leaseId);
    await call(s.url, "POST", resourcePath("PROXY", "e", "/block?permanent=true"));
    await call(s.url, "DELETE", resourcePath("PROXY", "e", "/block"));

    const all = await call(s.url, "GET", "/api/events");
    assert.equal(all.status, 200);
    assert.equal(all.headers.get("content-type"), JSON_TYPE);
    assert.equal(all.json.next, null);
    const events = all.json.events;
    assert.deepEqual(
      events.map((e) => e.type),
      ["RESOURCE_REGISTERED", "RESOURCE_LEASED", "ACQUISITION_REJECTED", "LEASE_RELEASED", "RESOURCE_BLOCKLISTED", "RESOURCE_UNBLOCKED"],
    );
    assert.deepEqual(events.map((e) => e.seq), [1, 2, 3, 4, 5, 6]);
    for (const e of events) assert.equal(e.at, T0);
    assert.equal(events[2].context, "c");
    assert.equal(events[4].permanent, true);

    const pages = [];
    let after = 0;
    for (;;) {
      const page = await call(s.url, "GET", `/api/events?after=${after}&limit=4`);
      assert.equal(page.status, 200);
      pages.push(page.json.events.map((e) => e.seq));
      if (page.json.next === null) break;
      assert.equal(page.json.next, page.json.events.at(-1).seq);
      after = page.json.next;
    }
    assert.deepEqual(pages, [[1, 2, 3, 4], [5, 6]]);
    const tail = await call(s.url, "GET", "/api/events?after=6");
    assert.deepEqual(tail.json, { events: [], next: null });
    const mid = await call(s.url, "GET", "/api/events?after=2&limit=1");
    assert.deepEqual(mid.json.events.map((e) => e.seq), [3]);
    assert.equal(mid.json.next, 3);
  });
});

test("values with ':' '/' '|', '%', spaces and non-ASCII round-trip through percent-encoded paths", async () => {
  const values = [
    "http://user:p@ss@10.0.0.1:8080/a/b?x=1|y=2",
    "a/b/c",
    "|pipe|",
    "host:port",
    "100% sure",
    "%2F literally",
    "a+b c",
    "#frag?q",
    "ключ-日本語-é",
    "emoji 🚀 value",
    "trailing/",
    "/leading",
  ];
  await withServer({}, async (s) => {
    for (const v of values) assert.equal((await register(s, "PROXY", v)).status, 201, v);
    const listed = (await resources(s)).map((r) => r.value).sort();
    assert.deepEqual(listed, [...values].sort());
    for (const v of values) {
      assert.equal((await call(s.url, "POST", resourcePath("PROXY", v, "/block?seconds=60"))).status, 204, v);
      const view = find(await resources(s), "PROXY", v);
      assert.deepEqual(view.blocked, { until: T0 + 60000 }, v);
      // Exactly that resource, no other.
      assert.equal((await resources(s)).filter((r) => r.blocked).length, 1, v);
      const un = await call(s.url, "DELETE", resourcePath("PROXY", v, "/block"));
      assert.deepEqual(un.json, { unblocked: true }, v);
    }
    // (Contexts named by index: `ctx:${v}` would hold the first value's credential, refused.)
    for (const [i, v] of values.entries()) {
      assert.equal((await report(s, "PROXY", v, `ctx:${i}`, { ok: true })).status, 204, v);
      assert.deepEqual(find(await resources(s), "PROXY", v).cells.map((c) => c.context), [`ctx:${i}`]);
    }
    for (const v of values) {
      assert.equal((await call(s.url, "DELETE", resourcePath("PROXY", v))).status, 204, v);
      assert.equal(find(await resources(s), "PROXY", v), undefined, v);
    }
    assert.deepEqual(await resources(s), []);
  });
});

/** A raw request (node:http sends the path exactly as given, with no URL normalization),
 * under `base`'s own path (an edge region's `/regions/{region}`). */
function rawRequest(base, method, path) {
  const prefix = new URL(base).pathname.replace(/\/$/, "");
  return new Promise((resolve, reject) => {
    const req = http.request(base, { method, path: prefix + path, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end();
  });
}

test(
  "a registered value '..' or '.' can be addressed through its percent-encoded path",
  edgeSkip("workerd resolves %2E%2E and %2E path segments before the worker sees the URL: address such a value by its id"),
  async () => {
    await withServer({}, async (s) => {
      for (const v of ["..", "."]) {
        assert.equal((await register(s, "PROXY", v)).status, 201);
        const enc = v === ".." ? "%2E%2E" : "%2E";
        const r = await rawRequest(s.url, "POST", `/api/resources/PROXY/${enc}/block?seconds=60`);
        assert.equal(r.status, 204, `${v}: ${r.status} ${r.text}`);
        assert.deepEqual(find(await resources(s), "PROXY", v).blocked, { until: T0 + 60000 });
        const d = await rawRequest(s.url, "DELETE", `/api/resources/PROXY/${enc}`);
        assert.equal(d.status, 204, `${v}: ${d.status} ${d.text}`);
      }
    });
  },
);

test("unknown routes are 404 not-found and wrong methods 405, as problem+json", async () => {
  await withServer({}, async (s) => {
    for (const p of ["/", "/api", "/api/nope", "/api/resources/PROXY", "/api/resources/PROXY/x/y/z", "/api/leases/x/y", "/metrics/x"]) {
      assertProblem(await call(s.url, "GET", p), 404, "not-found", p);
    }
    const wrong = [
      ["PUT", "/api/resources"],
      ["GET", "/api/leases"],
      ["PUT", "/api/outcomes"],
      ["POST", "/healthz"],
      ["DELETE", "/api/snapshot"],
      ["POST", "/api/events"],
      ["GET", "/api/leases/x/renewal"],
      ["PATCH", "/api/resources/PROXY/x"],
    ];
    for (const [m, p] of wrong) assertProblem(await call(s.url, m, p), 405, "method-not-allowed", `${m} ${p}`);
  });
});

test(
  "a 405 response carries an Allow header listing the route's methods (RFC 9110 §15.5.6)",
  async () => {
    await withServer({}, async (s) => {
      const r = await call(s.url, "PUT", "/api/resources");
      assert.equal(r.status, 405);
      const allow = (r.headers.get("allow") ?? "").split(",").map((x) => x.trim()).sort();
      assert.deepEqual(allow, ["GET", "POST"]);
    });
  },
);

test("with tokens configured, a request without a valid token is 401 with WWW-Authenticate: Bearer", async () => {
  const token = "operator-token-0123456789";
  await withServer({ tokens: [{ token, role: "operator" }] }, async (s) => {
    const no = await call(s.url, "GET", "/api/resources");
    assertProblem(no, 401, "unauthorized");
    assert.equal(no.headers.get("www-authenticate"), "Bearer");
    const bad = await call(s.url, "GET", "/api/resources", { token: "x".repeat(25) });
    assertProblem(bad, 401, "unauthorized");
    assert.equal(bad.headers.get("www-authenticate"), "Bearer");
    assert.equal((await call(s.url, "GET", "/api/resources", { token })).status, 200);
  });
});

test("GET /api/snapshot exports canonical JSON; PUT imports it into another server (round trip)", async () => {
  await withServer({}, async (a) => {
    await register(a, "PROXY", "p1");
    await register(a, "ACCOUNT", "a|1");
    await report(a, "PROXY", "p1", "shop", { ok: false, failure: "TIMEOUT", latencyMs: 900 });
    await report(a, "PROXY", "p1", "shop", { ok: false, failure: "TIMEOUT" });
    await call(a.url, "POST", resourcePath("ACCOUNT", "a|1", "/block?permanent=true"));
    const lease = (await acquire(a, "other")).json;
    const exp = await call(a.url, "GET", "/api/snapshot");
    assert.equal(exp.status, 200);
    assert.equal(exp.headers.get("content-type"), JSON_TYPE);
    const snap = JSON.parse(exp.text);
    assert.equal(snap.format, "repute-snapshot");
    assert.equal(snap.takenAt, T0);
    assert.equal(snap.fencingHighWater, lease.token);
    assert.equal(JSON.stringify(snap), exp.text, "canonical: compact JSON");
    // Exporting again changes nothing.
    assert.equal((await call(a.url, "GET", "/api/snapshot")).text, exp.text);
    // Resource ids are the folder's own (its key), so another server names them differently.
    const withoutIds = (views) => views.map(({ id, ...r }) => r);
    const viewA = withoutIds((await resources(a)).map((r) => ({ ...r, lease: null, leases: [] })));

    await withServer({}, async (b) => {
      const put = await call(b.url, "PUT", "/api/snapshot", { body: exp.text });
      assert.equal(put.status, 204, put.text);
      assert.equal(put.text, "");
      assert.deepEqual(withoutIds(await resources(b)), viewA);
      const back = JSON.parse((await call(b.url, "GET", "/api/snapshot")).text);
      for (const k of ["format", "version", "revision", "takenAt", "config", "registered", "blocklist", "cells"]) {
        assert.deepEqual(back[k], snap[k], k);
      }
      assert.ok(back.fencingHighWater >= snap.fencingHighWater);
      assert.ok(back.nextEventSeq >= snap.nextEventSeq);
      // Tokens continue above the imported high-water mark.
      const next = await acquire(b, "other");
      assert.equal(next.status, 201);
      assert.ok(next.json.token > snap.fencingHighWater);
    });
  });
});

test(
  "PUT /api/snapshot into a fresh server, then GET returns the same bytes (tokens and seqs do not jump)",
  async () => {
    await withServer({}, async (a) => {
      await register(a, "PROXY", "p1");
      await acquire(a, "c");
      const exp = (await call(a.url, "GET", "/api/snapshot")).text;
      await withServer({}, async (b) => {
        assert.equal((await call(b.url, "PUT", "/api/snapshot", { body: exp })).status, 204);
        assert.equal((await call(b.url, "GET", "/api/snapshot")).text, exp);
      });
    });
  },
);

test("PUT /api/snapshot refuses a lower revision with 409 stale-snapshot and changes nothing", async () => {
  await withServer({}, async (a) => {
    await register(a, "PROXY", "p1");
    const older = (await call(a.url, "GET", "/api/snapshot")).text;
    await register(a, "PROXY", "p2");
    await call(a.url, "POST", resourcePath("PROXY", "p1", "/block?seconds=30"));
    const newer = (await call(a.url, "GET", "/api/snapshot")).text;
    assert.ok(JSON.parse(newer).revision > JSON.parse(older).revision);

    // On the server that wrote them: the stored snapshot is newer.
    const refused = await call(a.url, "PUT", "/api/snapshot", { body: older });
    assertProblem(refused, 409, "stale-snapshot");
    assert.equal((await call(a.url, "GET", "/api/snapshot")).text, newer);

    // On another server, after importing the newer one.
    await withServer({}, async (b) => {
      assert.equal((await call(b.url, "PUT", "/api/snapshot", { body: newer })).status, 204);
      const before = (await call(b.url, "GET", "/api/snapshot")).text;
      assertProblem(await call(b.url, "PUT", "/api/snapshot", { body: older }), 409, "stale-snapshot");
      assert.equal((await call(b.url, "GET", "/api/snapshot")).text, before);
      // The same revision again is accepted (idempotent import).
      assert.equal((await call(b.url, "PUT", "/api/snapshot", { body: newer })).status, 204);
    });
  });
});

test("PUT /api/snapshot of an invalid document is 400 and changes nothing", async () => {
  await withServer({}, async (s) => {
    await register(s, "PROXY", "p");
    const before = (await call(s.url, "GET", "/api/snapshot")).text;
    const snap = JSON.parse(before);
    const cases = {
      "{}": [400, "invalid-snapshot"],
      "not json": [400, "invalid-snapshot"],
      [JSON.stringify({ ...snap, extra: 1 })]: [400, "invalid-snapshot"],
      [JSON.stringify({ ...snap, version: 99, revision: snap.revision + 5 })]: [400, "unsupported-snapshot-version"],
    };
    for (const [body, [status, name]] of Object.entries(cases)) {
      assertProblem(await call(s.url, "PUT", "/api/snapshot", { body }), status, name, body.slice(0, 40));
    }
    assertProblem(await call(s.url, "PUT", "/api/snapshot", { body: before, headers: { "content-type": "text/plain" } }), 415);
    assert.equal((await call(s.url, "GET", "/api/snapshot")).text, before);
  });
});

test("PUT /api/snapshot refuses a revision lower than the live pool's, even when no checkpoint has stored it yet", async () => {
  await withServer({}, async (s) => {
    await register(s, "PROXY", "p"); // operator action: stored at once
    const exported = (await call(s.url, "GET", "/api/snapshot")).text;
    // Worker reports raise the live revision; no checkpoint runs (checkpointMs 0, burst 1000).
    await report(s, "PROXY", "p", "c", { ok: false, failure: "TIMEOUT" });
    await report(s, "PROXY", "p", "c", { ok: false, failure: "TIMEOUT" });
    const live = (await call(s.url, "GET", "/api/snapshot")).text;
    assert.ok(JSON.parse(live).revision > JSON.parse(exported).revision);
    assertProblem(await call(s.url, "PUT", "/api/snapshot", { body: exported }), 409, "stale-snapshot");
    assert.equal((await call(s.url, "GET", "/api/snapshot")).text, live, "nothing rolled back");
    // A pretty-printed spelling of the same stale snapshot is refused too.
    const pretty = JSON.stringify(JSON.parse(exported), null, 2);
    assertProblem(await call(s.url, "PUT", "/api/snapshot", { body: pretty }), 409, "stale-snapshot");
  });
});

test("PUT /api/snapshot with a revision above 2^52 is 400 naming revision and the room, and the pool goes on (it would be locked for good at 2^53 − 1)", async () => {
  await withServer({}, async (s) => {
    await register(s, "PROXY", "p");
    const before = (await call(s.url, "GET", "/api/snapshot")).text;
    for (const revision of [Number.MAX_SAFE_INTEGER, 2 ** 52 + 1]) {
      const res = await call(s.url, "PUT", "/api/snapshot", { body: JSON.stringify({ ...JSON.parse(before), revision }) });
      assertProblem(res, 400, "invalid-snapshot", String(revision));
      assert.match(res.json.detail, new RegExp(`revision ${revision} is above 2\\^52 .*room`));
      assert.equal((await call(s.url, "GET", "/api/snapshot")).text, before, "nothing changed");
    }
    // The pool is not locked: writes go on, and the ceiling itself is taken.
    assert.equal((await register(s, "PROXY", "q")).status, 201);
    const atCeiling = JSON.stringify({ ...JSON.parse((await call(s.url, "GET", "/api/snapshot")).text), revision: 2 ** 52 });
    assert.equal((await call(s.url, "PUT", "/api/snapshot", { body: atCeiling })).status, 204);
    assert.equal((await acquire(s, "c")).status, 201);
    assert.equal((await register(s, "PROXY", "r")).status, 201);
  });
});

test("GET /metrics exposes the documented metric families in Prometheus text format", async () => {
  await withServer({}, async (s) => {
    await register(s, "PROXY", "m1");
    await register(s, "PROXY", "m2");
    await report(s, "PROXY", "m2", "shop", { ok: false, failure: "TIMEOUT" });
    await report(s, "PROXY", "m2", "shop", { ok: false, failure: "TIMEOUT" });
    assert.equal((await acquire(s, "shop")).status, 201); // m1 (m2 is cooling in shop)
    assert.equal((await acquire(s, "shop")).status, 409);
    const m = await call(s.url, "GET", "/metrics");
    assert.equal(m.status, 200);
    assert.match(m.headers.get("content-type"), /^text\/plain; version=0\.0\.4/);
    const text = m.text;
    const sample = (name, labels = {}) => {
      const lines = text.split("\n").filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
      const hit = lines.find((l) => Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
      assert.ok(hit, `no sample ${name} ${JSON.stringify(labels)} in:\n${lines.join("\n")}`);
      return Number(hit.slice(hit.lastIndexOf(" ") + 1));
    };
    const family = (name, type) => assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, "m"), name);
    family("repute_acquisitions_total", "counter");
    assert.equal(sample("repute_acquisitions_total", { context: "shop", result: "granted" }), 1);
    assert.equal(sample("repute_acquisitions_total", { context: "shop", result: "rejected" }), 1);
    family("repute_leases", "gauge");
    assert.equal(sample("repute_leases"), 1);
    family("repute_cells", "gauge");
    assert.equal(sample("repute_cells", { state: "COOLING" }), 1);
    family("repute_events_total", "counter");
    assert.equal(sample("repute_events_total", { type: "RESOURCE_REGISTERED" }), 2);
    assert.equal(sample("repute_events_total", { type: "RESOURCE_LEASED" }), 1);
    assert.equal(sample("repute_events_total", { type: "RESOURCE_COOLED" }), 1);
    family("repute_checkpoint_age_seconds", "gauge");
    assert.ok(sample("repute_checkpoint_age_seconds") >= 0);
    family("repute_checkpoint_duration_seconds", "gauge");
    assert.ok(sample("repute_checkpoint_duration_seconds") >= 0);
    family("repute_checkpoint_failures_total", "counter");
    assert.equal(sample("repute_checkpoint_failures_total"), 0);
    family("repute_audit_dropped", "gauge");
    assert.equal(sample("repute_audit_dropped"), 0);
    family("repute_http_request_duration_seconds", "histogram");
    assert.equal(sample("repute_http_request_duration_seconds_count", { route: "register", status: "201" }), 2);
    assert.equal(sample("repute_http_request_duration_seconds_count", { route: "report", status: "204" }), 2);
    assert.equal(sample("repute_http_request_duration_seconds_count", { route: "acquire", status: "201" }), 1);
    assert.equal(sample("repute_http_request_duration_seconds_count", { route: "acquire", status: "409" }), 1);
    sample("repute_http_request_duration_seconds_bucket", { route: "acquire", status: "409", le: "+Inf" });
  });
});

test("without tokens, serve refuses a non-loopback address (INSECURE_BIND); loopback is fine", async () => {
  const dir = await tempDir("bind");
  const pool = await openPool({ dir, checkpointMs: 0, handleSignals: false, onError: () => {} });
  try {
    for (const host of ["0.0.0.0", "::", "10.1.2.3", "192.168.0.10"]) {
      await assert.rejects(serve(pool, { host, port: 0 }), (e) => {
        assert.equal(e.code, "INSECURE_BIND", host);
        assert.match(e.message, /token/);
        return true;
      });
    }
    const ok = await serve(pool, { host: "127.0.0.1", port: 0 });
    assert.match(ok.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal((await call(ok.url, "GET", "/healthz")).status, 200);
    await ok.close();
  } finally {
    await pool.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("the CLI refuses --host 0.0.0.0 without tokens: non-zero exit, a clear message", async () => {
  const dir = await tempDir("bind-cli");
  try {
    const r = await runServeToExit(["--host", "0.0.0.0", "--port", "0", "--data", dir]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /refusing to listen on 0\.0\.0\.0 without tokens/);
    assert.doesNotMatch(r.stdout, /serving/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
