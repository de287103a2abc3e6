// A corpus of bad requests against the HTTP API (SPEC §8: bodies size-limited and validated
// strictly; errors as problem+json). Each gets exactly its 4xx, with an
// `application/problem+json` body carrying a `urn:repute:problem:` type, never a 5xx; and the
// pool's snapshot is byte-identical before and after the whole corpus (the clock is fixed, so
// only a real change could alter it). Also: requests fetch cannot send (raw sockets: targets
// not in origin-form, what node:http cannot parse), a body that does not arrive in time (408),
// duplicate JSON keys named like the engine names them, and what refusing a request without
// reading its large body leaves behind: the client still gets the answer, the keep-alive
// connection serves the next request or closes, and close() does not wait on it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { once } from "node:events";
import { startServer, call, assertProblem, resourcePath, rawConnection, rawRequest, readResponse, edgeSkip } from "./_http-support.mjs";
import { duplicateKeyPath } from "../../pkg-scripts/lib/http/strict-json.js";

const TOKENS = { operator: "op-token-aaaaaaaaaaaaaaaa", worker: "wk-token-bbbbbbbbbbbbbbbb", viewer: "vw-token-cccccccccccccccc" };
const LIMIT = 64 * 1024;

let s;
let heldId; // a lease still held
let staleId; // a lease released during setup
let olderSnapshot; // an export of a lower revision

before(async () => {
  s = await startServer({
    tokens: Object.entries(TOKENS).map(([role, token]) => ({ token, role })),
    config: { maxResources: 4 },
  });
  const op = (m, p, body) => call(s.url, m, p, { body, token: TOKENS.operator });
  for (const v of ["p1", "p2", "p3"]) assert.equal((await op("POST", "/api/resources", { kind: "PROXY", value: v })).status, 201);
  olderSnapshot = (await op("GET", "/api/snapshot")).text;
  assert.equal((await op("POST", "/api/resources", { kind: "ACCOUNT", value: "a:1/x|y" })).status, 201);
  assert.equal((await op("POST", "/api/outcomes", { kind: "PROXY", value: "p1", context: "c", outcome: { ok: false, failure: "BLOCKED" } })).status, 204);
  assert.equal((await op("POST", resourcePath("PROXY", "p3", "/block?permanent=true"))).status, 204);
  const stale = await op("POST", "/api/leases", { context: "c" });
  assert.equal(stale.status, 201);
  staleId = stale.json.leaseId;
  assert.equal((await op("DELETE", `/api/leases/${staleId}`)).status, 204);
  const held = await op("POST", "/api/leases", { context: "c" });
  assert.equal(held.status, 201);
  heldId = held.json.leaseId;
});
after(async () => {
  // The wedged connections of the todo tests below would hold close() for about a minute.
  s?.server.server.closeAllConnections();
  await s?.close();
});

const reg = (body) => ({ method: "POST", path: "/api/resources", body });
const lease = (body) => ({ method: "POST", path: "/api/leases", body });
const out = (outcome, extra = {}) => ({
  method: "POST",
  path: "/api/outcomes",
  body: { kind: "PROXY", value: "p1", context: "c", outcome, ...extra },
});
const block = (query, value = "p2") => ({ method: "POST", path: resourcePath("PROXY", value, `/block${query}`) });
const get = (path, headers) => ({ method: "GET", path, headers });
const deep = (n) => `${"[".repeat(n)}${"]".repeat(n)}`;

/** Each route with a request it would otherwise serve (or refuse for another reason). */
const QUERY_ROUTES = [
  ["healthz", get("/healthz")],
  ["readyz", get("/readyz")],
  ["metrics", get("/metrics")],
  ["register", reg({ kind: "PROXY", value: "p1" })],
  ["resources", get("/api/resources")],
  ["resource", get(resourcePath("PROXY", "p1"))],
  ["resource-id", { method: "POST", path: "/api/resources/lookup", body: { kind: "PROXY", value: "p1" } }],
  ["session", get("/api/session")],
  ["contexts", get("/api/contexts")],
  ["deregister", { method: "DELETE", path: resourcePath("PROXY", "p2") }],
  ["block", block("")],
  ["unblock", { method: "DELETE", path: resourcePath("PROXY", "p3", "/block") }],
  ["acquire", lease({ context: "c" })],
  ["finish", { method: "POST", path: () => `/api/leases/${heldId}/outcome`, body: { outcome: { ok: true } } }],
  ["renew", { method: "POST", path: () => `/api/leases/${heldId}/renewal` }],
  ["release", { method: "DELETE", path: () => `/api/leases/${heldId}` }],
  ["report", out({ ok: true })],
  ["events", get("/api/events")],
  ["outcomes", get("/api/outcomes")],
  ["stream", get("/api/events/stream")],
  ["config", get("/api/config")],
  ["config-update", { method: "PUT", path: "/api/config", body: { leaseTtlMs: 30000 } }],
  ["stats", get("/api/stats")],
  ["snapshot-export", get("/api/snapshot")],
  ["snapshot-import", { method: "PUT", path: "/api/snapshot", body: () => olderSnapshot }],
];

