// The retry loop of `call` (pkg-scripts/lib/call/call.js) against a real Pool with a virtual
// clock: attempts, reports, releases, the different-resource rule, idempotency, backoff and
// Retry-After within the deadline, the retry budget and kill switch, POOL_EXHAUSTED, aborts,
// lease renewal, hedging and its budget, the bulkhead, a caller's classify that fails.
// The attempts here return HTTP-like answers or throw coded errors; sockets.test.mjs runs the
// same rules over real sockets.
import { test } from "node:test";
import assert from "node:assert/strict";
import { call } from "../../pkg-scripts/lib/call/call.js";
import { HedgeBudget, RetryBudget } from "../../pkg-scripts/lib/call/budget.js";
import { Bulkhead } from "../../pkg-scripts/lib/call/bulkhead.js";
import { CallError } from "../../pkg-scripts/lib/call/errors.js";
import { answer, drive, recorded, setup, T0 } from "./_support.mjs";

const coded = (code) => Object.assign(new Error(code), { code });

test("a success is returned, reported ok with its latency, and its lease released", async () => {
  const { pool, timers, options } = setup();
  const host = recorded(pool);
  const p = call(host, "shop", async ({ lease, attemptNumber, signal }) => {
    assert.equal(attemptNumber, 1);
    assert.ok(signal instanceof AbortSignal);
    assert.equal(pool.stats().leased, 1);
    await new Promise((r) => timers.setTimeout(r, 40));
    return answer(200);
  }, { ...options, idempotent: true });
  const res = await drive(timers, p);
  assert.equal(res.status, 200);
  assert.deepEqual(host.reports.map((r) => [r.ok, r.latencyMs]), [[true, 40]]);
  assert.equal(host.releases.length, 1);
  assert.equal(pool.stats().leased, 0);
});

test("503 then 200: retried once after a jittered backoff, on a different resource", async () => {
  const { pool, timers, options } = setup();
  const host = recorded(pool);
  const used = [];
  const starts = [];
  const p = call(host, "shop", async ({ lease }) => {
    used.push(lease.value);
    starts.push(timers.monotonicMs());
    return answer(used.length === 1 ? 503 : 200);
  }, { ...options, readOnly: true, retry: { baseDelayMs: 100 } });
  assert.equal((await drive(timers, p, { stepMs: 1 })).status, 200);
  assert.equal(used.length, 2);
  assert.notEqual(used[0], used[1]);
  assert.equal(starts[1] - starts[0], 50, "full jitter: random 0.5 × min(2000, 100 × 2^0)");
  assert.deepEqual(host.reports.map((r) => r.ok), [true], "a 503 blames nobody; the success is reported");
  assert.equal(pool.stats().leased, 0);
});

test("the different-resource rule holds even when the pool would pick the failed one again", async () => {
  const { pool, timers, options } = setup({ n: 2 });
  const host = recorded(pool);
  // p1 has a far higher score: plain acquires would pick it almost always.
  for (let i = 0; i < 20; i++) pool.report("PROXY", "p1", "shop", { ok: true });
  const used = [];
  const p = call(host, "shop", async ({ lease }) => (used.push(lease.value), answer(used.length < 2 ? 500 : 200)), { ...options, readOnly: true });
  await drive(timers, p);
  assert.equal(new Set(used).size, 2);
  // With both tried, a third attempt finds no other resource: POOL_EXHAUSTED (no-other-resource).
  const used2 = [];
  const q = call(host, "shop", async ({ lease }) => (used2.push(lease.value), answer(500)), { ...options, readOnly: true, retry: { maxAttempts: 5 } });
  const e = await drive(timers, q).catch((x) => x);
  assert.equal(e.code, "POOL_EXHAUSTED");
  assert.equal(e.stopReason, "no-other-resource");
  assert.equal(e.attempts, 2);
  assert.equal(pool.stats().leased, 0);
});

test("a non-idempotent call that may have reached the server is not retried; one that never connected is", async () => {
  const { pool, timers, options } = setup();
  let n = 0;
  const e = await drive(timers, call(pool, "shop", async () => (n++, answer(503)), options)).catch((x) => x);
  assert.ok(e instanceof CallError);
  assert.deepEqual([e.code, e.stopReason, e.attempts, n], ["NOT_RETRYABLE", "not-idempotent", 1, 1]);
  assert.equal(e.response.status, 503, "the last answer is on the error, unread");
  let m = 0;
  const ok = await drive(timers, call(pool, "shop", async ({ phase }) => {
    phase("connect");
    if (m++ === 0) throw new TypeError("fetch failed", { cause: coded("ECONNREFUSED") });
    return answer(201);
  }, options));
  assert.equal(ok.status, 201);
  assert.equal(m, 2);
});

