// The pool client's transport on real sockets (127.0.0.1): keep-alive (many calls, one
// connection); retries on connection errors only — an idempotent call is retried after its
// connection dropped mid-request, a non-idempotent one (acquire, report) is not (the server
// never saw it, and nothing is leased or counted), but is retried when its connection was
// refused (it cannot have left); a bounded number of times; never after an answer; the time
// limit (a server that never answers); the caller's signal; close(); and no token in any error.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { inspect } from "node:util";
import { Agent, buildConnector } from "undici";
import { connectPool, PoolClientError } from "repute/client";
import { startServer } from "../server/_http-support.mjs";
import { freePort, startRelay, startSilent, within } from "./_support.mjs";

const TOKEN = "worker-token-abcdefghijklmnop";
let server;
let relay;

before(async () => {
  server = await startServer({ tokens: [{ token: TOKEN, role: "operator" }], now: Date.now() });
  relay = await startRelay(server.server.port);
  const setup = connectPool({ url: server.url, token: TOKEN });
  for (const v of ["p1", "p2", "p3"]) await setup.register("PROXY", v);
  await setup.close();
});
after(async () => {
  await relay?.close();
  await server?.close();
});

/** A fresh client through the relay, and the relay's counters from zero. */
function viaRelay(options = {}) {
  relay.connections = 0;
  relay.dropped = 0;
  relay.sent = [];
  return connectPool({ url: relay.url, token: TOKEN, ...options });
}

async function failure(promise) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof PoolClientError, `a PoolClientError: ${e}`);
    assert.ok(!inspect(e, { depth: 8 }).includes(TOKEN), "no token in the error, its cause or its stack");
    return e;
  }
  assert.fail("it should have failed");
}

test("keep-alive: sequential calls share one connection; concurrent ones a few", async () => {
  const client = viaRelay();
  try {
    // (undici lets a finished connection rest one event-loop turn before reusing it, so a call
    // made in the same turn may open a second one)
    for (let i = 0; i < 20; i++) await client.stats();
    assert.ok(relay.connections <= 2, `20 calls, ${relay.connections} connections`);
    await new Promise((r) => setTimeout(r, 10)); // real time: undici's idle sockets, on real connections
    await Promise.all(Array.from({ length: 4 }, () => client.stats()));
    assert.ok(relay.connections <= 4, `4 at once reuse the idle ones: ${relay.connections} connections in all`);
    assert.ok(relay.sent[0].includes(`authorization: Bearer ${TOKEN}`), "the token goes in the Authorization header");
  } finally {
    await client.close();
  }
});

test("an idempotent call is retried after its connection dropped mid-request", async () => {
  const client = viaRelay();
  try {
    relay.drop = 1;
    const stats = await client.stats();
    assert.equal(stats.registered, 3);
    assert.equal(relay.dropped, 1);
    assert.equal(relay.connections, 2, "one dropped, one answered");
    // renew and release are idempotent too
    const lease = await client.acquire("shop");
    relay.drop = 1;
    const renewed = await client.renew(lease);
    assert.equal(renewed.token, lease.token);
    relay.drop = 1;
    assert.equal(await client.release(lease), true);
    assert.equal(relay.dropped, 3);
    // two drops in a row are within the default 2 retries; three are not
    relay.drop = 3;
    const e = await failure(client.stats());
    assert.equal(e.code, "CONNECTION_FAILED");
    assert.equal(e.attempts, 3);
    assert.equal(e.reached, true);
    assert.equal(e.retryable, true);
  } finally {
    await client.close();
  }
});

