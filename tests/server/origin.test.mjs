// The Host/Origin guard (origin-guard.js; README "The pool server"; CONTRACTS item 7). Without
// tokens only loopback Host values are served and a non-loopback Origin is refused — a page
// that rebinds its DNS name to 127.0.0.1 reads nothing, and a cross-site "simple request"
// changes nothing. With tokens, a cross-origin request without a token is refused. A
// same-origin page and curl (no Origin) keep working. Checked with raw requests against
// `serve()` on 127.0.0.1, with the shared web handler as an edge worker would call it, and
// with the attacks run by a real headless Chromium.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { rm } from "node:fs/promises";
import { chromium } from "playwright-core";
import { openPool } from "../../pkg-scripts/lib/node/open-pool.js";
import { createHandler } from "../../pkg-scripts/lib/http/handler.js";
import { startServer, call, assertProblem, resourcePath, rawRequest, readResponse, tempDir, T0 } from "./_http-support.mjs";

const OPERATOR = "op-token-aaaaaaaaaaaaaaaa";

/** One request through node:http, which sends any Host and Origin it is given. */
function send(port, method, path, headers = {}, body) {
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (body !== undefined) h["content-type"] = "application/json";
    const req = http.request({ host: "127.0.0.1", port, method, path, headers: h, agent: false }, (res) => resolve(readResponse(res)));
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

let open; // a server without tokens
let guarded; // a server with tokens

before(async () => {
  open = await startServer({});
  guarded = await startServer({ tokens: [{ token: OPERATOR, role: "operator" }] });
  for (const [s, token] of [[open], [guarded, OPERATOR]]) {
    for (const value of ["p1", "p2"]) {
      assert.equal((await call(s.url, "POST", "/api/resources", { token, body: { kind: "PROXY", value } })).status, 201);
    }
  }
});
after(async () => {
  await open?.close();
  await guarded?.close();
});

const blocked = async (s, value, token) =>
  (await call(s.url, "GET", "/api/resources", { token })).json.resources.find((r) => r.value === value).blocked !== null;

test("without tokens, a rebound name (any non-loopback Host) is refused on every route, before anything runs", async () => {
  const port = open.server.port;
  const host = `rebind.attacker.example:${port}`;
  const before = (await call(open.url, "GET", "/api/snapshot")).text;
  for (const [method, path, body] of [
    ["GET", "/api/snapshot"],
    ["GET", "/api/resources"],
    ["GET", "/api/events?after=0"],
    ["GET", "/api/events/stream"],
    ["GET", "/metrics"],
    ["GET", "/healthz"],
    ["GET", "/nowhere"],
    ["POST", "/api/resources", { kind: "PROXY", value: "planted" }],
    ["POST", resourcePath("PROXY", "p1", "/block?permanent=true")],
    ["DELETE", resourcePath("PROXY", "p2")],
    ["PUT", "/api/snapshot", { format: "x" }],
  ]) {
    for (const h of [host, "rebind.attacker.example", "192.168.1.10:8787", "[::2]:1", "127.0.0.1.nip.io", "localhost.", "0.0.0.0"]) {
      const res = await send(port, method, path, { host: h }, body);
      assertProblem(res, 403, "forbidden-host", `${method} ${path} Host ${h}`);
      assert.doesNotMatch(res.text, /"format"/, "no snapshot");
    }
  }
  assert.equal((await call(open.url, "GET", "/api/snapshot")).text, before, "nothing changed");
});

test("without tokens, every loopback Host is served: localhost, 127.0.0.0/8, [::1], any port or none", async () => {
  const port = open.server.port;
  for (const h of [`localhost:${port}`, "localhost", "LOCALHOST:1", `127.0.0.1:${port}`, "127.0.0.1", "127.45.6.7:80", "[::1]", `[::1]:${port}`]) {
    const res = await send(port, "GET", "/api/resources", { host: h });
    assert.equal(res.status, 200, `Host ${h}: ${res.text}`);
  }
});

test("without tokens, a cross-site request (non-loopback Origin, or null) is refused and changes nothing", async () => {
  const port = open.server.port;
  const host = `127.0.0.1:${port}`;
  for (const origin of ["https://evil.example", "http://evil.example:8787", "null", "http://192.168.1.10:8787", "file://", "not a url"]) {
    // The block route reads no body: a form or `fetch(..., {mode: "no-cors"})` can send it.
    const block = await send(port, "POST", resourcePath("PROXY", "p1", "/block?permanent=true"), { host, origin });
    assertProblem(block, 403, "forbidden-origin", `block from ${origin}`);
    const read = await send(port, "GET", "/api/snapshot", { host, origin });
    assertProblem(read, 403, "forbidden-origin", `snapshot from ${origin}`);
    const register = await send(port, "POST", "/api/resources", { host, origin }, { kind: "PROXY", value: "planted" });
    assertProblem(register, 403, "forbidden-origin", `register from ${origin}`);
  }
  assert.equal(await blocked(open, "p1"), false, "p1 was not blocked");
  assert.equal((await call(open.url, "GET", "/api/resources")).json.resources.length, 2, "nothing registered");
});

test("without tokens, a page on a loopback origin (the same-origin console) may call the API", async () => {
  const port = open.server.port;
  for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, "http://[::1]:3000"]) {
    const res = await send(port, "POST", "/api/leases", { host: `127.0.0.1:${port}`, origin }, { context: "c" });
    assert.equal(res.status, 201, `Origin ${origin}: ${res.text}`);
    assert.equal((await call(open.url, "DELETE", `/api/leases/${res.json.leaseId}`)).status, 204);
  }
});

