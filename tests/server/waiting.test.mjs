// Waiting over HTTP (SPEC §3 "Capacity, waiting and finishing a step", §8): `"waitMs"` on `POST
// /api/leases` and in a finish's `next`, bounded by the server's `maxWaitMs` (400 naming the
// field and the limit) and `maxWaiting` (503 too-many-waiting with Retry-After for a request
// that cannot be served at once); a client whose connection closes mid-wait ends its wait and
// leaks no lease, also when the lease is granted at the moment it leaves; `close()` answers
// the waits in progress.
//
// Two kinds of host. The real one (openPool on Node, the region's Durable Object on the edge),
// with its own acquireWait and finish. A stand-in (Node only): a MemoryHost whose `acquireWait` waits until the
// test says what the host does — grant, time out, or reject on the abort — so that the HTTP
// side (the request's signal from a real socket closing, the bound, the release of a lease
// granted to a client that left, shutdown) is tested at each instant that matters.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "../../pkg-scripts/lib/engine/node-engine.js";
import { MemoryHost } from "../../pkg-scripts/lib/host/memory-host.js";
import { serve } from "../../pkg-scripts/lib/node/http-server.js";
import { T0, withServer, call, assertProblem, rawConnection, edgeSkip, onEdge } from "./_http-support.mjs";

const register = (s, value, extra = {}) => call(s.url, "POST", "/api/resources", { body: { kind: "PROXY", value, ...extra } });
const acquire = (s, context, extra = {}) => call(s.url, "POST", "/api/leases", { body: { context, ...extra } });
const leaseOf = async (s, value) => {
  const r = await call(s.url, "GET", "/api/resources");
  return r.json.resources.find((v) => v.value === value).lease;
};
const NODE_ONLY = edgeSkip("a stand-in host runs in this process only");

/** Polls `probe()` until it returns a truthy value (a state the server reaches on its own
 * after a socket event); fails after `ms`. Not a time limit on the code under test: a lease
 * leaked to a departed client stays for the lease TTL (30 s), far beyond it. */
async function eventually(probe, what, ms = 5000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 10)); // the server's socket events are real
  }
}

/** `promise`, or a failure naming `what` after `ms` (a socket event that never comes would
 * otherwise hang the suite). */