/** `r` with `query` on its path (which has none). */
const withQuery = (r, query) => ({ ...r, path: typeof r.path === "function" ? () => r.path() + query : r.path + query });

/** [name, request, status, problem name?]. `request.token`: "none" | role | raw header. */
const CORPUS = [
  // --- malformed bodies
  ["malformed JSON", reg("{kind: PROXY}"), 400, "bad-request"],
  ["truncated JSON", reg('{"kind":"PROXY","value":"x"'), 400, "bad-request"],
  ["empty body", reg(""), 400, "bad-request"],
  ["trailing garbage", reg('{"kind":"PROXY","value":"x"} x'), 400, "bad-request"],
  ["invalid UTF-8", reg(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])), 400, "bad-request"],
  ["a JSON array", reg("[]"), 400, "bad-request"],
  ["JSON null", reg("null"), 400, "bad-request"],
  ["a JSON string", reg('"PROXY"'), 400, "bad-request"],
  ["a JSON number", reg("42"), 400, "bad-request"],
  ["JSON true", reg("true"), 400, "bad-request"],
  ["deeply nested value", reg(`{"kind":"PROXY","value":${deep(20000)}}`), 400, "bad-request"],
  // --- fields: unknown, missing, wrong types, bad enums
  ["unknown field", reg({ kind: "PROXY", value: "x", extra: 1 }), 400, "bad-request"],
  ["missing value", reg({ kind: "PROXY" }), 400, "bad-request"],
  ["missing kind", reg({ value: "x" }), 400, "bad-request"],
  ["empty object", reg({}), 400, "bad-request"],
  ["kind a number", reg({ kind: 1, value: "x" }), 400, "bad-request"],
  ["kind null", reg({ kind: null, value: "x" }), 400, "bad-request"],
  ["kind lower case", reg({ kind: "proxy", value: "x" }), 400, "bad-request"],
  ["kind unknown", reg({ kind: "SOCKS", value: "x" }), 400, "bad-request"],
  ["kind __proto__", reg({ kind: "__proto__", value: "x" }), 400, "bad-request"],
  ["value a number", reg({ kind: "PROXY", value: 5 }), 400, "bad-request"],
  ["value an array", reg({ kind: "PROXY", value: ["x"] }), 400, "bad-request"],
  ["value an object", reg({ kind: "PROXY", value: { v: "x" } }), 400, "bad-request"],
  ["value null", reg({ kind: "PROXY", value: null }), 400, "bad-request"],
  // --- duplicate keys (JSON.parse would let the last win; snapshots and configs refuse them)
  ["duplicate key", reg('{"kind":"PROXY","value":"x","value":"y"}'), 400, "bad-request"],
  ["duplicate key spelled with an escape", reg('{"kind":"PROXY","value":"x","v\\u0061lue":"y"}'), 400, "bad-request"],
  ["duplicate key, the same value twice", lease('{"context":"c","context":"c"}'), 400, "bad-request"],
  ["duplicate key inside the outcome", { method: "POST", path: "/api/outcomes", body: '{"kind":"PROXY","value":"p1","context":"c","outcome":{"ok":true,"ok":false}}' }, 400, "bad-request"],
  ["duplicate __proto__ key", reg('{"kind":"PROXY","value":"x","__proto__":1,"__proto__":2}'), 400, "bad-request"],
  // --- blank, over-long and ill-formed values
  ["empty value", reg({ kind: "PROXY", value: "" }), 400, "invalid-argument"],
  ["whitespace value", reg({ kind: "PROXY", value: "  \t " }), 400, "invalid-argument"],
  ["Unicode whitespace value", reg({ kind: "PROXY", value: "\u3000\u00a0\u2028" }), 400, "invalid-argument"],
  ["value of 1025 bytes", reg({ kind: "PROXY", value: "v".repeat(1025) }), 400, "invalid-argument"],
  ["value of 1026 UTF-8 bytes in 513 characters", reg({ kind: "PROXY", value: "é".repeat(513) }), 400, "invalid-argument"],
  ["value with a lone surrogate", reg('{"kind":"PROXY","value":"a\\ud800b"}'), 400, "invalid-argument"],
  // --- size limit and media type
  ["body over 64 KiB with content-length", reg({ kind: "PROXY", value: "x".repeat(LIMIT) }), 413, "body-too-large"],
  ["body over 64 KiB, chunked", { ...reg(null), chunked: 100 * 1024 }, 413, "body-too-large"],
  ["content-type text/plain", { ...reg({ kind: "PROXY", value: "x" }), headers: { "content-type": "text/plain" } }, 415, "unsupported-media-type"],
  ["content-type form", { ...reg("kind=PROXY&value=x"), headers: { "content-type": "application/x-www-form-urlencoded" } }, 415, "unsupported-media-type"],
  ["content-type application/jsonx", { ...reg({ kind: "PROXY", value: "x" }), headers: { "content-type": "application/jsonx" } }, 415, "unsupported-media-type"],
  ["no content-type", { ...reg(new TextEncoder().encode('{"kind":"PROXY","value":"x"}')), headers: { "content-type": "" } }, 415, "unsupported-media-type"],
  ["capacity: one resource past maxResources", reg({ kind: "SESSION", value: "fifth" }), 409, "capacity-exceeded"],
  // --- acquire
  ["context a number", lease({ context: 7 }), 400, "bad-request"],
  ["context null", lease({ context: null }), 400, "bad-request"],
  ["context missing", lease({}), 400, "bad-request"],
  ["context empty", lease({ context: "" }), 400, "invalid-argument"],
  ["context whitespace", lease({ context: " \n " }), 400, "invalid-argument"],
  ["context of 257 bytes", lease({ context: "c".repeat(257) }), 400, "invalid-argument"],
  ["acquire with an unknown field", lease({ context: "c", ttl: 5 }), 400, "bad-request"],
  ["context holding user:pass@host", lease({ context: "shopper:pw@shop.example" }), 400, "invalid-argument"],
  ["context a URL with userinfo", lease({ context: "https://shopper:pw@shop.example/cart" }), 400, "invalid-argument"],
  ["report in a context holding token@host:port", out({ ok: true }, { context: "tok3n@gate.example:8080" }), 400, "invalid-argument"],
  // --- groups (SPEC v2): each refused naming its field, nothing changed
  ["group a number", reg({ kind: "PROXY", value: "p1", group: 7 }), 400, "bad-request"],
  ["group an array", reg({ kind: "PROXY", value: "p1", group: ["A"] }), 400, "bad-request"],
  ["group blank", reg({ kind: "PROXY", value: "p1", group: " " }), 400, "invalid-argument"],
  ["group of 65 bytes", reg({ kind: "PROXY", value: "p1", group: "g".repeat(65) }), 400, "invalid-argument"],
  ["groups not an array", lease({ context: "c", groups: "A" }), 400, "bad-request"],
  ["groups empty", lease({ context: "c", groups: [] }), 400, "invalid-argument"],
  ["groups of 17", lease({ context: "c", groups: Array.from({ length: 17 }, (_, i) => `g${i}`) }), 400, "invalid-argument"],
  ["groups with a number", lease({ context: "c", groups: ["A", 2] }), 400, "bad-request"],
  ["groups with a repeat", lease({ context: "c", groups: ["A", null, null] }), 400, "invalid-argument"],
  ["groups with a blank name", lease({ context: "c", groups: [""] }), 400, "invalid-argument"],
  // --- report
  ["outcome missing", { method: "POST", path: "/api/outcomes", body: { kind: "PROXY", value: "p1", context: "c" } }, 400, "bad-request"],
  ["outcome a string", out("ok"), 400, "invalid-argument"],
  ["outcome an array", out([true]), 400, "invalid-argument"],
  ["outcome.ok a string", out({ ok: "true" }), 400, "invalid-argument"],
  ["failure without its type", out({ ok: false }), 400, "invalid-argument"],
  ["failure type lower case", out({ ok: false, failure: "blocked" }), 400, "invalid-argument"],
  ["failure type unknown", out({ ok: false, failure: "DNS" }), 400, "invalid-argument"],
  ["success with a failure type", out({ ok: true, failure: "SLOW" }), 400, "invalid-argument"],
  ["negative latency", out({ ok: true, latencyMs: -1 }), 400, "invalid-argument"],
  ["latency a string", out({ ok: true, latencyMs: "5" }), 400, "invalid-argument"],
  ["infinite latency (1e400)", { method: "POST", path: "/api/outcomes", body: '{"kind":"PROXY","value":"p1","context":"c","outcome":{"ok":true,"latencyMs":1e400}}' }, 400, "invalid-argument"],
  ["outcome with an unknown field", out({ ok: true, weight: 2 }), 400, "invalid-argument"],
  ["report with a blank context", out({ ok: true }, { context: "\t" }), 400, "invalid-argument"],
  ["report with a bad kind", out({ ok: true }, { kind: "HOST" }), 400, "bad-request"],
  ["report with a value of the wrong type", out({ ok: true }, { value: 3 }), 400, "bad-request"],
  ["report with an unknown top-level field", out({ ok: true }, { at: 1 }), 400, "bad-request"],
  ["report on an unregistered resource", out({ ok: true }, { value: "ghost" }), 404, "unknown-resource"],
  // --- paths
  ["path escape %zz", { method: "POST", path: "/api/resources/PROXY/%zz/block?seconds=5" }, 400, "bad-request"],
  ["path truncated UTF-8 %E0%A4", { method: "DELETE", path: "/api/resources/PROXY/%E0%A4" }, 400, "bad-request"],
  ["path encoded surrogate %ED%A0%80", { method: "DELETE", path: "/api/resources/PROXY/%ED%A0%80/block" }, 400, "bad-request"],
  ["path escape %", { method: "DELETE", path: "/api/resources/PROXY/100%" }, 400, "bad-request"],
  ["path kind lower case", { method: "POST", path: "/api/resources/proxy/p2/block?seconds=5" }, 400, "bad-request"],
  ["path kind unknown", { method: "DELETE", path: "/api/resources/HOST/p2" }, 400, "bad-request"],
  ["path blank value", { method: "POST", path: "/api/resources/PROXY/%20%09/block?seconds=5" }, 400, "invalid-argument"],
  ["path over-long value", { method: "DELETE", path: resourcePath("PROXY", "v".repeat(1025)) }, 400, "invalid-argument"],
  ["delete an unregistered resource", { method: "DELETE", path: resourcePath("PROXY", "ghost") }, 404, "unknown-resource"],
  // --- block / unblock query parameters
  ["seconds=abc", block("?seconds=abc"), 400, "bad-request"],
  ["seconds=-1", block("?seconds=-1"), 400, "bad-request"],
  ["seconds=0", block("?seconds=0"), 400, "invalid-argument"],
  ["seconds= (empty)", block("?seconds="), 400, "bad-request"],
  ["seconds=1e3", block("?seconds=1e3"), 400, "bad-request"],
  ["seconds=NaN", block("?seconds=NaN"), 400, "bad-request"],
  ["seconds=Infinity", block("?seconds=Infinity"), 400, "bad-request"],
  ["seconds beyond 2^52 ms", block("?seconds=99999999999999999999"), 400, "invalid-argument"],
  ["permanent=yes", block("?permanent=yes"), 400, "bad-request"],
  ["permanent=TRUE", block("?permanent=TRUE"), 400, "bad-request"],
  ["both seconds and permanent", block("?seconds=10&permanent=true"), 400, "bad-request"],
  ["neither seconds nor permanent", block(""), 400, "bad-request"],
  ["unknown block parameter", block("?seconds=10&reason=x"), 400, "bad-request"],
  ["seconds given twice", block("?seconds=1&seconds=2"), 400, "bad-request"],
  ["seconds given twice, the same", block("?seconds=5&seconds=5"), 400, "bad-request"],
  ["permanent given twice", block("?permanent=true&permanent=true"), 400, "bad-request"],
  ["block an unregistered resource", block("?seconds=10", "ghost"), 404, "unknown-resource"],
  ["unblock with a parameter", { method: "DELETE", path: resourcePath("PROXY", "p3", "/block?force=1") }, 400, "bad-request"],
  ["deregister with a parameter", { method: "DELETE", path: resourcePath("PROXY", "p2", "?cascade=true") }, 400, "bad-request"],
  // --- events, stream, resources filters
  ["limit=0", get("/api/events?limit=0"), 400, "bad-request"],
  ["limit=5000", get("/api/events?limit=5000"), 400, "bad-request"],
  ["limit=1.5", get("/api/events?limit=1.5"), 400, "bad-request"],
  ["after=-1", get("/api/events?after=-1"), 400, "bad-request"],
  ["after=abc", get("/api/events?after=abc"), 400, "bad-request"],
  ["after of 17 digits", get("/api/events?after=12345678901234567"), 400, "bad-request"],
  ["unknown events parameter", get("/api/events?since=3"), 400, "bad-request"],
  ["after given twice", get("/api/events?after=1&after=2"), 400, "bad-request"],
  ["stream after given twice", get("/api/events/stream?after=1&after=1"), 400, "bad-request"],
  ["context filter given twice", get("/api/resources?context=a&context=b"), 400, "bad-request"],
  ["stream Last-Event-ID abc", get("/api/events/stream", { "last-event-id": "abc" }), 400, "bad-request"],
  ["stream after=-5", get("/api/events/stream?after=-5"), 400, "bad-request"],
  ["stream unknown parameter", get("/api/events/stream?limit=3"), 400, "bad-request"],
  ["state filter unknown", get("/api/resources?state=DEAD"), 400, "invalid-argument"],
  ["state filter lower case", get("/api/resources?state=healthy"), 400, "invalid-argument"],
  ["context filter blank", get("/api/resources?context=%20"), 400, "invalid-argument"],
  ["group filter blank", get("/api/resources?group=%20%20"), 400, "invalid-argument"],
  ["group filter given twice", get("/api/resources?group=A&group="), 400, "bad-request"],
  ["unknown resources parameter", get("/api/resources?kind=PROXY"), 400, "bad-request"],
  // --- every route checks its query in one place: an unknown parameter, or one given twice,
  // is a 400 before the route does anything (a lease is not granted, released or renewed)
  ...QUERY_ROUTES.flatMap(([route, r]) => [
    [`unknown parameter on ${route}`, withQuery(r, "?x=1"), 400, "bad-request"],
    [`repeated parameter on ${route}`, withQuery(r, "?x=1&x=2"), 400, "bad-request"],
  ]),
  // --- lease ids
  ["renew a garbage id", { method: "POST", path: "/api/leases/not-a-lease/renewal" }, 409, "lease-not-renewed"],
  ["release a garbage id", { method: "DELETE", path: "/api/leases/not-a-lease" }, 404, "no-such-lease"],
  ["renew a released lease", { method: "POST", path: () => `/api/leases/${staleId}/renewal` }, 409, "lease-not-renewed"],
  ["release a released lease", { method: "DELETE", path: () => `/api/leases/${staleId}` }, 404, "no-such-lease"],
  ["renew a truncated id", { method: "POST", path: () => `/api/leases/${heldId.slice(0, -2)}/renewal` }, 409, "lease-not-renewed"],
  ["release a padded id", { method: "DELETE", path: () => `/api/leases/${heldId}==` }, 404, "no-such-lease"],
  ["release an empty id", { method: "DELETE", path: "/api/leases/" }, 404, "no-such-lease"],
  ["lease id with a bad escape", { method: "POST", path: "/api/leases/%zz/renewal" }, 400, "bad-request"],
  // --- authentication
  ["no Authorization header", { ...get("/api/resources"), token: "none" }, 401, "unauthorized"],
  ["unknown token", { ...get("/api/resources"), token: "Bearer unknown-token-dddddddddddd" }, 401, "unauthorized"],
  ["Basic credentials", { ...get("/api/resources"), token: `Basic ${btoa(`u:${TOKENS.operator}`)}` }, 401, "unauthorized"],
  ["Bearer without a token", { ...get("/api/resources"), token: "Bearer" }, 401, "unauthorized"],
  ["token without a scheme", { ...get("/api/resources"), token: TOKENS.operator }, 401, "unauthorized"],
  ["viewer registering", { ...reg({ kind: "PROXY", value: "x" }), token: "viewer" }, 403, "forbidden"],
  ["worker blocking", { ...block("?seconds=5"), token: "worker" }, 403, "forbidden"],
  ["viewer reading the snapshot", { ...get("/api/snapshot"), token: "viewer" }, 403, "forbidden"],
  // --- methods and routes
  ["PUT /api/resources", { method: "PUT", path: "/api/resources" }, 405, "method-not-allowed"],
  ["PUT /api/outcomes", { method: "PUT", path: "/api/outcomes" }, 405, "method-not-allowed"],
  ["DELETE /api/events", { method: "DELETE", path: "/api/events" }, 405, "method-not-allowed"],
  ["POST /readyz", { method: "POST", path: "/readyz" }, 405, "method-not-allowed"],
  ["PATCH a resource", { method: "PATCH", path: resourcePath("PROXY", "p2") }, 405, "method-not-allowed"],
  ["GET a lease", get("/api/leases/abc"), 405, "method-not-allowed"],
  ["unknown route /api/v2/resources", get("/api/v2/resources"), 404, "not-found"],
  ["unknown route, upper case", get("/API/resources"), 404, "not-found"],
  ["unknown route, trailing slash", get("/api/resources/"), 404, "not-found"],
  ["unknown route, too deep", { method: "POST", path: resourcePath("PROXY", "p2", "/block/now") }, 404, "not-found"],
  ["root", get("/"), 404, "not-found"],
  // --- snapshot import
  ["snapshot as text/plain", { method: "PUT", path: "/api/snapshot", body: "{}", headers: { "content-type": "text/plain" } }, 415, "unsupported-media-type"],
  ["snapshot not JSON", { method: "PUT", path: "/api/snapshot", body: "snapshot" }, 400, "invalid-snapshot"],
  ["snapshot an empty object", { method: "PUT", path: "/api/snapshot", body: "{}" }, 400, "invalid-snapshot"],
  ["snapshot of a lower revision", { method: "PUT", path: "/api/snapshot", body: () => olderSnapshot }, 409, "stale-snapshot"],
  [
    "snapshot with an unknown field",
    { method: "PUT", path: "/api/snapshot", body: () => JSON.stringify({ ...JSON.parse(olderSnapshot), revision: 1e6, extra: true }) },
    400,
    "invalid-snapshot",
  ],
];

