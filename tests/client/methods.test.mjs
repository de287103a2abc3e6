// `repute/client` against a real pool server on 127.0.0.1 (openPool + serve, port 0): every
// method of the client does what the embedded pool's does, and every error the server can give
// comes back with the embedded pool's `code` (problem types mapped back). An exhausted acquire
// is null, as in the embedded pool; `tryAcquire` carries the 409's Retry-After as retryAfterMs.
// The answers a real pool gives only when its disk fails or its counters run out come from a
// stand-in server speaking the same problem+json. No token ever shows in an error.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { connectPool, PoolClientError, CLIENT_CODES } from "repute/client";
import { serve } from "repute/server";
import { startServer } from "../server/_http-support.mjs";
import { problem, startRelay, startStandIn } from "./_support.mjs";

const TOKENS = { worker: "worker-secret-0123456789", operator: "operator-secret-0123456789", viewer: "viewer-secret-0123456789" };
let server;
let worker;
let operator;
let viewer;

before(async () => {
  server = await startServer({
    tokens: Object.entries(TOKENS).map(([role, token]) => ({ token, role })),
    config: { maxResources: 6, leaseTtlMs: 30_000 },
  });
  worker = connectPool({ url: server.url, token: TOKENS.worker });
  operator = connectPool({ url: server.url, token: TOKENS.operator });
  viewer = connectPool({ url: server.url, token: TOKENS.viewer });
});
after(async () => {
  for (const c of [worker, operator, viewer]) await c?.close();
  await server?.close();
});

/** Asserts `promise` rejects with a PoolClientError of `code` (and `status`), carrying no token. */
async function rejectsWith(promise, code, status) {
  let error;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof PoolClientError, `a PoolClientError, got ${error}`);
  assert.equal(error.code, code, error.message);
  if (status !== undefined) assert.equal(error.status, status, error.message);
  assert.ok(CLIENT_CODES.includes(error.code));
  const shown = `${error.message} ${error.stack} ${JSON.stringify(error)}`;
  for (const t of Object.values(TOKENS)) assert.ok(!shown.includes(t), "no token in the error");
  return error;
}

test("register, resources, resource, deregister: as the embedded pool, with groups", async () => {
  assert.equal(await worker.register("PROXY", "http://u:pw@127.0.0.1:3128"), true);
  assert.equal(await worker.register("PROXY", "http://u:pw@127.0.0.1:3128"), false, "known: not new");
  assert.equal(await worker.register("PROXY", "dc-1", { group: "dc" }), true);
  assert.equal(await worker.register("PROXY", "dc-1", { group: "res" }), false, "moved, not new");
  const views = await operator.resources();
  assert.deepEqual(views.map((v) => [v.value, v.group]), [["dc-1", "res"], ["http://u:pw@127.0.0.1:3128", null]]);
  assert.equal(typeof views[0].id, "string");
  assert.deepEqual((await operator.resources({ group: null })).map((v) => v.value), ["http://u:pw@127.0.0.1:3128"], "group null: the ungrouped");
  assert.deepEqual((await operator.resources({ group: "res" })).map((v) => v.value), ["dc-1"]);
  // a viewer sees values masked, as the server shows them
  assert.deepEqual((await viewer.resources({ group: null })).map((v) => v.value), ["http://u:***@127.0.0.1:3128"]);
  const detail = await operator.resource("PROXY", "dc-1");
  assert.equal(detail.group, "res");
  assert.deepEqual(detail.cells, []);
  // values with characters that mean something in a URL path go through percent-encoded
  for (const v of ["a/b|c:d", "..", "x?y#z", "é %2F"]) {
    assert.equal(await worker.register("SESSION", v), true, v);
    assert.equal((await operator.resource("SESSION", v)).value, v);
    assert.equal(await operator.deregister("SESSION", v), true, v);
  }
  assert.equal(await operator.deregister("SESSION", "a/b|c:d"), false, "not registered: false");
  assert.equal(await operator.deregister("PROXY", "dc-1"), true);
});

