// Bearer-token roles of the HTTP API (SPEC §8): for each identity (worker, operator, viewer, no
// token, an unknown token) and each route, the status is exactly the route's success status or
// 401 (no valid token, with WWW-Authenticate: Bearer) / 403 (a role that may not); a refused
// request changes nothing; /healthz and /readyz are always open; no token ever appears in a
// response header or body; and the CLI refuses a bad tokens file with a message that does not
// echo the token. One in-process server with a fixed clock serves the matrix.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFile, rm } from "node:fs/promises";
import path from "node:path";
import { startServer, call, assertProblem, resourcePath, tempDir, spawnServe, runServeToExit } from "./_http-support.mjs";

const TOKENS = {
  worker: "wkr-7Hq2xV9mZpL4nB8cR1tY",
  operator: "opr-3Kd8sF6jWq0eUu5iOa2G",
  viewer: "vwr-9Lm4cX1bNv7zQh6gTe3S",
};
const WRONG = "unk-5Pp0oI9uY8tR7eW6qA1Z";
const ALL_SECRETS = [...Object.values(TOKENS), WRONG];

let s;
let seen = ""; // every response header and body the tests received, to search for tokens
let n = 0;
const uniq = (p) => `${p}-${++n}`;

before(async () => {
  s = await startServer({ tokens: Object.entries(TOKENS).map(([role, token]) => ({ token, role })) });
});
after(async () => {
  await s?.close();
});

/** A request as `identity` ("worker" | "operator" | "viewer" | "none" | "wrong"). */
async function as(identity, method, p, options = {}) {
  const token = identity === "none" ? undefined : identity === "wrong" ? WRONG : TOKENS[identity];
  const r = await call(s.url, method, p, { ...options, token });
  seen += `${JSON.stringify([...r.headers])}\n${r.text}\n`;
  return r;
}
const op = (method, p, options) => as("operator", method, p, options);

async function registered() {
  const value = uniq("res");
  assert.equal((await op("POST", "/api/resources", { body: { kind: "PROXY", value } })).status, 201);
  return value;
}
async function leaseId() {
  await registered(); // at least one free resource
  const r = await op("POST", "/api/leases", { body: { context: "roles" } });
  assert.equal(r.status, 201, r.text);
  return r.json.leaseId;
}

/** route → [method, path, body, success status, roles allowed, prepare] */
const ROUTES = {
  healthz: { method: "GET", path: () => "/healthz", ok: 200, roles: "open" },
  readyz: { method: "GET", path: () => "/readyz", ok: 200, roles: "open" },
  metrics: { method: "GET", path: () => "/metrics", ok: 200, roles: ["viewer", "operator"] },
  register: {
    method: "POST",
    path: () => "/api/resources",
    body: () => ({ kind: "PROXY", value: uniq("new") }),
    ok: 201,
    roles: ["worker", "operator"],
  },
  resources: { method: "GET", path: () => "/api/resources?context=roles", ok: 200, roles: ["viewer", "operator"] },
  deregister: {
    method: "DELETE",
    prepare: registered,
    path: (v) => resourcePath("PROXY", v),
    ok: 204,
    roles: ["operator"],
  },
  block: {
    method: "POST",
    prepare: registered,
    path: (v) => resourcePath("PROXY", v, "/block?seconds=60"),
    ok: 204,
    roles: ["operator"],
  },
  unblock: {
    method: "DELETE",
    prepare: async () => {
      const v = await registered();
      assert.equal((await op("POST", resourcePath("PROXY", v, "/block?permanent=true"))).status, 204);
      return v;
    },
    path: (v) => resourcePath("PROXY", v, "/block"),
    ok: 200,
    roles: ["operator"],
  },
  acquire: {
    method: "POST",
    prepare: registered,
    path: () => "/api/leases",
    body: () => ({ context: "roles" }),
    ok: 201,
    roles: ["worker", "operator"],
  },
  renew: { method: "POST", prepare: leaseId, path: (id) => `/api/leases/${id}/renewal`, ok: 200, roles: ["worker", "operator"] },
  release: { method: "DELETE", prepare: leaseId, path: (id) => `/api/leases/${id}`, ok: 204, roles: ["worker", "operator"] },
  finish: {
    method: "POST",
    prepare: leaseId,
    path: (id) => `/api/leases/${id}/outcome`,
    body: () => ({ outcome: { ok: true, latencyMs: 5 }, next: {} }),
    ok: 200,
    roles: ["worker", "operator"],
  },
  report: {
    method: "POST",
    prepare: registered,
    path: () => "/api/outcomes",
    body: (v) => ({ kind: "PROXY", value: v, context: "roles", outcome: { ok: false, failure: "SLOW", latencyMs: 5 } }),
    ok: 204,
    roles: ["worker", "operator"],
  },
  resource: { method: "GET", prepare: registered, path: (v) => resourcePath("PROXY", v), ok: 200, roles: ["viewer", "operator"] },
  stats: { method: "GET", path: () => "/api/stats", ok: 200, roles: ["viewer", "operator"] },
  config: { method: "GET", path: () => "/api/config", ok: 200, roles: ["viewer", "operator"] },
  "config-update": {
    method: "PUT",
    path: () => "/api/config",
    body: () => ({ leaseTtlMs: 30_000 + n++ }),
    ok: 200,
    roles: ["operator"],
  },
  events: { method: "GET", path: () => "/api/events?after=0&limit=10", ok: 200, roles: ["viewer", "operator"] },
  stream: { method: "GET", path: () => "/api/events/stream", ok: 200, roles: ["viewer", "operator"], stream: true },
  "snapshot-export": { method: "GET", path: () => "/api/snapshot", ok: 200, roles: ["operator"] },
  "snapshot-import": {
    method: "PUT",
    prepare: async () => (await op("GET", "/api/snapshot")).text,
    path: () => "/api/snapshot",
    body: (snap) => snap,
    ok: 204,
    roles: ["operator"],
  },
};