test("with tokens, any Host is served, and a cross-origin request without a token is refused", async () => {
  const port = guarded.server.port;
  const auth = { authorization: `Bearer ${OPERATOR}` };
  // A public name (behind a proxy, say) is fine with tokens.
  assert.equal((await send(port, "GET", "/api/resources", { host: "pool.example.net", ...auth })).status, 200);
  // Cross-origin without a token: refused even on open routes.
  for (const [method, path] of [["GET", "/healthz"], ["GET", "/api/resources"], ["POST", resourcePath("PROXY", "p1", "/block?permanent=true")]]) {
    const res = await send(port, method, path, { host: "pool.example.net", origin: "https://evil.example" });
    assertProblem(res, 403, "forbidden-origin", `${method} ${path}`);
  }
  // Same origin (scheme-less host:port; default ports either way) without a token: the open
  // routes answer, the others want the token as always.
  for (const [host, origin] of [
    ["pool.example.net", "https://pool.example.net"],
    ["pool.example.net:443", "https://pool.example.net"],
    ["pool.example.net:8787", "http://pool.example.net:8787"],
    [`127.0.0.1:${port}`, `http://127.0.0.1:${port}`],
  ]) {
    assert.equal((await send(port, "GET", "/healthz", { host, origin })).status, 200, `${host} from ${origin}`);
    assertProblem(await send(port, "GET", "/api/resources", { host, origin }), 401, "unauthorized");
  }
  // A port or name that differs is another origin.
  for (const origin of ["http://pool.example.net:9999", "http://evil.pool.example.net"]) {
    assertProblem(await send(port, "GET", "/healthz", { host: "pool.example.net:8787", origin }), 403, "forbidden-origin", origin);
  }
  // A token makes a cross-origin request acceptable (a browser sends one only after a CORS
  // preflight, which this server never grants).
  const res = await send(port, "GET", "/api/resources", { host: "pool.example.net", origin: "https://evil.example", ...auth });
  assert.equal(res.status, 200);
  assert.equal(await blocked(guarded, "p1", OPERATOR), false);
});

