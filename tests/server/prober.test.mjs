// The recovery prober (pkg-scripts/lib/node/prober.js): `startProber` against a real Pool with a
// manual clock (rounds driven by runOnce, the prober's timers replaced by a manual timer queue),
// and `httpProbe` through a tiny forward HTTP proxy and target server on 127.0.0.1.
// Deterministic: no test waits on wall-clock time except the 200 ms probe timeout case.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { Pool } from "repute";
import { httpProbe } from "../../pkg-scripts/lib/node/http-probe.js";
import { startProber } from "../../pkg-scripts/lib/node/prober.js";
import { redactCredentials } from "../../pkg-scripts/lib/outcome/redact.js";
import { STATUS_CASES } from "../calls/_classification.mjs";
import { manualTimers } from "./_manual-timers.mjs";

const T0 = 1_700_000_000_000;
const TIMEOUT = { ok: false, failure: "TIMEOUT" };

/** A pool with a manual clock: `clock.t` is the time, `clock.advance(ms)` moves it. */
function setup(config = {}) {
  const clock = { t: T0, advance(ms) { this.t += ms; } };
  const pool = new Pool({ seed: 1, now: () => clock.t, config: { halfOpenCauses: ["BLOCKED"], ...config } });
  return { pool, clock };
}

/** Registers `value` and cools it in `context` with `n` failures of `failure`. */
function cool(pool, value, failure = "TIMEOUT", n = 2, context = "ctx", kind = "PROXY") {
  pool.register(kind, value);
  for (let i = 0; i < n; i++) pool.report(kind, value, context, { ok: false, failure });
}

/** Event types since the last drain, without the rejections of the probes' own acquire checks. */
const eventTypes = (pool) => pool.drainEvents().map((e) => e.type).filter((t) => t !== "ACQUISITION_REJECTED");

const cell = (pool, value, context = "ctx") =>
  pool.resources({ context }).find((r) => r.value === value).cells.find((c) => c.context === context);


/** A prober that never runs rounds on its own: tests call runOnce. */
function prober(pool, options) {
  const timers = manualTimers();
  const errors = [];
  const p = startProber(pool, {
    setTimer: timers.setTimer,
    clearTimer: timers.clearTimer,
    onError: (error, entry) => errors.push({ error, entry }),
    ...options,
  });
  return { p, timers, errors };
}

const deferred = () => {
  let resolve;
  const promise = new Promise((r) => (resolve = r));
  return { promise, resolve };
};

async function until(check) {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setImmediate(r));
  assert.ok(check(), "condition never became true");
}

