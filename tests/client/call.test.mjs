// The resilient-call layer over a remote pool: `client.call(…)` against a real pool server on
// 127.0.0.1 runs the same loop as `host.call(…)` on the embedded host behind that server (one
// implementation, lib/call/call.js, over the pool port), and gives the same answers — a refused
// proxy reported BLOCKED and the call retried on another, every lease released; POOL_EXHAUSTED
// with `retryAfterMs` from the server's Retry-After; a renewal the server refuses (the resource
// was blocked) aborts the attempt; the caller's abort returns the lease.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { connectPool } from "repute/client";
import { RetryBudget } from "../../pkg-scripts/lib/call/budget.js";
import { startServer } from "../server/_http-support.mjs";
import { within } from "./_support.mjs";

let server;
let client;

before(async () => {
  server = await startServer({ config: { leaseTtlMs: 1000 } });
  client = connectPool({ url: server.url });
});
after(async () => {
  await client?.close();
  await server?.close();
});

const answer = (status, headers = {}) => ({ status, headers: new Headers(headers) });
// A budget of each call's own: the process-wide one would carry what other calls spent.
const fresh = (options = {}) => ({ budget: new RetryBudget(), random: () => 0, ...options });

/** The cell of `value` in `context`, as the server shows it. */
const cellOf = async (value, context) => (await client.resource("PROXY", value)).cells.find((c) => c.context === context) ?? null;

test("the same call over the embedded host and over the client: a 403 is reported BLOCKED, the call moves on, every lease comes back", async () => {
  await client.register("PROXY", "p1", { group: "cheap" });
  await client.register("PROXY", "p2", { group: "backup" });
  const runs = {};
  for (const [name, pool, context] of [["embedded", server.pool, "shop-embedded"], ["client", client, "shop-client"]]) {
    const used = [];
    const result = await pool.call(context, async ({ lease }) => {
      used.push({ value: lease.value, leaseId: lease.leaseId });
      return lease.value === "p1" ? answer(403) : { ...answer(200), via: lease.value };
    }, fresh({ readOnly: true, groups: ["cheap", "backup"] }));
    runs[name] = { via: result.via, used: used.map((u) => u.value), cells: [await cellOf("p1", context), await cellOf("p2", context)] };
    // Over the client, the attempt's lease is the server's, with its leaseId.
    for (const u of used) assert.equal(typeof u.leaseId, name === "client" ? "string" : "undefined", name);
  }
  assert.deepEqual(runs.client.used, ["p1", "p2"]);
  assert.equal(runs.client.via, "p2");
  assert.deepEqual(
    runs.client.cells.map((c) => [c.consecutiveFailures, c.consecutiveSuccesses]),
    [[1, 0], [0, 1]],
    "p1's 403 and p2's success, reported through the HTTP API",
  );
  // Latencies differ from run to run; the rest of each cell must not.
  const strip = (c) => [c.state, c.score, c.consecutiveFailures, c.consecutiveSuccesses, c.cooldownUntil, c.cooldownCause, c.window.map(([outcome]) => outcome)];
  assert.deepEqual({ ...runs.client, cells: runs.client.cells.map(strip) }, { ...runs.embedded, cells: runs.embedded.cells.map(strip) }, "the same outcome either way");
  assert.equal((await client.stats()).leased, 0, "every lease released");
});

test("nothing leasable over the client: POOL_EXHAUSTED with retryAfterMs from the server's Retry-After", async () => {
  await client.register("PROXY", "solo", { group: "solo" });
  const held = await client.acquire("search", { groups: ["solo"] });
  try {
    let ran = false;
    const e = await client.call("search", async () => ((ran = true), answer(200)), fresh({ groups: ["solo"] })).catch((x) => x);
    assert.equal(e.code, "POOL_EXHAUSTED", String(e));
    assert.equal(e.retryAfterMs, 1000, "the held lease ends in 1 s: Retry-After 1");
    assert.equal(ran, false);
  } finally {
    await client.release(held);
  }
});

test("a renewal the server refuses (the resource was blocked mid-attempt) aborts the attempt; the call moves on", async () => {
  const seen = [];
  const result = await within(client.call("renew", async ({ lease, signal }) => {
    seen.push({ value: lease.value, signal });
    if (seen.length === 1) {
      await client.block("PROXY", lease.value, { seconds: 60 });
      // Held past the half-TTL renewal (500 ms), which the server refuses: aborted.
      return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    }
    return { ...answer(200), via: lease.value };
  }, fresh({ readOnly: true, groups: ["cheap", "backup"], attemptTimeoutMs: 10_000, deadlineMs: 20_000 })), 15_000, "the call");
  assert.equal(seen.length, 2);
  assert.equal(seen[0].signal.reason?.stopReason, "lease-lost");
  assert.notEqual(result.via, seen[0].value);
  await client.unblock("PROXY", seen[0].value);
  assert.equal((await client.stats()).leased, 0);
});

test("the caller's abort over the client: ABORTED, the lease back on the server, nothing reported", async () => {
  const controller = new AbortController();
  let leased = null;
  const pending = client.call("abort", ({ lease, signal }) => {
    leased = lease;
    setImmediate(() => controller.abort()); // once the call waits on its fn
    return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
  }, fresh({ readOnly: true, signal: controller.signal, groups: ["cheap", "backup"] }));
  const e = await within(pending.catch((x) => x), 10_000, "the abort");
  assert.equal(e.code, "ABORTED");
  assert.ok(leased);
  assert.equal((await client.stats()).leased, 0, "released");
  assert.equal(await cellOf(leased.value, "abort"), null, "nothing reported");
});
