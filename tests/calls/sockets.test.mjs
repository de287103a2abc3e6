// Fault injection on real local sockets (127.0.0.1): `host.call` on an `openPool` host with the
// ready `proxyFetch`, forward proxies as PROXY resources and a scripted origin (_sockets.mjs).
// The rows of the operational-stability document's table that this session covers, each its
// own test; virtual timers (the host's `timers`) wherever a timeout or a wait decides the
// outcome, so no test waits on wall-clock time.
import { after, before, beforeEach, afterEach, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Bulkhead, HedgeBudget, openPool, proxyFetch, RetryBudget } from "repute";
import { VirtualTimers } from "../server/_manual-timers.mjs";
import { startExpiredTlsOrigin, startOrigin, startProxy, until } from "./_sockets.mjs";

let origin;
let proxies = [];
let host;
let dir;
let errors;
let fetcher;
let timers;

before(async () => {
  origin = await startOrigin();
});
after(() => origin.close());

/** A host with `n` proxies registered (their URLs are the values), on virtual or real timers. */
async function open({ n = 3, virtual = false, mode = "forward", config } = {}) {
  dir = await mkdtemp(join(tmpdir(), "repute-calls-"));
  errors = [];
  timers = virtual ? new VirtualTimers() : undefined;
  host = await openPool({ dir, handleSignals: false, checkpointMs: 0, seed: 3, config, onError: (e) => errors.push(e), ...(timers ? { timers } : {}) });
  proxies = [];
  for (let i = 0; i < n; i++) {
    const p = await startProxy(mode);
    proxies.push(p);
    await host.register("PROXY", p.url());
  }
  fetcher = proxyFetch(host, timers ? { timers } : {});
  return host;
}

afterEach(async () => {
  await fetcher?.close();
  await host?.close();
  for (const p of proxies) await p.close();
  await rm(dir, { recursive: true, force: true });
  origin.handle = (req, res) => res.end("ok");
  origin.requests.length = 0;
  host = fetcher = null;
});

/** `host.call` with a retry budget of this test's own (the process-wide one would carry what
 * earlier tests spent), unless the test gives one. */
const call = (context, attempt, options) => host.call(context, attempt, { budget: new RetryBudget(), ...options });

/** An attempt that fetches `path` through the leased proxy and reads the whole body. */
const get = (path = "/", init) => async (a) => {
  const res = await fetcher.fetch(a, origin.url(path), init);
  return { status: res.status, headers: res.headers, text: await res.text(), via: a.lease.value };
};
const cell = (value, context = "shop") => host.resources({ context }).find((r) => r.value === value)?.cells[0] ?? null;

test("classification on the wire, row by row: refusals BLOCKED, the proxy's 407 CONNECTION_RESET, soft ban BLOCKED, 404 returned unpunished, 2xx ok", async () => {
  await open({ n: 1, config: { coolAfter: 100 } });
  const value = proxies[0].url();
  const one = { readOnly: true, retry: { maxAttempts: 1 } };
  for (const [status, failure] of [[401, "BLOCKED"], [403, "BLOCKED"], [407, "CONNECTION_RESET"], [429, "BLOCKED"], [451, "BLOCKED"]]) {
    origin.handle = (req, res) => ((res.statusCode = status), res.end("no"));
    const e = await call("shop", get(), one).catch((x) => x);
    // A 407 is the proxy's own answer: undici turns it into an error, so there is no response.
    assert.deepEqual([e.code, e.failures[0].failure, e.failures[0].status, e.response?.status ?? 407], ["ATTEMPTS_EXHAUSTED", failure, status, status]);
  }
  assert.equal(cell(value).consecutiveFailures, 5);
  origin.handle = (req, res) => ((res.statusCode = 404), res.end("gone"));
  assert.equal((await call("shop", get(), one)).status, 404);
  assert.equal(cell(value).consecutiveFailures, 5, "a 404 speaks about the request: nothing reported");
  origin.handle = (req, res) => res.end("<title>Just a moment...</title> captcha");
  const soft = await call("shop", get(), { ...one, isBlocked: (r) => r.text.includes("captcha") }).catch((x) => x);
  assert.deepEqual([soft.code, soft.failures[0].failure], ["ATTEMPTS_EXHAUSTED", "BLOCKED"]);
  origin.handle = (req, res) => res.end("fine");
  assert.equal((await call("shop", get(), one)).text, "fine");
  assert.equal(cell(value).consecutiveFailures, 0);
  assert.equal(host.stats().leased, 0);
});

