// Replay (www/sim/core/replay.js) on a real recorded log: a durable pool (openPool with
// recordOutcomes) serves traffic where some proxies are bad, its audit log and outcome log are
// read back, and the log is replayed through candidate policies. The totals must account for
// every recorded decision, a replay is deterministic, the files on disk read the same as the
// API's pages, and a policy without reputation is shown to do worse on this traffic.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile, rm, mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Pool, openPool } from "repute";
import { parseLog, replay, LogError } from "../../www/sim/core/replay.js";
import { plainRotation } from "../../www/sim/core/policies.js";
import { mulberry32 } from "../../pkg-scripts/lib/mulberry32.js";

const defaults = new Pool({ seed: 0 }).config();
let dir;
let log;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "repute-replay-"));
  const clock = { now: 1_700_000_000_000 };
  const pool = await openPool({ dir, now: () => clock.now, seed: 9, checkpointMs: 0, handleSignals: false, recordOutcomes: true });
  const bad = new Set(["http://u:pw@bad-1:8080", "http://u:pw@bad-2:8080", "http://u:pw@bad-3:8080"]);
  for (let i = 1; i <= 7; i++) await pool.register("PROXY", `http://u:pw@good-${i}:8080`);
  for (const v of bad) await pool.register("PROXY", v);
  const rng = mulberry32(11);
  for (let i = 0; i < 3000; i++) {
    clock.now += 400;
    const context = i % 3 === 0 ? "search-eu" : "shop-us";
    const lease = pool.acquire(context);
    if (!lease) continue;
    const fails = bad.has(lease.value) ? rng() < 0.7 : rng() < 0.03;
    clock.now += 50;
    pool.report(lease.kind, lease.value, context, fails ? { ok: false, failure: "BLOCKED", latencyMs: 50 } : { ok: true, latencyMs: 50 });
    if (i % 150 !== 0) pool.release(lease); // now and then a lease is left to expire
  }
  const events = [];
  for (let after = 0; ; ) {
    const page = await pool.readEvents({ after, limit: 1000 });
    events.push(...page.events);
    if (page.next === null) break;
    after = page.next;
  }
  const outcomes = (await pool.readOutcomes({ after: 0, limit: 1000 })).outcomes;
  for (let after = outcomes.at(-1).seq; ; ) {
    const page = await pool.readOutcomes({ after, limit: 1000 });
    outcomes.push(...page.outcomes);
    if (page.next === null) break;
    after = page.next;
  }
  await pool.close();
  log = parseLog(JSON.stringify({ events, outcomes }));
});

after(() => rm(dir, { recursive: true, force: true }));

test("a replay accounts for every recorded acquisition, outcome and cooldown", () => {
  const r = replay({ Pool, log, config: defaults, seed: 1 });
  const demand = log.events.filter((e) => e.type === "RESOURCE_LEASED" || e.type === "ACQUISITION_REJECTED").length;
  assert.equal(r.actual.acquires, demand);
  assert.equal(r.candidate.acquires, demand);
  assert.equal(Object.values(r.decisions).reduce((a, b) => a + b, 0), demand);
  assert.equal(r.unmatchedOutcomes, 0, "every outcome belongs to a recorded lease");
  assert.equal(r.actual.unknown, 0);
  assert.equal(r.actual.successes, log.outcomes.filter((o) => o.outcome.ok).length);
  assert.equal(r.actual.failures, log.outcomes.filter((o) => !o.outcome.ok).length);
  assert.equal(r.actual.cooldowns, log.events.filter((e) => e.type === "RESOURCE_COOLED").length);
  assert.equal(r.actual.rejected, log.events.filter((e) => e.type === "ACQUISITION_REJECTED").length);
  assert.ok(r.decisions.same > 0 && r.decisions.different > 0, JSON.stringify(r.decisions));
  assert.ok(r.candidate.cooldowns > 0);
  assert.equal(r.resources, 10);
  assert.ok(log.events.some((e) => e.type === "LEASE_EXPIRED"), "the log holds leases that expired");
  assert.ok(r.differences.length > 0 && r.differences.length <= 200);
  assert.ok(!JSON.stringify(r).includes(":pw@"), "values as the log shows them: masked");
  assert.deepEqual(replay({ Pool, log, config: defaults, seed: 1 }), r, "deterministic");
});

test("replayed through plain rotation, the same traffic does worse and nothing cools", () => {
  const rep = replay({ Pool, log, config: defaults, seed: 1 });
  const rot = replay({ Pool, log, config: plainRotation(defaults), seed: 1 });
  assert.equal(rot.candidate.cooldowns, 0);
  assert.ok(rot.candidate.successRate < rep.actual.successRate - 0.05, `${rot.candidate.successRate} vs ${rep.actual.successRate}`);
  assert.ok(rot.failuresAdded > rot.failuresAvoided, `${rot.failuresAdded} added, ${rot.failuresAvoided} avoided`);
  assert.ok(rot.candidate.estimated > 0);
});

test("the audit and outcome files on disk replay exactly as the API's pages", async () => {
  const lines = [];
  for (const sub of ["audit", "outcomes/audit"]) {
    for (const f of (await readdir(path.join(dir, sub))).sort()) lines.push(await readFile(path.join(dir, sub, f), "utf8"));
  }
  const fromFiles = parseLog(lines.join(""));
  assert.deepEqual(fromFiles, log);
  assert.deepEqual(parseLog(JSON.stringify([...log.outcomes, ...log.events])), log, "a JSON array of records");
});

test("logs that cannot be replayed are refused with a reason", () => {
  assert.throws(() => parseLog("not json"), LogError);
  assert.throws(() => parseLog('[{"hello": 1}]'), /neither an engine event/);
  assert.throws(() => replay({ Pool, log: parseLog("[]"), config: defaults }), /no acquisitions/);
});

test("resources that mask alike (every SESSION shows as ***) stay apart in a replay, by their ids", async () => {
  const d = await mkdtemp(path.join(os.tmpdir(), "repute-replay-ids-"));
  try {
    const clock = { now: 1_700_000_000_000 };
    const pool = await openPool({ dir: d, now: () => clock.now, seed: 3, checkpointMs: 0, handleSignals: false, recordOutcomes: true });
    for (const s of ["session-a", "session-b"]) await pool.register("SESSION", s);
    for (let i = 0; i < 6; i++) {
      clock.now += 1000;
      const lease = pool.acquireResource("SESSION", i % 2 ? "session-b" : "session-a", "c");
      pool.report(lease.kind, lease.value, "c", { ok: true, latencyMs: 10 });
      pool.release(lease);
    }
    const events = (await pool.readEvents({ after: 0, limit: 1000 })).events;
    const outcomes = (await pool.readOutcomes({ after: 0, limit: 1000 })).outcomes;
    await pool.close();
    assert.deepEqual(new Set(outcomes.map((o) => o.value)), new Set(["***"]), "masked alike");
    const parsed = parseLog(JSON.stringify({ events, outcomes }));
    assert.equal(new Set(parsed.outcomes.map((o) => o.value)).size, 2, "two resources, told apart by id");
    assert.deepEqual(parseLog(JSON.stringify([...parsed.outcomes, ...parsed.events])), parsed, "naming is idempotent");
    assert.equal(replay({ Pool, log: parsed, config: defaults, seed: 1 }).resources, 2, "the replay's pool holds both");
  } finally {
    await rm(d, { recursive: true, force: true });
  }
});
