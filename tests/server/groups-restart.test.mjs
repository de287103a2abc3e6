// `openPool` restarted on a folder whose pool has groups, a held cell (the cooling cap), pacing
// and the three version-2 config fields (SPEC §3 "Groups, pacing and the cooling cap", §6):
// after a clean close, and from a crash image taken after a checkpoint, the restored pool has
// the same groups, the same held cell and config, grouped acquires pick exactly as before, and
// the audit log replays RESOURCE_REGROUPED (with `group`) and COOLDOWN_SUPPRESSED — through
// `readEvents` and `events({after})` — with later events continuing the seqs.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, readFileSync, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Pool, openPool } from "repute";

const T0 = 1_700_000_000_000;
const root = await mkdtemp(path.join(os.tmpdir(), "repute-groups-restart-"));
const opened = new Set();
after(async () => {
  for (const h of opened) await h.close().catch(() => {});
  await rm(root, { recursive: true, force: true });
});
let dirs = 0;
const newDir = () => path.join(root, `pool-${++dirs}`);

async function open(dir, clock, options = {}) {
  const host = await openPool({ dir, now: () => clock.t, seed: 7, checkpointMs: 0, handleSignals: false, onError: () => {}, ...options });
  opened.add(host);
  return host;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const TIMEOUT = { ok: false, failure: "TIMEOUT" };

/** cheap: a1, a2; pricey: b1, b2; u1 moved out of pricey. 40 % of 5 → 2 cells may cool per
 * context: a1 and b1 cool in "shop", a2's cooldown is suppressed (held). */
async function populate(host) {
  await host.setConfig({ maxCoolingPercent: 40, minGapMsByContext: { paced: 60_000 } });
  for (const [v, g] of [["a1", "cheap"], ["a2", "cheap"], ["b1", "pricey"], ["b2", "pricey"], ["u1", "pricey"]]) {
    assert.equal(await host.register("PROXY", v, { group: g }), true);
  }
  assert.equal(await host.register("PROXY", "u1", { group: null }), false);
  for (const v of ["a1", "a1", "b1", "b1", "a2", "a2"]) host.report("PROXY", v, "shop", TIMEOUT);
  for (const v of ["b1", "b2"]) host.report("PROXY", v, "paced", { ok: true });
}

/** What grouped acquires give (each released at once): cheap's only candidate is held, so
 * [cheap, pricey] escalates to b2 (b1 cools); [cheap] alone still gets a2; [null] gets u1;
 * b1 and b2 are paced in "paced", so [pricey] there has nothing until their gap ends. */
function picks(host) {
  const take = (context, groups) => {
    const lease = host.acquire(context, { groups });
    if (lease) host.release(lease);
    return lease && [lease.group, lease.value];
  };
  return {
    escalated: take("shop", ["cheap", "pricey"]),
    cheapOnly: take("shop", ["cheap"]),
    ungrouped: take("shop", [null]),
    paced: take("paced", ["pricey"]),
    pacedNext: host.nextChangeAt("paced", { groups: ["pricey"] }),
    elsewhere: take("search", ["cheap", "pricey"])?.[0],
  };
}

const EXPECTED = (t) => ({
  escalated: ["pricey", "b2"],
  cheapOnly: ["cheap", "a2"],
  ungrouped: [null, "u1"],
  paced: null,
  pacedNext: t + 60_000,
  elsewhere: "cheap",
});

/** Groups, held cells and pacing ends as the views show them. */
const shape = (host) =>
  host.resources().map((r) => [r.value, r.group, r.cells.map((c) => [c.context, c.state, c.held, c.pacedUntil, c.consecutiveFailures])]);

async function allEvents(host, from = 0) {
  const out = [];
  for (let after = from; ; ) {
    const page = await host.readEvents({ after, limit: 1000 });
    out.push(...page.events);
    if (page.next === null) return out;
    after = page.next;
  }
}

test("openPool restarted after close(): groups, the held cell, pacing and the v2 config are restored; grouped acquires pick as before; the audit log replays the v2 events", async () => {
  const dir = newDir();
  const clock = { t: T0 };
  const host = await open(dir, clock);
  await populate(host);
  const before = shape(host);
  assert.deepEqual(before.find(([v]) => v === "a2")[2], [["shop", "HEALTHY", true, null, 1]], "a2 is held");
  assert.deepEqual(picks(host), EXPECTED(T0));
  await tick();
  const log = await allEvents(host);
  const config = host.config();
  await host.close();

  // The stored snapshot is version 2 and keeps the groups and the held cell.
  const stored = JSON.parse(readFileSync(path.join(dir, "snapshot.json"), "utf8"));
  assert.equal(stored.version, 3);
  assert.deepEqual(stored.registered.map((r) => [r.value, r.group ?? null]), [["a1", "cheap"], ["a2", "cheap"], ["b1", "pricey"], ["b2", "pricey"], ["u1", null]]);
  assert.deepEqual(stored.cells.filter((c) => c.held).map((c) => [c.value, c.context]), [["a2", "shop"]]);

  const again = await open(dir, clock);
  assert.deepEqual(again.config(), config, "maxCoolingPercent and minGapMsByContext kept");
  assert.deepEqual(shape(again), before, "groups, held and pacing as they were");
  assert.deepEqual(again.resources(), Pool.restore(JSON.stringify(stored), { seed: 1, now: () => clock.t }).resources(), "the views of the stored snapshot");
  assert.deepEqual(picks(again), EXPECTED(T0), "grouped acquires pick as before the restart");

  // The cap still counts the cooling cells restored: a third failure in "shop" is suppressed.
  again.report("PROXY", "b2", "shop", TIMEOUT);
  again.report("PROXY", "b2", "shop", TIMEOUT);
  assert.equal(again.resources().find((r) => r.value === "b2").cells.find((c) => c.context === "shop").held, true);
  // A success ends a2's hold: [cheap, pricey] is back on the cheap tier.
  again.report("PROXY", "a2", "shop", { ok: true });
  assert.deepEqual(picks(again).escalated, ["cheap", "a2"]);
  await again.register("PROXY", "u1", { group: "cheap" });
  await tick();

  // The audit log across the restart: the events before it as they were, then the new ones.
  const all = await allEvents(again);
  assert.deepEqual(all.slice(0, log.length), log, "the log before the restart reads back the same");
  const v2 = (list) => list.filter((e) => e.type === "RESOURCE_REGROUPED" || e.type === "COOLDOWN_SUPPRESSED" || e.type === "RESOURCE_REGISTERED");
  assert.deepEqual(v2(all).map(({ type, value, group, context, cause }) => ({ type, value, group, context, cause })), [
    ...["a1", "a2", "b1", "b2"].map((v) => ({ type: "RESOURCE_REGISTERED", value: v, group: v[0] === "a" ? "cheap" : "pricey", context: undefined, cause: undefined })),
    { type: "RESOURCE_REGISTERED", value: "u1", group: "pricey", context: undefined, cause: undefined },
    { type: "RESOURCE_REGROUPED", value: "u1", group: null, context: undefined, cause: undefined },
    { type: "COOLDOWN_SUPPRESSED", value: "a2", group: undefined, context: "shop", cause: "TIMEOUT" },
    { type: "COOLDOWN_SUPPRESSED", value: "b2", group: undefined, context: "shop", cause: "TIMEOUT" },
    { type: "RESOURCE_REGROUPED", value: "u1", group: "cheap", context: undefined, cause: undefined },
  ]);
  for (let i = 1; i < all.length; i++) assert.equal(all[i].seq, all[i - 1].seq + 1, "seqs continue without a gap");
  // events({after}) replays the same lines from the log.
  const replayed = [];
  const stop = new AbortController();
  for await (const e of again.events({ after: 0, signal: stop.signal })) {
    replayed.push(e);
    if (replayed.length === all.length) stop.abort();
  }
  assert.deepEqual(replayed, all);
  await again.close();
});

test("openPool restarted from a crash image taken after a checkpoint: the grouped pool and its held cell come back; tokens go on growing", async () => {
  const dir = newDir();
  const clock = { t: T0 };
  const host = await open(dir, clock);
  await populate(host);
  const before = shape(host);
  const token = host.stats().fencingHighWater;
  await host.checkpoint();
  const image = newDir();
  cpSync(dir, image, { recursive: true });
  rmSync(path.join(image, "LOCK"));
  clock.t = T0 + 1000;
  const crashed = await open(image, clock);
  assert.deepEqual(shape(crashed), before.map(([v, g, cells]) => [v, g, cells]), "groups, held and pacing");
  const p = picks(crashed);
  assert.deepEqual(p, { ...EXPECTED(T0), pacedNext: T0 + 60_000 });
  const lease = crashed.acquire("shop", { groups: ["cheap"] });
  assert.ok(lease.token > token, `token ${lease.token} after ${token}`);
  assert.equal(lease.group, "cheap");
  await crashed.close();
  await host.close();
});
