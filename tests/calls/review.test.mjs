// Defects found by the adversarial review of the resilient-call layer (pkg-scripts/lib/call),
// each pinned by the test that failed before its fix: a real Pool, virtual time (_support.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { fetch } from "undici";
import { call } from "../../pkg-scripts/lib/call/call.js";
import { Bulkhead } from "../../pkg-scripts/lib/call/bulkhead.js";
import { classifyError } from "../../pkg-scripts/lib/outcome/classify.js";
import { HedgeBudget, RetryBudget } from "../../pkg-scripts/lib/call/budget.js";
import { credentialCache } from "../../pkg-scripts/lib/call/credentials.js";
import { proxyFetch } from "../../pkg-scripts/lib/call/proxy-fetch.js";
import { startOrigin, startProxy } from "./_sockets.mjs";
import { answer, drive, recorded, settle, setup } from "./_support.mjs";

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

test("ETIMEDOUT after the request went out is not a connect failure: a non-idempotent call is not retried", async () => {
  const { pool, timers, options } = setup();
  const host = recorded(pool);
  let n = 0;
  // The OS gives ETIMEDOUT on an established socket too (retransmissions given up): the request
  // was written (phase send / receive) and may have been applied.
  const p = call(host, "shop", async ({ phase }) => {
    n++;
    phase("send");
    phase("receive");
    throw Object.assign(new Error("read ETIMEDOUT"), { code: "ETIMEDOUT", syscall: "read" });
  }, options);
  const e = await drive(timers, p).catch((x) => x);
  assert.deepEqual([e.code, e.stopReason, e.attempts, n], ["NOT_RETRYABLE", "not-idempotent", 1, 1]);
  assert.deepEqual(e.failures.map((f) => [f.failure, f.phase]), [["TIMEOUT", "receive"]]);
  assert.equal(pool.stats().leased, 0);
  // The same for an unreachable code on a socket that had carried the request; before any
  // phase is marked (or at connect) both still mean the request never left.
  const v = classifyError(Object.assign(new Error("read EHOSTUNREACH"), { code: "EHOSTUNREACH" }), { phase: "send" });
  assert.deepEqual([v.report, v.phase, v.reached], ["CONNECTION_RESET", "send", true]);
  assert.equal(classifyError(Object.assign(new Error("connect ETIMEDOUT"), { code: "ETIMEDOUT" }), { phase: "connect" }).reached, false);
  assert.equal(classifyError(Object.assign(new Error("connect ETIMEDOUT"), { code: "ETIMEDOUT" })).reached, false);
});

test("a connection dropped during the TLS handshake is a reset, retried on another resource, not a certificate failure", async (t) => {
  // A peer (a flaky proxy, an overloaded origin) that closes every connection before the
  // handshake completes: Node says ECONNRESET "… before secure TLS connection was established".
  const dropper = net.createServer((s) => s.destroy());
  await new Promise((r) => dropper.listen(0, "127.0.0.1", r));
  t.after(() => dropper.close());
  const { pool } = setup();
  const reports = [];
  const host = { ...recorded(pool), report: (kind, value, context, outcome) => (reports.push(outcome.failure ?? "ok"), pool.report(kind, value, context, outcome)) };
  let n = 0;
  const res = await call(host, "shop", async ({ signal, phase }) => {
    if (++n === 1) {
      phase("connect");
      return fetch(`https://127.0.0.1:${dropper.address().port}/`, { signal, method: "POST", body: "x" });
    }
    return answer(200);
  }, { budget: new RetryBudget(), random: () => 0 });
  assert.equal(res.status, 200, "the request never went out: even a mutation moves on");
  assert.deepEqual(reports, ["CONNECTION_RESET", "ok"]);
  assert.equal(pool.stats().leased, 0);
});

test("a hedge's losing answer (a 503 the winner made moot) has its body cancelled, freeing its connection", async () => {
  const { pool, timers, options } = setup();
  const cancelled = [];
  const streamed = (status, tag) => new Response(new ReadableStream({ pull() {}, cancel: () => void cancelled.push(tag) }), { status });
  let n = 0;
  const p = call(pool, "shop", ({ signal }) => {
    const i = ++n;
    // The first answers 503 at 150 ms (after the hedge started at 100 ms); the hedge 200 at 200 ms.
    return new Promise((resolve, reject) => {
      const t = timers.setTimeout(() => resolve(streamed(i === 1 ? 503 : 200, i)), i === 1 ? 150 : 100);
      signal.addEventListener("abort", () => (timers.clearTimeout(t), reject(signal.reason)));
    });
  }, { ...options, readOnly: true, hedge: { delayMs: 100, budget: new HedgeBudget() } });
  const res = await drive(timers, p, { stepMs: 5 });
  assert.equal(res.status, 200);
  assert.equal(n, 2);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(cancelled, [1], "the 503's body is cancelled, the winner's is the caller's");
  assert.equal(pool.stats().leased, 0);
});

