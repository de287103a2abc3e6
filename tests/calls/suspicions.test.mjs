// Suspicions from the second adversarial review of the resilient-call layer (issue 15), each
// confirmed or refuted on real local sockets (127.0.0.1: origins, forward proxies, proxies
// that misbehave): a real Pool, proxyFetch, and the call as a crawler would make it. Each
// confirmed one is pinned by the test that failed before its fix.
import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { fetch } from "undici";
import { openPool } from "repute";
import { call } from "../../pkg-scripts/lib/call/call.js";
import { HedgeBudget, RetryBudget } from "../../pkg-scripts/lib/call/budget.js";
import { proxyFetch } from "../../pkg-scripts/lib/call/proxy-fetch.js";
import { startOrigin, startProxy, until } from "./_sockets.mjs";
import { VirtualTimers } from "../server/_manual-timers.mjs";
import { recorded, settle, setup } from "./_support.mjs";

/** Rejections nobody handled while `fn` ran (and a few turns after). */
async function unhandledDuring(fn) {
  const seen = [];
  const listen = (e) => seen.push(e);
  process.on("unhandledRejection", listen);
  try {
    return { value: await fn(), seen };
  } catch (error) {
    return { error, seen };
  } finally {
    // real time: a rejection left unhandled may come from a real socket's late event.
    await new Promise((r) => setTimeout(r, 20));
    process.off("unhandledRejection", listen);
  }
}

/** A Pool with `n` real forward proxies as its PROXY resources, an origin, and a proxyFetch. */
async function wired(t, n = 2, fetchOptions = {}) {
  const origin = await startOrigin();
  const proxies = [];
  for (let i = 0; i < n; i++) proxies.push(await startProxy());
  const fetcher = proxyFetch(null, fetchOptions);
  const { pool } = setup({ n: 0 });
  for (const p of proxies) pool.register("PROXY", p.url());
  pool.drainEvents();
  t.after(async () => {
    await fetcher.close();
    for (const p of proxies) await p.close();
    await origin.close();
  });
  return { origin, proxies, fetcher, pool, host: recorded(pool) };
}

test("1. in a hedged call, a `now` or a `headers.get` that throws is the call's error, not an unhandled rejection and a call that never settles", async (t) => {
  const { origin, fetcher, pool, host } = await wired(t);
  // The origin holds the first request until the hedge's arrives, then answers both.
  const held = [];
  origin.handle = (req, res) => {
    held.push(res);
    if (held.length === 2) for (const r of held.splice(0)) r.end("ok");
  };
  const hedge = () => ({ delayMs: 20, budget: new HedgeBudget({ ratio: 0.5 }) });

  // A clock that breaks once the hedge has started.
  let broken = false;
  const now = () => {
    if (broken) throw new Error("the clock broke");
    return performance.now();
  };
  const clocked = await unhandledDuring(() =>
    call(host, "shop", async (a) => {
      if (a.attemptNumber === 2) broken = true;
      return fetcher.fetch(a, origin.url("/item"));
    }, { readOnly: true, budget: new RetryBudget(), now, hedge: hedge() }),
  );
  assert.deepEqual(clocked.seen.map((e) => e.message), [], "nothing rejected unhandled");
  assert.equal(clocked.error?.code, "NOT_RETRYABLE", `the call settled with its error (${clocked.error?.message})`);
  assert.equal(clocked.error.cause?.message, "the clock broke");
  assert.equal(pool.stats().leased, 0);

  // Answers whose headers cannot be read (a response-like object of the caller's).
  const unreadable = await unhandledDuring(() =>
    call(host, "shop", async (a) => {
      const res = await fetcher.fetch(a, origin.url("/item"));
      return { status: res.status, body: res.body, headers: { get: () => { throw new TypeError("headers are gone"); } } };
    }, { readOnly: true, budget: new RetryBudget(), hedge: hedge() }),
  );
  assert.deepEqual(unreadable.seen.map((e) => e.message), [], "nothing rejected unhandled");
  assert.equal(unreadable.error?.code, "NOT_RETRYABLE", `the call settled with its error (${unreadable.error?.message})`);
  assert.equal(unreadable.error.cause?.message, "headers are gone");
  assert.deepEqual(host.reports, [], "a bug of the caller's blames no resource");
  assert.equal(pool.stats().leased, 0);
});