describe("startProber", () => {
  test("probes a TIMEOUT-cooled proxy after its cooldown under a real lease, then it recovers", async () => {
    const { pool, clock } = setup();
    cool(pool, "p1");
    assert.equal(cell(pool, "p1").cooldownUntil, T0 + 120_000); // 60 s × 2
    const seen = [];
    const { p, errors } = prober(pool, {
      probes: {
        PROXY: async ({ kind, value, context, lease, signal }) => {
          assert.deepEqual([kind, value, context], ["PROXY", "p1", "ctx"]);
          assert.equal(lease.value, "p1");
          assert.equal(lease.expiresAt - lease.leasedAt, 30_000);
          assert.ok(signal instanceof AbortSignal && !signal.aborted);
          // The lease is real: nobody else gets the resource, in this context or another.
          assert.equal(pool.acquireResource("PROXY", "p1", "ctx"), null);
          assert.equal(pool.acquire("ctx"), null);
          assert.equal(pool.acquire("elsewhere"), null);
          assert.equal(pool.stats().leased, 1);
          seen.push(lease.token);
          return { ok: true, latencyMs: 12 };
        },
      },
    });

    clock.advance(119_999);
    assert.deepEqual(pool.dueForRecoveryProbe(), []);
    assert.equal(await p.runOnce(), 0);
    clock.advance(1);
    assert.deepEqual(pool.dueForRecoveryProbe(), [{ kind: "PROXY", value: "p1", group: null, context: "ctx", cooldownUntil: T0 + 120_000 }]);
    pool.drainEvents();

    assert.equal(await p.runOnce(), 1);
    assert.equal(pool.stats().leased, 0);
    assert.equal(cell(pool, "p1").state, "RECOVERING");
    assert.deepEqual(eventTypes(pool), ["RESOURCE_LEASED", "LEASE_RELEASED"]);

    // Probation follow-up: RECOVERING is not probe-due, but the prober finishes probation.
    assert.deepEqual(pool.dueForRecoveryProbe(), []);
    clock.advance(5_000);
    assert.equal(await p.runOnce(), 1);
    assert.equal(cell(pool, "p1").state, "HEALTHY");
    assert.deepEqual(eventTypes(pool), ["RESOURCE_LEASED", "RESOURCE_RECOVERED", "LEASE_RELEASED"]);
    assert.equal(await p.runOnce(), 0, "nothing left to probe");
    assert.equal(seen.length, 2);
    assert.ok(seen[1] > seen[0]);
    assert.deepEqual(errors, []);
    await p.stop();
  });

  test("a failing probe cools the cell again at the next step of the curve", async () => {
    const { pool, clock } = setup();
    cool(pool, "p1");
    clock.advance(120_000);
    const { p } = prober(pool, { probes: { PROXY: async () => TIMEOUT } });
    pool.drainEvents();
    assert.equal(await p.runOnce(), 1);
    const c = cell(pool, "p1");
    assert.equal(c.state, "COOLING");
    assert.equal(c.consecutiveFailures, 3);
    assert.equal(c.cooldownUntil, clock.t + 240_000); // 60 s × 2^2
    const cooled = pool.drainEvents().find((e) => e.type === "RESOURCE_COOLED");
    assert.deepEqual([cooled.cause, cooled.until], ["TIMEOUT", clock.t + 240_000]);
    assert.equal(pool.stats().leased, 0);
    assert.equal(await p.runOnce(), 0, "a failed probe is not followed up");
    clock.advance(240_000);
    assert.equal(await p.runOnce(), 1, "due again after the longer cooldown");
    await p.stop();
  });

  test("a probe that throws releases the lease, reports nothing and calls onError; null reports nothing", async () => {
    const { pool, clock } = setup();
    cool(pool, "p1");
    clock.advance(120_000);
    const before = cell(pool, "p1");
    const boom = new Error("probe broke");
    let result = () => { throw boom; };
    const { p, errors } = prober(pool, { probes: { PROXY: async () => result() } });
    assert.equal(await p.runOnce(), 1);
    assert.equal(pool.stats().leased, 0);
    assert.deepEqual(cell(pool, "p1"), before);
    assert.equal(errors.length, 1);
    assert.equal(errors[0].error, boom);
    assert.deepEqual(errors[0].entry, { kind: "PROXY", value: "p1", group: null, context: "ctx", cooldownUntil: T0 + 120_000 });

    result = () => null; // "cannot probe this context"
    assert.equal(await p.runOnce(), 1);
    assert.equal(pool.stats().leased, 0);
    assert.deepEqual(cell(pool, "p1"), before);
    assert.equal(errors.length, 1);

    result = () => ({ ok: "yes" }); // an invalid outcome: report refuses it, onError hears of it
    assert.equal(await p.runOnce(), 1);
    assert.deepEqual(cell(pool, "p1"), before);
    assert.equal(errors[1].error.code, "INVALID_ARGUMENT");
    assert.equal(pool.stats().leased, 0);
    await p.stop();
  });

  test("BLOCKED-cooled cells (half-open) and kinds without a probe are not probed", async () => {
    const { pool, clock } = setup();
    cool(pool, "blocked", "BLOCKED");
    cool(pool, "acct", "TIMEOUT", 2, "ctx", "ACCOUNT");
    clock.advance(7_200_000); // 3600 s × 2
    let calls = 0;
    const { p } = prober(pool, { probes: { PROXY: async () => (calls++, { ok: true }) } });
    assert.deepEqual(pool.dueForRecoveryProbe().map((e) => e.value), ["acct"]);
    assert.equal(await p.runOnce(), 0);
    assert.equal(calls, 0);
    assert.equal(cell(pool, "blocked").state, "COOLING");
    assert.equal(pool.acquire("ctx")?.value, "blocked", "a half-open trial goes to real traffic");
    await p.stop();
  });

  test("never runs more than `concurrency` probes at once", async () => {
    const { pool, clock } = setup();
    for (let i = 0; i < 6; i++) cool(pool, `p${i}`);
    clock.advance(120_000);
    let active = 0;
    let most = 0;
    const { p } = prober(pool, {
      concurrency: 2,
      probes: {
        PROXY: async () => {
          most = Math.max(most, ++active);
          for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
          active--;
          return TIMEOUT;
        },
      },
    });
    // Two rounds at once share the limit (the second finds the cells leased or reported).
    const [a, b] = await Promise.all([p.runOnce(), p.runOnce()]);
    assert.equal(most, 2);
    assert.equal(a + b, 6);
    for (let i = 0; i < 6; i++) assert.equal(cell(pool, `p${i}`).consecutiveFailures, 3);
    assert.equal(pool.stats().leased, 0);
    await p.stop();
  });

  test("stop() aborts an in-flight probe and releases its lease without reporting", async () => {
    const { pool, clock } = setup();
    cool(pool, "p1");
    clock.advance(120_000);
    const before = cell(pool, "p1");
    let probeSignal;
    const { p, errors, timers } = prober(pool, {
      probes: {
        PROXY: ({ signal }) => {
          probeSignal = signal;
          return new Promise((resolve) => signal.addEventListener("abort", () => resolve(TIMEOUT)));
        },
      },
    });
    const round = p.runOnce();
    await until(() => probeSignal);
    assert.equal(pool.stats().leased, 1);
    await p.stop();
    assert.ok(probeSignal.aborted);
    assert.equal(pool.stats().leased, 0);
    assert.deepEqual(cell(pool, "p1"), before, "an aborted probe's outcome is not reported");
    assert.equal(await round, 1);
    assert.deepEqual(errors, []);
    assert.equal(timers.pending.size, 0, "no timer left");
    assert.equal(await p.runOnce(), 0);
    assert.equal(await p.stop(), undefined);
  });

  test("stop() does not wait for a probe that ignores its signal", async () => {
    const { pool, clock } = setup();
    cool(pool, "p1");
    clock.advance(120_000);
    let started = false;
    const never = deferred();
    const { p, errors } = prober(pool, { probes: { PROXY: () => ((started = true), never.promise) } });
    const round = p.runOnce();
    await until(() => started);
    await p.stop();
    assert.equal(pool.stats().leased, 0);
    assert.equal(await round, 1);
    never.resolve({ ok: true }); // too late: ignored
    await new Promise((r) => setImmediate(r));
    assert.equal(cell(pool, "p1").state, "COOLING");
    assert.deepEqual(errors, []);
  });

  test("renews the lease every half TTL while a probe runs; a refused renewal aborts it", async () => {
    const { pool, clock } = setup();
    cool(pool, "p1");
    cool(pool, "p2");
    clock.advance(120_000);
    const gates = new Map();
    const { p, timers } = prober(pool, {
      probes: {
        PROXY: ({ value, signal }) => {
          const gate = deferred();
          gates.set(value, gate);
          signal.addEventListener("abort", () => gate.resolve({ ok: true }));
          return gate.promise;
        },
      },
    });
    const round = p.runOnce();
    await until(() => gates.size === 2);
    const lease = (v) => pool.resources().find((r) => r.value === v).lease;
    const start = clock.t;
    clock.advance(15_000);
    assert.equal(timers.fire(15_000), 2);
    assert.equal(lease("p1").expiresAt, start + 45_000);
    clock.advance(15_000);
    pool.block("PROXY", "p2", { seconds: 60 }); // renew refuses a blocked resource
    assert.equal(timers.fire(15_000), 2);
    assert.equal(lease("p1").expiresAt, start + 60_000);
    gates.get("p1").resolve({ ok: true });
    assert.equal(await round, 2);
    assert.equal(cell(pool, "p1").state, "RECOVERING");
    assert.equal(cell(pool, "p2").consecutiveSuccesses, 0, "a probe that lost its lease reports nothing");
    assert.equal(pool.stats().leased, 0);
    assert.equal(timers.pending.size, 1, "only the round timer is left");
    await p.stop();
  });

  test("the timer loop runs a round every intervalMs + jitter and survives errors", async () => {
    const { pool, clock } = setup();
    cool(pool, "p1");
    clock.advance(120_000);
    let failList = true;
    const wrapped = {
      dueForRecoveryProbe: () => {
        if (failList) throw new Error("listing failed");
        return pool.dueForRecoveryProbe();
      },
      acquireResource: (...a) => pool.acquireResource(...a),
      report: (...a) => pool.report(...a),
      release: (l) => pool.release(l),
      renew: (l) => pool.renew(l),
    };
    const { p, timers, errors } = prober(wrapped, {
      intervalMs: 1000,
      jitterMs: 100,
      random: () => 0.5,
      probes: { PROXY: async () => ({ ok: true }) },
    });
    assert.deepEqual([...timers.pending].map((x) => x.ms), [1050]);
    assert.equal(timers.fire(1050), 1);
    await until(() => timers.pending.size === 1);
    assert.equal(errors.length, 1);
    assert.equal(errors[0].error.message, "listing failed");
    assert.equal(errors[0].entry, null);
    failList = false;
    assert.equal(timers.fire(1050), 1);
    await until(() => timers.pending.size === 1 && cell(pool, "p1").state === "RECOVERING");
    await assert.rejects(() => {
      failList = true;
      return p.runOnce();
    }, /listing failed/);
    await p.stop();
    assert.equal(timers.pending.size, 0);
  });

  test("probation follow-up stops when real traffic holds the cell", async () => {
    const { pool, clock } = setup();
    cool(pool, "p1");
    clock.advance(120_000);
    const { p } = prober(pool, { probes: { PROXY: async () => ({ ok: true }) } });
    assert.equal(await p.runOnce(), 1);
    const worker = pool.acquire("ctx");
    assert.equal(worker.value, "p1", "RECOVERING is back in rotation");
    assert.equal(await p.runOnce(), 0);
    pool.release(worker);
    assert.equal(await p.runOnce(), 0, "real traffic judges it from here");
    assert.equal(cell(pool, "p1").state, "RECOVERING");
    await p.stop();
  });

  test("rejects bad options", () => {
    const { pool } = setup();
    assert.throws(() => startProber(pool, { probes: { PROXIES: async () => null } }), { code: "INVALID_ARGUMENT" });
    assert.throws(() => startProber(pool, { probes: {}, concurrency: 0 }), { code: "INVALID_ARGUMENT" });
    assert.throws(() => startProber({}, { probes: {} }), { code: "INVALID_ARGUMENT" });
  });
});