test("connect delay: a proxy that never answers CONNECT times the attempt out in the connect phase; a POST is retried (it never left)", async () => {
  await open({ n: 2, virtual: true, mode: "hold" });
  const p = call("shop", async (a) => (await fetcher.fetch(a, `https://127.0.0.1:${origin.port}/`, { method: "POST", body: "x" })).status, {
    attemptTimeoutMs: 1000,
    retry: { maxAttempts: 2, baseDelayMs: 0 },
  }).catch((x) => x);
  await until(() => proxies.every((x) => x.seen.length === 0) === false, "first CONNECT");
  await timers.advance(1000);
  await until(() => proxies[0].seen.length + proxies[1].seen.length === 2, "second CONNECT on the other proxy");
  await timers.advance(1000);
  const e = await p;
  assert.equal(e.code, "ATTEMPTS_EXHAUSTED");
  assert.deepEqual(e.failures.map((f) => [f.failure, f.phase]), [["TIMEOUT", "connect"], ["TIMEOUT", "connect"]]);
  assert.deepEqual(proxies.map((x) => x.seen.length), [1, 1], "each attempt on a different resource");
  await until(() => proxies.every((x) => x.sockets.open === 0), "the stuck sockets closed");
  assert.equal(host.stats().leased, 0);
});

test("headers, then a stalled body: TIMEOUT in the receive phase, the socket closed", async () => {
  await open({ n: 1, virtual: true });
  origin.handle = (req, res) => {
    res.writeHead(200, { "content-length": "100" });
    res.write("partial");
  };
  const phases = [];
  const attempt = (a) => get()({ ...a, phase: (p) => (phases.push(p), a.phase(p)) });
  const p = call("shop", attempt, { readOnly: true, attemptTimeoutMs: 5000, retry: { maxAttempts: 1 } });
  await until(() => phases.includes("receive"), "the head at the client");
  await timers.advance(5000);
  const e = await p.catch((x) => x);
  assert.deepEqual(e.failures.map((f) => [f.failure, f.phase]), [["TIMEOUT", "receive"]]);
  await until(() => origin.requests[0].socket.destroyed, "the origin's socket closed");
  assert.equal(cell(proxies[0].url()).consecutiveFailures, 1);
});

test("503 then 200: retried on another resource, succeeds", async () => {
  await open({ n: 3 });
  let n = 0;
  origin.handle = (req, res) => ((res.statusCode = n++ === 0 ? 503 : 200), res.end(`answer ${n}`));
  const r = await call("shop", get(), { readOnly: true, retry: { baseDelayMs: 1 } });
  assert.deepEqual([r.status, r.text], [200, "answer 2"]);
  const used = proxies.filter((p) => p.seen.length === 1);
  assert.equal(used.length, 2, "two different proxies carried one request each");
  assert.equal(host.stats().leased, 0);
});

test("persistent 429 with Retry-After: each wait honoured, the call stops when the next would pass the deadline", async () => {
  await open({ n: 4, virtual: true, config: { coolAfter: 100 } });
  origin.handle = (req, res) => (res.writeHead(429, { "retry-after": "1" }), res.end());
  const starts = [];
  let retries = 0;
  const p = call("shop", async (a) => (starts.push(timers.monotonicMs()), get()(a)), {
    readOnly: true,
    deadlineMs: 2500,
    retry: { maxAttempts: 10 },
    metrics: { retry: () => retries++ }, // the backoff is waiting once a retry is counted
  }).catch((x) => x);
  for (let i = 1; i <= 2; i++) {
    await until(() => retries === i, `retry ${i} decided`);
    await timers.advance(1000);
  }
  const e = await p;
  assert.deepEqual(starts, [0, 1000, 2000]);
  assert.deepEqual([e.code, e.attempts, e.response.status], ["DEADLINE_EXCEEDED", 3, 429]);
  assert.equal(new Set(e.failures.map((f) => f.resource)).size, 3);
});