/** A request with a chunked body of `size` bytes, on its own connection (node:http). */
function chunkedRequest(base, path, size, headers) {
  const prefix = new URL(base).pathname.replace(/\/$/, ""); // an edge region's /regions/{region}
  return new Promise((resolve, reject) => {
    const req = http.request(base, { method: "POST", path: prefix + path, agent: false, headers }, (res) => resolve(readResponse(res)));
    req.on("error", reject);
    const chunk = Buffer.alloc(8192, 0x78);
    req.write('{"kind":"PROXY","value":"');
    for (let sent = 0; sent < size; sent += chunk.length) req.write(chunk);
    req.end('"}');
  });
}

async function send([name, r]) {
  const token = r.token ?? "operator";
  const headers = { ...(r.headers ?? {}) };
  if (token !== "none") headers.authorization = TOKENS[token] ? `Bearer ${TOKENS[token]}` : token;
  const path = typeof r.path === "function" ? r.path() : r.path;
  if (r.chunked) return chunkedRequest(s.url, path, r.chunked, { ...headers, "content-type": "application/json" });
  const body = typeof r.body === "function" ? r.body() : r.body;
  if (headers["content-type"] === "") {
    delete headers["content-type"];
    // fetch adds text/plain to a string body: send bytes, which get no content-type.
    const res = await fetch(s.url + path, { method: r.method, headers, body });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: JSON.parse(text) };
  }
  return call(s.url, r.method, path, { body: body === null ? undefined : body, headers });
}

