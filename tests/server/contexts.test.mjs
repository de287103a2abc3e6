// `GET /api/contexts` (per-site health, lib/host/context-health.js) over real HTTP, on the Node
// server and (tests/edge/contexts.test.mjs) the edge worker: per context the cells by state,
// held, failing (last outcome failed or score below zero, whatever the state — one BLOCKED
// leaves a cell HEALTHY at a negative score) with each cause and the dominant one, the rolling
// window's successes, failures, success rate, granted and rejected acquires and p95 latency,
// and the failing cells by id; the counts equal what `GET /api/resources` shows. A viewer may
// read it, a worker may not; it takes no query parameters.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, call, assertProblem } from "./_http-support.mjs";

const TOKENS = { worker: "wkr-ctx-7Hq2xV9mZpL4nB8c", operator: "opr-ctx-3Kd8sF6jWq0eUu5i", viewer: "vwr-ctx-9Lm4cX1bNv7zQh6g" };
const P = ["p1.example:8080", "p2.example:8080", "p3.example:8080"];

let s;
const as = (role, method, p, options = {}) => call(s.url, method, p, { ...options, token: TOKENS[role] });
const report = (value, context, outcome) => as("worker", "POST", "/api/outcomes", { body: { kind: "PROXY", value, context, outcome } });

before(async () => {
  s = await startServer({ tokens: Object.entries(TOKENS).map(([role, token]) => ({ token, role })) });
  for (const v of P) assert.equal((await as("worker", "POST", "/api/resources", { body: { kind: "PROXY", value: v } })).status, 201);
  // shop: p1 blocked once (HEALTHY, score below zero: failing), p2 and p3 fine.
  assert.equal((await report(P[0], "shop", { ok: false, failure: "BLOCKED", latencyMs: 50 })).status, 204);
  assert.equal((await report(P[1], "shop", { ok: true, latencyMs: 100 })).status, 204);
  assert.equal((await report(P[2], "shop", { ok: true, latencyMs: 200 })).status, 204);
  // search: p2 times out twice (COOLING, TIMEOUT).
  await report(P[1], "search", { ok: false, failure: "TIMEOUT" });
  await report(P[1], "search", { ok: false, failure: "TIMEOUT" });
  // rush: three leases granted (one per resource), the fourth rejected.
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push((await as("worker", "POST", "/api/leases", { body: { context: "rush" } })).status);
  assert.deepEqual(statuses, [201, 201, 201, 409]);
});
after(async () => {
  await s?.close();
});

test("GET /api/contexts: per context the cells, the failing ones and why, and the window's counters", async () => {
  const r = await as("viewer", "GET", "/api/contexts");
  assert.equal(r.status, 200, r.text);
  const body = r.json;
  assert.equal(body.windowMs, 300000);
  assert.equal(body.bucketMs, 10000);
  assert.deepEqual(body.contexts.map((c) => c.context), ["rush", "search", "shop"]);
  const [rush, search, shop] = body.contexts;
  const pick = ({ context, cells, states, held, failing, causes, cause, succeeded, failed, successRate, granted, rejected, p95LatencyMs }) =>
    ({ context, cells, states, held, failing, causes, cause, succeeded, failed, successRate, granted, rejected, p95LatencyMs });
  assert.deepEqual(pick(shop), {
    context: "shop", cells: 3, states: { HEALTHY: 3, COOLING: 0, RECOVERING: 0, BLOCKLISTED: 0 }, held: 0,
    failing: 1, causes: { BLOCKED: 1 }, cause: "BLOCKED", succeeded: 2, failed: 1, successRate: 2 / 3, granted: 0, rejected: 0, p95LatencyMs: 200,
  });
  assert.deepEqual(pick(search), {
    context: "search", cells: 1, states: { HEALTHY: 0, COOLING: 1, RECOVERING: 0, BLOCKLISTED: 0 }, held: 0,
    failing: 1, causes: { TIMEOUT: 1 }, cause: "TIMEOUT", succeeded: 0, failed: 2, successRate: 0, granted: 0, rejected: 0, p95LatencyMs: null,
  });
  // No cell in rush (nothing reported there), but its acquires are counted.
  assert.deepEqual(pick(rush), {
    context: "rush", cells: 0, states: { HEALTHY: 0, COOLING: 0, RECOVERING: 0, BLOCKLISTED: 0 }, held: 0,
    failing: 0, causes: {}, cause: null, succeeded: 0, failed: 0, successRate: null, granted: 3, rejected: 1, p95LatencyMs: null,
  });
  // The series: 30 buckets of 10 s, the last holding what was just counted.
  assert.equal(shop.series.length, 30);
  assert.equal(shop.series.reduce((n, b) => n + b.succeeded, 0), 2);
  assert.equal(rush.series.reduce((n, b) => n + b.rejected, 0), 1);
  assert.ok(shop.series.every((b, i) => i === 0 || b.at - shop.series[i - 1].at === 10000));

  // The failing cells, by id, equal the API's cells with a failed last outcome or a negative score.
  const resources = (await as("viewer", "GET", "/api/resources")).json.resources;
  const failingInApi = resources.flatMap((res) => res.cells.filter((c) => c.consecutiveFailures > 0 || c.score < 0).map((c) => ({ id: res.id, context: c.context, state: c.state })));
  assert.deepEqual(
    body.failingCells.map(({ id, context }) => `${id} ${context}`).sort(),
    failingInApi.map(({ id, context }) => `${id} ${context}`).sort(),
  );
  assert.equal(body.failingCellsTruncated, false);
  const shopCell = failingInApi.find((c) => c.context === "shop");
  assert.equal(shopCell.state, "HEALTHY", "failing whatever its state: one BLOCKED leaves it HEALTHY");
  assert.equal(body.failingCells.find((c) => c.context === "shop").cause, "BLOCKED");
  for (const c of body.contexts) {
    const cells = resources.flatMap((res) => res.cells.filter((x) => x.context === c.context));
    assert.equal(c.cells, cells.length, c.context);
    assert.equal(c.states.COOLING, cells.filter((x) => x.state === "COOLING").length, c.context);
  }
});

test("GET /api/contexts: a viewer and an operator may read it, a worker may not; no query parameters", async () => {
  assert.equal((await as("operator", "GET", "/api/contexts")).status, 200);
  assertProblem(await as("worker", "GET", "/api/contexts"), 403, "forbidden");
  assertProblem(await call(s.url, "GET", "/api/contexts"), 401, "unauthorized");
  assertProblem(await as("viewer", "GET", "/api/contexts?context=shop"), 400, "bad-request");
});