test("deregister, block, unblock and resource by { id } or by kind and value: no value in any request line (a credential would reach access logs)", async (t) => {
  const relay = await startRelay(server.server.port);
  const op = connectPool({ url: relay.url, token: TOKENS.operator });
  t.after(async () => {
    await op.close();
    await relay.close();
  });
  const value = "http://idtest:pw7SeKrit@127.0.0.1:3129";
  assert.equal(await op.register("PROXY", value), true);
  const view = (await op.resources()).find((r) => r.value === value);
  assert.equal((await op.resource({ id: view.id })).value, value);
  await op.block(view, { seconds: 60 }); // a view names its resource by its id
  assert.deepEqual((await op.resource({ id: view.id })).blocked, { until: (await op.stats()).now + 60_000 });
  assert.equal(await op.unblock({ id: view.id }), true);
  assert.equal(await op.deregister({ id: view.id }), true);
  assert.equal(await op.deregister({ id: view.id }), false, "not registered any more: false");
  // By kind and value: the id is asked for with both in a body, then the path names the id.
  assert.equal(await op.register("PROXY", value), true);
  assert.equal((await op.resource("PROXY", value)).value, value);
  await op.block("PROXY", value, { permanent: true });
  assert.equal(await op.unblock("PROXY", value), true);
  assert.equal(await op.deregister("PROXY", value), true);
  assert.equal(await op.deregister("PROXY", value), false, "not registered any more: false");
  // Request lines only: the register and lookup bodies carry the value, as they must.
  const lines = [...relay.sent.join("").matchAll(/(?:GET|POST|PUT|DELETE) \/\S* HTTP\/1\.1/g)].map((m) => m[0]);
  const named = lines.filter((l) => /^[A-Z]+ \/api\/resources\/(?!lookup )/.test(l));
  assert.equal(named.length, 11, lines.join("\n"));
  assert.ok(named.every((l) => l.includes(`/api/resources/${view.id}`)), named.join("\n"));
  assert.equal(lines.filter((l) => l.startsWith("POST /api/resources/lookup ")).length, 5, "one lookup per call by kind and value");
  assert.ok(!lines.some((l) => /SeKrit|idtest/.test(l)), lines.join("\n"));
  for (const bad of [{}, { id: "x" }, { id: 7 }, null]) {
    await rejectsWith(op.deregister(bad), "INVALID_ARGUMENT");
  }
});

test("acquire, renew, report, release: the lease carries its leaseId; renew and release of a stale lease are null / false", async () => {
  const lease = await worker.acquire("shop");
  assert.equal(lease.value, "http://u:pw@127.0.0.1:3128");
  assert.equal(lease.context, "shop");
  assert.equal(typeof lease.leaseId, "string");
  for (const k of ["kind", "value", "group", "context", "token", "leasedAt", "expiresAt"]) assert.ok(k in lease, k);
  server.clock.now += 10_000;
  const renewed = await worker.renew(lease);
  assert.equal(renewed.token, lease.token);
  assert.equal(renewed.expiresAt, lease.expiresAt + 10_000);
  assert.equal(renewed.leaseId, lease.leaseId);
  await worker.report(lease.kind, lease.value, "shop", { ok: true, latencyMs: 12 });
  assert.equal(await worker.release(renewed), true);
  assert.equal(await worker.release(lease), false, "released already");
  assert.equal(await worker.renew(lease), null, "not the holder any more");
  const cell = (await operator.resources({ context: "shop" })).find((v) => v.value === lease.value).cells[0];
  assert.equal(cell.consecutiveSuccesses, 1);
  assert.equal(cell.p50LatencyMs, 12);
  // `await using` releases: the dispose function is there, not enumerable
  const other = await worker.acquire("shop");
  assert.ok(!Object.keys(other).includes(String(Symbol.asyncDispose)));
  assert.equal(await other[Symbol.asyncDispose](), true);
  assert.equal((await viewer.stats()).leased, 0);
  // a lease this client did not get from the server is refused before any request
  await rejectsWith(worker.release({ kind: "PROXY", value: "x", token: 1 }), "INVALID_ARGUMENT");
  assert.equal(await worker.renew({ ...lease, leaseId: "AAAAAAAAAAE.forged" }), null, "a forged id is no lease");
  assert.equal(await worker.release({ ...lease, leaseId: "../../resources" }), false, "an id is one path segment");
});