test("a malformed Host is a 400 problem in both modes (never a 500), and routes nowhere", async () => {
  for (const s of [open, guarded]) {
    const port = s.server.port;
    for (const h of ["[", "a b", "x:99999", "127.0.0.1/api/snapshot?", "127.0.0.1:8787@evil", "", "[::1", "::1", "a:b:c", "127.0.0.1:80x"]) {
      const res = await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: ${h}\r\nAuthorization: Bearer ${OPERATOR}\r\n\r\n`);
      assertProblem(res, 400, "bad-request", `Host ${JSON.stringify(h)}`);
      assert.doesNotMatch(res.text, /"format"/);
    }
  }
});

test("an HTTP/1.1 request without Host, or with two Host headers, is a 400 problem in both modes, and routes nowhere", async () => {
  for (const s of [open, guarded]) {
    const port = s.server.port;
    const auth = `Authorization: Bearer ${OPERATOR}\r\n`;
    const none = await rawRequest(port, `GET /api/snapshot HTTP/1.1\r\n${auth}\r\n`);
    assertProblem(none, 400, "bad-request", "no Host");
    assert.match(none.json.detail, /Host/);
    for (const [first, second] of [["127.0.0.1", "evil.example"], ["evil.example", "127.0.0.1"], ["127.0.0.1", "127.0.0.1"]]) {
      const res = await rawRequest(port, `GET /api/snapshot HTTP/1.1\r\nHost: ${first}\r\n${auth}Host: ${second}\r\n\r\n`);
      assertProblem(res, 400, "bad-request", `Host ${first}, then ${second}`);
      assert.match(res.json.detail, /Host/);
      assert.doesNotMatch(res.text, /"format"/);
    }
    // A path outside the API (the console's files, where served) is refused alike.
    assertProblem(await rawRequest(port, "GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: 127.0.0.1\r\n\r\n"), 400, "bad-request", "a file, two Hosts");
    // HTTP/1.0 may leave Host out (RFC 9112 §3.2 asks it of HTTP/1.1): judged by its Origin.
    assert.equal((await rawRequest(port, `GET /api/stats HTTP/1.0\r\n${auth}\r\n`)).status, 200);
  }
});

test("the shared web handler applies the same guard (an edge worker gets it too)", async () => {
  const dir = await tempDir("guard-web");
  const pool = await openPool({ dir, now: () => T0, seed: 7, checkpointMs: 0, handleSignals: false, onError: () => {} });
  try {
    const loopback = await createHandler(pool);
    assert.equal((await loopback(new Request("http://127.0.0.1/healthz"))).status, 200);
    assert.equal((await loopback(new Request("http://localhost:8787/api/resources"))).status, 200);
    assert.equal((await loopback(new Request("http://pool.example/healthz"))).status, 403);
    const evil = new Request("http://127.0.0.1/api/resources", { method: "POST", headers: { origin: "https://evil.example" } });
    assert.equal((await loopback(evil)).status, 403);
    const tokens = await createHandler(pool, { tokens: [{ token: OPERATOR, role: "operator" }] });
    assert.equal((await tokens(new Request("https://pool.example/healthz"))).status, 200);
    const sameOrigin = new Request("https://pool.example/healthz", { headers: { origin: "https://pool.example" } });
    assert.equal((await tokens(sameOrigin)).status, 200);
    const cross = new Request("https://pool.example/healthz", { headers: { origin: "https://evil.example" } });
    assert.equal((await tokens(cross)).status, 403);
    // The host may choose: a handler told to serve any name without tokens.
    const anyHost = await createHandler(pool, { loopbackOnly: false });
    assert.equal((await anyHost(new Request("http://pool.example/healthz"))).status, 200);
  } finally {
    await pool.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("in Chromium: a rebound name reads nothing, a cross-site page blocks nothing, a same-origin page works", async () => {
  const port = open.server.port;
  // A page of the attacker's, on another origin (served on another loopback port).
  const evil = http.createServer((req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<title>evil</title>"));
  await new Promise((ok) => evil.listen(0, "127.0.0.1", ok));
  // Closed whatever happens (a browser that fails to launch must fail the test, not hang it).
  after(() => new Promise((ok) => evil.close(ok)));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      // DNS as an attacker would have it: their names resolve to this machine.
      "--host-resolver-rules=MAP rebind.attacker.example 127.0.0.1, MAP evil.example 127.0.0.1"],
  });
  try {
    const page = await browser.newPage();
    // DNS rebinding: the attacker's name now points at the pool; the page is same-origin with it.
    const rebound = await page.goto(`http://rebind.attacker.example:${port}/api/snapshot`);
    assert.equal(rebound.status(), 403);
    assert.doesNotMatch(await rebound.text(), /"format"/);
    // A cross-site page fires a "simple" POST (no preflight) at the pool.
    await page.goto(`http://evil.example:${evil.address().port}/`);
    await page.evaluate(async (url) => {
      await fetch(url, { method: "POST", mode: "no-cors" }).catch(() => {});
    }, `http://127.0.0.1:${port}${resourcePath("PROXY", "p2", "/block?permanent=true")}`);
    assert.equal(await blocked(open, "p2"), false, "the cross-site POST blocked p2");
    // A page on the pool's own origin (the console's case) calls the API as usual.
    await page.goto(`${open.url}/healthz`);
    const status = await page.evaluate(async () => {
      const res = await fetch("/api/resources", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ kind: "PROXY", value: "from-the-console" }),
      });
      return res.status;
    });
    assert.equal(status, 201);
    await call(open.url, "DELETE", resourcePath("PROXY", "from-the-console"));
  } finally {
    await browser.close();
  }
});