test("a non-idempotent POST is not retried once it may have reached the server", async () => {
  await open({ n: 3 });
  origin.handle = (req, res) => ((res.statusCode = 503), res.end());
  const e = await call("shop", get("/order", { method: "POST", body: "{}" }), { retry: { baseDelayMs: 1 } }).catch((x) => x);
  assert.deepEqual([e.code, e.stopReason, origin.requests.length], ["NOT_RETRYABLE", "not-idempotent", 1]);
});

test("response lost after the server applied the change: retried with the same Idempotency-Key, applied once", async () => {
  await open({ n: 3 });
  const done = new Map();
  let applied = 0;
  origin.handle = (req, res, body) => {
    const key = req.headers["idempotency-key"];
    if (!done.has(key)) {
      applied++;
      done.set(key, `order ${applied} for ${body}`);
      req.socket.destroy(); // the change is made; the answer is lost
      return;
    }
    res.statusCode = 201;
    res.end(done.get(key));
  };
  const r = await call("shop", get("/order", { method: "POST", body: "book" }), { idempotencyKey: "k-7", retry: { baseDelayMs: 1 } });
  assert.deepEqual([r.status, r.text, applied], [201, "order 1 for book", 1]);
  assert.deepEqual(origin.requests.map((q) => q.headers["idempotency-key"]), ["k-7", "k-7"]);
});

test("the same key with a different body: the server's conflict reaches the caller, not retried", async () => {
  await open({ n: 3 });
  const bodies = new Map([["k-8", "book"]]);
  origin.handle = (req, res, body) => {
    const known = bodies.get(req.headers["idempotency-key"]);
    res.statusCode = known !== undefined && known !== body ? 409 : 201;
    res.end(res.statusCode === 409 ? "key reused with another body" : "created");
  };
  const r = await call("shop", get("/order", { method: "POST", body: "pen" }), { idempotencyKey: "k-8" });
  assert.deepEqual([r.status, r.text, origin.requests.length], [409, "key reused with another body", 1]);
  const used = proxies.find((p) => p.seen.length > 0).url();
  assert.equal(cell(used), null, "the resource is not blamed for the conflict");
});

test("an expired certificate: TLS_HANDSHAKE, reported, not retried", async (t) => {
  const tls = await startExpiredTlsOrigin();
  if (!tls) return t.skip("the openssl CLI is not installed: no certificate to test with");
  try {
    await open({ n: 2 });
    await fetcher.close();
    fetcher = proxyFetch(host, { agent: { requestTls: { ca: tls.ca } } });
    const e = await call("shop", async (a) => (await fetcher.fetch(a, `https://127.0.0.1:${tls.port}/`)).status, { readOnly: true }).catch((x) => x);
    assert.deepEqual([e.code, e.stopReason, e.attempts], ["NOT_RETRYABLE", "not-retryable", 1]);
    assert.deepEqual([e.failures[0].failure, e.failures[0].phase, e.failures[0].code], ["TLS_HANDSHAKE", "tls", "CERT_HAS_EXPIRED"]);
    const used = proxies.find((p) => p.seen.length > 0).url();
    assert.equal(cell(used).consecutiveFailures, 1);
  } finally {
    await tls.close();
  }
});

test("rising failure rate: the resources cool and the next call fails fast with POOL_EXHAUSTED", async () => {
  await open({ n: 3 });
  origin.handle = (req, res) => ((res.statusCode = 403), res.end());
  for (let i = 0; i < 2; i++) await call("shop", get(), { readOnly: true, retry: { baseDelayMs: 1 } }).catch(() => {});
  const before = origin.requests.length;
  assert.equal(before, 6);
  const e = await call("shop", get(), { readOnly: true }).catch((x) => x);
  assert.deepEqual([e.code, e.attempts, origin.requests.length], ["POOL_EXHAUSTED", 0, before]);
  assert.ok(e.retryAfterMs > 0 && e.retryAfterMs <= 7_200_000, String(e.retryAfterMs));
});