test("an exhausted acquire: null, and tryAcquire gives the 409's Retry-After as retryAfterMs (null when time alone frees nothing)", async () => {
  await operator.register("PROXY", "solo", { group: "solo" });
  const held = await worker.acquire("search", { groups: ["solo"] });
  assert.equal(held.value, "solo");
  assert.equal(await worker.acquire("search", { groups: ["solo"] }), null, "nothing eligible is not an error");
  const answer = await worker.tryAcquire("search", { groups: ["solo"] });
  assert.deepEqual(answer, { lease: null, retryAfterMs: 30_000 }, "the lease ends in 30 s: Retry-After 30");
  server.clock.now += 12_500;
  assert.equal((await worker.tryAcquire("search", { groups: ["solo"] })).retryAfterMs, 18_000, "rounded up to whole seconds");
  await worker.release(held);
  await operator.block("PROXY", "solo", { permanent: true });
  assert.deepEqual(await worker.tryAcquire("search", { groups: ["solo"] }), { lease: null, retryAfterMs: null }, "no Retry-After: none by time alone");
  assert.equal(await operator.unblock("PROXY", "solo"), true);
  assert.equal(await operator.unblock("PROXY", "solo"), false, "no block left");
  // a cooling cell: Retry-After is its cooldown's end
  await worker.report("PROXY", "solo", "search", { ok: false, failure: "TIMEOUT" });
  await worker.report("PROXY", "solo", "search", { ok: false, failure: "TIMEOUT" });
  const cooling = await worker.tryAcquire("search", { groups: ["solo"] });
  const cell = (await operator.resources({ context: "search", group: "solo" }))[0].cells[0];
  assert.equal(cell.state, "COOLING");
  assert.equal(cooling.retryAfterMs, Math.ceil((cell.cooldownUntil - server.clock.now) / 1000) * 1000);
  await operator.block("PROXY", "solo", { seconds: 60 });
  assert.equal((await operator.resource("PROXY", "solo")).blocked.until, server.clock.now + 60_000);
  await operator.deregister("PROXY", "solo");
});

test("events page, stats, config, setConfig, snapshot, importSnapshot, readiness", async () => {
  const page = await viewer.readEvents({ after: 0, limit: 3 });
  assert.deepEqual(page.events.map((e) => e.seq), [1, 2, 3]);
  assert.equal(page.next, 3);
  const stats = await viewer.stats();
  assert.equal(stats.registered, (await viewer.resources()).length);
  assert.equal((await viewer.config()).leaseTtlMs, 30_000);
  const config = await operator.setConfig({ penalties: { SLOW: 1 } });
  assert.equal(config.penalties.SLOW, 1);
  assert.equal((await viewer.config()).penalties.SLOW, 1);
  const text = await operator.snapshot();
  const snap = JSON.parse(text);
  assert.equal(snap.format, "repute-snapshot");
  assert.equal(snap.revision, (await viewer.stats()).revision);
  await operator.importSnapshot(text);
  assert.equal(await operator.snapshot(), text, "the same state back");
  assert.deepEqual(await viewer.readiness(), { ready: true });
});