/** The status `identity` must get on `route`. */
function expected(route, identity) {
  if (route.roles === "open") return route.ok;
  if (identity === "none" || identity === "wrong") return 401;
  return route.roles.includes(identity) ? route.ok : 403;
}

/** Opens the stream as `identity`; returns the status and closes it (reading its first bytes). */
async function streamStatus(identity) {
  const headers = {};
  if (identity === "wrong") headers.authorization = `Bearer ${WRONG}`;
  else if (identity !== "none") headers.authorization = `Bearer ${TOKENS[identity]}`;
  const ac = new AbortController();
  const res = await fetch(`${s.url}/api/events/stream`, { headers, signal: ac.signal });
  let text = "";
  if (res.status === 200) {
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const reader = res.body.getReader();
    const { value } = await reader.read();
    text = new TextDecoder().decode(value);
    ac.abort();
    await reader.cancel().catch(() => {});
  } else {
    text = await res.text();
  }
  seen += `${JSON.stringify([...res.headers])}\n${text}\n`;
  return { status: res.status, headers: res.headers, text, json: res.status === 200 ? undefined : JSON.parse(text) };
}

for (const identity of ["worker", "operator", "viewer", "none", "wrong"]) {
  test(`role matrix: ${identity}`, async () => {
    for (const [name, route] of Object.entries(ROUTES)) {
      const want = expected(route, identity);
      const ctx = route.prepare ? await route.prepare() : undefined;
      const snapBefore = (await op("GET", "/api/snapshot")).text;
      const r = route.stream
        ? await streamStatus(identity)
        : await as(identity, route.method, route.path(ctx), route.body ? { body: route.body(ctx) } : {});
      const where = `${identity} ${route.method} ${name}: ${r.status} ${r.text.slice(0, 200)}`;
      assert.equal(r.status, want, where);
      if (want === 401) {
        assertProblem(r, 401, "unauthorized", where);
        assert.equal(r.headers.get("www-authenticate"), "Bearer", where);
      } else if (want === 403) {
        assertProblem(r, 403, "forbidden", where);
        assert.match(r.json.detail, new RegExp(`\\b${identity}\\b`), where);
      }
      if (want === 401 || want === 403) {
        // Refused: nothing happened.
        assert.equal((await op("GET", "/api/snapshot")).text, snapBefore, `${where}: state changed`);
      }
    }
  });
}

test("/healthz and /readyz are open to anyone, whatever the Authorization header says", async () => {
  for (const auth of [undefined, "Bearer nonsense-token-value", "Basic Zm9vOmJhcg==", "", "Bearer"]) {
    for (const p of ["/healthz", "/readyz"]) {
      const r = await call(s.url, "GET", p, { headers: auth === undefined ? {} : { authorization: auth } });
      assert.equal(r.status, 200, `${p} with ${auth}`);
    }
  }
});

test("an Authorization header other than exactly 'Bearer <known token>' is 401", async () => {
  const cases = [
    `Basic ${Buffer.from(`x:${TOKENS.operator}`).toString("base64")}`,
    `Token ${TOKENS.operator}`,
    `Bearer ${TOKENS.operator.toUpperCase()}`,
    `Bearer ${TOKENS.operator.slice(0, -1)}`,
    `Bearer ${TOKENS.operator}x`,
    `Bearer ${TOKENS.operator} extra`,
    "Bearer",
    "Bearer ",
    TOKENS.operator,
  ];
  for (const authorization of cases) {
    const r = await call(s.url, "GET", "/api/resources", { headers: { authorization } });
    seen += `${JSON.stringify([...r.headers])}\n${r.text}\n`;
    assertProblem(r, 401, "unauthorized", JSON.stringify(authorization.replace(/[A-Za-z0-9+/=-]{12,}/g, "…")));
    assert.equal(r.headers.get("www-authenticate"), "Bearer");
  }
});