test("caller cancel: the in-flight request's socket is closed and the lease returned", async () => {
  await open({ n: 1 });
  origin.handle = () => {}; // never answers
  const ac = new AbortController();
  const p = call("shop", get(), { readOnly: true, signal: ac.signal });
  await until(() => origin.requests.length === 1, "the request at the origin");
  assert.equal(host.stats().leased, 1);
  ac.abort();
  const e = await p.catch((x) => x);
  assert.equal(e.code, "ABORTED");
  assert.equal(host.stats().leased, 0);
  await until(() => origin.requests[0].socket.destroyed, "the origin's socket closed");
  assert.equal(cell(proxies[0].url()), null, "nothing reported");
});

test("the retry budget stops a retry storm: attempts ≤ calls × (1 + ratio) + capacity", async () => {
  await open({ n: 4, config: { coolAfter: 1000 } });
  origin.handle = (req, res) => ((res.statusCode = 503), res.end());
  const budget = new RetryBudget({ ratio: 0.1, capacity: 3 });
  const calls = 40;
  for (let i = 0; i < calls; i++) await call("shop", get(), { readOnly: true, budget, retry: { maxAttempts: 4, baseDelayMs: 0 } }).catch(() => {});
  assert.ok(origin.requests.length <= calls * 1.1 + 3, String(origin.requests.length));
  assert.ok(origin.requests.length > calls);
});

test("one dispatcher per resource: two resources on one proxy host never share a connection; deregister and idle close them", async () => {
  await open({ n: 1, virtual: true });
  const gw = proxies[0];
  await host.deregister("PROXY", gw.url());
  await host.register("PROXY", gw.url("session-1:pw"));
  await host.register("PROXY", gw.url("session-2:pw"));
  for (let i = 0; i < 6; i++) {
    const lease = host.acquire("shop");
    try {
      assert.equal(await (await fetcher.fetch(lease, origin.url())).text(), "ok");
    } finally {
      host.release(lease);
    }
  }
  const authsByConn = new Map();
  for (const s of gw.seen) authsByConn.set(s.conn, new Set([...(authsByConn.get(s.conn) ?? []), s.auth]));
  assert.ok([...authsByConn.values()].every((a) => a.size === 1), "a connection carries one resource's credentials only");
  assert.equal(new Set(gw.seen.map((s) => s.auth)).size, 2);
  assert.ok(authsByConn.size < gw.seen.length, "keep-alive is used within a resource");
  assert.equal(fetcher.size, 2);
  const connsOf = (auth) => new Set(gw.seen.filter((s) => s.auth === auth).map((s) => s.conn));
  const [one, two] = [connsOf("Basic c2Vzc2lvbi0xOnB3"), connsOf("Basic c2Vzc2lvbi0yOnB3")]; // session-1:pw, session-2:pw
  const openOf = (conns) => [...gw.sockets.ids()].filter((id) => conns.has(id)).length;
  assert.ok(openOf(one) > 0 && openOf(two) > 0, "both resources' connections are open before the deregistration");
  // The deregistration reaches the fetcher as an event when it applies, before it is stored:
  // its connections may be closed by the time the call resolves.
  await host.deregister("PROXY", gw.url("session-1:pw"));
  await until(() => fetcher.size === 1 && openOf(one) === 0, "the deregistered resource's connections closed");
  assert.ok(openOf(two) > 0, "the other resource's connections stay open");
  await timers.advance(60_000);
  await until(() => fetcher.size === 0 && gw.sockets.open === 0, "the idle one's connections closed");
});