test("every error code the server gives comes back as the embedded pool's code", async () => {
  await rejectsWith(worker.report("PROXY", "http://u:pw@127.0.0.1:3128", "shop", { ok: false, failure: "NOPE" }), "INVALID_ARGUMENT", 400);
  await rejectsWith(worker.register("PROXY", " "), "INVALID_ARGUMENT", 400);
  await rejectsWith(worker.register("ROBOT", "r1"), "INVALID_ARGUMENT", 400); // bad-request: an unknown kind
  await rejectsWith(worker.acquire("shop", { groups: "dc" }), "INVALID_ARGUMENT", 400);
  await rejectsWith(operator.block("PROXY", "http://u:pw@127.0.0.1:3128", { seconds: 0 }), "INVALID_ARGUMENT", 400);
  await rejectsWith(operator.block("PROXY", "x", { minutes: 1 }), "INVALID_ARGUMENT"); // refused before sending
  await rejectsWith(worker.report("PROXY", "nobody", "shop", { ok: true }), "UNKNOWN_RESOURCE", 404);
  await rejectsWith(operator.block("PROXY", "nobody", { seconds: 5 }), "UNKNOWN_RESOURCE", 404);
  await rejectsWith(operator.unblock("PROXY", "nobody"), "UNKNOWN_RESOURCE", 404);
  await rejectsWith(viewer.resource("PROXY", "nobody"), "UNKNOWN_RESOURCE", 404);
  await rejectsWith(operator.setConfig({ leaseTtlMs: -1 }), "INVALID_CONFIG", 400);
  await rejectsWith(operator.importSnapshot("{}"), "INVALID_SNAPSHOT", 400);
  const snap = JSON.parse(await operator.snapshot());
  await rejectsWith(operator.importSnapshot(JSON.stringify({ ...snap, version: 99 })), "UNSUPPORTED_SNAPSHOT_VERSION", 400);
  const old = await operator.snapshot();
  await worker.register("SESSION", "newer");
  await rejectsWith(operator.importSnapshot(old), "STALE_SNAPSHOT", 409);
  const n = (await viewer.stats()).registered;
  for (let i = n; i < 6; i++) await worker.register("SESSION", `fill-${i}`);
  const full = await rejectsWith(worker.register("SESSION", "one-too-many"), "CAPACITY_EXCEEDED", 409);
  assert.equal(full.type, "urn:repute:problem:capacity-exceeded");
  // authentication and roles
  await rejectsWith(connectPool({ url: server.url }).stats(), "UNAUTHORIZED", 401);
  const wrong = await rejectsWith(connectPool({ url: server.url, token: "not-a-token-9876543210" }).stats(), "UNAUTHORIZED", 401);
  assert.ok(!wrong.message.includes("not-a-token-9876543210"));
  await rejectsWith(worker.deregister("SESSION", "newer"), "FORBIDDEN", 403);
  await rejectsWith(viewer.acquire("shop"), "FORBIDDEN", 403);
  // the live stream refuses a resume point beyond the newest event
  const ahead = viewer.events({ after: 10_000 });
  await rejectsWith(ahead.next(), "EVENT_ID_AHEAD", 409);
  // a wrong base URL: the server has no such route
  await rejectsWith(connectPool({ url: `${server.url}/nowhere`, token: TOKENS.viewer }).stats(), "NOT_FOUND", 404);
  // options are checked before anything is sent
  assert.throws(() => connectPool({ url: "http://user:pw@127.0.0.1:1" }), (e) => e.code === "INVALID_ARGUMENT" && !e.message.includes("pw"));
  assert.throws(() => connectPool({ url: "ftp://127.0.0.1" }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => connectPool({ url: server.url, tokn: "x" }), (e) => e.code === "INVALID_ARGUMENT" && !e.message.includes("tokn"));
  assert.throws(() => connectPool({ url: server.url, retries: -1 }), { code: "INVALID_ARGUMENT" });
});

test("too many event streams: TOO_MANY_STREAMS with its Retry-After", async () => {
  const s = await startServer({ serveOptions: { maxStreams: 1 } });
  const client = connectPool({ url: s.url });
  const first = new AbortController();
  const iterator = client.events({ after: 0, signal: first.signal });
  const pending = iterator.next();
  try {
    await client.register("PROXY", "p1");
    assert.equal((await pending).value.type, "RESOURCE_REGISTERED", "the first stream is open");
    // the second one cannot reconnect its way past the limit within reconnectForMs 0
    const error = await rejectsWith(client.events({ reconnectForMs: 0 }).next(), "TOO_MANY_STREAMS", 503);
    assert.equal(error.retryAfterMs, 5000);
    assert.equal(error.retryable, true);
  } finally {
    first.abort();
    await iterator.return();
    await client.close();
    await s.close();
  }
});

test("a pool still being restored: NOT_READY with Retry-After, readiness() says so", async () => {
  let open;
  const pool = new Promise((r) => (open = r));
  const s = await serve(pool, { host: "127.0.0.1", port: 0 });
  const client = connectPool({ url: s.url });
  try {
    const e = await rejectsWith(client.acquire("shop"), "NOT_READY", 503);
    assert.equal(e.retryAfterMs, 1000);
    assert.equal(e.retryable, true);
    assert.equal((await client.readiness()).ready, false);
  } finally {
    open(null);
    await client.close();
    await s.close();
  }
});

test("answers only a failing disk or spent counters give (a stand-in server): their codes, Retry-After, and anything else", async () => {
  const stand = await startStandIn();
  const client = connectPool({ url: stand.url, token: TOKENS.worker });
  try {
    for (const [status, name, code, headers] of [
      [503, "storage-unavailable", "STORAGE_UNAVAILABLE", { "retry-after": "2" }],
      [503, "counters-exhausted", "COUNTERS_EXHAUSTED"],
      [409, "import-in-progress", "IMPORT_IN_PROGRESS", { "retry-after": "1" }],
      [500, "internal", "SERVER_ERROR"],
      [405, "method-not-allowed", "NOT_FOUND"],
    ]) {
      stand.answer = problem(status, name, headers);
      const e = await rejectsWith(client.report("PROXY", "p1", "shop", { ok: true }), code, status);
      if (headers?.["retry-after"]) assert.equal(e.retryAfterMs, Number(headers["retry-after"]) * 1000);
    }
    // not the pool's answers: a gateway's page, an unexpected status, an HTTP-date Retry-After
    stand.answer = { status: 502, headers: { "content-type": "text/html" }, body: "<h1>Bad gateway</h1>" };
    await rejectsWith(client.stats(), "SERVER_ERROR", 502);
    const date = new Date(Date.now() + 120_000).toUTCString();
    stand.answer = { status: 418, headers: { "retry-after": date }, body: "teapot" };
    const e = await rejectsWith(client.stats(), "HTTP_ERROR", 418);
    assert.ok(e.retryAfterMs > 110_000 && e.retryAfterMs <= 120_000, `${e.retryAfterMs}`);
    // a 409 that is not nothing-eligible is not an exhausted pool
    stand.answer = problem(409, "capacity-exceeded");
    await rejectsWith(client.acquire("shop"), "CAPACITY_EXCEEDED", 409);
    // each request carried the bearer token, and nothing was retried on an answer
    assert.equal(stand.requests.length, 8);
    assert.ok(stand.requests.every((r) => r.headers.authorization === `Bearer ${TOKENS.worker}`));
  } finally {
    await client.close();
    await stand.close();
  }
});

test("CLIENT_CODES lists each code once, and exactly the codes client.d.ts declares", async () => {
  const { readFile } = await import("node:fs/promises");
  const text = (f) => readFile(new URL(`../../pkg-scripts/${f}`, import.meta.url), "utf8");
  const literals = (src, type) => [...new RegExp(`export type ${type} =([^;]+);`).exec(src)[1].matchAll(/"([A-Z_]+)"/g)].map((m) => m[1]);
  const declared = [...literals(await text("types/pool.d.ts"), "ErrorCode"), ...literals(await text("types/client.d.ts"), "PoolClientErrorCode")];
  assert.equal(new Set(CLIENT_CODES).size, CLIENT_CODES.length, `a code listed twice: ${CLIENT_CODES.join(" ")}`);
  assert.deepEqual([...CLIENT_CODES].sort(), [...declared].sort());
});