// ---------------------------------------------------------------------------------------------

const listen = (server) =>
  new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
const close = (server) =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

describe("httpProbe through a local forward proxy", () => {
  const basic = (userPass) => `Basic ${Buffer.from(userPass).toString("base64")}`;
  const AUTH = basic("user:pass");
  const SECRET = "s3cr3t-pw";
  const ACCEPTED = new Set([AUTH, basic(`user:${SECRET}`)]);
  const proxyLog = [];
  let target;
  let proxy;
  let targetPort;
  let proxyPort;
  let closedPort;

  before(async () => {
    // The destination: /health answers 200, /status/N answers N, /hang never answers.
    target = http.createServer((req, res) => {
      if (req.url === "/hang") return;
      const m = /^\/status\/(\d+)$/.exec(req.url);
      const status = m ? Number(m[1]) : req.url === "/health" ? 200 : 404;
      res.writeHead(status, status === 302 ? { location: "/health" } : {});
      res.end("ok");
    });
    // A forward proxy: absolute-URI requests, Proxy-Authorization checked, then forwarded.
    proxy = http.createServer((req, res) => {
      proxyLog.push({ method: req.method, url: req.url, auth: req.headers["proxy-authorization"] });
      if (!ACCEPTED.has(req.headers["proxy-authorization"])) {
        res.writeHead(407, { "proxy-authenticate": 'Basic realm="test"' });
        return res.end();
      }
      let url;
      try {
        url = new URL(req.url); // absolute-form only
      } catch {
        res.writeHead(400);
        return res.end();
      }
      const headers = { ...req.headers };
      delete headers["proxy-authorization"];
      delete headers["proxy-connection"];
      const upstream = http.request(url, { method: req.method, headers }, (up) => {
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
      });
      upstream.on("error", () => {
        res.writeHead(502);
        res.end();
      });
      req.pipe(upstream);
    });
    // CONNECT tunnels (for https: targets) lead to the plain-HTTP target: TLS cannot succeed.
    proxy.on("connect", (req, socket) => {
      proxyLog.push({ method: req.method, url: req.url, auth: req.headers["proxy-authorization"] });
      if (!ACCEPTED.has(req.headers["proxy-authorization"])) {
        return socket.end("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n");
      }
      const upstream = net.connect(targetPort, "127.0.0.1", () => {
        socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.pipe(socket).pipe(upstream);
      });
      upstream.on("error", () => socket.destroy());
      socket.on("error", () => upstream.destroy());
    });
    targetPort = await listen(target);
    proxyPort = await listen(proxy);
    const spare = http.createServer();
    closedPort = await listen(spare);
    await close(spare); // nothing listens there now: connections are refused
  });

  after(async () => {
    await close(proxy);
    await close(target);
  });

  const url = (path) => `http://127.0.0.1:${targetPort}${path}`;
  const proxyUrl = (auth = "user:pass", port = proxyPort) => `http://${auth}@127.0.0.1:${port}`;

  test("The prober recovers a TIMEOUT-cooled proxy through a local HTTP proxy server", async () => {
    const { pool, clock } = setup();
    const value = proxyUrl();
    cool(pool, value);
    clock.advance(120_000);
    proxyLog.length = 0;
    const { p, errors } = prober(pool, { probes: { PROXY: httpProbe({ targets: { ctx: url("/health") } }) } });
    pool.drainEvents();
    assert.equal(await p.runOnce(), 1);
    assert.equal(cell(pool, value).state, "RECOVERING");
    assert.equal(await p.runOnce(), 1);
    const c = cell(pool, value);
    assert.equal(c.state, "HEALTHY");
    assert.notEqual(c.p50LatencyMs, null, "latency is reported");
    assert.ok(pool.drainEvents().some((e) => e.type === "RESOURCE_RECOVERED"));
    assert.deepEqual(proxyLog, [
      { method: "GET", url: url("/health"), auth: AUTH },
      { method: "GET", url: url("/health"), auth: AUTH },
    ]);
    assert.equal(pool.stats().leased, 0);
    assert.deepEqual(errors, []);
    await p.stop();
  });

  test("a proxy that answers 407 or refuses connections cools again (CONNECTION_RESET)", async () => {
    const { pool, clock } = setup();
    const wrongAuth = proxyUrl("user:wrong");
    const refusing = proxyUrl("user:pass", closedPort);
    cool(pool, wrongAuth);
    cool(pool, refusing);
    clock.advance(120_000);
    proxyLog.length = 0;
    const { p, errors } = prober(pool, { probes: { PROXY: httpProbe({ targets: { ctx: url("/health") } }) } });
    pool.drainEvents();
    assert.equal(await p.runOnce(), 2);
    for (const value of [wrongAuth, refusing]) {
      const c = cell(pool, value);
      assert.equal(c.state, "COOLING");
      assert.equal(c.consecutiveFailures, 3);
      assert.equal(c.cooldownUntil, clock.t + 480_000); // CONNECTION_RESET: 120 s × 2^2
    }
    const cooled = pool.drainEvents().filter((e) => e.type === "RESOURCE_COOLED");
    assert.deepEqual(cooled.map((e) => e.cause), ["CONNECTION_RESET", "CONNECTION_RESET"]);
    assert.deepEqual(proxyLog, [{ method: "GET", url: url("/health"), auth: basic("user:wrong") }]);
    assert.deepEqual(errors, []);
    await p.stop();
  });

  // (A real socket that never answers: the probe's own deadline ends it; the test's timeout
  // only turns a deadline that does not work into a failure instead of a hang.)
  test("a target that never answers gives TIMEOUT after timeoutMs", { timeout: 10_000 }, async () => {
    const probe = httpProbe({ targets: { ctx: url("/hang") }, timeoutMs: 200 });
    const outcome = await probe({ kind: "PROXY", value: proxyUrl(), context: "ctx", signal: new AbortController().signal });
    assert.deepEqual(outcome, { ok: false, failure: "TIMEOUT" });
  });

  test("status mapping, SLOW, unknown contexts and aborts", async () => {
    const targets = {};
    for (const [s] of STATUS_CASES) targets[`s${s}`] = url(`/status/${s}`);
    const probe = httpProbe({ targets });
    const run = (context, options = {}) =>
      probe({ kind: "PROXY", value: proxyUrl(), context, signal: new AbortController().signal, ...options });
    assert.equal(typeof (await run("s204")).latencyMs, "number");
    // The contract's rows, from the prober: "ok" → ok, a failure type → that failure, nothing →
    // an inconclusive probe (the answer speaks about the health URL, not the proxy).
    for (const [s, report] of STATUS_CASES) {
      if (report === null) {
        await assert.rejects(run(`s${s}`), (e) => e.code === "PROBE_INCONCLUSIVE" && e.status === s && !/pass/.test(e.message), String(s));
      } else {
        const o = await run(`s${s}`);
        assert.deepEqual([o.ok, o.failure], report === "ok" ? [true, undefined] : [false, report], String(s));
      }
    }
    assert.equal(await run("no-such-context"), null);

    let tick = 0;
    const slow = httpProbe({ targets: { ctx: url("/health") }, slowMs: 250, now: () => (tick += 300) });
    assert.deepEqual(await slow({ kind: "PROXY", value: proxyUrl(), context: "ctx" }), {
      ok: false,
      failure: "SLOW",
      latencyMs: 300,
    });

    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(run("s204", { signal: aborted.signal }));
    await assert.rejects(probe({ kind: "ACCOUNT", value: "a", context: "s204" }), { code: "INVALID_ARGUMENT" });
  });

  test("https: targets go through CONNECT: a failed TLS handshake is TLS_HANDSHAKE, a refused tunnel CONNECTION_RESET", async () => {
    const probe = httpProbe({ targets: { ctx: `https://127.0.0.1:${targetPort}/health` }, timeoutMs: 5_000 });
    proxyLog.length = 0;
    const run = (value) => probe({ kind: "PROXY", value, context: "ctx" });
    assert.deepEqual(await run(proxyUrl()), { ok: false, failure: "TLS_HANDSHAKE" });
    assert.deepEqual(await run(proxyUrl("user:wrong")), { ok: false, failure: "CONNECTION_RESET" });
    assert.deepEqual(proxyLog.map((x) => [x.method, x.url, x.auth]), [
      ["CONNECT", `127.0.0.1:${targetPort}`, AUTH],
      ["CONNECT", `127.0.0.1:${targetPort}`, basic("user:wrong")],
    ]);
  });

  test("never leaks the proxy's credentials in errors", async () => {
    const probe = httpProbe({ targets: { ctx: url("/status/404") } });
    const secret = SECRET;
    const seen = [];
    const values = [proxyUrl(`user:${secret}`), `ftp://user:${secret}@127.0.0.1:1`, `http://user:${secret}@[bad`, `user:${secret}@127.0.0.1:1`];
    for (const value of values) {
      try {
        await probe({ kind: "PROXY", value, context: "ctx" });
        assert.fail("expected an error");
      } catch (e) {
        seen.push(e.code);
        assert.ok(!String(e.message).includes(secret), e.message);
        assert.ok(!String(e.stack).includes(secret));
        assert.equal(e.cause, undefined);
      }
    }
    assert.deepEqual(seen, ["PROBE_INCONCLUSIVE", "INVALID_ARGUMENT", "INVALID_ARGUMENT", "INVALID_ARGUMENT"]);
    assert.equal(redactCredentials(`via http://u:${secret}@h:1/x`), "via http://***@h:1/x");
  });
});
