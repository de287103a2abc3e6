// The outcome log (lib/node/outcome-log.js) that the console's Replay reads: with
// `recordOutcomes` (`repute serve --record-outcomes`) every applied report is recorded, its value
// masked by the engine's rule and named by its resource id, as events are, and served by GET
// /api/outcomes; engine
// event seqs and the existing API answers are the same whether it records or not; without it
// the route says so; its numbering continues across a restart.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { Pool, openPool } from "repute";
import { withServer, call, assertProblem, spawnServe, tempDir, T0 } from "./_http-support.mjs";

const SECRET = "s3cr3t-pa55";
const PROXY = `http://alice:${SECRET}@proxy-1.example.net:8080`;

/** The same traffic on a server: two resources, four acquires and reports (three failures: of
 * two resources one fails twice in a row and cools). */
async function traffic(s) {
  await call(s.url, "POST", "/api/resources", { body: { kind: "PROXY", value: PROXY } });
  await call(s.url, "POST", "/api/resources", { body: { kind: "ACCOUNT", value: "acct-7" } });
  const reports = [];
  for (let i = 0; i < 4; i++) {
    s.clock.now += 1000;
    const lease = (await call(s.url, "POST", "/api/leases", { body: { context: "shop-us" } })).json;
    const outcome = i < 3 ? { ok: false, failure: "TIMEOUT", latencyMs: 10000 } : { ok: true, latencyMs: 120 };
    s.clock.now += 5;
    const r = await call(s.url, "POST", "/api/outcomes", { body: { kind: lease.kind, value: lease.value, context: "shop-us", outcome } });
    assert.equal(r.status, 204);
    reports.push({ kind: lease.kind, value: lease.value, outcome, at: s.clock.now });
    await call(s.url, "DELETE", `/api/leases/${lease.leaseId}`);
  }
  return reports;
}

async function filesUnder(dir) {
  const out = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.join(e.parentPath ?? e.path, e.name));
  }
  return out;
}

test("every applied report is recorded, masked and named by id as the events are, and served by GET /api/outcomes", async () => {
  await withServer({ poolOptions: { recordOutcomes: true } }, async (s) => {
    const reports = await traffic(s);
    const page = await call(s.url, "GET", "/api/outcomes?limit=1000");
    assert.equal(page.status, 200);
    assert.equal(page.json.next, null);
    const ids = new Map((await call(s.url, "GET", "/api/resources")).json.resources.map((r) => [`${r.kind} ${r.value}`, r.id]));
    assert.deepEqual(page.json.outcomes, reports.map((r, i) => ({
      seq: i + 1, at: r.at, kind: r.kind, value: Pool.maskValue(r.kind, r.value), id: ids.get(`${r.kind} ${r.value}`),
      context: "shop-us", outcome: r.outcome,
    })));
    // The records name a resource as the engine's events do, so a replay can join them.
    const events = (await call(s.url, "GET", "/api/events?limit=1000")).json.events;
    const leased = events.filter((e) => e.type === "RESOURCE_LEASED");
    assert.deepEqual(page.json.outcomes.map((o) => [o.value, o.id]), leased.map((e) => [e.value, e.id]));
    assert.ok(!page.text.includes(SECRET));
    // Paging by the log's own seq.
    const second = await call(s.url, "GET", "/api/outcomes?after=1&limit=2");
    assert.deepEqual(second.json.outcomes.map((o) => o.seq), [2, 3]);
    assert.equal(second.json.next, 3);
    // A refused report is not recorded.
    const bad = await call(s.url, "POST", "/api/outcomes", { body: { kind: "PROXY", value: "nobody", context: "shop-us", outcome: { ok: true } } });
    assert.equal(bad.status, 404);
    assert.equal((await call(s.url, "GET", "/api/outcomes?limit=1000")).json.outcomes.length, 4);
    // No credential on disk in the outcome log.
    await s.pool.close();
    const files = await filesUnder(path.join(s.dir, "outcomes"));
    assert.ok(files.length > 0);
    for (const f of files) assert.ok(!(await readFile(f, "utf8")).includes(SECRET), f);
  });
});

test("recording outcomes changes no event seq and no existing answer", async () => {
  const answers = async (options) =>
    withServer(options, async (s) => {
      await traffic(s);
      const get = async (p) => (await call(s.url, "GET", p)).json;
      return { events: await get("/api/events?limit=1000"), resources: await get("/api/resources"), config: await get("/api/config") };
    });
  // Resource ids are keyed per data folder, and each server has its own: compared without them.
  const withoutIds = (x) => JSON.parse(JSON.stringify(x, (k, v) => (k === "id" ? undefined : v)));
  const plain = withoutIds(await answers({}));
  const recording = withoutIds(await answers({ poolOptions: { recordOutcomes: true } }));
  assert.ok(plain.events.events.some((e) => e.type === "RESOURCE_COOLED"), "the traffic reaches a cooldown");
  assert.deepEqual(recording, plain);
});

test("without recordOutcomes GET /api/outcomes says the pool does not record them", async () => {
  await withServer({}, async (s) => {
    await traffic(s);
    const r = await call(s.url, "GET", "/api/outcomes");
    assertProblem(r, 404, "outcomes-not-recorded");
    assert.match(r.json.detail, /--record-outcomes/);
    assertProblem(await call(s.url, "GET", "/api/outcomes?limit=0"), 400, "bad-request");
  });
});

test("the outcome log's numbering continues after a restart", async () => {
  const dir = await tempDir("outcomes");
  try {
    const open = () => openPool({ dir, now: () => T0, seed: 1, checkpointMs: 0, handleSignals: false, recordOutcomes: true });
    let pool = await open();
    await pool.register("PROXY", "p");
    pool.report("PROXY", "p", "c", { ok: true });
    await pool.close();
    pool = await open();
    pool.report("PROXY", "p", "c", { ok: false, failure: "BLOCKED" });
    const { outcomes } = await pool.readOutcomes({ after: 0, limit: 10 });
    assert.deepEqual(outcomes.map((o) => [o.seq, o.outcome.ok]), [[1, true], [2, false]]);
    await pool.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("repute serve --record-outcomes records and serves outcomes", async () => {
  const dir = await tempDir("cli-outcomes");
  const p = spawnServe(["--data", dir, "--port", "0", "--record-outcomes"]);
  try {
    const url = await p.ready;
    await call(url, "POST", "/api/resources", { body: { kind: "SESSION", value: "s-1" } });
    await call(url, "POST", "/api/outcomes", { body: { kind: "SESSION", value: "s-1", context: "c", outcome: { ok: true } } });
    const r = await call(url, "GET", "/api/outcomes");
    assert.equal(r.status, 200);
    // A SESSION value is always shown as *** (the engine's rule), its id tells it apart.
    assert.deepEqual(r.json.outcomes.map((o) => [o.value, o.outcome]), [["***", { ok: true }]]);
    assert.equal(typeof r.json.outcomes[0].id, "string");
  } finally {
    p.child.kill("SIGTERM");
    await p.exited;
    await rm(dir, { recursive: true, force: true });
  }
});