test(`the corpus holds at least 40 bad requests (${CORPUS.length})`, () => {
  assert.ok(CORPUS.length >= 40);
  assert.equal(new Set(CORPUS.map(([n]) => n)).size, CORPUS.length, "names are unique");
});

test("every bad request gets its exact 4xx as problem+json, and the snapshot does not change", async () => {
  const op = (m, p) => call(s.url, m, p, { token: TOKENS.operator });
  const before = (await op("GET", "/api/snapshot")).text;
  const wrong = [];
  for (const entry of CORPUS) {
    const [name, , status, problem] = entry;
    const res = await send(entry);
    assert.ok(res.status < 500, `${name}: ${res.status} ${res.text}`);
    try {
      assertProblem(res, status, problem, name);
      if (status === 401) assert.equal(res.headers.get("www-authenticate"), "Bearer", name);
    } catch (e) {
      wrong.push(`${name}: expected ${status} ${problem}, got ${res.status} ${res.text.slice(0, 160)}`);
    }
  }
  assert.deepEqual(wrong, [], `wrong answers:\n${wrong.join("\n")}`);
  const afterAll = (await op("GET", "/api/snapshot")).text;
  assert.equal(afterAll, before, "the corpus changed the pool");
  // The held lease is untouched, and no request was counted as a server error.
  assert.equal((await op("POST", `/api/leases/${heldId}/renewal`)).status, 200);
  const metrics = (await op("GET", "/metrics")).text;
  assert.doesNotMatch(metrics, /status="5\d\d"/);
});

