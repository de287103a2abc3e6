// The rolling per-context counters behind `GET /api/contexts` (lib/host/context-health.js), on a
// clock the test moves: buckets older than the window leave it (and a slot reused by a newer
// bucket starts empty), the p95 skips latencies older than the window, and past MAX_CONTEXTS
// distinct contexts the rest count together as "_other" — memory stays bounded whatever
// workers send.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ContextHealth, BUCKET_MS, BUCKETS, MAX_CONTEXTS } from "../../pkg-scripts/lib/host/context-health.js";

const T0 = 1_700_000_000_000;
const view = (h) => h.view([], { windowOf: () => null, idOf: () => "id" });
const one = (h, name) => view(h).contexts.find((c) => c.context === name);

test("counts leave the window as time passes; a reused slot starts empty", () => {
  const clock = { now: T0 };
  const h = new ContextHealth(() => clock.now);
  h.reported("shop", { ok: true, latencyMs: 100 });
  h.reported("shop", { ok: false, failure: "BLOCKED", latencyMs: 900 });
  h.acquired("shop", null);
  assert.deepEqual(pick(one(h, "shop")), { succeeded: 1, failed: 1, successRate: 0.5, rejected: 1, p95LatencyMs: 900 });
  clock.now += (BUCKETS - 1) * BUCKET_MS; // still inside: the first bucket is the window's oldest
  assert.equal(one(h, "shop").succeeded, 1);
  clock.now += BUCKET_MS; // the first bucket has left the window
  assert.deepEqual(pick(one(h, "shop")), { succeeded: 0, failed: 0, successRate: null, rejected: 0, p95LatencyMs: null });
  h.reported("shop", { ok: true }); // lands in the slot the first bucket used
  assert.deepEqual(pick(one(h, "shop")), { succeeded: 1, failed: 0, successRate: 1, rejected: 0, p95LatencyMs: null });
  assert.equal(one(h, "shop").series.length, BUCKETS);
});

test(`past ${MAX_CONTEXTS} contexts the rest count as _other`, () => {
  const h = new ContextHealth(() => T0);
  for (let i = 0; i < MAX_CONTEXTS + 50; i++) h.reported(`site-${i}`, { ok: true });
  const names = view(h).contexts.map((c) => c.context);
  assert.equal(names.length, MAX_CONTEXTS + 1);
  assert.equal(one(h, "_other").succeeded, 50);
  assert.ok(!names.includes(`site-${MAX_CONTEXTS}`));
});

function pick({ succeeded, failed, successRate, rejected, p95LatencyMs }) {
  return { succeeded, failed, successRate, rejected, p95LatencyMs };
}