test("with an idempotency key a mutation is retried, the same key given to every attempt", async () => {
  const { pool, timers, options } = setup();
  const keys = [];
  const res = await drive(timers, call(pool, "shop", async ({ idempotencyKey }) => (keys.push(idempotencyKey), answer(keys.length < 3 ? 503 : 201)), {
    ...options,
    idempotencyKey: "order-42",
  }));
  assert.equal(res.status, 201);
  assert.deepEqual(keys, ["order-42", "order-42", "order-42"]);
});

test("TLS_HANDSHAKE is reported and never retried; a decode error is not reported, not retried, and kept as cause", async () => {
  const { pool, timers, options } = setup();
  const host = recorded(pool);
  const e = await drive(timers, call(host, "shop", async () => { throw coded("CERT_HAS_EXPIRED"); }, { ...options, readOnly: true })).catch((x) => x);
  assert.deepEqual([e.code, e.stopReason, e.attempts], ["NOT_RETRYABLE", "not-retryable", 1]);
  assert.deepEqual(e.failures.map((f) => [f.failure, f.phase, f.code]), [["TLS_HANDSHAKE", "tls", "CERT_HAS_EXPIRED"]]);
  assert.deepEqual(host.reports.map((r) => r.failure), ["TLS_HANDSHAKE"]);
  const bad = new SyntaxError("Unexpected token");
  const d = await drive(timers, call(host, "shop", async () => { throw bad; }, { ...options, readOnly: true })).catch((x) => x);
  assert.deepEqual([d.code, d.attempts, d.cause], ["NOT_RETRYABLE", 1, bad]);
  assert.equal(host.reports.length, 1, "nothing reported for the decode error");
  assert.equal(pool.stats().leased, 0);
});

test("Retry-After is honoured as a floor, and the call stops as soon as the next wait passes the deadline", async () => {
  const { pool, timers, options } = setup({ n: 5 });
  const starts = [];
  const p = call(pool, "shop", async () => (starts.push(timers.monotonicMs()), answer(429, { "retry-after": "1" })), {
    ...options,
    readOnly: true,
    deadlineMs: 2500,
    retry: { maxAttempts: 10 },
  });
  const e = await drive(timers, p).catch((x) => x);
  assert.deepEqual(starts, [0, 1000, 2000]);
  assert.deepEqual([e.code, e.stopReason, e.attempts], ["DEADLINE_EXCEEDED", "deadline", 3]);
  assert.equal(timers.monotonicMs() < 2100, true, "stopped without sleeping into the deadline");
  // Longer than retry.maxRetryAfterMs: stop at once, saying so.
  const q = call(pool, "shop", async () => answer(429, { "retry-after": "120" }), { ...options, readOnly: true });
  const f = await drive(timers, q).catch((x) => x);
  assert.deepEqual([f.stopReason, f.retryAfterMs, f.attempts], ["retry-after", 120_000, 1]);
});

test("attempt timeout = min(attemptTimeoutMs, remaining − reserve): a hung attempt is cut, reported TIMEOUT, retried", async () => {
  const { pool, timers, options } = setup();
  const host = recorded(pool);
  const given = [];
  const p = call(host, "shop", ({ signal, timeoutMs, attemptNumber }) => {
    given.push([timers.monotonicMs(), timeoutMs]);
    if (attemptNumber === 1) return new Promise(() => {}); // ignores its signal: the call moves on anyway
    return answer(200);
  }, { ...options, readOnly: true, deadlineMs: 5000, attemptTimeoutMs: 3000, retry: { baseDelayMs: 200 } });
  assert.equal((await drive(timers, p)).status, 200);
  assert.deepEqual(given, [[0, 3000], [3100, 1700]], "the second gets what is left less the reserve (5000 − 3100 − 200)");
  assert.deepEqual(host.reports.map((r) => r.failure ?? "ok"), ["TIMEOUT", "ok"]);
  assert.equal(pool.stats().leased, 0);
});

