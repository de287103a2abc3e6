// Resource ids over HTTP (CONTRACTS.md item 1): every view and every event about a resource
// carries an opaque, URL-safe `id`, stable across restarts of one data folder and different in
// another; every route that names a resource accepts it (`/api/resources/{id}`,
// `/{id}/block`), with the same answers as the `{kind}/{value}` form; an unknown id, a
// malformed one, one from another folder or one of a removed resource is a 404. The id maker
// itself: keyed (not a plain hash of the value), and its key file is the owner's alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { openPool } from "../../pkg-scripts/lib/node/open-pool.js";
import { serve } from "../../pkg-scripts/lib/node/http-server.js";
import { ResourceIds } from "../../pkg-scripts/lib/resource-id.js";
import { assertProblem, call, resourcePath, startServer, tempDir, T0, withServer } from "./_http-support.mjs";

const VALUES = [
  ["PROXY", "proxy-c.example:8080:carol:Secret"],
  ["PROXY", "block"], // a value that is also a path word
  ["ACCOUNT", "carol:hunter2"],
  ["SESSION", "sid=abc"],
];

async function registerAll(s) {
  const ids = [];
  for (const [kind, value] of VALUES) {
    const res = await call(s.url, "POST", "/api/resources", { body: { kind, value } });
    assert.equal(res.status, 201);
    ids.push(res.json.id);
  }
  return ids;
}

const views = async (s, q = "") => (await call(s.url, "GET", `/api/resources${q}`)).json.resources;

test("ids are opaque, URL-safe, one per resource, the same in views, events and the register answer", async () => {
  await withServer({}, async (s) => {
    const ids = await registerAll(s);
    assert.equal(new Set(ids).size, VALUES.length);
    for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{22}$/);
    // Registering again answers the same id.
    assert.equal((await call(s.url, "POST", "/api/resources", { body: { kind: "PROXY", value: "block" } })).json.id, ids[1]);
    const byValue = new Map((await views(s)).map((r) => [`${r.kind} ${r.value}`, r]));
    VALUES.forEach(([kind, value], i) => assert.equal(byValue.get(`${kind} ${value}`).id, ids[i]));
    assert.deepEqual(Object.keys((await views(s))[0]).slice(0, 3), ["kind", "value", "id"]);
    const events = (await call(s.url, "GET", "/api/events")).json.events;
    assert.deepEqual(events.map((e) => e.id), ids);
    // Not a plain hash of the value (that could be searched by brute force for a short password).
    for (const [i, [kind, value]] of VALUES.entries()) {
      for (const text of [value, `${kind}\0${value}`, `repute resource id\0${kind}\0${value}`]) {
        for (const algorithm of ["sha256", "sha1", "md5"]) {
          assert.ok(!createHash(algorithm).update(text).digest("base64url").startsWith(ids[i]));
        }
      }
    }
  });
});

test("every route that names a resource takes its id, with the answers of the {kind}/{value} form", async () => {
  await withServer({}, async (s) => {
    const ids = await registerAll(s);
    const [id, blockId] = ids;
    assert.equal((await call(s.url, "POST", `/api/resources/${id}/block?seconds=60`)).status, 204);
    let [view] = (await views(s)).filter((r) => r.id === id);
    assert.deepEqual(view.blocked, { until: T0 + 60_000 });
    assert.equal((await call(s.url, "POST", `/api/resources/${id}/block?permanent=true`)).status, 204);
    [view] = (await views(s)).filter((r) => r.id === id);
    assert.deepEqual(view.blocked, { permanent: true });
    assert.deepEqual((await call(s.url, "DELETE", `/api/resources/${id}/block`)).json, { unblocked: true });
    assert.deepEqual((await call(s.url, "DELETE", `/api/resources/${id}/block`)).json, { unblocked: false });
    // Bad queries are refused as on the other form.
    assertProblem(await call(s.url, "POST", `/api/resources/${id}/block`), 400, "bad-request");
    assertProblem(await call(s.url, "DELETE", `/api/resources/${id}?x=1`), 400, "bad-request");
    // The value "block" by value, and by id: a kind first means {kind}/{value}.
    assert.equal((await call(s.url, "POST", resourcePath("PROXY", "block", "/block?seconds=5"))).status, 204);
    assert.deepEqual((await call(s.url, "DELETE", `/api/resources/${blockId}/block`)).json, { unblocked: true });
    assert.equal((await call(s.url, "DELETE", "/api/resources/PROXY/block")).status, 204, "deregisters PROXY/block");
    assert.equal((await views(s)).some((r) => r.id === blockId), false);
    // Deregister by id; then the id names nothing.
    assert.equal((await call(s.url, "DELETE", `/api/resources/${id}`)).status, 204);
    assert.equal((await views(s)).some((r) => r.id === id), false);
    for (const [method, route] of [["DELETE", `/api/resources/${id}`], ["POST", `/api/resources/${id}/block?seconds=1`], ["DELETE", `/api/resources/${id}/block`]]) {
      assertProblem(await call(s.url, method, route), 404, "unknown-resource", `${method} ${route} after deregistration`);
    }
    // Events about the resource carry its id whichever form named it.
    const events = (await call(s.url, "GET", "/api/events?limit=1000")).json.events.filter((e) => e.id === id);
    assert.deepEqual(events.map((e) => e.type), [
      "RESOURCE_REGISTERED", "RESOURCE_BLOCKLISTED", "RESOURCE_BLOCKLISTED", "RESOURCE_UNBLOCKED", "RESOURCE_DEREGISTERED",
    ]);
    // The {kind}/{value} form answers the same for the same calls.
    const value = VALUES[2][1];
    assert.equal((await call(s.url, "POST", resourcePath("ACCOUNT", value, "/block?seconds=60"))).status, 204);
    assert.deepEqual((await call(s.url, "DELETE", resourcePath("ACCOUNT", value, "/block"))).json, { unblocked: true });
  });
});