test("proxyFetch keeps a followed redirect's url and redirected (an isBlocked on a captcha redirect can see it)", async (t) => {
  const origin = await startOrigin();
  const proxy = await startProxy();
  const proxies = proxyFetch(null);
  t.after(async () => (await proxies.close(), await proxy.close(), origin.server.close()));
  origin.handle = (req, res) => {
    if (req.url === "/item") return res.writeHead(302, { location: "/captcha" }).end();
    res.end("prove you are human");
  };
  const res = await proxies.fetch({ kind: "PROXY", value: proxy.url() }, `http://127.0.0.1:${origin.server.address().port}/item`);
  assert.equal(res.status, 200);
  assert.equal(res.url, `http://127.0.0.1:${origin.server.address().port}/captcha`);
  assert.equal(res.redirected, true);
  assert.equal(await res.text(), "prove you are human");
});

test("a bug in the attempt with a Node ERR_ code (a bad URL) is not blamed on every resource and retried", async () => {
  const { pool, timers, options } = setup();
  const host = recorded(pool);
  let thrown;
  let n = 0;
  // A relative URL: undici's fetch throws TypeError "Failed to parse URL" (cause ERR_INVALID_URL).
  const p = call(host, "shop", async () => {
    n++;
    try {
      return await fetch("shop.example/item/7");
    } catch (e) {
      throw (thrown = e);
    }
  }, { ...options, readOnly: true });
  const e = await drive(timers, p).catch((x) => x);
  assert.deepEqual([e.code, e.stopReason, e.attempts, n], ["NOT_RETRYABLE", "not-retryable", 1, 1]);
  assert.deepEqual(host.reports, [], "no resource is blamed for the caller's bug");
  assert.equal(e.cause, thrown, "the caller's own error is kept as cause");
  assert.equal(pool.stats().leased, 0);
  // Node's network ERR_ codes are still network failures.
  assert.equal(classifyError(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" }), { phase: "receive" }).report, "CONNECTION_RESET");
  const t = classifyError(Object.assign(new Error("connect timeout"), { code: "ERR_SOCKET_CONNECTION_TIMEOUT" }));
  assert.deepEqual([t.report, t.phase, t.reached], ["TIMEOUT", "connect", false]);
});

test("a backoff that would leave the next attempt no time stops the call now, not after sleeping", async () => {
  const { pool, timers, options } = setup({ n: 5 });
  const starts = [];
  // Retry-After 1 s at t = 1000 leaves 50 ms after the wait: less than the 100 ms reserve a
  // third attempt (of 10) must keep back, so no attempt can start after it.
  const p = call(pool, "shop", async () => (starts.push(timers.monotonicMs()), answer(429, { "retry-after": "1" })), {
    ...options,
    readOnly: true,
    deadlineMs: 2050,
    retry: { maxAttempts: 10 },
  });
  const e = await drive(timers, p, { stepMs: 5 }).catch((x) => x);
  assert.deepEqual(starts, [0, 1000]);
  assert.deepEqual([e.code, e.stopReason, e.attempts], ["DEADLINE_EXCEEDED", "deadline", 2]);
  assert.ok(timers.monotonicMs() < 1100, `stopped at once, not after the wait (${timers.monotonicMs()})`);
  assert.equal(e.response.status, 429, "the last answer is on the error");
});

test("a retry that never starts (no other resource, the caller aborted in the backoff) gives its budget token back", async () => {
  const { pool, timers, options } = setup({ n: 1 });
  const budget = new RetryBudget({ ratio: 0, capacity: 2 });
  // One resource: the retry finds no other one.
  const e = await drive(timers, call(pool, "shop", async () => answer(503), { ...options, budget, readOnly: true })).catch((x) => x);
  assert.deepEqual([e.code, e.stopReason, e.attempts], ["POOL_EXHAUSTED", "no-other-resource", 1]);
  assert.deepEqual([budget.stats().tokens, budget.stats().retries], [2, 0], "no retry ran: nothing spent");
  // The caller aborts during the backoff.
  pool.register("PROXY", "p2");
  const stop = new AbortController();
  const p = call(pool, "shop", async () => (timers.setTimeout(() => stop.abort(), 10), answer(503)), { ...options, budget, readOnly: true, signal: stop.signal, retry: { baseDelayMs: 1000 } });
  const f = await drive(timers, p).catch((x) => x);
  assert.deepEqual([f.code, f.attempts], ["ABORTED", 1]);
  assert.deepEqual([budget.stats().tokens, budget.stats().retries], [2, 0]);
  assert.equal(pool.stats().leased, 0);
});

test("no timeout (attemptTimeoutMs and deadlineMs Infinity) does not fire at once: Node clamps such timers to 1 ms", async () => {
  const { pool } = setup();
  const host = recorded(pool);
  let n = 0;
  // real time: only Node's real timers clamp a delay past 2^31 − 1 ms (Infinity too) to 1 ms.
  const res = await call(host, "shop", () => (n++, new Promise((r) => setTimeout(() => r(answer(200)), 30))), {
    budget: new RetryBudget(),
    readOnly: true,
    deadlineMs: Infinity,
    attemptTimeoutMs: Infinity,
  });
  assert.equal(res.status, 200);
  assert.equal(n, 1);
  assert.deepEqual(host.reports.map((r) => r.failure ?? "ok"), ["ok"]);
  // A finite deadline far past the limit (30 days) is not 1 ms either.
  const later = await call(host, "shop", () => new Promise((r) => setTimeout(() => r(answer(200)), 30)), { budget: new RetryBudget(), readOnly: true, deadlineMs: 30 * 86_400_000 });
  assert.equal(later.status, 200);
  assert.equal(pool.stats().leased, 0);
});

test("proxyFetch idleMs Infinity keeps an unused dispatcher (it was closed after 1 ms)", async (t) => {
  const origin = await startOrigin();
  const proxy = await startProxy();
  const proxies = proxyFetch(null, { idleMs: Infinity });
  t.after(async () => (await proxies.close(), await proxy.close(), origin.server.close()));
  const lease = { kind: "PROXY", value: proxy.url() };
  const url = `http://127.0.0.1:${origin.server.address().port}/`;
  assert.equal(await (await proxies.fetch(lease, url)).text(), "ok");
  await new Promise((r) => setTimeout(r, 50)); // real time: only Node's real timer clamps Infinity to 1 ms
  assert.equal(proxies.size, 1, "the dispatcher is kept");
  assert.equal(await (await proxies.fetch(lease, url)).text(), "ok");
  assert.equal(new Set(proxy.seen.map((s) => s.conn)).size, 1, "the keep-alive connection was reused");
});

test("a proxy that answers garbage (not HTTP: a SOCKS port, a broken proxy) is blamed and another tried, not 'the attempt threw'", async (t) => {
  const garbage = net.createServer((c) => c.end("\u0005\u0000lol\r\n\r\n"));
  await new Promise((r) => garbage.listen(0, "127.0.0.1", r));
  const proxies = proxyFetch(null);
  t.after(async () => (await proxies.close(), garbage.close()));
  const { pool } = setup({ n: 0 });
  pool.register("PROXY", `http://127.0.0.1:${garbage.address().port}`);
  pool.drainEvents();
  const host = recorded(pool);
  const e = await call(host, "shop", (a) => proxies.fetch(a, "https://127.0.0.1:8443/order", { method: "POST", body: "{}" }), {
    budget: new RetryBudget(),
    random: () => 0,
  }).catch((x) => x);
  // The CONNECT got no HTTP answer: the request never went out, so even a POST moves on (here
  // there is no other resource).
  assert.deepEqual([e.code, e.stopReason, e.attempts], ["POOL_EXHAUSTED", "no-other-resource", 1]);
  assert.deepEqual(e.failures.map((f) => [f.failure, f.phase]), [["CONNECTION_RESET", "connect"]]);
  assert.deepEqual(host.reports.map((r) => r.failure), ["CONNECTION_RESET"]);
  assert.equal(pool.stats().leased, 0);
});

test("a credential load that hangs does not wedge its key: once every waiter has left, the next get loads again", async () => {
  const signals = [];
  const creds = credentialCache({
    // The first load hangs (the issuer never answers) until its signal aborts; the second works.
    load: (lease, signal) => (signals.push(signal), signals.length === 1 ? new Promise(() => {}) : Promise.resolve({ value: "token-2" })),
  });
  const lease = { kind: "ACCOUNT", value: "a1" };
  const first = new AbortController();
  const waiting = creds.get(lease, { signal: first.signal });
  await new Promise((r) => setImmediate(r));
  first.abort(new Error("the call's deadline passed"));
  await assert.rejects(waiting, /deadline passed/);
  assert.equal(signals[0].aborted, true, "the abandoned load is told to stop");
  const next = await creds.get(lease, { signal: AbortSignal.timeout(2000) });
  assert.equal(next, "token-2");
  assert.deepEqual([creds.stats().loads, creds.stats().inFlight], [2, 0]);
});

test("an answer whose body stalls while isBlocked reads it is a TIMEOUT, not a success delivered with a dead body", async (t) => {
  const origin = await startOrigin();
  const proxy = await startProxy();
  const proxies = proxyFetch(null);
  t.after(async () => (await proxies.close(), await proxy.close(), origin.server.close()));
  origin.handle = (req, res) => (res.writeHead(200, { "content-type": "text/html" }), res.write("<html>")); // then nothing
  const { pool } = setup({ n: 0 });
  pool.register("PROXY", proxy.url());
  pool.drainEvents();
  const host = recorded(pool);
  const e = await call(host, "shop", (a) => proxies.fetch(a, `http://127.0.0.1:${origin.server.address().port}/item`), {
    budget: new RetryBudget(),
    readOnly: true,
    attemptTimeoutMs: 300,
    isBlocked: async (res) => (await res.clone().text()).includes("captcha"),
  }).catch((x) => x);
  assert.equal(e.code, "POOL_EXHAUSTED", "the only resource failed: nothing else to try");
  assert.deepEqual(e.failures.map((f) => [f.failure, f.phase]), [["TIMEOUT", "receive"]]);
  assert.deepEqual(host.reports.map((r) => r.failure ?? "ok"), ["TIMEOUT"]);
  assert.equal(pool.stats().leased, 0);
});

test("an answer that arrives after its attempt was cut (the attempt ignored its signal) has its body cancelled", async () => {
  const { pool, timers, options } = setup();
  const cancelled = [];
  let n = 0;
  const p = call(pool, "shop", () => {
    const i = ++n;
    // The first ignores its signal and answers at 500 ms, long after its 100 ms timeout.
    if (i === 1) return new Promise((r) => timers.setTimeout(() => r(new Response(new ReadableStream({ pull() {}, cancel: () => void cancelled.push(i) }), { status: 200 })), 500));
    return answer(200);
  }, { ...options, readOnly: true, attemptTimeoutMs: 100 });
  assert.equal((await drive(timers, p)).status, 200);
  await drive(timers, new Promise((r) => timers.setTimeout(r, 600)));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(cancelled, [1], "nobody will read it: its connection is freed");
  assert.equal(pool.stats().leased, 0);
});

test("calls a full bulkhead turns away do not refill the hedging budget (a surge would fund more hedges)", async () => {
  const { pool, timers, options } = setup();
  const budget = new HedgeBudget({ ratio: 0.1, capacity: 10 }); // a hedge costs 10
  const bulkhead = new Bulkhead({ maxConcurrent: 1 });
  const hedge = { delayMs: 100, budget };
  let n = 0;
  const slowThenFast = () => new Promise((r) => timers.setTimeout(() => r(answer(200)), ++n === 1 ? 1000 : 10));
  const running = call(pool, "shop", slowThenFast, { ...options, readOnly: true, hedge, bulkhead });
  for (let t = 0; t < 105; t += 5) {
    await settle();
    await timers.advance(5);
  }
  await settle();
  assert.deepEqual([n, budget.stats().tokens], [2, 0], "the hedge started and spent the budget");
  // While it runs, a surge: every other call is turned away at once.
  for (let i = 0; i < 9; i++) {
    const e = await call(pool, "shop", slowThenFast, { ...options, readOnly: true, hedge, bulkhead }).catch((x) => x);
    assert.equal(e.code, "CAPACITY_EXCEEDED");
  }
  assert.equal((await drive(timers, running, { stepMs: 5 })).status, 200);
  assert.deepEqual([budget.stats().hedges, budget.stats().tokens], [1, 1], "one hedge spent 10; only the completed call gave one back");
});

test("a password with a raw '@' is redacted whole from messages (a part of it used to leak)", async () => {
  // WHATWG URL takes the last '@' of the authority: this password is "p@ss-w0rd".
  const url = "https://client:p@ss-w0rd@auth.example/token";
  const creds = credentialCache({ load: () => Promise.reject(new Error(`request to ${url} failed: ECONNRESET`)) });
  const e = await creds.get({ kind: "ACCOUNT", value: "a1" }).catch((x) => x);
  assert.equal(e.code, "CREDENTIAL_UNAVAILABLE");
  assert.ok(!e.message.includes("ss-w0rd") && !e.message.includes("p@"), e.message);
  assert.match(e.message, /https:\/\/\*\*\*@auth\.example\/token/);
});

test("tokens in a query string or form body and an API-key header are redacted from messages", async () => {
  const creds = credentialCache({
    load: () => Promise.reject(new Error("POST https://auth.example/oauth/token?client_id=app&client_secret=s3cr3tValue failed; body grant_type=refresh_token&refresh_token=rt-0123456789; x-api-key: ak_live_9876543210")),
  });
  const e = await creds.get({ kind: "ACCOUNT", value: "a1" }).catch((x) => x);
  assert.equal(e.code, "CREDENTIAL_UNAVAILABLE");
  for (const secret of ["s3cr3tValue", "rt-0123456789", "ak_live_9876543210"]) assert.ok(!e.message.includes(secret), `${secret} in: ${e.message}`);
  assert.match(e.message, /client_id=app/, "what is not a secret stays readable");
  assert.match(e.message, /grant_type=refresh_token/);
});