test("the deadline: no attempt starts after it; a deadline shorter than the attempt timeout ends the call", async () => {
  const { pool, timers, options } = setup();
  const p = call(pool, "shop", () => new Promise(() => {}), { ...options, readOnly: true, deadlineMs: 500, attemptTimeoutMs: 3000 });
  const e = await drive(timers, p).catch((x) => x);
  // The attempt got 400 ms (500 less the 100 ms reserve); after a 50 ms backoff only 50 ms are
  // left, less than the reserve: no second attempt starts.
  assert.deepEqual([e.code, e.attempts, e.failures[0].phase], ["DEADLINE_EXCEEDED", 1, "send"]);
  assert.ok(timers.monotonicMs() <= 460, String(timers.monotonicMs()));
  const q = call(pool, "shop", () => answer(200), { ...options, deadlineMs: 0 });
  assert.deepEqual([(await q.catch((x) => x)).code], ["DEADLINE_EXCEEDED"]);
});

test("the caller's signal aborts the attempt in flight: ABORTED, lease returned, nothing reported", async () => {
  const { pool, timers, options } = setup();
  const host = recorded(pool);
  const ac = new AbortController();
  let inner;
  const p = call(host, "shop", ({ signal }) => ((inner = signal), new Promise(() => {})), { ...options, readOnly: true, signal: ac.signal });
  await drive(timers, Promise.resolve(), {});
  assert.equal(pool.stats().leased, 1);
  ac.abort(new Error("user left"));
  const e = await p.catch((x) => x);
  assert.deepEqual([e.code, e.stopReason], ["ABORTED", "aborted"]);
  assert.equal(inner.aborted, true);
  assert.equal(pool.stats().leased, 0);
  assert.deepEqual(host.reports, []);
  const already = await call(host, "shop", () => answer(200), { ...options, signal: AbortSignal.abort() }).catch((x) => x);
  assert.equal(already.code, "ABORTED");
});

test("POOL_EXHAUSTED fast, with retryAfterMs from the pool's next change", async () => {
  const { pool, timers, options } = setup({ n: 2, config: { coolAfter: 1 } });
  const host = recorded(pool, () => T0 + timers.monotonicMs());
  for (const v of ["p1", "p2"]) pool.report("PROXY", v, "shop", { ok: false, failure: "TIMEOUT" });
  let ran = 0;
  const e = await call(host, "shop", () => (ran++, answer(200)), options).catch((x) => x);
  assert.deepEqual([e.code, e.stopReason, e.attempts, ran, e.retryable], ["POOL_EXHAUSTED", "pool-exhausted", 0, 0, true]);
  assert.equal(e.retryAfterMs, 60_000);
});

test("the retry budget stops a storm: under 100% failure, attempts ≤ calls × (1 + ratio) + capacity", async () => {
  const { pool, timers, options } = setup({ n: 8 });
  const budget = new RetryBudget({ ratio: 0.1, capacity: 5 });
  let attempts = 0;
  const codes = new Map();
  const calls = 100;
  for (let i = 0; i < calls; i++) {
    const p = call(pool, "shop", async () => (attempts++, answer(503)), { ...options, readOnly: true, budget, retry: { maxAttempts: 4, baseDelayMs: 0 } });
    const e = await drive(timers, p, { stepMs: 1 }).catch((x) => x);
    codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
  }
  assert.ok(attempts <= calls * 1.1 + 5, `${attempts} attempts`);
  assert.ok(attempts >= calls + 10, "the budget still allowed some retries");
  assert.ok(codes.get("RETRY_BUDGET_EXHAUSTED") > 80, JSON.stringify([...codes]));
  assert.equal(budget.stats().retries, attempts - calls);
});

test("the kill switch turns retries off at runtime, and back on", async () => {
  const { pool, timers, options } = setup();
  const budget = new RetryBudget();
  budget.disable();
  let n = 0;
  const e = await drive(timers, call(pool, "shop", async () => (n++, answer(503)), { ...options, readOnly: true, budget })).catch((x) => x);
  assert.deepEqual([e.code, e.stopReason, n], ["NOT_RETRYABLE", "retries-disabled", 1]);
  budget.enable();
  n = 0;
  await drive(timers, call(pool, "shop", async () => (n++, answer(503)), { ...options, readOnly: true, budget })).catch((x) => x);
  assert.equal(n, 3);
});