test("2. a proxy that closes a CONNECT without answering is a prompt CONNECTION_RESET at connect (undici used to reconnect in a loop until the attempt timed out)", async (t) => {
  for (const how of ["closes", "half an answer, then closes"]) {
    // The proxy reads the CONNECT and hangs up: at once, or after part of a status line.
    let connections = 0;
    const closer = net.createServer((s) => {
      connections++;
      s.on("error", () => {});
      s.once("data", () => (how === "closes" ? s.end() : s.end("HTTP/1.1 2")));
    });
    await new Promise((r) => closer.listen(0, "127.0.0.1", r));
    const fetcher = proxyFetch(null);
    const { pool, timers, options } = setup({ n: 0 });
    pool.register("PROXY", `http://127.0.0.1:${closer.address().port}`);
    pool.drainEvents();
    const host = recorded(pool);
    const stop = new AbortController();
    t.after(async () => (stop.abort(), await fetcher.close(), closer.close()));
    // Virtual timers that never move (and no backoff): only the proxy's hang-up can end it.
    let outcome = null;
    call(host, "shop", (a) => fetcher.fetch(a, "https://127.0.0.1:18443/order", { method: "POST", body: "{}" }), { ...options, random: () => 0, signal: stop.signal })
      .then((value) => (outcome = { value }), (error) => (outcome = { error }));
    await until(() => outcome !== null, `the call settled (${how})`).catch((e) => {
      throw new Error(`${e.message}; the proxy saw ${connections} connections`);
    });
    const e = outcome.error;
    // The tunnel never opened: the request never went out, so even a POST may move on (here
    // there is no other resource).
    assert.deepEqual([e?.code, e?.stopReason], ["POOL_EXHAUSTED", "no-other-resource"], how);
    assert.deepEqual(e.failures.map((f) => [f.failure, f.phase]), [["CONNECTION_RESET", "connect"]], how);
    assert.deepEqual(host.reports.map((r) => r.failure), ["CONNECTION_RESET"], how);
    assert.equal(connections, 1, `${how}: one connection, no reconnect storm`);
    assert.equal(timers.monotonicMs(), 0, "no timer ended it");
    assert.equal(pool.stats().leased, 0);
  }
});

test("3. an error of the caller's that names a secret (undici: 'URL includes credentials') is the call's cause only redacted: message, stack and cause chain", async (t) => {
  const { proxies, pool, host } = await wired(t, 1);
  const secret = "hunter2-s3cret";
  const withCredentials = proxies[0].url(`crawler:${secret}`);
  // A health check of the proxy itself, by a caller who pasted its credentialed URL: undici's
  // fetch refuses it before connecting, naming the whole URL.
  const e = await call(host, "shop", async () => {
    const probe = await fetch(`${withCredentials}/health`).catch((x) => {
      throw new Error("the proxy's health check failed", { cause: x });
    });
    return probe;
  }, { readOnly: true, budget: new RetryBudget() }).catch((x) => x);
  assert.deepEqual([e.code, e.stopReason], ["NOT_RETRYABLE", "not-retryable"]);
  assert.equal(e.cause?.message, "the proxy's health check failed", "the caller's error is still the cause");
  assert.ok(e.cause instanceof Error && e.cause.cause instanceof TypeError, "of the same kinds");
  assert.match(e.cause.cause.message, /includes credentials: http:\/\/\*\*\*@127\.0\.0\.1/);
  const seen = inspect(e, { depth: 20 });
  for (const text of [seen, e.cause.stack, e.cause.cause.stack, e.cause.cause.message]) assert.ok(!text.includes(secret), text);
  assert.equal(pool.stats().leased, 0);
  // A cause with nothing to hide is the caller's very object.
  const plain = new Error("decode failed");
  const f = await call(host, "shop", async () => { throw plain; }, { readOnly: true, budget: new RetryBudget() }).catch((x) => x);
  assert.equal(f.cause, plain);
  // Whatever else an attempt throws: a string, an error carrying its request's headers, an
  // AggregateError of several.
  const thrown = [
    `GET ${withCredentials}/ failed`,
    Object.assign(new Error("request failed"), { config: { headers: { authorization: `Bearer ${secret}` } }, status: 0 }),
    new AggregateError([new Error(`tried ${withCredentials}`)], "all failed"),
  ];
  for (const x of thrown) {
    const g = await call(host, "shop", async () => { throw x; }, { readOnly: true, budget: new RetryBudget() }).catch((y) => y);
    assert.equal(g.code, "NOT_RETRYABLE");
    assert.ok(!inspect(g, { depth: 20 }).includes(secret), inspect(g, { depth: 20 }));
  }
});