test("the auth scheme is case-insensitive and may be followed by several spaces (RFC 9110 §11.1, §11.4)", async () => {
  for (const authorization of [`bearer ${TOKENS.viewer}`, `BEARER ${TOKENS.viewer}`, `Bearer  ${TOKENS.viewer}`]) {
    const r = await call(s.url, "GET", "/api/resources", { headers: { authorization } });
    assert.equal(r.status, 200, r.text);
  }
});

test("no token appears in any response header or body", async () => {
  // Everything the matrix and the tests above received, plus the metrics after all of it.
  const m = await op("GET", "/metrics");
  assert.equal(m.status, 200);
  assert.ok(seen.length > 10000, "the matrix ran first");
  for (const secret of ALL_SECRETS) {
    assert.ok(!seen.includes(secret), "a token was echoed in a response");
    assert.ok(!seen.includes(secret.slice(4, 16)), "part of a token was echoed in a response");
  }
});

// --- the CLI's tokens file -----------------------------------------------------------------

const SECRET = "Zq8vX2mPpL4nW7rBk3Hs";

/** True when `text` holds any 6 consecutive characters of `secret`. */
function leaks(text, secret = SECRET) {
  for (let i = 0; i + 6 <= secret.length; i++) if (text.includes(secret.slice(i, i + 6))) return true;
  return false;
}

const BAD_FILES = [
  ["a trailing comma", `{"tokens":[{"token":"${SECRET}","role":"worker"},]}`],
  ["an unknown role", `{"tokens":[{"token":"${SECRET}","role":"admin"}]}`],
  ["truncated JSON", `{"tokens":[{"token":"${SECRET}","role":"worker"}`],
  ["an unknown field", `{"tokens":[{"token":"${SECRET}","role":"worker","note":"x"}]}`],
  ["a token of fewer than 16 characters", `{"tokens":[{"token":"${SECRET.slice(0, 10)}","role":"worker"}]}`],
  ["a list instead of an object", `[{"token":"${SECRET}","role":"worker"}]`],
  ["a token that is not a string", `{"tokens":[{"token":12345678901234567890,"role":"worker"}]}`],
  ["an unquoted property name after the token", `{"tokens":[{"token":"${SECRET}", role:"worker"}]}`],
  ["an unquoted token", `{"tokens":[{"token":${SECRET},"role":"worker"}]}`],
  ["a bare token instead of JSON", SECRET],
  ["a single-quoted token", `{"tokens":[{"token":'${SECRET}',"role":"worker"}]}`],
];

let cliRoot;
before(async () => {
  cliRoot = await tempDir("tokens-cli");
});
after(async () => {
  if (cliRoot) await rm(cliRoot, { recursive: true, force: true });
});

for (const [name, content] of BAD_FILES) {
  test(`CLI --tokens with ${name}: exits non-zero without echoing the token`, async () => {
    const file = path.join(cliRoot, `${name.replace(/\W+/g, "-")}.json`);
    await writeFile(file, content);
    const r = await runServeToExit(["--tokens", file, "--port", "0", "--data", path.join(cliRoot, "data")]);
    const output = r.stdout + r.stderr;
    assert.notEqual(r.code, 0, output);
    assert.doesNotMatch(r.stdout, /serving/);
    assert.match(r.stderr, /tokens/, "the message names the tokens file");
    assert.ok(r.stderr.includes(file), "the message names the file");
    assert.ok(!leaks(output), `the output echoes the token: ${output}`);
  });
}

// Tokens no `Authorization: Bearer` header can carry (RFC 6750: visible ASCII): none could
// ever log in, so the server refuses to start, naming the entry, its line and what is wrong.
const UNSENDABLE = [
  ["a space", `${SECRET.slice(0, 10)} ${SECRET.slice(10)}`, /a space/],
  ["a tab", `${SECRET}\t`, /a control character/],
  ["a line feed", `${SECRET.slice(0, 10)}\n${SECRET.slice(10)}`, /a control character/],
  ["DEL", `${SECRET}\u007f`, /a control character/],
  ["an accented letter", `${SECRET}é`, /a non-ASCII character/],
  ["a non-breaking space", `${SECRET}\u00a0`, /a non-ASCII character/],
  ["an emoji", `${SECRET}\u{1F511}`, /a non-ASCII character/],
];