test("errors never carry credentials; bad options are refused", async () => {
  const { timers, options } = setup({ n: 0 });
  const pool = setup({ n: 0 }).pool;
  pool.register("PROXY", "http://alice:s3cret@127.0.0.1:1");
  const e = await drive(timers, call(pool, "shop", async () => {
    throw new Error("connect to http://alice:s3cret@127.0.0.1:1 failed, Proxy-Authorization: Basic YWxpY2U6czNjcmV0", { cause: coded("ECONNRESET") });
  }, { ...options, readOnly: true })).catch((x) => x);
  const text = JSON.stringify({ message: e.message, failures: e.failures, stack: e.stack });
  assert.ok(!text.includes("s3cret") && !text.includes("YWxpY2U6czNjcmV0"), text);
  assert.match(e.failures[0].resource, /\*\*\*/);
  await assert.rejects(call(pool, "shop", () => 1, { deadline: 5 }), { code: "INVALID_ARGUMENT" });
  await assert.rejects(call(pool, "shop", () => 1, { retry: { maxAttempts: 0 } }), { code: "INVALID_ARGUMENT" });
  await assert.rejects(call(pool, "shop", "nope"), { code: "INVALID_ARGUMENT" });
});

test("a long attempt keeps its lease (renewed every half TTL); a refused renewal aborts it and the call moves on", async () => {
  const { pool, timers, options } = setup({ n: 2, config: { leaseTtlMs: 1000 } });
  const host = recorded(pool, () => T0 + timers.monotonicMs());
  host.renew = (lease) => pool.renew(lease);
  const seen = [];
  const p = call(host, "shop", async ({ lease, signal }) => {
    seen.push(lease.value);
    await new Promise((r, j) => {
      const t = timers.setTimeout(r, 1800);
      signal.addEventListener("abort", () => (timers.clearTimeout(t), j(signal.reason)));
    });
    return answer(200);
  }, { ...options, readOnly: true, attemptTimeoutMs: 5000 });
  for (let t = 0; t < 1200; t += 100) await drive(timers, Promise.resolve(), {}), await timers.advance(100);
  // Past the lease's first TTL: still held, no other acquire gets it.
  const view = pool.resources().find((r) => r.value === seen[0]);
  assert.ok(view.lease !== null && view.lease.expiresAt > T0 + timers.monotonicMs(), JSON.stringify(view.lease));
  assert.equal((await drive(timers, p)).status, 200);
  assert.equal(pool.stats().leased, 0);

  // Blocked mid-attempt: the renewal is refused, the attempt aborted, nothing reported, the other resource used.
  seen.length = 0;
  const q = call(host, "shop", async ({ signal, lease }) => {
    seen.push(signal);
    if (seen.length === 1) {
      pool.block("PROXY", lease.value, { seconds: 60 });
      return new Promise((_, j) => signal.addEventListener("abort", () => j(signal.reason)));
    }
    return answer(200);
  }, { ...options, readOnly: true, attemptTimeoutMs: 5000 });
  assert.equal((await drive(timers, q)).status, 200);
  assert.equal(seen.length, 2);
  assert.equal(seen[0].reason.stopReason, "lease-lost");
  assert.ok(timers.monotonicMs() > 1800, "aborted at the renewal, not at the attempt timeout");
  assert.deepEqual(host.reports.map((r) => r.ok), [true, true], "nothing reported for the lost lease");
});

// ----- hedging ------------------------------------------------------------------------------


/** An attempt that answers 200 after `ms[i]` virtual ms on its i-th start, honouring its signal. */
const timed = (timers, ms, log) => ({ lease, signal, attemptNumber }) =>
  new Promise((resolve, reject) => {
    log.push({ value: lease.value, at: timers.monotonicMs(), attemptNumber, signal });
    const t = timers.setTimeout(() => resolve({ ...answer(200), via: lease.value }), ms[log.length - 1]);
    signal.addEventListener("abort", () => (timers.clearTimeout(t), reject(signal.reason)));
  });