test("a hedged read-only call beats a slow proxy; the loser's request is cancelled (socket closed) and not held against it", async () => {
  await open({ n: 2, virtual: true });
  origin.handle = (req, res) => {
    if (origin.requests.length === 1) return; // the first request hangs
    res.end("fast");
  };
  const p = call("shop", get(), { readOnly: true, hedge: { delayMs: 150, budget: new HedgeBudget() } }).catch((x) => x);
  await until(() => origin.requests.length === 1, "the first request at the origin");
  await timers.advance(150);
  const r = await p;
  assert.deepEqual([r.status, r.text], [200, "fast"]);
  assert.equal(proxies.filter((x) => x.seen.length === 1).length, 2, "the hedge went through the other proxy");
  await until(() => origin.requests[0].socket.destroyed, "the loser's socket closed");
  assert.equal(cell(r.via).consecutiveSuccesses, 1);
  assert.equal(cell(proxies.map((x) => x.url()).find((u) => u !== r.via)), null, "nothing reported for the loser");
  assert.equal(host.stats().leased, 0);
});

test("a concurrency surge: the bulkhead lets maxConcurrent requests out and rejects the rest at once", async () => {
  await open({ n: 4 });
  origin.handle = () => {}; // every request hangs
  const bulkhead = new Bulkhead({ maxConcurrent: 2 });
  const ac = new AbortController();
  const calls = [0, 1, 2, 3].map(() => call("shop", get(), { readOnly: true, bulkhead, signal: ac.signal }).catch((e) => e.code));
  assert.deepEqual(await Promise.all(calls.slice(2)), ["CAPACITY_EXCEEDED", "CAPACITY_EXCEEDED"]);
  await until(() => origin.requests.length === 2, "two requests out");
  assert.equal(host.stats().leased, 2);
  ac.abort();
  assert.deepEqual(await Promise.all(calls.slice(0, 2)), ["ABORTED", "ABORTED"]);
  assert.equal(origin.requests.length, 2);
  assert.deepEqual([host.stats().leased, bulkhead.stats().active], [0, 0]);
});

test("metrics: logical calls apart from attempts, retries, failures by type and phase, on the host's /metrics", async () => {
  await open({ n: 3 });
  let n = 0;
  origin.handle = (req, res) => ((res.statusCode = n++ === 0 ? 503 : 200), res.end());
  await call("shop", get(), { readOnly: true, retry: { baseDelayMs: 1 } });
  origin.handle = (req, res) => ((res.statusCode = 403), res.end());
  await call("shop", get(), { readOnly: true, retry: { maxAttempts: 1 } }).catch(() => {});
  const text = await host.metrics();
  const line = (name) => text.split("\n").find((l) => l.startsWith(name))?.split(" ").at(-1) ?? null;
  assert.equal(line('repute_calls_total{context="shop",result="ok"}'), "1");
  assert.equal(line('repute_calls_total{context="shop",result="ATTEMPTS_EXHAUSTED"}'), "1");
  assert.equal(line('repute_call_attempts_total{context="shop",outcome="none",phase="receive"}'), "1");
  assert.equal(line('repute_call_attempts_total{context="shop",outcome="ok",phase="receive"}'), "1");
  assert.equal(line('repute_call_attempts_total{context="shop",outcome="BLOCKED",phase="receive"}'), "1");
  assert.equal(line('repute_call_retries_total{context="shop"}'), "1");
  assert.equal(line('repute_call_duration_seconds_count{context="shop"}'), "2");
  assert.equal(line('repute_call_attempt_duration_seconds_count{context="shop"}'), "3");
  assert.ok(!text.includes("127.0.0.1"), "no resource value in any label");
});

test("a throwing event consumer or metrics hook does not affect the call", async () => {
  await open({ n: 2 });
  host.on("event", () => {
    throw new Error("consumer broke");
  });
  host.addEventListener("RESOURCE_LEASED", () => {
    throw new Error("listener broke");
  });
  const broken = () => {
    throw new Error("metrics broke");
  };
  const r = await call("shop", get(), { readOnly: true, metrics: { call: broken, attempt: broken } });
  assert.equal(r.status, 200);
  await until(() => errors.length >= 4, "the consumers' errors reported");
  assert.ok(errors.every((e) => /broke/.test(e.message)));
  assert.equal(host.stats().leased, 0);
});

