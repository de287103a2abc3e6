// `repute/client`'s waiting and finishing (SPEC §3 "Capacity, waiting and finishing a step"):
// `acquireWait` (and `tryAcquire` with `waitMs`) send `waitMs` and allow for it in the call's
// time limit; their `signal` closes the request; a server full of waiters (503
// too-many-waiting) answers null with retryAfterMs, as the embedded pool answers past its bound;
// `finish` is one request whose answer carries the next lease, sent at most once (a repeat is
// LEASE_FINISHED, and reports nothing twice), and a lease id the server does not know (it
// restarted) is finished as a report; `register` passes `maxLeases` through. Against a real
// pool server where it can answer, against a scripted one (a node:http server that answers when
// and what the test says) for the instants and answers a real one gives only under load.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { connectPool, PoolClientError } from "repute/client";
import { startServer } from "../server/_http-support.mjs";
import { problem, within } from "./_support.mjs";

let server;
let client;

before(async () => {
  server = await startServer({ config: { leaseTtlMs: 30_000 } });
  client = connectPool({ url: server.url });
});
after(async () => {
  await client?.close();
  await server?.close();
});

/**
 * A node:http server that records each request (`{ method, url, body, closed }`, `closed`
 * resolving when its connection closes before an answer) and answers what `respond(request)`
 * resolves to ({ status, headers, body }) — when it resolves.
 */