test("a hedged read-only call beats a slow resource: the hedge wins, the loser is cancelled, unreported, released", async () => {
  const { pool, timers, options } = setup();
  const host = recorded(pool);
  const log = [];
  const budget = new HedgeBudget();
  const p = call(host, "shop", timed(timers, [1000, 50], log), { ...options, readOnly: true, hedge: { delayMs: 100, budget } });
  const res = await drive(timers, p, { stepMs: 5 });
  assert.equal(res.via, log[1].value);
  assert.notEqual(log[0].value, log[1].value);
  assert.deepEqual(log.map((l) => [l.at, l.attemptNumber]), [[0, 1], [100, 2]]);
  assert.equal(log[0].signal.reason.stopReason, "hedge-lost");
  assert.ok(timers.monotonicMs() < 200);
  assert.deepEqual(host.reports.map((r) => [r.value, r.ok]), [[log[1].value, true]], "the loser's outcome is not counted");
  assert.equal(host.releases.length, 2);
  assert.equal(pool.stats().leased, 0);
  assert.equal(budget.stats().hedges, 1);
});

test("no hedge when the first attempt answers before the hedge delay", async () => {
  const { pool, timers, options } = setup();
  const log = [];
  const res = await drive(timers, call(pool, "shop", timed(timers, [80], log), { ...options, readOnly: true, hedge: { delayMs: 100, budget: new HedgeBudget() } }));
  assert.equal(res.status, 200);
  assert.equal(log.length, 1);
});

test("the default hedge delay is the context's p95 latency from the pool's windows", async () => {
  const { pool, timers, options } = setup();
  for (const v of ["p1", "p2", "p3"]) for (let i = 0; i < 5; i++) pool.report("PROXY", v, "shop", { ok: true, latencyMs: v === "p2" ? 300 : 200 });
  const log = [];
  await drive(timers, call(pool, "shop", timed(timers, [1000, 10], log), { ...options, readOnly: true, hedge: { budget: new HedgeBudget() } }), { stepMs: 5 });
  assert.deepEqual(log.map((l) => l.at), [0, 200]);
  // A context without latency data is not hedged.
  const quiet = [];
  await drive(timers, call(pool, "elsewhere", timed(timers, [500], quiet), { ...options, readOnly: true, hedge: true }), { stepMs: 5 });
  assert.equal(quiet.length, 1);
});

test("with groups, the default hedge delay is the p95 of the listed groups' resources only", async () => {
  const { pool, timers, options } = setup({ n: 5 });
  // p1, p2 fast in group "fast"; p3–p5 slow in "slow": the whole context's median p95 is 900.
  for (const [v, g, ms] of [["p1", "fast", 100], ["p2", "fast", 100], ["p3", "slow", 900], ["p4", "slow", 900], ["p5", "slow", 900]]) {
    pool.register("PROXY", v, { group: g });
    for (let i = 0; i < 5; i++) pool.report("PROXY", v, "shop", { ok: true, latencyMs: ms });
  }
  const log = [];
  const o = { ...options, groups: ["fast"], readOnly: true, hedge: { budget: new HedgeBudget() } };
  await drive(timers, call(pool, "shop", timed(timers, [1000, 10], log), o), { stepMs: 5 });
  assert.deepEqual(log.map((l) => l.at), [0, 100], "hedged after the fast tier's p95, not the context's 900");
});

test("a mutation is never hedged: hedge without readOnly is refused", async () => {
  const { pool } = setup();
  let ran = 0;
  for (const o of [{ hedge: true }, { idempotent: true, hedge: { delayMs: 5 } }, { idempotencyKey: "k", hedge: true }]) {
    await assert.rejects(call(pool, "shop", () => ran++, o), { code: "INVALID_ARGUMENT", message: /readOnly/ });
  }
  assert.equal(ran, 0);
  assert.equal(pool.stats().leased, 0);
});

test("the hedging budget: round(1/ratio) tokens a hedge, one back per completed call; the kill switch stops hedges", async () => {
  const { pool, timers, options } = setup();
  const budget = new HedgeBudget({ ratio: 0.5, capacity: 2 }); // a hedge costs 2
  const hedges = [];
  for (let i = 0; i < 4; i++) {
    const log = [];
    await drive(timers, call(pool, "shop", timed(timers, [1000, 10], log), { ...options, readOnly: true, hedge: { delayMs: 100, budget } }), { stepMs: 10 });
    hedges.push(log.length - 1);
  }
  assert.deepEqual(hedges, [1, 0, 1, 0], "2 tokens, spent; 1 back; 2 back after the second call; …");
  assert.deepEqual(new HedgeBudget({ ratio: 0.9 }).stats().cost, 2, "the ratio is capped at 0.5");
  assert.equal(new HedgeBudget({ ratio: 0.1 }).stats().cost, 10);
  options.budget.disable();
  const log = [];
  await drive(timers, call(pool, "shop", timed(timers, [300, 10], log), { ...options, readOnly: true, hedge: { delayMs: 100, budget: new HedgeBudget() } }), { stepMs: 10 });
  assert.equal(log.length, 1, "no hedge with retries switched off");
});