test("a config nested deeper than 32 levels is 400 invalid-config naming the limit and where (5,000 levels was a 500)", async () => {
  const op = (m, p, body) => call(s.url, m, p, { body, token: TOKENS.operator });
  const before = (await op("GET", "/api/config")).text;
  const deepObject = (n) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;
  for (const [body, where] of [
    [`{"cooldownBaseMs":${deep(5000)}}`, /^cooldownBaseMs(\[0\]){32}: nested deeper than 32 levels/],
    [`{"minGapMsByContext":${deepObject(5000)}}`, /^minGapMsByContext(\.a){32}: nested deeper than 32 levels/],
    [`{"penalties":${deep(33)}}`, /^penalties(\[0\]){32}: nested deeper than 32 levels/],
  ]) {
    const res = await op("PUT", "/api/config", body);
    assertProblem(res, 400, "invalid-config", body.slice(0, 30));
    assert.match(res.json.detail, where);
    assert.equal((await op("GET", "/api/config")).text, before, "nothing changed");
  }
  // 32 levels is the engine's to judge (a wrong type, named).
  const res = await op("PUT", "/api/config", `{"penalties":${deep(31)}}`);
  assertProblem(res, 400, "invalid-config");
  assert.match(res.json.detail, /^penalties: invalid type/);
});

