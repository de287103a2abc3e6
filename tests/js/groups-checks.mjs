// SPEC version 2 through the JS API (§9), host-neutral: groups (`register` with `{group}`,
// `acquire` and `nextChangeAt` with `{groups}`, `resources({group})`, `lease.group`, the
// views' `group`), pacing (`pacedUntil`, a paced cell refused), the cooling cap (`held`,
// `COOLDOWN_SUPPRESSED`), the new events as `drainEvents` decodes them, and every bad shape of
// the new options as INVALID_ARGUMENT that changes nothing. Node runs these checks
// (groups.test.mjs) and so does headless Chromium (tests/browser/), on the same module.
// Each check takes the `Pool` class and throws on the first mismatch.

import { same } from "./scenario-runner.mjs";

const T = 1_700_000_000_000;
const show = (v) => (v === undefined ? "undefined" : JSON.stringify(v));

function eq(actual, expected, what) {
  if (!same(actual, expected)) throw new Error(`${what}:\n  want ${show(expected)}\n  got  ${show(actual)}`);
}

function ok(cond, what) {
  if (!cond) throw new Error(what);
}

/** Runs `fn`, which must throw an `Error` whose code is `code`. */
function fails(fn, code, what) {
  let err;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  ok(err instanceof Error, `${what}: expected ${code}, got ${err === undefined ? "no error" : String(err)}`);
  ok(err.code === code, `${what}: expected ${code}, got ${err.code}: ${err.message}`);
}

/** A pool on a clock that stays where it is put (`pool.at(ms)` moves it), seeded. */
function poolOf(Pool, config = {}) {
  let t = T;
  const pool = new Pool({ config, seed: 1, now: () => t });
  pool.at = (ms) => {
    t = T + ms;
  };
  return pool;
}

const fail = (failure) => ({ ok: false, failure });
const OK = { ok: true };

/** The state a failed call must leave as it was. */
function state(pool) {
  return { snapshot: pool.snapshot(), resources: pool.resources(), stats: pool.stats() };
}

/** `fn` fails with INVALID_ARGUMENT and changes nothing (no event, no revision step). */
function refused(pool, fn, what) {
  pool.drainEvents();
  const before = state(pool);
  fails(fn, "INVALID_ARGUMENT", what);
  eq(state(pool), before, `${what}: state after the failed call`);
  eq(pool.drainEvents(), [], `${what}: events after the failed call`);
}

/** Bad `group` values (a string or null is good): types, blank, more than 64 UTF-8 bytes. */
const BAD_GROUPS = [5, true, {}, ["dc"], "", "   ", "\u00a0\t", "x".repeat(65), "é".repeat(33), "\ud800"];
/** Bad options arguments: not a plain object. */
const BAD_OPTIONS = [null, [], "dc", 7, true, new Date(T), new Map()];