// ----- the bulkhead ---------------------------------------------------------------------------


test("a concurrency surge: the bulkhead runs maxConcurrent, queues maxQueue, rejects the rest at once", async () => {
  const { pool, timers, options } = setup({ n: 8 });
  const bulkhead = new Bulkhead({ maxConcurrent: 2, maxQueue: 1 });
  const started = [];
  const calls = [];
  for (let i = 0; i < 5; i++) {
    calls.push(call(pool, "shop", () => (started.push([i, timers.monotonicMs()]), new Promise((r) => timers.setTimeout(() => r(answer(200)), 100))), { ...options, readOnly: true, bulkhead }).then(
      (r) => r.status,
      (e) => e.code,
    ));
  }
  const rejectedAtOnce = await Promise.race([Promise.all([calls[3], calls[4]]), new Promise((r) => setTimeout(() => r("waited"), 50))]);
  assert.deepEqual(rejectedAtOnce, ["CAPACITY_EXCEEDED", "CAPACITY_EXCEEDED"], "rejected before any time passed");
  assert.deepEqual(bulkhead.stats(), { active: 2, queued: 1, rejected: 2, maxConcurrent: 2, maxQueue: 1 });
  assert.equal(pool.stats().leased, 2, "the queued call holds no lease");
  const results = await drive(timers, Promise.all(calls));
  assert.deepEqual(results, [200, 200, 200, "CAPACITY_EXCEEDED", "CAPACITY_EXCEEDED"]);
  assert.deepEqual(started.map(([i, at]) => [i, at]), [[0, 0], [1, 0], [2, 100]], "the queued one ran when a permit came back");
  assert.deepEqual(bulkhead.stats().active, 0);
});

test("time in the bulkhead's queue counts against the deadline", async () => {
  const { pool, timers, options } = setup();
  const bulkhead = new Bulkhead({ maxConcurrent: 1, maxQueue: 5 });
  const slow = call(pool, "shop", () => new Promise((r) => timers.setTimeout(() => r(answer(200)), 100)), { ...options, readOnly: true, bulkhead });
  let ran = false;
  const queued = call(pool, "shop", () => ((ran = true), answer(200)), { ...options, readOnly: true, bulkhead, deadlineMs: 50 }).catch((e) => e);
  const [e, r] = await drive(timers, Promise.all([queued, slow]));
  assert.deepEqual([e.code, e.attempts, ran, r.status], ["DEADLINE_EXCEEDED", 0, false, 200]);
  assert.equal(bulkhead.stats().queued, 0);
});

test("a classify or isBlocked that throws, or a bad verdict, goes to onError and the default table applies", async () => {
  const { pool, timers, options } = setup();
  const errors = [];
  const o = { ...options, readOnly: true, onError: (e) => errors.push(e.message) };
  const a = await drive(timers, call(pool, "shop", () => answer(200), { ...o, classify: () => { throw new Error("classify broke"); } }));
  const b = await drive(timers, call(pool, "shop", () => answer(200), { ...o, classify: () => ({ report: "FINE" }) }));
  const c = await drive(timers, call(pool, "shop", () => answer(200), { ...o, isBlocked: () => { throw new Error("predicate broke"); } }));
  assert.deepEqual([a.status, b.status, c.status], [200, 200, 200]);
  assert.equal(errors.length, 3);
  assert.match(errors.join("|"), /classify broke.*FINE.*predicate broke/);
  // A classify that answers is used: a 200 judged a soft ban is retried elsewhere.
  let n = 0;
  const d = await drive(timers, call(pool, "shop", () => answer(200, { "x-n": String(++n) }), {
    ...o,
    classify: ({ result }) => (result?.headers.get("x-n") === "1" ? { report: "BLOCKED", retryable: true } : undefined),
  }));
  assert.equal(d.headers.get("x-n"), "2");
  assert.equal(pool.stats().leased, 0);
});