for (const [name, token, what] of UNSENDABLE) {
  test(`CLI --tokens with ${name} in a token: refuses to start, naming the entry and its line, not the token`, async () => {
    const file = path.join(cliRoot, `unsendable-${name.replace(/\W+/g, "-")}.json`);
    const entries = [{ token: `${SECRET}-good`, role: "viewer" }, { token, role: "worker" }];
    // One field per line: the bad token is on line 8.
    await writeFile(file, JSON.stringify({ tokens: entries }, null, 2));
    const r = await runServeToExit(["--tokens", file, "--port", "0", "--data", path.join(cliRoot, "data")]);
    const output = r.stdout + r.stderr;
    assert.notEqual(r.code, 0, output);
    assert.doesNotMatch(r.stdout, /serving/);
    assert.ok(r.stderr.includes(file), r.stderr);
    assert.match(r.stderr, /tokens\[1\]\.token/);
    assert.match(r.stderr, /line 8\b/);
    assert.match(r.stderr, what);
    assert.ok(!leaks(output), `the output echoes the token: ${output}`);
  });
}

test("CLI REPUTE_TOKENS with a token holding a space: refuses to start, naming the entry, not the token", async () => {
  const r = await runServeToExit(["--port", "0", "--data", path.join(cliRoot, "data")], {
    env: { REPUTE_TOKENS: JSON.stringify({ tokens: [{ token: `${SECRET} x`, role: "worker" }] }) },
  });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /REPUTE_TOKENS.*tokens\[0\]\.token.*a space/);
  assert.ok(!leaks(r.stdout + r.stderr), r.stderr);
});

test(
  "CLI --tokens with an empty file: refuses to start (auth was asked for; never fail open)",
  async () => {
    const file = path.join(cliRoot, "empty.json");
    await writeFile(file, "");
    const p = spawnServe(["--tokens", file, "--port", "0", "--data", path.join(cliRoot, "data-empty")]);
    const outcome = await Promise.race([p.ready.then(() => "served", () => "exited"), p.exited.then(() => "exited")]);
    if (outcome === "served") p.child.kill("SIGTERM");
    const r = await p.exited;
    assert.equal(outcome, "exited", `it served without authentication: ${r.stdout}`);
    assert.notEqual(r.code, 0);
  },
);

test("CLI REPUTE_TOKENS holding a bare token: exits non-zero without echoing it", async () => {
  const r = await runServeToExit(["--port", "0", "--data", path.join(cliRoot, "data")], { env: { REPUTE_TOKENS: SECRET } });
  assert.notEqual(r.code, 0);
  assert.ok(!leaks(r.stdout + r.stderr), r.stderr);
});

test("CLI REPUTE_TOKENS with an unknown role: exits non-zero without echoing the token", async () => {
  const r = await runServeToExit(["--port", "0", "--data", path.join(cliRoot, "data")], {
    env: { REPUTE_TOKENS: JSON.stringify({ tokens: [{ token: SECRET, role: "root" }] }) },
  });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /REPUTE_TOKENS/);
  assert.ok(!leaks(r.stdout + r.stderr), r.stderr);
});

test("CLI with a missing tokens file exits non-zero naming the file", async () => {
  const file = path.join(cliRoot, "does-not-exist.json");
  const r = await runServeToExit(["--tokens", file, "--port", "0", "--data", path.join(cliRoot, "data")]);
  assert.notEqual(r.code, 0);
  assert.ok(r.stderr.includes(file), r.stderr);
});

test("CLI with a good tokens file serves with auth, and never prints a token", async () => {
  const file = path.join(cliRoot, "good.json");
  await writeFile(file, JSON.stringify({ tokens: [{ token: SECRET, role: "operator" }, { token: `${SECRET}-viewer`, role: "viewer" }] }));
  const p = spawnServe(["--tokens", file, "--port", "0", "--data", path.join(cliRoot, "data-good")]);
  try {
    const url = await p.ready;
    assert.match(p.out.stdout, /2 tokens/);
    assertProblem(await call(url, "GET", "/api/resources"), 401, "unauthorized");
    assertProblem(await call(url, "GET", "/api/resources", { token: `${SECRET}-nope` }), 401, "unauthorized");
    assert.equal((await call(url, "GET", "/api/resources", { token: SECRET })).status, 200);
    assertProblem(await call(url, "GET", "/api/snapshot", { token: `${SECRET}-viewer` }), 403, "forbidden");
    assert.equal((await call(url, "GET", "/healthz")).status, 200);
  } finally {
    p.child.kill("SIGTERM");
  }
  const r = await p.exited;
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!leaks(r.stdout + r.stderr), r.stdout + r.stderr);
});
