// The handler is one web-standard `Request → Response` function that the edge worker will
// reuse; the Node server calls its `reply` form with a light request object instead. Both
// forms must be the same API: the same script of requests against two identical pools (same
// seed, same fixed clock) gets the same statuses, headers and bodies through a real web
// Request/Response and through the Node server on 127.0.0.1 (lease ids and resource ids aside:
// each handler seals lease ids under its own random key, each pool folder has its own
// resource-id key; resource ids are compared by the order they first appear in).
import { test } from "node:test";
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { openPool } from "../../pkg-scripts/lib/node/open-pool.js";
import { createHandler } from "../../pkg-scripts/lib/http/handler.js";
import { startServer, tempDir, T0 } from "./_http-support.mjs";

const SCRIPT = [
  ["GET", "/healthz"],
  ["POST", "/api/resources", { kind: "PROXY", value: "http://u:p@h:1" }],
  ["POST", "/api/resources", { kind: "PROXY", value: "http://u:p@h:1" }],
  ["POST", "/api/resources", { kind: "ACCOUNT", value: "a:1/x|y" }],
  ["POST", "/api/leases", { context: "shop" }],
  ["POST", "/api/outcomes", { kind: "PROXY", value: "http://u:p@h:1", context: "shop", outcome: { ok: false, failure: "BLOCKED" } }],
  ["POST", "/api/leases", { context: "shop" }],
  ["POST", "/api/leases", { context: "shop" }],
  ["POST", "/api/resources/PROXY/http%3A%2F%2Fu%3Ap%40h%3A1/block?seconds=60"],
  ["GET", "/api/resources?context=shop"],
  ["GET", "/api/events?after=0&limit=5"],
  ["PUT", "/api/resources"],
  ["GET", "/nowhere"],
  ["POST", "/api/resources", "{bad json"],
  ["DELETE", "/api/resources/ACCOUNT/a%3A1%2Fx%7Cy"],
  ["GET", "/api/snapshot"],
];

/** The answers with lease ids blanked and resource ids numbered by first appearance. */
function normalizer() {
  const ids = new Map();
  return (text) =>
    text
      .replace(/"leaseId":"[^"]+"/g, '"leaseId":"…"')
      .replace(/"id":"([A-Za-z0-9_-]{22})"/g, (_, id) => {
        if (!ids.has(id)) ids.set(id, ids.size);
        return `"id":"#${ids.get(id)}"`;
      });
}
const HEADERS = ["content-type", "retry-after", "allow", "www-authenticate"];

/** The fetch/Request init of one SCRIPT step (JSON unless the body is already text). */
function requestInit(method, body) {
  if (body === undefined) return { method };
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return { method, body: text, headers: { "content-type": "application/json" } };
}

async function viaWeb() {
  const dir = await tempDir("web");
  const pool = await openPool({ dir, now: () => T0, seed: 7, checkpointMs: 0, handleSignals: false, onError: () => {} });
  try {
    const handle = await createHandler(pool);
    const normalize = normalizer();
    const out = [];
    for (const [method, path, body] of SCRIPT) {
      const init = requestInit(method, body);
      const res = await handle(new Request(`http://127.0.0.1:8787${path}`, init));
      assert.ok(res instanceof Response);
      out.push([res.status, HEADERS.map((h) => res.headers.get(h)), normalize(await res.text())]);
    }
    return out;
  } finally {
    await pool.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function viaNode() {
  const s = await startServer({});
  try {
    const normalize = normalizer();
    const out = [];
    for (const [method, path, body] of SCRIPT) {
      const init = requestInit(method, body);
      const res = await fetch(s.url + path, init);
      out.push([res.status, HEADERS.map((h) => res.headers.get(h)), normalize(await res.text())]);
    }
    return out;
  } finally {
    await s.close();
  }
}

test("a web Request/Response and the Node server get the same answers to the same script", async () => {
  const [web, node] = [await viaWeb(), await viaNode()];
  assert.equal(web.length, SCRIPT.length);
  for (let i = 0; i < SCRIPT.length; i++) assert.deepEqual(web[i], node[i], `${SCRIPT[i][0]} ${SCRIPT[i][1]}`);
  // The script covers successes, a refusal with Retry-After, 404/405/400 problems and a snapshot.
  const statuses = new Set(web.map(([s]) => s));
  for (const s of [200, 201, 204, 400, 404, 405, 409]) assert.ok(statuses.has(s), `status ${s} exercised`);
});

test("the web handler streams events as a Response whose body is an event stream", async () => {
  const dir = await tempDir("web-sse");
  const pool = await openPool({ dir, now: () => T0, seed: 7, checkpointMs: 0, handleSignals: false, onError: () => {} });
  const abort = new AbortController();
  try {
    const handle = await createHandler(pool);
    await pool.register("PROXY", "p1");
    const res = await handle(new Request("http://127.0.0.1:8787/api/events/stream?after=0", { signal: abort.signal }));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const reader = res.body.getReader();
    let text = "";
    while (!/\nid: 1\n/.test(`\n${text}`)) text += new TextDecoder().decode((await reader.read()).value);
    assert.match(text, /^: connected\n\n/);
    assert.match(text, /id: 1\nevent: \w+\ndata: \{/);
    await reader.cancel();
  } finally {
    abort.abort();
    await pool.close();
    await rm(dir, { recursive: true, force: true });
  }
});