test("groups on a call reach every acquire: past a cooling first group to the second, retries and hedges too; POOL_EXHAUSTED's retryAfterMs is for those groups", async () => {
  await open({ n: 4, virtual: true, config: { coolAfter: 1 } });
  const [cheap, pricey1, pricey2, other] = proxies;
  await host.register("PROXY", cheap.url(), { group: "cheap" });
  for (const p of [pricey1, pricey2]) await host.register("PROXY", p.url(), { group: "pricey" });
  const pricey = [pricey1.url(), pricey2.url()];
  const groups = ["cheap", "pricey"];
  // baseDelayMs 0: retries need no timer; the hedge's delay is virtual.
  const tiered = (context, options = {}) => call(context, get(), { readOnly: true, groups, retry: { baseDelayMs: 0 }, ...options });
  // What each acquire of the host was given (the pool still does the work): which resource a
  // group-less acquire would pick is up to the seed, so the groups are checked where they go.
  const asked = [];
  const acquire = host.acquire.bind(host);
  host.acquire = (context, options) => (asked.push(options?.groups ?? null), acquire(context, options));

  // The first attempt goes to the cheap tier; the site refuses it (403: BLOCKED, and with
  // coolAfter 1 it cools in "shop"); the retry's acquire takes the groups too: pricey.
  let n = 0;
  origin.handle = (req, res) => ((res.statusCode = n++ === 0 ? 403 : 200), res.end("ok"));
  const first = await tiered("shop");
  assert.equal(first.status, 200);
  assert.ok(pricey.includes(first.via), "the retry went to the second group");
  assert.deepEqual(asked.splice(0), [groups, groups], "the first attempt's acquire and the retry's took the groups");
  assert.equal(cheap.seen.length, 1);
  assert.equal(cell(cheap.url()).state, "COOLING");
  // Now the first group is cooling in "shop": the call starts in the second.
  const second = await tiered("shop");
  assert.ok(pricey.includes(second.via));
  assert.equal(cheap.seen.length, 1, "the cooling tier was not tried");

  // A hedge in "search" (the cheap tier is fine there): the primary hangs on cheap; the hedge's
  // acquire, given the groups, escalates to pricey — never to the ungrouped proxy.
  const before = origin.requests.length;
  origin.handle = (req, res) => (origin.requests.length === before + 1 ? undefined : res.end("fast"));
  const hedged = tiered("search", { hedge: { delayMs: 150, budget: new HedgeBudget() } });
  await until(() => origin.requests.length === before + 1, "the primary at the origin");
  assert.equal(cheap.seen.length, 2, "the primary went through the cheap tier");
  await timers.advance(150);
  const won = await hedged;
  assert.deepEqual([won.text, pricey.includes(won.via)], ["fast", true]);
  assert.deepEqual(asked.slice(-2), [groups, groups], "the primary's acquire and the hedge's took the groups");
  assert.ok(asked.every((g) => JSON.stringify(g) === JSON.stringify(groups)), "every acquire took the groups");

  // Nothing left in the listed groups: the cheap tier cools for an hour, the pricey one is
  // blocked for 90 s. The ungrouped proxy is free, yet the call is exhausted, and its
  // retryAfterMs is the pricey block's end — not 0, which the whole pool would say.
  for (const v of pricey) await host.block("PROXY", v, { seconds: 90 });
  const e = await tiered("shop", { retry: { maxAttempts: 1 } }).catch((x) => x);
  assert.equal(e.code, "POOL_EXHAUSTED", e.message);
  assert.ok(e.retryAfterMs > 89_000 && e.retryAfterMs <= 90_000, `retryAfterMs ${e.retryAfterMs}`);
  assert.equal(host.nextChangeAt("shop") <= Date.now(), true, "without groups, the pool has a candidate now");
  assert.equal(other.seen.length, 0, "the ungrouped proxy was never used");

  // A groups option that is not a list of names is refused before anything is leased.
  for (const bad of ["cheap", [1], null]) {
    const refused = await call("shop", get(), { groups: bad }).catch((x) => x);
    assert.deepEqual([refused.code, /groups must be an array/.test(refused.message)], ["INVALID_ARGUMENT", true], String(bad));
  }
  const engine = await call("shop", get(), { groups: [] }).catch((x) => x);
  assert.equal(engine.code, "INVALID_ARGUMENT", "the pool refuses an empty list");
  assert.equal(host.stats().leased, 0);
});