async function scripted(respond) {
  const s = { requests: [] };
  s.server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const r = { method: req.method, url: req.url, body: body ? JSON.parse(body) : undefined };
    r.closed = new Promise((resolve) => res.once("close", () => resolve(!res.writableFinished)));
    s.requests.push(r);
    const { status, headers = {}, body: out = "" } = await respond(r);
    if (!res.destroyed) {
      res.writeHead(status, headers);
      res.end(out);
    }
  });
  await new Promise((r) => s.server.listen(0, "127.0.0.1", r));
  s.url = `http://127.0.0.1:${s.server.address().port}`;
  s.close = () => new Promise((r) => (s.server.closeAllConnections(), s.server.close(() => r())));
  return s;
}
const after_ = (ms) => new Promise((r) => setTimeout(r, ms));
const LEASE = { kind: "PROXY", value: "p", group: null, context: "shop", token: 7, leasedAt: 1, expiresAt: 2, leaseId: "id-7" };
const json = (status, body, headers = {}) => ({ status, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

test("acquireWait sends waitMs and groups; a lease, or null after an empty wait", async () => {
  const s = await scripted(async (r) => (r.body.context === "shop" ? json(201, LEASE) : problem(409, "nothing-eligible", { "retry-after": "3" })));
  const c = connectPool({ url: s.url });
  try {
    const lease = await c.acquireWait("shop", { groups: ["dc", null], waitMs: 2_000 });
    assert.equal(lease.leaseId, "id-7");
    assert.deepEqual(s.requests[0].body, { context: "shop", groups: ["dc", null], waitMs: 2_000 });
    assert.equal(await c.acquireWait("news", { waitMs: 0 }), null);
    assert.deepEqual(s.requests[1].body, { context: "news" }, "waitMs 0 is today's acquire");
    assert.deepEqual(await c.tryAcquire("news", { waitMs: 50 }), { lease: null, retryAfterMs: 3_000 });
  } finally {
    await c.close();
    await s.close();
  }
});

test("acquireWait refuses a missing or bad waitMs or signal before sending anything", async () => {
  const s = await scripted(async () => json(201, LEASE));
  const c = connectPool({ url: s.url });
  try {
    for (const options of [undefined, {}, { waitMs: -1 }, { waitMs: 1.5 }, { waitMs: "10" }, { waitMs: 10, signal: {} }, { waitMs: 10, wait: 1 }]) {
      await assert.rejects(c.acquireWait("shop", options), (e) => e instanceof PoolClientError && e.code === "INVALID_ARGUMENT", JSON.stringify(options));
    }
    assert.equal(s.requests.length, 0);
  } finally {
    await c.close();
    await s.close();
  }
});

test("the call's time limit is timeoutMs plus waitMs: a server that answers within both is heard", async () => {
  // real time: the client's time limit is undici's, on the real clock; the scripted server
  // answers on a timer, as a waiting pool server would.
  const s = await scripted(async () => (await after_(400), json(201, LEASE)));
  const c = connectPool({ url: s.url, timeoutMs: 150 });
  try {
    assert.equal((await c.acquireWait("shop", { waitMs: 1_000 })).token, 7, "answered at 400 ms: within 150 + 1000");
    await assert.rejects(c.acquire("shop"), (e) => e.code === "REQUEST_TIMEOUT" && /within 150 ms/.test(e.message), "no wait asked: 150 ms");
    await assert.rejects(c.acquireWait("shop", { waitMs: 100 }), (e) => e.code === "REQUEST_TIMEOUT" && /within 250 ms/.test(e.message));
  } finally {
    await c.close();
    await s.close();
  }
});

test("aborting acquireWait's signal closes its request (the server sees it) and rejects ABORTED", async () => {
  const s = await scripted(() => new Promise(() => {})); // waits for ever
  const c = connectPool({ url: s.url });
  try {
    const controller = new AbortController();
    const waiting = c.acquireWait("shop", { waitMs: 20_000, signal: controller.signal });
    await within((async () => { while (s.requests.length === 0) await after_(5); })(), 5_000, "the request arrives");
    controller.abort();
    await assert.rejects(waiting, (e) => e.code === "ABORTED");
    assert.equal(await within(s.requests[0].closed, 5_000, "the server sees the connection close"), true);
  } finally {
    await c.close();
    await s.close();
  }
});

test("a server holding its limit of waiters (503 too-many-waiting) is answered null with retryAfterMs", async () => {
  const s = await scripted(async () => problem(503, "too-many-waiting", { "retry-after": "2" }));
  const c = connectPool({ url: s.url });
  try {
    assert.equal(await c.acquireWait("shop", { waitMs: 5_000 }), null);
    assert.deepEqual(await c.tryAcquire("shop", { waitMs: 5_000 }), { lease: null, retryAfterMs: 2_000 });
    assert.equal(s.requests.length, 2, "not retried");
  } finally {
    await c.close();
    await s.close();
  }
});

test("finish: one request; the next lease (usable), or null; a repeat is LEASE_FINISHED and counts nothing twice", async () => {
  await client.register("PROXY", "f1");
  const first = await client.acquire("fin");
  const next = await client.finish(first, { ok: false, failure: "TIMEOUT", latencyMs: 9 }, { next: {} });
  assert.equal(next.value, "f1");
  assert.equal(next.context, "fin");
  assert.notEqual(next.leaseId, first.leaseId);
  assert.equal((await client.renew(next)).token, next.token, "the next lease is a lease like any other");
  const again = await client.finish(first, { ok: false, failure: "TIMEOUT" }, { next: {} }).then(() => null, (e) => e);
  assert.ok(again instanceof PoolClientError);
  assert.deepEqual([again.code, again.status, again.retryable], ["LEASE_FINISHED", 409, false]);
  const [view] = await client.resources({ context: "fin" });
  assert.equal(view.cells.find((x) => x.context === "fin").consecutiveFailures, 1, "reported once");
  assert.equal(await client.finish(next, { ok: true }), null, "no next asked: null");
  assert.equal((await client.resources({ context: "fin" }))[0].lease, null, "released");
});

test("finish sends outcome and next as given, and refuses a bad next before sending", async () => {
  const s = await scripted(async () => json(200, { next: { ...LEASE, token: 8, leaseId: "id-8" } }));
  const c = connectPool({ url: s.url });
  try {
    const next = await c.finish(LEASE, { ok: true, latencyMs: 3 }, { next: { context: "news", groups: ["dc"], waitMs: 500 } });
    assert.equal(next.leaseId, "id-8");
    assert.deepEqual(s.requests[0], { ...s.requests[0], method: "POST", url: "/api/leases/id-7/outcome" });
    assert.deepEqual(s.requests[0].body, { outcome: { ok: true, latencyMs: 3 }, next: { context: "news", groups: ["dc"], waitMs: 500 } });
    await c.finish(LEASE, { ok: true });
    assert.deepEqual(s.requests[1].body, { outcome: { ok: true } }, "no next: none sent");
    for (const options of [{ next: { wait: 1 } }, { next: { waitMs: -5 } }, { next: null }, { nxt: {} }, { next: { signal: 1 } }]) {
      await assert.rejects(c.finish(LEASE, { ok: true }, options), (e) => e.code === "INVALID_ARGUMENT", JSON.stringify(options));
    }
    await assert.rejects(c.finish({ ...LEASE, leaseId: undefined }, { ok: true }), (e) => e.code === "INVALID_ARGUMENT");
    assert.equal(s.requests.length, 2);
  } finally {
    await c.close();
    await s.close();
  }
});

/** A relay to `port` that passes requests on and loses every answer: the client's connection
 * is cut as soon as the server's answer reaches the relay. `requests` counts what passed. */
async function answerLosingRelay(port) {
  const relay = { passed: "", sockets: new Set() };
  relay.server = net.createServer((client) => {
    const upstream = net.connect(port, "127.0.0.1");
    for (const x of [client, upstream]) {
      relay.sockets.add(x);
      x.on("error", () => {});
    }
    client.on("data", (d) => {
      relay.passed += d.toString("latin1");
      upstream.write(d);
    });
    upstream.on("data", () => {
      client.destroy();
      upstream.destroy();
    });
  });
  await new Promise((r) => relay.server.listen(0, "127.0.0.1", r));
  relay.url = `http://127.0.0.1:${relay.server.address().port}`;
  relay.close = () => new Promise((r) => {
    for (const x of relay.sockets) x.destroy();
    relay.server.close(() => r());
  });
  return relay;
}

test("finish is not resent once it may have reached the server; finishing again after a lost answer is LEASE_FINISHED", async () => {
  await client.register("PROXY", "f2", { group: "f2" });
  const lease = await client.acquire("lost", { groups: ["f2"] });
  const relay = await answerLosingRelay(server.server.port);
  const c = connectPool({ url: relay.url, retries: 2, retryDelayMs: 1 });
  try {
    const lost = await c.finish(lease, { ok: false, failure: "SLOW" }, { next: { groups: ["f2"] } }).then(() => null, (e) => e);
    assert.deepEqual([lost?.code, lost?.reached], ["CONNECTION_FAILED", true]);
    assert.equal(relay.passed.split("/outcome").length - 1, 1, "sent once: the server may have applied it");
    // It had: finishing again (directly) is refused, and the outcome counted once.
    const again = await client.finish(lease, { ok: false, failure: "SLOW" }, { next: {} }).then(() => null, (e) => e);
    assert.equal(again?.code, "LEASE_FINISHED");
    const [view] = await client.resources({ context: "lost", group: "f2" });
    assert.equal(view.cells[0].consecutiveFailures, 1, "counted once");
    assert.notEqual(view.lease, null, "the next lease of the lost answer is held (until it lapses)");
    assert.notEqual(view.lease.token, lease.token);
  } finally {
    await c.close();
    await relay.close();
  }
});

test("a lease id the server does not know (it restarted) is finished as a report, then an acquire for next", async () => {
  await client.register("PROXY", "f3", { group: "f3" });
  const lease = await client.acquire("restart", { groups: ["f3"] });
  assert.equal(await client.release(lease), true);
  const foreign = { ...lease, leaseId: "AAAAAAAAAAE.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }; // another server's
  const next = await client.finish(foreign, { ok: false, failure: "TIMEOUT" }, { next: { groups: ["f3"] } });
  assert.equal(next.value, "f3");
  const [view] = await client.resources({ context: "restart", group: "f3" });
  assert.equal(view.cells[0].consecutiveFailures, 1, "the outcome counted");
  assert.equal(await client.finish({ ...next, leaseId: foreign.leaseId }, { ok: true }), null, "without next: the report only");
  assert.equal((await client.resources({ context: "restart", group: "f3" }))[0].cells[0].consecutiveSuccesses, 1);
});

test("register passes maxLeases through (the server checks it)", async () => {
  const s = await scripted(async () => json(201, { kind: "PROXY", value: "g", id: "x", created: true, group: null, maxLeases: 4 }));
  const c = connectPool({ url: s.url });
  try {
    assert.equal(await c.register("PROXY", "g", { maxLeases: 4, group: null }), true);
    assert.deepEqual(s.requests[0].body, { kind: "PROXY", value: "g", group: null, maxLeases: 4 });
    await c.register("PROXY", "g");
    assert.deepEqual(s.requests[1].body, { kind: "PROXY", value: "g" }, "left out: not sent");
    await assert.rejects(client.register("PROXY", "g", { maxLeases: 0 }), (e) => e.code === "INVALID_ARGUMENT" && /maxLeases/.test(e.message));
  } finally {
    await c.close();
    await s.close();
  }
});

test("a waiting acquire through the client is served by a release on the real server", async () => {
  await client.register("PROXY", "w1", { group: "w1" });
  const held = await client.acquire("wait", { groups: ["w1"] });
  const waiting = client.acquireWait("wait", { groups: ["w1"], waitMs: 10_000 });
  await within((async () => { while (server.pool.waiting === 0) await after_(5); })(), 5_000, "the request waits on the server");
  assert.equal(await client.release(held), true);
  const got = await waiting;
  assert.equal(got?.value, "w1");
  await client.register("PROXY", "w2", { maxLeases: 2, group: "w2" });
  const [a, b] = [await client.acquire("cap", { groups: ["w2"] }), await client.acquire("cap", { groups: ["w2"] })];
  assert.deepEqual([a?.value, b?.value], ["w2", "w2"], "capacity 2");
});