export const groupChecks = [
  [
    "register with {group}: new resources carry it in the event and the views; re-register moves or keeps",
    (Pool) => {
      const pool = poolOf(Pool);
      eq(pool.register("PROXY", "dc-1", { group: "dc-us" }), true, "new, grouped");
      eq(pool.register("PROXY", "plain"), true, "new, no options");
      eq(pool.register("ACCOUNT", "acct", { group: null }), true, "new, group null");
      eq(pool.register("ACCOUNT", "s", {}), true, "new, empty options");
      eq(pool.register("ACCOUNT", "t", { group: undefined }), true, "new, group undefined");
      eq(
        pool.drainEvents(),
        [
          { seq: 1, type: "RESOURCE_REGISTERED", at: T, kind: "PROXY", value: "dc-1", group: "dc-us" },
          { seq: 2, type: "RESOURCE_REGISTERED", at: T, kind: "PROXY", value: "plain", group: null },
          { seq: 3, type: "RESOURCE_REGISTERED", at: T, kind: "ACCOUNT", value: "acct", group: null },
          { seq: 4, type: "RESOURCE_REGISTERED", at: T, kind: "ACCOUNT", value: "s", group: null },
          { seq: 5, type: "RESOURCE_REGISTERED", at: T, kind: "ACCOUNT", value: "t", group: null },
        ],
        "registration events",
      );
      const revision = pool.stats().revision;
      // Same group, key absent, undefined: nothing changes.
      eq(pool.register("PROXY", "dc-1", { group: "dc-us" }), false, "same group");
      eq(pool.register("PROXY", "dc-1"), false, "no options");
      eq(pool.register("PROXY", "dc-1", { group: undefined }), false, "group undefined");
      eq(pool.register("PROXY", "plain", { group: null }), false, "null again");
      eq(pool.drainEvents(), [], "no event when the group stays");
      eq(pool.stats().revision, revision, "no revision step when the group stays");
      // A different group moves the resource: one revision step, RESOURCE_REGROUPED.
      pool.at(1000);
      eq(pool.register("PROXY", "dc-1", { group: "residential-de" }), false, "moved");
      eq(pool.register("PROXY", "plain", { group: "dc-us" }), false, "moved into a group");
      eq(pool.register("ACCOUNT", "s", { group: null }), false, "null stays null");
      eq(pool.register("ACCOUNT", "acct", { group: "x".repeat(64) }), false, "64 bytes is allowed");
      eq(pool.register("ACCOUNT", "acct", { group: null }), false, "moved out of its group");
      eq(
        pool.drainEvents(),
        [
          { seq: 6, type: "RESOURCE_REGROUPED", at: T + 1000, kind: "PROXY", value: "dc-1", group: "residential-de" },
          { seq: 7, type: "RESOURCE_REGROUPED", at: T + 1000, kind: "PROXY", value: "plain", group: "dc-us" },
          { seq: 8, type: "RESOURCE_REGROUPED", at: T + 1000, kind: "ACCOUNT", value: "acct", group: "x".repeat(64) },
          { seq: 9, type: "RESOURCE_REGROUPED", at: T + 1000, kind: "ACCOUNT", value: "acct", group: null },
        ],
        "regroup events",
      );
      eq(pool.stats().revision, revision + 4, "one revision step per move");
      const groups = Object.fromEntries(pool.resources().map((r) => [`${r.kind}/${r.value}`, r.group]));
      eq(groups, { "PROXY/dc-1": "residential-de", "PROXY/plain": "dc-us", "ACCOUNT/acct": null, "ACCOUNT/s": null, "ACCOUNT/t": null }, "views' group");
      eq(Object.keys(pool.resources()[0]), ["kind", "value", "group", "blocked", "lease", "maxLeases", "leases", "cells"], "ResourceView keys in order");
      // The group is durable: a restore keeps it.
      const again = Pool.restore(pool.snapshot(), { seed: 1, now: () => T + 1000 });
      eq(again.resources(), pool.resources(), "views after a restore");
    },
  ],
  [
    "register: a bad group or options argument is INVALID_ARGUMENT and changes nothing",
    (Pool) => {
      const pool = poolOf(Pool);
      pool.register("PROXY", "known", { group: "dc" });
      for (const g of BAD_GROUPS) {
        refused(pool, () => pool.register("PROXY", "new", { group: g }), `new resource, group ${show(g)}`);
        refused(pool, () => pool.register("PROXY", "known", { group: g }), `known resource, group ${show(g)}`);
      }
      for (const o of BAD_OPTIONS) {
        refused(pool, () => pool.register("PROXY", "new", o), `options ${show(o)}`);
      }
      refused(pool, () => pool.register("PROXY", "new", { groups: ["dc"] }), "an unknown option");
      refused(pool, () => pool.register("PROXY", "new", { group: "dc", extra: 1 }), "an extra option");
      eq(pool.resources().length, 1, "nothing was registered");
    },
  ],
  [
    "resources({group}) keeps that group's resources; null keeps those with none; absent keeps all",
    (Pool) => {
      const pool = poolOf(Pool);
      pool.register("PROXY", "a", { group: "dc" });
      pool.register("PROXY", "b");
      pool.register("ACCOUNT", "c", { group: "dc" });
      pool.register("PROXY", "d", { group: "resi" });
      pool.report("PROXY", "a", "shop", OK);
      const names = (filter) => pool.resources(filter).map((r) => r.value);
      eq(names({ group: "dc" }), ["a", "c"], "dc");
      eq(names({ group: null }), ["b"], "null");
      eq(names({ group: "nobody" }), [], "a group nobody is in");
      eq(names({ group: undefined }), ["a", "b", "d", "c"], "undefined: no filter");
      eq(names({ group: "dc", context: "shop" }), ["a", "c"], "with a context");
      eq(names({ group: "dc", state: "HEALTHY" }), ["a"], "with a state");
      for (const g of BAD_GROUPS) refused(pool, () => pool.resources({ group: g }), `filter group ${show(g)}`);
      // The filter is an options argument too: a plain object, or refused (not read as "no filter").
      for (const f of BAD_OPTIONS) refused(pool, () => pool.resources(f), `filter ${show(f)}`);
      refused(pool, () => pool.resources({ groups: ["dc"] }), "an unknown filter key");
    },
  ],
  [
    "acquire with {groups}: the lease carries its group; tiers escalate where the first cools and come back as it recovers",
    (Pool) => {
      const pool = poolOf(Pool, { leaseTtlMs: 1000 });
      pool.register("PROXY", "dc-1", { group: "dc" });
      pool.register("PROXY", "dc-2", { group: "dc" });
      pool.register("PROXY", "resi-1", { group: "resi" });
      pool.register("PROXY", "loose");
      const tiers = { groups: ["dc", "resi"] };
      const take = (context, options) => {
        const lease = pool.acquire(context, options);
        if (lease !== null) pool.release(lease);
        return lease;
      };
      const lease = take("shop", tiers);
      ok(lease !== null && lease.group === "dc", `first tier: ${show(lease)}`);
      eq(Object.keys(lease), ["kind", "value", "group", "context", "token", "leasedAt", "expiresAt"], "Lease keys in order");
      eq(take("shop", { groups: [null] }).value, "loose", "null lists the ungrouped");
      eq(take("shop", { groups: [null] }).group, null, "an ungrouped lease's group");
      eq(take("shop", { groups: ["resi", "dc"] }).value, "resi-1", "list order");
      eq(take("shop", { groups: undefined }) !== null, true, "groups undefined: an ungrouped acquire");
      eq(take("shop", {}) !== null, true, "empty options: an ungrouped acquire");
      eq(pool.nextChangeAt("shop", { groups: ["dc"] }), T, "dc has a candidate now");
      // The cheap tier cools in "shop" (TIMEOUT twice: 60 s × 2 = 120 s).
      for (const v of ["dc-1", "dc-2"]) {
        pool.report("PROXY", v, "shop", fail("TIMEOUT"));
        pool.report("PROXY", v, "shop", fail("TIMEOUT"));
      }
      pool.drainEvents();
      for (let i = 0; i < 5; i++) eq(take("shop", tiers).value, "resi-1", `escalated (${i})`);
      eq(take("search", tiers).group, "dc", "another context keeps the cheap tier");
      eq(pool.nextChangeAt("shop", { groups: ["dc"] }), T + 120_000, "dc's next change: the cooldowns' end");
      eq(pool.nextChangeAt("shop", { groups: ["dc", "resi"] }), T, "resi has a candidate now");
      eq(take("shop", { groups: ["dc"] }), null, "dc alone: nothing");
      const rejected = pool.drainEvents().filter((e) => e.type === "ACQUISITION_REJECTED");
      eq(rejected.map(({ type, context }) => ({ type, context })), [{ type: "ACQUISITION_REJECTED", context: "shop" }], "one rejection");
      // Recovery: the cooldowns end, the cheap tier's half-open trials are candidates again.
      pool.at(120_000);
      eq(take("shop", tiers).group, "dc", "back to the first tier");
      eq(pool.nextChangeAt("shop", { groups: ["dc"] }), T + 120_000, "dc has a candidate at once");
    },
  ],
  [
    "lease.group is the group when granted or renewed, for acquire, acquireResource and renew",
    (Pool) => {
      const pool = poolOf(Pool);
      pool.register("PROXY", "a", { group: "dc-🦀" });
      pool.register("SESSION", "b");
      const a = pool.acquire("shop", { groups: ["dc-🦀"] });
      eq(a.group, "dc-🦀", "acquire");
      pool.register("PROXY", "a", { group: "elsewhere" });
      eq(a.group, "dc-🦀", "a lease keeps the group it was granted with");
      const renewed = pool.renew(a);
      eq(renewed.group, "elsewhere", "renew shows the current group");
      eq(Object.keys(renewed), ["kind", "value", "group", "context", "token", "leasedAt", "expiresAt"], "renewed Lease keys in order");
      pool.register("PROXY", "a", { group: null });
      eq(pool.renew(renewed).group, null, "renewed after leaving its group");
      eq(pool.acquireResource("SESSION", "b", "shop").group, null, "acquireResource, no group");
      pool.register("SESSION", "c", { group: "dc-🦀" });
      eq(pool.acquireResource("SESSION", "c", "shop").group, "dc-🦀", "acquireResource, a group");
      eq(pool.resources({ group: "dc-🦀" })[0].lease.group, "dc-🦀", "the view's lease");
    },
  ],
  [
    "lease.group stays right past the wrapper's table of group numbers (4096 names)",
    (Pool) => {
      const pool = poolOf(Pool, { leaseTtlMs: 1000 });
      const n = 4100;
      for (let i = 0; i < n; i++) pool.register("PROXY", `p${i}`, { group: `g${i}` });
      for (const round of [0, 1]) {
        for (let i = 0; i < n; i += round === 0 ? 1 : 97) {
          const lease = pool.acquire("c", { groups: [`g${i}`] });
          if (lease?.group !== `g${i}` || lease.value !== `p${i}`) throw new Error(`round ${round}, g${i}: ${show(lease)}`);
          pool.release(lease);
        }
      }
      pool.register("PROXY", "p4099", { group: "g1" });
      eq(pool.acquireResource("PROXY", "p4099", "c").group, "g1", "a numbered name on a resource past the table");
    },
  ],
  [
    "acquire and nextChangeAt: a bad groups list or options argument is INVALID_ARGUMENT and changes nothing",
    (Pool) => {
      const pool = poolOf(Pool);
      pool.register("PROXY", "a", { group: "dc" });
      const lists = [
        "dc",
        null,
        5,
        { 0: "dc", length: 1 },
        [],
        Array.from({ length: 17 }, (_, i) => `g${i}`),
        ["dc", "dc"],
        [null, null],
        ["dc", null, "dc"],
        [undefined],
        [5],
        [["dc"]],
        [{}],
        ["dc", , "resi"],
        ...BAD_GROUPS.filter((g) => typeof g === "string").map((g) => ["dc", g]),
      ];
      for (const groups of lists) {
        refused(pool, () => pool.acquire("shop", { groups }), `acquire groups ${show(groups)}`);
        refused(pool, () => pool.nextChangeAt("shop", { groups }), `nextChangeAt groups ${show(groups)}`);
      }
      for (const o of BAD_OPTIONS) {
        refused(pool, () => pool.acquire("shop", o), `acquire options ${show(o)}`);
        refused(pool, () => pool.nextChangeAt("shop", o), `nextChangeAt options ${show(o)}`);
      }
      refused(pool, () => pool.acquire("shop", { group: ["dc"] }), "acquire: an unknown option");
      refused(pool, () => pool.nextChangeAt("shop", { groups: ["dc"], at: 1 }), "nextChangeAt: an extra option");
      refused(pool, () => pool.acquire("  ", { groups: ["dc"] }), "a blank context with groups");
      // Sixteen distinct entries, a 64-byte name and null are allowed.
      const sixteen = [...Array.from({ length: 14 }, (_, i) => `g${i}`), "é".repeat(32), null];
      eq(pool.nextChangeAt("shop", { groups: sixteen }), null, "sixteen entries, none a group with a candidate");
      eq(pool.acquire("shop", { groups: [...sixteen.slice(0, 15), "dc"] })?.value, "a", "sixteen entries, the last one usable");
    },
  ],
  [
    "pacing: a paced cell shows pacedUntil, is not offered and is refused by acquireResource until it ends",
    (Pool) => {
      const pool = poolOf(Pool, { minGapMs: 1000, minGapMsByContext: { slow: 5000 } });
      pool.register("PROXY", "a", { group: "dc" });
      const cell = (context) => pool.resources({ context })[0].cells[0];
      eq(pool.resources()[0].cells, [], "no cell yet, nothing paced");
      pool.report("PROXY", "a", "shop", OK);
      pool.report("PROXY", "a", "slow", OK);
      eq(cell("shop").pacedUntil, T + 1000, "minGapMs");
      eq(cell("slow").pacedUntil, T + 5000, "minGapMsByContext");
      eq(cell("shop").held, false, "not held");
      eq(
        Object.keys(cell("shop")),
        ["context", "state", "score", "consecutiveFailures", "consecutiveSuccesses", "cooldownUntil", "cooldownCause", "updatedAt", "pacedUntil", "held", "p50LatencyMs", "p95LatencyMs"],
        "CellView keys in order",
      );
      pool.drainEvents();
      eq(pool.acquireResource("PROXY", "a", "shop"), null, "acquireResource refuses a paced cell");
      eq(pool.drainEvents(), [], "with no event");
      eq(pool.acquire("shop"), null, "acquire does not offer it");
      eq(pool.acquire("shop", { groups: ["dc"] }), null, "nor by group");
      eq(pool.drainEvents().map((e) => e.type), ["ACQUISITION_REJECTED", "ACQUISITION_REJECTED"], "two rejections");
      eq(pool.nextChangeAt("shop"), T + 1000, "nextChangeAt: the pacing end");
      eq(pool.nextChangeAt("shop", { groups: ["dc"] }), T + 1000, "nextChangeAt by group: the pacing end");
      eq(pool.acquire("search")?.value, "a", "another context is not paced");
      pool.release(pool.resources()[0].lease);
      pool.at(999);
      eq(pool.acquire("shop"), null, "still paced 1 ms before the end");
      pool.at(1000);
      eq(cell("shop").pacedUntil, null, "pacing over: null");
      eq(cell("slow").pacedUntil, T + 5000, "still paced in the slower context");
      const lease = pool.acquire("shop", { groups: ["dc"] });
      eq(lease?.value, "a", "leased once the gap has passed");
    },
  ],
  [
    "cooling cap: COOLDOWN_SUPPRESSED {kind, value, context, cause}, the cell held and still a candidate; a success ends it",
    (Pool) => {
      // 50 % of two resources: one cell of a context may cool.
      const pool = poolOf(Pool, { maxCoolingPercent: 50 });
      pool.register("PROXY", "a");
      pool.register("PROXY", "b");
      pool.drainEvents();
      for (const v of ["a", "b"]) {
        pool.report("PROXY", v, "shop", fail("BLOCKED"));
        pool.report("PROXY", v, "shop", fail("BLOCKED"));
      }
      eq(
        pool.drainEvents(),
        [
          { seq: 3, type: "RESOURCE_COOLED", at: T, kind: "PROXY", value: "a", context: "shop", cause: "BLOCKED", until: T + 7_200_000 },
          { seq: 4, type: "COOLDOWN_SUPPRESSED", at: T, kind: "PROXY", value: "b", context: "shop", cause: "BLOCKED" },
        ],
        "the second cooldown is suppressed",
      );
      const b = pool.resources({ context: "shop" })[1].cells[0];
      eq([b.state, b.held, b.consecutiveFailures, b.score, b.cooldownUntil], ["HEALTHY", true, 1, -60, null], "b is held, not cooling");
      eq(pool.acquire("shop")?.value, "b", "a held cell is still a candidate");
      eq(JSON.parse(pool.snapshot()).cells.filter((c) => c.held === true).length, 1, "the snapshot keeps held");
      pool.release(pool.resources()[1].lease);
      pool.report("PROXY", "b", "shop", OK);
      eq(pool.resources({ context: "shop" })[1].cells[0].held, false, "a success ends it");
    },
  ],
  [
    "groups and the cap: a tier whose candidates are all held is passed over, and used when no tier is usable",
    (Pool) => {
      // 34 % of three resources: one cooling cell per context.
      const pool = poolOf(Pool, { maxCoolingPercent: 34 });
      pool.register("PROXY", "dc-1", { group: "dc" });
      pool.register("PROXY", "dc-2", { group: "dc" });
      pool.register("PROXY", "resi-1", { group: "resi" });
      for (const v of ["dc-1", "dc-2"]) {
        pool.report("PROXY", v, "shop", fail("TIMEOUT"));
        pool.report("PROXY", v, "shop", fail("TIMEOUT"));
      }
      eq(pool.drainEvents().slice(3).map((e) => [e.type, e.value]), [["RESOURCE_COOLED", "dc-1"], ["COOLDOWN_SUPPRESSED", "dc-2"]], "dc-1 cools, dc-2 is held");
      const tiers = { groups: ["dc", "resi"] };
      const resi = pool.acquire("shop", tiers);
      eq(resi?.value, "resi-1", "dc has only a held candidate: escalate");
      eq(pool.acquire("shop", tiers)?.value, "dc-2", "no tier usable: the first with a candidate");
    },
  ],
  [
    "dueForRecoveryProbe entries carry the resource's group",
    (Pool) => {
      const pool = poolOf(Pool, { halfOpenCauses: ["BLOCKED"] });
      pool.register("PROXY", "a", { group: "dc" });
      pool.register("PROXY", "b");
      for (const v of ["a", "b"]) {
        pool.report("PROXY", v, "shop", fail("TIMEOUT"));
        pool.report("PROXY", v, "shop", fail("TIMEOUT"));
      }
      pool.at(120_000);
      eq(
        pool.dueForRecoveryProbe(),
        [
          { kind: "PROXY", value: "a", group: "dc", context: "shop", cooldownUntil: T + 120_000 },
          { kind: "PROXY", value: "b", group: null, context: "shop", cooldownUntil: T + 120_000 },
        ],
        "probe list",
      );
      eq(Object.keys(pool.dueForRecoveryProbe()[0]), ["kind", "value", "group", "context", "cooldownUntil"], "keys in order");
    },
  ],
  [
    "drainEvents: group and the new types decode the same with a resourceId function, masked values too",
    (Pool) => {
      const pool = poolOf(Pool, { maxCoolingPercent: 1 });
      const secret = "http://user:s3cret@proxy.example:8080";
      pool.register("PROXY", secret, { group: "𝄞-tier" });
      pool.register("PROXY", "b", { group: "𝄞-tier" });
      pool.register("PROXY", secret, { group: null });
      pool.report("PROXY", "b", "c", fail("SLOW"));
      pool.report("PROXY", "b", "c", fail("SLOW"));
      pool.report("PROXY", secret, "c", fail("SLOW"));
      pool.report("PROXY", secret, "c", fail("SLOW"));
      const masked = Pool.maskValue("PROXY", secret);
      const events = pool.drainEvents({ resourceId: (kind, value) => `${kind}:${value.length}` });
      eq(
        events,
        [
          { seq: 1, type: "RESOURCE_REGISTERED", at: T, kind: "PROXY", value: masked, id: `PROXY:${secret.length}`, group: "𝄞-tier" },
          { seq: 2, type: "RESOURCE_REGISTERED", at: T, kind: "PROXY", value: "b", id: "PROXY:1", group: "𝄞-tier" },
          { seq: 3, type: "RESOURCE_REGROUPED", at: T, kind: "PROXY", value: masked, id: `PROXY:${secret.length}`, group: null },
          { seq: 4, type: "RESOURCE_COOLED", at: T, kind: "PROXY", value: "b", id: "PROXY:1", context: "c", cause: "SLOW", until: T + 60_000 },
          { seq: 5, type: "COOLDOWN_SUPPRESSED", at: T, kind: "PROXY", value: masked, id: `PROXY:${secret.length}`, context: "c", cause: "SLOW" },
        ],
        "events",
      );
      ok(!JSON.stringify(events).includes("s3cret"), "no credentials in events");
    },
  ],
];
