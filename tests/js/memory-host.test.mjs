// MemoryHost (pkg-scripts/lib/host/memory-host.js): the handler's host contract in memory, with
// no file system. Served by the same handler as the Node server: register, lease, report, block,
// events, metrics, export and import, through web Requests; no folder is made.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "../../pkg-scripts/node.js";
import { MemoryHost } from "../../pkg-scripts/lib/host/memory-host.js";
import { createHandler } from "../../pkg-scripts/lib/http/handler.js";

const T0 = 1_700_000_000_000;

async function served(options = {}) {
  const clock = { now: T0 };
  const host = await MemoryHost.create({ Pool, now: () => clock.now, seed: 7, ...options });
  const handle = await createHandler(host);
  const call = async (method, path, body) => {
    const res = await handle(
      new Request(`http://127.0.0.1${path}`, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      }),
    );
    const text = await res.text();
    return { status: res.status, text, json: text && res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : undefined };
  };
  return { host, call, clock };
}

test("the handler serves a MemoryHost: register, lease, report, block, events, metrics", async () => {
  const { host, call } = await served();
  assert.equal((await call("POST", "/api/resources", { kind: "PROXY", value: "http://user:pass@a.example:8080" })).status, 201);
  assert.equal((await call("POST", "/api/resources", { kind: "PROXY", value: "http://user:pass@a.example:8080" })).status, 200);
  const lease = await call("POST", "/api/leases", { context: "shop" });
  assert.equal(lease.status, 201);
  assert.equal(lease.json.token, 1);
  assert.equal((await call("POST", "/api/outcomes", { kind: "PROXY", value: "http://user:pass@a.example:8080", context: "shop", outcome: { ok: false, failure: "BLOCKED" } })).status, 204);
  assert.equal((await call("DELETE", `/api/leases/${lease.json.leaseId}`)).status, 204);
  assert.equal((await call("POST", `/api/resources/${host.resourceId("PROXY", "http://user:pass@a.example:8080")}/block?permanent=true`)).status, 204);
  assert.equal((await call("POST", "/api/leases", { context: "shop" })).status, 409);
  const events = await call("GET", "/api/events?limit=2");
  assert.deepEqual(events.json.events.map((e) => e.type), ["RESOURCE_REGISTERED", "RESOURCE_LEASED"]);
  assert.equal(events.json.next, 2);
  assert.equal(events.json.events[0].value, "http://user:***@a.example:8080", "values are masked in events");
  const all = await call("GET", "/api/events?after=2");
  assert.deepEqual(all.json.events.map((e) => e.type), ["LEASE_RELEASED", "RESOURCE_BLOCKLISTED", "ACQUISITION_REJECTED"]);
  const metrics = await call("GET", "/metrics");
  assert.match(metrics.text, /^repute_events_total\{type="RESOURCE_BLOCKLISTED"\} 1$/m);
  assert.match(metrics.text, /^repute_acquisitions_total\{context="shop",result="rejected"\} 1$/m);
  assert.match(metrics.text, /^repute_http_request_duration_seconds_count\{route="register",method="POST",status="201"\} 1$/m);
  assert.equal((await call("GET", "/api/stats")).json.blocked, 1);
  host.close();
});

test("a MemoryHost imports a snapshot: never a lower revision, tokens continue above the live pool's", async () => {
  const a = await served();
  await a.call("POST", "/api/resources", { kind: "PROXY", value: "x:1" });
  for (let i = 0; i < 3; i++) {
    const l = await a.call("POST", "/api/leases", { context: "c" });
    await a.call("DELETE", `/api/leases/${l.json.leaseId}`);
  }
  const exported = await a.call("GET", "/api/snapshot");
  const b = await served();
  for (let i = 0; i < 12; i++) await b.call("POST", "/api/resources", { kind: "ACCOUNT", value: `acct-${i}` });
  const refused = await b.call("PUT", "/api/snapshot", exported.text);
  assert.equal(refused.status, 409, "revision 7 is below the live pool's 12");
  assert.equal(refused.json.type, "urn:repute:problem:stale-snapshot");
  assert.equal((await b.call("GET", "/api/stats")).json.registered, 12, "and nothing changed");
  const c = await served();
  assert.equal((await c.call("PUT", "/api/snapshot", exported.text)).status, 204);
  assert.equal((await c.call("GET", "/api/snapshot")).json.registered.length, 1);
  const l = await c.call("POST", "/api/leases", { context: "c" });
  assert.equal(l.json.token, 4, "the imported pool's tokens continue");
  assert.equal((await c.call("PUT", "/api/snapshot", "{}")).status, 400);
  for (const s of [a, b, c]) s.host.close();
});

test("the host core's in-process consumers on a MemoryHost: on, addEventListener, events() and disposable leases, as on openPool's host", async () => {
  const errors = [];
  const host = await MemoryHost.create({ Pool, now: () => T0, seed: 7, onError: (e) => errors.push(e.message) });
  const registered = [];
  const stop = host.on("RESOURCE_REGISTERED", (e) => registered.push(e.value));
  host.addEventListener("event", () => {
    throw new Error("a listener's bug");
  });
  const stream = host.events({ after: 0 })[Symbol.asyncIterator]();
  await host.register("PROXY", "p1");
  assert.deepEqual(registered, ["p1"]);
  assert.ok(errors.includes("a listener's bug"), `the throwing listener is reported: ${errors}`);
  stop();
  await host.register("PROXY", "p2");
  assert.deepEqual(registered, ["p1"], "the disposer stops delivery");
  const first = await stream.next();
  const second = await stream.next();
  assert.deepEqual([first.value.type, first.value.value, second.value.value], ["RESOURCE_REGISTERED", "p1", "p2"], "replayed from the event log in seq order");
  const lease = host.acquire("shop");
  assert.equal(host.stats().leased, 1, `leased ${lease.value}`);
  lease[Symbol.dispose](); // what `using` calls at the end of its block
  assert.equal(host.stats().leased, 0, "disposing released the lease");
  host.close();
  assert.equal((await stream.next()).done, true, "closing the host ends the iterator");
});