test("an unknown or malformed id is a 404 on every route, and changes nothing", async () => {
  await withServer({}, async (s) => {
    await registerAll(s);
    const before = (await call(s.url, "GET", "/api/snapshot")).text;
    for (const id of ["A".repeat(22), "x", "a.b", "A".repeat(23), "-".repeat(22)]) {
      for (const [method, route] of [["DELETE", `/api/resources/${id}`], ["POST", `/api/resources/${id}/block?seconds=1`], ["DELETE", `/api/resources/${id}/block`]]) {
        const res = await call(s.url, method, route);
        assertProblem(res, 404, "unknown-resource", `${method} ${route}`);
        assert.equal(res.json.detail, "no resource has this id");
      }
    }
    assert.equal((await call(s.url, "GET", "/api/snapshot")).text, before);
  });
});

test("ids stay the same across restarts of one folder, resolve without a view first, and not in another folder", async () => {
  const dir = await tempDir("ids");
  const open = () => openPool({ dir, now: () => T0, seed: 7, checkpointMs: 0, handleSignals: false, onError: () => {} });
  try {
    let pool = await open();
    let server = await serve(pool, { host: "127.0.0.1", port: 0 });
    const ids = await registerAll(server);
    await server.close();
    await pool.close();
    const key = path.join(dir, "resource-id.key");
    assert.equal((await stat(key)).mode & 0o777, 0o600);
    assert.equal((await readFile(key)).length, 32);

    pool = await open();
    server = await serve(pool, { host: "127.0.0.1", port: 0 });
    // Straight to a route by id: resolved from the pool, no view needed first.
    assert.equal((await call(server.url, "POST", `/api/resources/${ids[3]}/block?permanent=true`)).status, 204);
    assert.deepEqual((await views(server)).map((r) => r.id).sort(), [...ids].sort());
    await server.close();
    await pool.close();

    // Another folder with the same resources: other ids, and these do not resolve there.
    await withServer({}, async (other) => {
      const otherIds = await registerAll(other);
      for (const [i, id] of ids.entries()) {
        assert.notEqual(otherIds[i], id);
        assertProblem(await call(other.url, "DELETE", `/api/resources/${id}/block`), 404, "unknown-resource");
      }
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a damaged key file stops start-up naming the file, without quoting it; a key left readable is narrowed", async () => {
  const dir = await tempDir("ids-key");
  const open = () => openPool({ dir, now: () => T0, seed: 7, checkpointMs: 0, handleSignals: false, onError: () => {} });
  try {
    const pool = await open();
    await pool.close();
    const key = path.join(dir, "resource-id.key");
    const bytes = await readFile(key);
    await writeFile(key, "hunter2", { mode: 0o644 });
    await assert.rejects(open(), (e) => e.code === "KEY_DAMAGED" && e.message.includes(key) && !e.message.includes("hunter2"));
    await writeFile(key, bytes);
    const { chmod } = await import("node:fs/promises");
    await chmod(key, 0o644);
    const again = await open();
    assert.equal((await stat(key)).mode & 0o777, 0o600);
    await again.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a viewer sees masked values in views and leases; an operator's views are the values; a worker reads no view, its lease holds the value", async () => {
  const tokens = [
    { token: "viewer-token-0123456789", role: "viewer" },
    { token: "operator-token-012345678", role: "operator" },
    { token: "worker-token-0123456789", role: "worker" },
  ];
  const s = await startServer({ tokens });
  try {
    const [viewer, operator, worker] = tokens.map((t) => t.token);
    for (const [kind, value] of VALUES) {
      assert.equal((await call(s.url, "POST", "/api/resources", { token: worker, body: { kind, value } })).status, 201);
    }
    const lease = (await call(s.url, "POST", "/api/leases", { token: worker, body: { context: "c" } })).json;
    const asViewer = (await call(s.url, "GET", "/api/resources", { token: viewer })).json.resources;
    const asOperator = (await call(s.url, "GET", "/api/resources", { token: operator })).json.resources;
    assert.deepEqual(asOperator.map((r) => r.value).sort(), VALUES.map(([, v]) => v).sort());
    assert.deepEqual(asViewer.map((r) => r.value).sort(), ["***", "block", "carol:***", "proxy-c.example:8080:carol:***"]);
    assert.deepEqual(asViewer.map((r) => r.id), asOperator.map((r) => r.id));
    const leased = asViewer.find((r) => r.lease);
    assert.equal(leased.lease.token, lease.token);
    assert.equal(leased.lease.value, leased.value, "the lease in a viewer's view is masked too");
    assert.deepEqual(leased.leases.map((l) => [l.token, l.value]), [[lease.token, leased.value]], "and every lease of `leases`");
    assert.ok(!JSON.stringify(asViewer).match(/Secret|hunter2|abc/));
    assert.ok(VALUES.some(([k, v]) => k === lease.kind && v === lease.value), "a worker's lease holds the value as it is");
    for (const p of ["/api/resources", resourcePath(lease.kind, lease.value)]) {
      assertProblem(await call(s.url, "GET", p, { token: worker }), 403, "forbidden", `a worker's GET ${p}`);
    }
    // The README says who sees values as they are: each role it names does, on the dashboard.
    const readme = await readFile(new URL("../../README.md", import.meta.url), "utf8");
    const claim = /\(([^()]*?) see them as they are/.exec(readme.replace(/\s+/g, " "));
    assert.ok(claim, "the README says who sees values as they are");
    const named = ["viewer", "operator", "worker"].filter((role) => new RegExp(`\\b${role}s?\\b`).test(claim[1]));
    assert.ok(named.length > 0, claim[1]);
    for (const role of named) {
      const res = await call(s.url, "GET", "/api/resources", { token: tokens.find((t) => t.role === role).token });
      assert.equal(res.status, 200, `the README says ${role}s see values as they are: ${res.text}`);
      assert.deepEqual(res.json.resources.map((r) => r.value).sort(), VALUES.map(([, v]) => v).sort(), role);
    }
  } finally {
    await s.close();
  }
});

test("the id maker: keyed, deterministic for one key, remembers what it made, finds the rest by scanning", async () => {
  const key = new Uint8Array(32).fill(7);
  const a = await ResourceIds.create(key);
  const b = await ResourceIds.create(key);
  const c = await ResourceIds.create(new Uint8Array(32).fill(8));
  assert.equal(a.of("PROXY", "p1"), b.of("PROXY", "p1"));
  assert.notEqual(a.of("PROXY", "p1"), c.of("PROXY", "p1"));
  assert.notEqual(a.of("PROXY", "p1"), a.of("ACCOUNT", "p1"));
  assert.deepEqual(a.find(a.of("SESSION", "s"), () => []), { kind: "SESSION", value: "s" });
  const fresh = await ResourceIds.create(key);
  let scanned = 0;
  const candidates = () => [{ kind: "PROXY", value: "x" }, { kind: "PROXY", value: "p1" }].map((r) => (scanned++, r));
  assert.deepEqual(fresh.find(a.of("PROXY", "p1"), candidates), { kind: "PROXY", value: "p1" });
  assert.equal(scanned, 2);
  assert.equal(fresh.find(c.of("PROXY", "p1"), candidates), null);
  assert.equal(fresh.find("not an id", () => assert.fail("no scan for a malformed id")), null);
  await assert.rejects(ResourceIds.create(new Uint8Array(8)), TypeError);
});