test("a duplicate key is refused naming its path, as the engine refuses one in a snapshot", async () => {
  const op = (m, p, body) => call(s.url, m, p, { body, token: TOKENS.operator });
  const named = [
    ['{"kind":"PROXY","value":"x","value":"y"}', "/api/resources", "value"],
    ['{"kind":"PROXY","value":"p1","context":"c","outcome":{"ok":false,"failure":"SLOW","failure":"BLOCKED"}}', "/api/outcomes", "outcome.failure"],
  ];
  for (const [body, path, field] of named) {
    const res = await op("POST", path, body);
    assertProblem(res, 400, "bad-request");
    assert.equal(res.json.detail, `${field}: duplicate field`);
  }
  const snapshot = (await op("GET", "/api/snapshot")).text.replace('"revision":', '"revision":1,"revision":');
  const refused = await op("PUT", "/api/snapshot", snapshot);
  assertProblem(refused, 400, "invalid-snapshot");
  assert.match(refused.json.detail, /^revision: duplicate field/);
  // Keys in different objects, or equal strings that are values, are no duplicates.
  for (const [text, want] of [
    ['{"a":{"a":1},"b":[{"a":1},{"a":2}],"c":"a","d":["a","a"]}', null],
    ['{"x":"\\"}","x":1}', "x"],
    ['{"a":[{"b":1},{"b":2,"c":{"d":1,"d":2}}]}', "a[1].c.d"],
    ['[{"k":1},{"k":1,"k":2}]', "[1].k"],
    ['{"\\u00e9":1,"\u00e9":2}', "\u00e9"],
    ['{"{[,":1,"]}":2,"{[,":3}', "{[,"],
  ]) {
    assert.equal(duplicateKeyPath(text), want, text);
  }
});