test("4. a delivered body nobody reads does not keep its resource's dispatcher and connection for ever: idleMs after its last read it is cancelled and both are closed", async (t) => {
  const origin = await startOrigin();
  const proxy = await startProxy();
  const timers = new VirtualTimers();
  const fetcher = proxyFetch(null, { timers, idleMs: 1000 });
  t.after(async () => (await fetcher.close(), await proxy.close(), await origin.close()));
  const lease = { kind: "PROXY", value: proxy.url() };
  const drip = [];
  origin.handle = (req, res) => {
    if (req.url === "/small") return res.end("a small page");
    res.writeHead(200, { "content-type": "text/html" });
    res.write("<html>");
    if (req.url === "/drip") drip.push(res); // the test writes the rest; /stalled: nothing more
  };

  // Answers whose bodies the caller never touches: one stalled after its first bytes, one whole.
  for (const path of ["/stalled", "/small"]) {
    const res = await fetcher.fetch(lease, origin.url(path));
    assert.equal(res.status, 200);
    await timers.advance(999);
    assert.equal(fetcher.size, 1, `${path}: kept until idleMs have passed`);
    await timers.advance(1);
    await until(() => fetcher.size === 0 && proxy.sockets.open === 0, `${path}: the dispatcher and its connection closed`);
    await assert.rejects(res.text(), /left unread/, `${path}: reading it now fails, it does not end short`);
  }

  // A body that is being read is not cut: idle time counts only while no read is waiting.
  const res = await fetcher.fetch(lease, origin.url("/drip"));
  const reader = res.body.getReader();
  const text = new TextDecoder();
  let got = text.decode((await reader.read()).value, { stream: true });
  await timers.advance(999); // the caller thinks it over
  const next = reader.read(); // …then waits for more, longer than idleMs
  await settle(); // (the stream asks for data on a later turn; virtual time would jump first)
  await timers.advance(5000);
  assert.equal(fetcher.size, 1, "a read is waiting: not idle");
  drip[0].end("</html>");
  for (let r = await next; !r.done; r = await reader.read()) got += text.decode(r.value, { stream: true });
  assert.equal(got, "<html></html>");
  await timers.advance(1000);
  await until(() => fetcher.size === 0, "idle after the body was read");
});

test("5. phase names are a closed set: connect, tls, send, wait, receive, and other for anything else — a caller's names cannot grow the metrics' labels", async (t) => {
  const origin = await startOrigin();
  const proxy = await startProxy();
  const dir = await mkdtemp(join(tmpdir(), "repute-calls-"));
  const host = await openPool({ dir, handleSignals: false, checkpointMs: 0, seed: 3 });
  const fetcher = proxyFetch(host);
  t.after(async () => (await fetcher.close(), await host.close(), await proxy.close(), await origin.close(), await rm(dir, { recursive: true, force: true })));
  await host.register("PROXY", proxy.url());
  origin.handle = (req, res) => ((res.statusCode = 404), res.end("gone"));
  const one = { readOnly: true, budget: new RetryBudget(), retry: { maxAttempts: 1 } };
  // A caller marks its own phases — one a request, by a URL's path — then the request fails.
  for (const path of ["/a", "/b", "/c"]) {
    const e = await host.call("shop", async (a) => {
      a.phase(`fetching ${path}`);
      const res = await fetcher.fetch(a, origin.url(path));
      a.phase(`parsing ${path}`);
      throw new SyntaxError(`${path}: not JSON (${res.status})`);
    }, one).catch((x) => x);
    assert.equal(e.code, "NOT_RETRYABLE");
    assert.equal(e.failures[0].phase, "other", "recorded as other");
  }
  // …and a classify that names its own phase.
  const c = await host.call("shop", (a) => fetcher.fetch(a, origin.url("/d")), {
    ...one,
    classify: ({ result }) => (result ? { report: null, retryable: false, phase: "post-processing", reason: "no" } : undefined),
  }).catch((x) => x);
  assert.equal(c.failures[0].phase, "other");
  // "wait" is a phase: the request is out, the answer awaited.
  const w = await host.call("shop", async (a) => {
    a.phase("wait");
    throw Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
  }, one).catch((x) => x);
  assert.deepEqual([w.failures[0].failure, w.failures[0].phase], ["CONNECTION_RESET", "wait"]);
  const phases = new Set([...(await host.metrics()).matchAll(/^repute_call_attempts_total\{[^}]*phase="([^"]*)"/gm)].map((m) => m[1]));
  assert.deepEqual([...phases].sort(), ["other", "wait"]);
});

test("6. a 408 (the server gave up waiting for the request) is a TIMEOUT: retried on another resource when repeatable, never for a mutation", async (t) => {
  const { origin, fetcher, pool, host } = await wired(t, 2);
  let n = 0;
  origin.handle = (req, res) => ((res.statusCode = n++ === 0 ? 408 : 200), res.end(res.statusCode === 200 ? "ok" : "too slow"));
  const opts = { budget: new RetryBudget(), random: () => 0 };
  const get = (a) => fetcher.fetch(a, origin.url("/item"));
  const res = await call(host, "shop", get, { ...opts, readOnly: true });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "ok");
  assert.deepEqual(host.reports.map((r) => r.failure ?? "ok"), ["TIMEOUT", "ok"]);
  // A POST without a key: the 408 comes back on the error, nothing is tried again.
  n = 0;
  host.reports.length = 0;
  const e = await call(host, "shop", (a) => fetcher.fetch(a, origin.url("/order"), { method: "POST", body: "{}" }), opts).catch((x) => x);
  assert.deepEqual([e.code, e.stopReason, e.attempts, e.response?.status], ["NOT_RETRYABLE", "not-idempotent", 1, 408]);
  assert.deepEqual(e.failures.map((f) => [f.failure, f.phase, f.status]), [["TIMEOUT", "receive", 408]]);
  assert.equal(n, 1);
  await e.response.body?.cancel();
  assert.equal(pool.stats().leased, 0);
});