test("acquire and report are not retried once the request may have left: nothing leased, nothing counted", async () => {
  const client = viaRelay();
  const direct = connectPool({ url: server.url, token: TOKEN });
  try {
    relay.drop = 1;
    const e = await failure(client.acquire("shop"));
    assert.equal(e.code, "CONNECTION_FAILED");
    assert.equal(e.reached, true, "the request was sent");
    assert.equal(e.attempts, 1, "not retried");
    assert.match(relay.sent[0], /^POST \/api\/leases /);
    assert.equal(relay.connections, 1);
    assert.equal((await direct.stats()).leased, 0, "the server never saw it");
    relay.drop = 1;
    const r = await failure(client.report("PROXY", "p1", "shop", { ok: false, failure: "BLOCKED" }));
    assert.equal(r.attempts, 1);
    assert.deepEqual((await direct.resource("PROXY", "p1")).cells, [], "no outcome recorded");
    // the next acquire works on a new connection
    const lease = await client.acquire("shop");
    assert.ok(lease);
    await client.release(lease);
  } finally {
    await client.close();
    await direct.close();
  }
});

test("a refused connection is retried even for acquire and report (the request never left), a bounded number of times", async () => {
  // A real refused connection first (a closed port), then the real server: the connector is
  // undici's own, pointed once at a port where nothing listens.
  const closed = await freePort();
  const connector = buildConnector({});
  let connects = 0;
  const dispatcher = new Agent({
    connect(opts, callback) {
      connects++;
      return connector(connects === 1 ? { ...opts, port: String(closed) } : opts, callback);
    },
  });
  const client = connectPool({ url: server.url, token: TOKEN, dispatcher });
  try {
    const lease = await client.acquire("shop");
    assert.ok(lease, "leased on the second connection");
    assert.equal(connects, 2);
    await client.release(lease);
  } finally {
    await client.close();
    await dispatcher.close();
  }
  // Nothing listening at all: 1 + retries attempts, then CONNECTION_FAILED (never reached).
  for (const retries of [0, 2, 4]) {
    const nowhere = connectPool({ url: `http://127.0.0.1:${closed}`, token: TOKEN, retries, retryDelayMs: 1 });
    const e = await failure(nowhere.report("PROXY", "p1", "shop", { ok: true }));
    assert.equal(e.code, "CONNECTION_FAILED");
    assert.equal(e.reached, false);
    assert.equal(e.attempts, retries + 1);
    assert.match(e.message, /^report: .*ECONNREFUSED/);
    await nowhere.close();
  }
});

test("an answer is never retried, whatever its status", async () => {
  const client = viaRelay();
  try {
    const e = await failure(client.report("PROXY", "nobody", "shop", { ok: true }));
    assert.equal(e.code, "UNKNOWN_RESOURCE");
    assert.equal(relay.sent.join("").match(/POST \/api\/outcomes/g).length, 1);
  } finally {
    await client.close();
  }
});

test("a server that never answers: REQUEST_TIMEOUT after timeoutMs, not retried", async () => {
  const silent = await startSilent();
  const client = connectPool({ url: silent.url, token: TOKEN, timeoutMs: 300 });
  try {
    const e = await within(failure(client.stats()), 10_000, "the timeout");
    assert.equal(e.code, "REQUEST_TIMEOUT");
    assert.equal(e.retryable, true);
    assert.equal(silent.connections, 1, "a timeout is not a connection error: no retry");
  } finally {
    await client.close();
    await silent.close();
  }
});

test("the client's signal aborts what is in flight and every later call; close() does the same with CLOSED", async () => {
  const silent = await startSilent();
  const controller = new AbortController();
  const client = connectPool({ url: silent.url, token: TOKEN, signal: controller.signal, timeoutMs: Infinity });
  const pending = failure(client.acquire("shop"));
  while (silent.connections === 0) await new Promise((r) => setTimeout(r, 5));
  controller.abort();
  assert.equal((await within(pending, 5000, "the abort")).code, "ABORTED");
  assert.equal((await failure(client.stats())).code, "ABORTED");
  await client.close();

  const other = connectPool({ url: silent.url, token: TOKEN, timeoutMs: Infinity });
  const inFlight = failure(other.stats());
  while (silent.connections < 2) await new Promise((r) => setTimeout(r, 5));
  await other.close();
  assert.equal((await within(inFlight, 5000, "close")).code, "CLOSED");
  assert.equal((await failure(other.acquire("shop"))).code, "CLOSED");
  await silent.close();
});
