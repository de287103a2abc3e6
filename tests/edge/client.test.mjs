// `repute/client` against the edge worker in workerd (Miniflare): the same client as against
// `repute serve`, through a region's path prefix (`/regions/<name>`, kept from the URL) —
// register, acquire with its leaseId, renew, an exhausted acquire's Retry-After, report,
// release, finish and acquireWait, the views, the error codes, and the live events resuming
// from a seq. The README says the client speaks to either.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { connectPool } from "repute/client";
import { disposeWorkers } from "./_edge-support.mjs";
import { within } from "../client/_support.mjs";

process.env.REPUTE_HTTP_TARGET = "edge";
const { startServer } = await import("../server/_http-support.mjs");
after(disposeWorkers);

test("the pool client over an edge region: the worker's methods, codes and events", async () => {
  const server = await startServer({ tokens: [{ token: "operator-token-edge-19af", role: "operator" }], config: { leaseTtlMs: 30_000 } });
  assert.match(server.url, /\/regions\//);
  const client = connectPool({ url: server.url, token: "operator-token-edge-19af" });
  const controller = new AbortController();
  try {
    assert.equal(await client.register("PROXY", "http://u:pw@10.0.0.1:3128", { group: "dc" }), true);
    const lease = await client.acquire("shop", { groups: ["dc"] });
    assert.equal(lease.value, "http://u:pw@10.0.0.1:3128");
    assert.equal(typeof lease.leaseId, "string");
    assert.equal((await client.renew(lease)).token, lease.token);
    assert.deepEqual(await client.tryAcquire("shop", { groups: ["dc"] }), { lease: null, retryAfterMs: 30_000 });
    await client.report(lease.kind, lease.value, "shop", { ok: false, failure: "BLOCKED", latencyMs: 5 });
    assert.equal(await client.release(lease), true);
    assert.equal(await client.release(lease), false);
    const [view] = await client.resources({ context: "shop" });
    assert.deepEqual([view.group, view.cells[0].consecutiveFailures], ["dc", 1]);
    await assert.rejects(client.report("PROXY", "nobody", "shop", { ok: true }), (e) => e.code === "UNKNOWN_RESOURCE" && e.status === 404);
    await assert.rejects(client.register("PROXY", " "), { code: "INVALID_ARGUMENT" });
    const iterator = client.events({ after: 0, signal: controller.signal });
    const first = await within(iterator.next(), 10_000, "the first event");
    assert.equal(first.value.seq, 1);
    assert.equal(first.value.type, "RESOURCE_REGISTERED");
    assert.equal(first.value.value, "http://u:***@10.0.0.1:3128", "values in events are masked");
    controller.abort();
    await iterator.return();
  } finally {
    controller.abort();
    await client.close();
    await server.close();
  }
});

test("the pool client's finish and acquireWait over an edge region", async () => {
  const server = await startServer({ tokens: [{ token: "operator-token-edge-19af", role: "operator" }], config: { leaseTtlMs: 30_000 } });
  const client = connectPool({ url: server.url, token: "operator-token-edge-19af" });
  try {
    await client.register("PROXY", "http://u:pw@10.0.0.2:3128");
    const lease = await client.acquireWait("shop", { waitMs: 1_000 });
    assert.equal(lease.value, "http://u:pw@10.0.0.2:3128");
    const next = await client.finish(lease, { ok: false, failure: "TIMEOUT", latencyMs: 30 }, { next: {} });
    assert.equal(next.value, lease.value);
    assert.notEqual(next.leaseId, lease.leaseId);
    await assert.rejects(client.finish(lease, { ok: true }), (e) => e.code === "LEASE_FINISHED" && e.status === 409);
    assert.equal(await client.finish(next, { ok: true }, { next: { context: "news" } }).then((l) => l.context), "news");
    const [view] = await client.resources({ context: "shop" });
    assert.deepEqual([view.cells[0].consecutiveFailures, view.cells[0].consecutiveSuccesses], [0, 1]);
  } finally {
    await client.close();
    await server.close();
  }
});