function within(promise, what, ms = 5000) {
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`never: ${what}`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** An acquire sent on a raw socket (so the test can close it mid-wait). */
async function rawAcquire(url, body, headers = {}) {
  const c = await rawConnection(Number(new URL(url).port));
  const prefix = new URL(url).pathname.replace(/\/$/, "");
  const text = JSON.stringify(body);
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
  c.write(`POST ${prefix}/api/leases HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n${extra}\r\n${text}`);
  return c;
}

/**
 * A server over a MemoryHost whose `acquireWait` answers at once when `acquire` grants, and
 * otherwise waits until the test settles it: `waits` are the waits in order, each `{ context,
 * options, aborted (a promise: its signal aborted), grant() (resolve with a real lease, as a
 * host that granted at that instant), empty() (resolve null), reject() (the AbortError a host
 * gives) }`; `nextWait()` resolves at the next wait;
 * `requests` are the handler's observations `[route, status]`, `observed(route, status)` resolves
 * at the first such one.
 */
async function standIn(serveOptions = {}) {
  const host = await MemoryHost.create({ Pool, now: () => T0, seed: 1 });
  const waits = [];
  let onWait = () => {};
  host.acquireWait = (context, options) => {
    const now = host.acquire(context);
    return now ? Promise.resolve(now) : new Promise((resolve, reject) => {
      const w = {
        context,
        options,
        aborted: new Promise((r) => (options.signal.aborted ? r() : options.signal.addEventListener("abort", r, { once: true }))),
        grant: () => resolve(host.acquire(context)),
        empty: () => resolve(null),
        reject: () => reject(Object.assign(new Error("aborted"), { name: "AbortError" })),
      };
      waits.push(w);
      onWait(w);
    });
  };
  const requests = [];
  const watchers = [];
  const observe = host.observeRequest.bind(host);
  host.observeRequest = (route, method, status, seconds) => {
    requests.push([route, status]);
    for (const w of watchers.splice(0)) if (!w(route, status)) watchers.push(w);
    observe(route, method, status, seconds);
  };
  const server = await serve(host, { host: "127.0.0.1", port: 0, ...serveOptions });
  return {
    host,
    server,
    url: server.url,
    waits,
    requests,
    nextWait: () => new Promise((r) => (onWait = r)),
    observed: (route, status) =>
      new Promise((r) => {
        const seen = requests.find(([a, b]) => a === route && b === status);
        if (seen) return r();
        watchers.push((a, b) => (a === route && b === status ? (r(), true) : false));
      }),
    async close() {
      for (const w of waits) w.reject(); // what a test left waiting ends (settled ones ignore it)
      await server.close();
      host.close();
    },
  };
}

test("waitMs must be an integer from 0 to the server's limit: a 400 names the field and the limit", async () => {
  await withServer({}, async (s) => {
    await register(s, "p1");
    for (const [waitMs, detail] of [
      [-1, /waitMs must be a non-negative integer/],
      [2.5, /waitMs must be a non-negative integer/],
      ["100", /waitMs must be a non-negative integer/],
      [null, /waitMs must be a non-negative integer/],
      [30_001, /waitMs is over this server's limit of 30000 ms/],
    ]) {
      const r = await acquire(s, "shop", { waitMs });
      assertProblem(r, 400, "bad-request", String(waitMs));
      assert.match(r.json.detail, detail);
    }
    assert.equal(await leaseOf(s, "p1"), null, "nothing was leased");
    // waitMs 0 is today's acquire; with a lease to give, any wait answers at once.
    assert.equal((await acquire(s, "shop", { waitMs: 0 })).status, 201);
    const busy = await acquire(s, "shop", { waitMs: 0 });
    assertProblem(busy, 409, "nothing-eligible");
    assert.equal(busy.headers.get("retry-after"), "30");
  });
});

test("maxWaitMs is the server's: --max-wait-ms 500 refuses 501", NODE_ONLY, async () => {
  await withServer({ serveOptions: { maxWaitMs: 500 } }, async (s) => {
    await register(s, "p1");
    const r = await acquire(s, "shop", { waitMs: 501 });
    assertProblem(r, 400, "bad-request");
    assert.match(r.json.detail, /waitMs is over this server's limit of 500 ms/);
    assert.equal((await acquire(s, "shop", { waitMs: 500 })).status, 201);
  });
});

test("a client that closes its connection mid-wait ends the wait: the host sees the abort, nothing is leased", NODE_ONLY, async () => {
  const s = await standIn();
  try {
    await register(s, "p1");
    const held = await acquire(s, "shop");
    const waiting = s.nextWait();
    const c = await rawAcquire(s.url, { context: "shop", waitMs: 20_000 });
    const w = await within(waiting, "the request waits");
    assert.equal(w.context, "shop");
    assert.equal(w.options.waitMs, 20_000);
    assert.equal(w.options.signal.aborted, false);
    c.destroy();
    await within(w.aborted, "the wait's signal aborted"); // the socket's close reached the wait
    w.reject(); // as a host does: the wait ends with an AbortError
    await within(s.observed("acquire", 499), "the handler answered 499");
    assert.equal(s.host.resources()[0].lease.token, held.json.token, "only the holder's lease");
  } finally {
    await s.close();
  }
});

test("a lease granted at the moment its client leaves is released at once", NODE_ONLY, async () => {
  const s = await standIn();
  try {
    await register(s, "p1");
    const held = await acquire(s, "shop");
    const waiting = s.nextWait();
    const c = await rawAcquire(s.url, { context: "shop", waitMs: 20_000 });
    const w = await within(waiting, "the request waits");
    c.destroy();
    await within(w.aborted, "the wait's signal aborted");
    assert.equal(s.host.release({ ...held.json }), true);
    w.grant(); // a host that granted p1 in the same instant: the handler must give it back
    await within(s.observed("acquire", 499), "the handler answered 499");
    assert.equal(s.host.resources()[0].lease, null, "the lease went back to the pool");
    assert.equal(s.host.acquire("shop")?.value, "p1", "and can be leased again");
  } finally {
    await s.close();
  }
});

test("pipelined waits on one connection all end when it closes (a queued response is not told)", NODE_ONLY, async () => {
  const s = await standIn();
  try {
    await s.host.register("PROXY", "p1");
    const held = s.host.acquire("shop");
    const body = JSON.stringify({ context: "shop", waitMs: 20_000 });
    const request = `POST /api/leases HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    const c = await rawConnection(s.server.port);
    c.write(request + request);
    await within(eventually(() => s.waits.length === 2, "both wait"), "both wait");
    c.destroy();
    for (const w of s.waits) {
      await within(w.aborted, "each wait's signal aborted"); // the second's response is queued
      w.reject();
    }
    await within(eventually(() => s.requests.filter(([, status]) => status === 499).length === 2, "two 499"), "two 499");
    assert.equal(s.host.resources()[0].lease.token, held.token);
  } finally {
    await s.close();
  }
});

test("a client that sends its request and closes at once: whenever the server notices, no lease", NODE_ONLY, async () => {
  // With a token the handler first awaits the token's digest (WebCrypto, off the main thread),
  // so the close comes before the body is read, before the wait, or during it, by chance. Over
  // 20 tries each request ends — 400 (its body was cut) or 499 (the client left) — and the only
  // lease is the one held throughout.
  const token = "wkr-close-before-signal-7Hq2xV9m";
  const s = await standIn({ tokens: [{ token, role: "worker" }] });
  try {
    await s.host.register("PROXY", "p1");
    const held = s.host.acquire("shop");
    for (let i = 1; i <= 20; i++) {
      const before = s.waits.length;
      const c = await rawAcquire(s.url, { context: "shop", waitMs: 20_000 }, { authorization: `Bearer ${token}` });
      c.destroy();
      const answered = new Promise((resolve) => {
        const poll = () => (s.requests.length >= i ? resolve() : setTimeout(poll, 5));
        poll();
      });
      // If it waits, its signal must abort; the host then rejects, as a real one does.
      let ended = false;
      const aborted = (async () => {
        while (s.waits.length === before && !ended) await new Promise((r) => setTimeout(r, 5));
        if (ended) return;
        const w = s.waits[before];
        await w.aborted;
        w.reject();
      })();
      await within(Promise.race([answered, aborted.then(() => answered)]), `try ${i}: the request ended`);
      ended = true;
    }
    // 499 (gone before or during the wait), or 400 when it closed before its body was read.
    assert.deepEqual(s.requests.filter(([route, status]) => route !== "acquire" || (status !== 499 && status !== 400)), []);
    assert.ok(s.requests.some(([, status]) => status === 499), JSON.stringify(s.requests));
    assert.equal(s.host.resources()[0].lease.token, held.token, "no lease but the one held throughout");
  } finally {
    await s.close();
  }
});

test("past maxWaiting, a request that cannot be served at once is 503 too-many-waiting with Retry-After", NODE_ONLY, async () => {
  const s = await standIn({ maxWaiting: 2 });
  try {
    await register(s, "p1");
    await register(s, "p2");
    assert.equal((await acquire(s, "shop")).status, 201);
    const held = await acquire(s, "shop");
    assert.equal(held.status, 201);
    const first = s.nextWait();
    const a = acquire(s, "shop", { waitMs: 10_000 });
    await within(first, "the first waits");
    const second = s.nextWait();
    const b = acquire(s, "shop", { waitMs: 10_000 });
    await within(second, "the second waits");
    const refused = await acquire(s, "shop", { waitMs: 10_000 });
    assertProblem(refused, 503, "too-many-waiting");
    assert.equal(refused.headers.get("retry-after"), "30", "when a held lease expires");
    assert.match(refused.json.detail, /2 requests are waiting/);
    // One that can be served at once is, bound or not.
    await register(s, "p3");
    const served = await acquire(s, "shop", { waitMs: 10_000 });
    assert.equal(served.status, 201, served.text);
    assert.equal(served.json.value, "p3");
    assert.equal(s.waits.length, 2, "neither asked the host to wait");
    // A wait that ends makes room for the next.
    s.waits[0].empty();
    assertProblem(await a, 409, "nothing-eligible");
    const third = s.nextWait();
    const c = acquire(s, "shop", { waitMs: 10_000 });
    await within(third, "the third waits");
    s.waits[1].empty();
    s.waits[2].empty();
    assert.equal((await b).status, 409);
    assert.equal((await c).status, 409);
  } finally {
    await s.close();
  }
});

test("close() answers the waits in progress 503 shutting-down, and closes their connections", NODE_ONLY, async () => {
  const s = await standIn();
  try {
    await register(s, "p1");
    await acquire(s, "shop");
    const waiting = s.nextWait();
    const c = await rawAcquire(s.url, { context: "shop", waitMs: 20_000 });
    const w = await within(waiting, "the request waits");
    const closed = s.server.close();
    await within(w.aborted, "the wait's signal aborted");
    w.reject();
    const res = await c.next(5000);
    assert.match(res, /^HTTP\/1\.1 503 /);
    assert.match(res, /urn:repute:problem:shutting-down/);
    assert.match(res, /\r\nconnection: close\r\n/i);
    assert.match(res, /\r\nretry-after: 1\r\n/i);
    await closed;
  } finally {
    s.host.close();
  }
});

test("a wait longer than the request timeout is not cut: requestTimeoutMs covers receiving the request only", NODE_ONLY, async () => {
  const s = await standIn({ requestTimeoutMs: 100 });
  try {
    await register(s, "p1");
    const held = await acquire(s, "shop");
    const waiting = s.nextWait();
    const r = acquire(s, "shop", { waitMs: 10_000 });
    const w = await within(waiting, "the request waits");
    // real time: node:http checks request timeouts on its own timer (every 25 ms here), so the
    // wait must really outlast requestTimeoutMs.
    await new Promise((resolve) => setTimeout(resolve, 400));
    s.host.release({ ...held.json });
    w.grant();
    const res = await r;
    assert.equal(res.status, 201, res.text);
  } finally {
    await s.close();
  }
});

// --- against the real hosts (their own acquireWait) --------------------------------------------

/** Resolves once the server holds `n` waiting requests: on Node by the pool's own count of
 * calls to acquireWait; on the edge (no pool in this process) after a real pause for the
 * request to arrive. */
function waitersArrive(s) {
  // real time: on the edge the waiters are in workerd, which this process cannot count.
  if (onEdge || !s.pool) return () => new Promise((r) => setTimeout(r, 300));
  const pool = s.pool;
  const own = pool.acquireWait;
  let calls = 0;
  let wake = () => {};
  pool.acquireWait = (...args) => {
    calls++;
    wake();
    return own.apply(pool, args);
  };
  return (n = 1) => eventually(() => calls >= n, `${n} waiting`);
}

test("a waiting acquire is served by a release (201); one that ends empty is 409 with Retry-After", async () => {
  await withServer({ config: { leaseTtlMs: 30_000 } }, async (s) => {
    await register(s, "p1");
    const held = await acquire(s, "shop");
    const arrived = waitersArrive(s);
    const waiting = acquire(s, "shop", { waitMs: 20_000 });
    await arrived(1);
    assert.equal((await call(s.url, "DELETE", `/api/leases/${held.json.leaseId}`)).status, 204);
    const got = await waiting;
    assert.equal(got.status, 201, got.text);
    assert.equal(got.json.value, "p1");
    // Nothing frees p1 now: a short wait ends empty, at its deadline on the pool's clock. The
    // host's own timer fires after a real 200 ms; the test's clock is moved past the deadline
    // meanwhile (on the edge the next request carries the new reading to the region).
    const arrivedAgain = waitersArrive(s);
    const emptying = acquire(s, "shop", { waitMs: 200 });
    await arrivedAgain(1);
    s.clock.now += 200;
    if (onEdge) assert.equal((await call(s.url, "GET", "/api/stats")).status, 200);
    const empty = await emptying;
    assertProblem(empty, 409, "nothing-eligible");
    assert.equal(empty.headers.get("retry-after"), "30");
  });
});

// workerd does not tell the Durable Object (nor the worker) that a client left: request.signal
// never aborted when the client's socket closed, with or without the enable_request_signal flag
// (checked with Miniflare 4.20260120). On the edge a departed waiter waits out its waitMs.
const EDGE_NOT_TOLD = edgeSkip("workerd does not abort request.signal when the client's socket closes");

test("a client that closes its connection mid-wait leaks no lease (real host)", EDGE_NOT_TOLD, async () => {
  await withServer({}, async (s) => {
    await register(s, "p1");
    const held = await acquire(s, "shop");
    const arrived = waitersArrive(s);
    const c = await rawAcquire(s.url, { context: "shop", waitMs: 20_000 }, onEdge ? (await import("../edge/_edge-support.mjs")).clockHeader(s.url) : {});
    await arrived(1);
    c.destroy();
    // Whichever the server sees first — the close or the release — p1 ends up free.
    assert.equal((await call(s.url, "DELETE", `/api/leases/${held.json.leaseId}`)).status, 204);
    await eventually(async () => (await leaseOf(s, "p1")) === null, "p1 free again");
    assert.equal((await acquire(s, "shop")).status, 201, "p1 can be leased");
  });
});

test("past maxWaiting (real host): 503 too-many-waiting; a finish's next is then tried at once", NODE_ONLY, async () => {
  await withServer({ serveOptions: { maxWaiting: 1 } }, async (s) => {
    await register(s, "a1", { group: "a" });
    await register(s, "b1", { group: "b" });
    const held = await acquire(s, "shop", { groups: ["a"] });
    assert.equal((await acquire(s, "news", { groups: ["b"] })).status, 201);
    const arrived = waitersArrive(s);
    const waiting = acquire(s, "shop", { groups: ["a"], waitMs: 20_000 });
    await arrived(1);
    const refused = await acquire(s, "shop", { waitMs: 20_000 });
    assertProblem(refused, 503, "too-many-waiting");
    assert.equal(refused.headers.get("retry-after"), "30");
    // The finish happens; its next (b1, held) does not wait: no room. The waiter gets a1.
    const f = await call(s.url, "POST", `/api/leases/${held.json.leaseId}/outcome`, {
      body: { outcome: { ok: true }, next: { context: "news", groups: ["b"], waitMs: 20_000 } },
    });
    assert.equal(f.status, 200, f.text);
    assert.deepEqual(f.json, { next: null });
    assert.equal(f.headers.get("retry-after"), "30");
    const got = await waiting;
    assert.equal(got.status, 201, got.text);
    assert.equal(got.json.value, "a1");
  });
});

test("a finish's next waits for a lease (next.waitMs) until a release", async () => {
  await withServer({ config: { coolAfter: 1 } }, async (s) => {
    await register(s, "p1");
    await register(s, "p2");
    const mine = await acquire(s, "shop");
    const other = await acquire(s, "shop");
    // BLOCKED cools my resource in shop (coolAfter 1), the other is held: the next lease waits.
    const arrived = waitersArrive(s);
    const waiting = call(s.url, "POST", `/api/leases/${mine.json.leaseId}/outcome`, {
      body: { outcome: { ok: false, failure: "BLOCKED" }, next: { waitMs: 20_000 } },
    });
    await arrived(1);
    assert.equal((await call(s.url, "DELETE", `/api/leases/${other.json.leaseId}`)).status, 204);
    const got = await waiting;
    assert.equal(got.status, 200, got.text);
    assert.equal(got.json.next.value, other.json.value);
  });
});