test("a request target that is not origin-form, or a request node:http cannot parse, is a 400 problem (never a 500)", edgeSkip("workerd parses the request line and headers before any worker code runs: these raw requests test the Node server's parser"), async () => {
  const port = s.server.port;
  const auth = `Authorization: Bearer ${TOKENS.operator}\r\n`;
  const before = (await call(s.url, "GET", "/api/snapshot", { token: TOKENS.operator })).text;
  for (const [name, text, status] of [
    ["absolute-form", `GET http://127.0.0.1:${port}/api/snapshot HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`, 400],
    ["absolute-form to another host", `GET http://evil.example/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, 400],
    ["asterisk-form", `OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, 400],
    ["asterisk on GET", `GET * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, 400],
    ["a fragment", `GET /healthz#top HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, 400],
    ["raw UTF-8 in the path", `GET /api/resources/PROXY/\u00e9t\u00e9 HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}\r\n`, 400],
    ["a space in the target", `GET /api/snap shot HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, 400],
    ["a control character in the target", `GET /healthz\x01 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, 400],
    ["not HTTP at all", "HELLO\r\n\r\n", 400],
    ["a header without a colon", `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nbroken\r\n\r\n`, 400],
    ["headers over 16 KiB", `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"x".repeat(20000)}\r\n\r\n`, 431],
  ]) {
    const res = await rawRequest(port, text);
    assertProblem(res, status, undefined, name);
    assert.doesNotMatch(res.text, /"format"/, `${name}: no snapshot`);
  }
  assert.equal((await call(s.url, "GET", "/api/snapshot", { token: TOKENS.operator })).text, before);
  const metrics = (await call(s.url, "GET", "/metrics", { token: TOKENS.operator })).text;
  assert.doesNotMatch(metrics, /status="5\d\d"/);
});

test("a request whose body does not arrive in time gets a 408 problem, counted as status 408 (not 500)", edgeSkip("requestTimeoutMs is the Node server's option; on the edge the platform times requests out"), async () => {
  const own = await startServer({ serveOptions: { requestTimeoutMs: 300 } });
  try {
    const res = await rawRequest(
      own.server.port,
      `POST /api/resources HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"kind":`,
      10000,
    );
    assertProblem(res, 408, "request-timeout");
    let metrics;
    // The handler, still reading that body, records the request when it learns it timed out.
    for (let i = 0; i < 100 && !/route="register",method="POST",status="408"/.test(metrics); i++) {
      await new Promise((r) => setTimeout(r, 20));
      metrics = await own.pool.metrics();
    }
    assert.match(metrics, /repute_http_request_duration_seconds_count\{route="register",method="POST",status="408"\} 1/);
    assert.doesNotMatch(metrics, /status="5\d\d"/);
    assert.equal(own.pool.resources().length, 0);
  } finally {
    await own.close();
  }
});

test("a client that sends its whole oversized chunked upload (8 MiB) before reading still gets its 413", edgeSkip("what a refused upload leaves on the connection is workerd's HTTP server's business, not the handler's"), async () => {
  // Like many clients (urllib, requests): send everything, then read the answer. Destroying the
  // socket under the upload made the client's writes fail (EPIPE) and lose the answer.
  const sock = net.connect(s.server.port, "127.0.0.1");
  await once(sock, "connect");
  const errors = [];
  sock.on("error", (e) => errors.push(e.code));
  let text = "";
  sock.setEncoding("utf8");
  sock.on("data", (d) => (text += d));
  const closed = once(sock, "close");
  const write = async (chunk) => {
    if (!sock.write(chunk)) await Promise.race([once(sock, "drain"), closed]).catch(() => {}); // an error is in `errors`
  };
  await write(`POST /api/resources HTTP/1.1\r\nHost: 127.0.0.1\r\n${AUTH}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
  const chunk = `10000\r\n${"x".repeat(0x10000)}\r\n`;
  for (let sent = 0; sent < 8 * MiB && !sock.destroyed; sent += 0x10000) await write(chunk);
  await write("0\r\n\r\n");
  await closed;
  assert.deepEqual(errors, [], "the upload was cut");
  assert.match(text, /^HTTP\/1\.1 413 /);
  assert.match(text, /urn:repute:problem:body-too-large/);
});

/**
 * POSTs a JSON body of about `bytes` to `path` as many clients do — write it all, then read —
 * with a content-length or chunked; resolves to the response as `call` gives it, or
 * `{ error }` when the connection failed (a reset) before one arrived.
 */
function upload(path, bytes, { chunked = false, headers = {} } = {}) {
  const prefix = new URL(s.url).pathname.replace(/\/$/, ""); // an edge region's /regions/{region}
  const head = '{"kind":"PROXY","value":"';
  const size = head.length + bytes + 2;
  const h = { "content-type": "application/json", ...headers, ...(chunked ? {} : { "content-length": String(size) }) };
  return new Promise((resolve) => {
    const req = http.request(s.url, { method: "POST", path: prefix + path, agent: false, headers: h }, (res) =>
      readResponse(res).then(resolve, (error) => resolve({ error: error.code ?? error.message })),
    );
    req.on("error", (error) => resolve({ error: error.code ?? error.message }));
    (async () => {
      req.write(head);
      const chunk = Buffer.alloc(65536, 0x78);
      for (let sent = 0; sent < bytes && !req.destroyed; sent += chunk.length) {
        if (!req.write(bytes - sent < chunk.length ? chunk.subarray(0, bytes - sent) : chunk)) await once(req, "drain").catch(() => {});
      }
      req.end('"}');
    })();
  });
}

test("an oversized upload (100 KB, 10 MB; content-length or chunked), or a large one refused (401, 415), gets its problem answer, never a reset", async () => {
  const auth = { authorization: `Bearer ${TOKENS.operator}` };
  const wrong = [];
  for (const [bytes, status, headers] of [
    [100_000, 413, auth],
    [10_000_000, 413, auth],
    [1_000_000, 401, {}],
    [1_000_000, 415, { ...auth, "content-type": "text/plain" }],
  ]) {
    for (const chunked of [false, true]) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const res = await upload("/api/resources", bytes, { chunked, headers });
        const what = `${bytes} bytes ${chunked ? "chunked" : "with content-length"} (try ${attempt + 1})`;
        if (res.error) wrong.push(`${what}: ${res.error}`);
        else if (res.status !== status || res.headers.get("content-type") !== "application/problem+json") wrong.push(`${what}: ${res.status} ${res.text.slice(0, 100)}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
  const stats = await call(s.url, "GET", "/api/stats", { token: TOKENS.operator });
  assert.equal(stats.json.registered, 4, "nothing was registered");
});

const chunkedBody = (bytes) => {
  let body = "";
  const chunk = "x".repeat(8192);
  for (let sent = 0; sent < bytes; sent += 8192) body += `2000\r\n${chunk}\r\n`;
  return `${body}0\r\n\r\n`;
};
const AUTH = `Authorization: Bearer ${TOKENS.operator}\r\n`;

/**
 * Sends `head` + `body` on a fresh connection, expects a response with `status`, then sends
 * GET /healthz on the same connection: the server must answer it, or have closed the connection.
 */
async function nextRequestOnSameConnection(head, body, status) {
  const c = await rawConnection(s.server.port);
  try {
    c.write(head);
    c.write(body);
    const first = await c.next(5000);
    assert.match(first ?? "", new RegExp(`^HTTP/1\\.1 ${status} `), `first response: ${first}`);
    const keepAlive = !/\r\nconnection: close\r\n/i.test(first);
    c.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const second = await c.next(2000);
    if (second === null) {
      assert.ok(c.state.closed, `the connection${keepAlive ? " (announced keep-alive)" : ""} neither answered the next request nor closed within 2 s`);
    } else {
      assert.match(second, /^HTTP\/1\.1 200 /);
    }
  } finally {
    c.destroy();
  }
}

const MiB = 1024 * 1024;
const big = "x".repeat(MiB);
const post = (headers) => `POST /api/resources HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}\r\n`;

test("after a refused request with a small body (401), the keep-alive connection serves the next request", edgeSkip("what a refused upload leaves on the connection is workerd's HTTP server's business, not the handler's"), async () => {
  const body = JSON.stringify({ kind: "PROXY", value: "x".repeat(1000) });
  await nextRequestOnSameConnection(post(`Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`), body, 401);
});

test("after a 413 on a body just over the limit (content-length), the connection serves the next request", edgeSkip("what a refused upload leaves on the connection is workerd's HTTP server's business, not the handler's"), async () => {
  const body = JSON.stringify({ kind: "PROXY", value: "x".repeat(LIMIT) });
  await nextRequestOnSameConnection(post(`${AUTH}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`), body, 413);
});

for (const [name, head, body, status] of [
  ["413, body with content-length", post(`${AUTH}Content-Type: application/json\r\nContent-Length: ${MiB}\r\n`), big, 413],
  ["413, chunked body", post(`${AUTH}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n`), chunkedBody(MiB), 413],
  ["401, large body without a token", post(`Content-Type: application/json\r\nContent-Length: ${MiB}\r\n`), big, 401],
  ["415, large text/plain body", post(`${AUTH}Content-Type: text/plain\r\nContent-Length: ${MiB}\r\n`), big, 415],
]) {
  test(`after a ${name} of 1 MiB, the connection is closed or serves the next request`, edgeSkip("what a refused upload leaves on the connection is workerd's HTTP server's business, not the handler's"), async () => {
    await nextRequestOnSameConnection(head, body, status);
  });
}

test(
  "close() completes promptly after a refused 1 MiB request whose client has gone",
  edgeSkip("close() of a Node server; a worker has no server of its own to close"),
  async () => {
    const own = await startServer({});
    try {
      const sock = net.connect(own.server.port, "127.0.0.1");
      await once(sock, "connect");
      sock.on("error", () => {});
      sock.write(`POST /api/resources HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${MiB}\r\n\r\n`);
      sock.write(big);
      await once(sock, "data"); // the 415/413/… answer arrived
      sock.destroy();
      let timer;
      const closed = await Promise.race([
        own.server.close().then(() => true),
        new Promise((r) => (timer = setTimeout(() => r(false), 2000))),
      ]);
      clearTimeout(timer);
      assert.ok(closed, "close() still pending 2 s after the client left");
    } finally {
      own.server.server.closeAllConnections();
      await own.close();
    }
  },
);

test("a config with more than 4,096 per-context gaps is refused from its bytes, before it is parsed (a body that is not JSON past the 4,097th gap gets the count, not a syntax error)", async () => {
  const op = (m, p, body) => call(s.url, m, p, { body, token: TOKENS.operator });
  const before = (await op("GET", "/api/config")).text;
  const gaps = Array.from({ length: 4097 }, (_, i) => `"site-${i}.example":1000`).join(",");
  for (const body of [`{"minGapMsByContext":{${gaps},"cut`, `{"minGapMsByContext":{${gaps}}}`]) {
    const res = await op("PUT", "/api/config", body);
    assertProblem(res, 400, "invalid-config");
    assert.match(res.json.detail, /^minGapMsByContext must have at most 4096 entries \(got 4097\)/);
  }
  assert.equal((await op("GET", "/api/config")).text, before, "nothing changed");
});
