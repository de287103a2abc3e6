// SPEC v2 over HTTP (§3 "Groups, pacing and the cooling cap", §8): `group` in POST
// /api/resources (a name, null, or absent: unchanged), `groups` in POST /api/leases (tried in
// order; a 409's Retry-After is for the listed groups alone), `?group=` on GET /api/resources
// (empty: no group), every bad value a 400 naming its field with nothing changed, the pacing and
// cooling-cap config through PUT /api/config, views with `group`, `pacedUntil` and `held`, the
// audit log and the event stream with RESOURCE_REGROUPED and COOLDOWN_SUPPRESSED, and the
// metrics that count them (repute_cooldowns_suppressed_total, repute_acquisitions_by_group_total).
// Each test has its own server on 127.0.0.1:0 and a clock moved by hand; tests/edge/groups.test.mjs
// runs this file against the edge worker in workerd.
import { test } from "node:test";
import assert from "node:assert/strict";
import { T0, withServer, call, assertProblem, openStream } from "./_http-support.mjs";

const register = (s, value, group) =>
  call(s.url, "POST", "/api/resources", { body: group === undefined ? { kind: "PROXY", value } : { kind: "PROXY", value, group } });
const acquire = (s, context, groups) => call(s.url, "POST", "/api/leases", { body: groups === undefined ? { context } : { context, groups } });
const report = (s, value, context, outcome) => call(s.url, "POST", "/api/outcomes", { body: { kind: "PROXY", value, context, outcome } });
const fail = (s, value, context) => report(s, value, context, { ok: false, failure: "TIMEOUT" });
const resources = async (s, query = "") => {
  const r = await call(s.url, "GET", `/api/resources${query}`);
  assert.equal(r.status, 200, r.text);
  return r.json.resources;
};
const values = (list) => list.map((r) => r.value);
const events = async (s) => (await call(s.url, "GET", "/api/events?limit=1000")).json.events;
const snapshot = async (s) => (await call(s.url, "GET", "/api/snapshot")).text;

/** The value of one sample of the text exposition (labels must all match), or undefined. */
function sample(text, name, labels = {}) {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const inner = line.startsWith(`${name}{`) ? line.slice(name.length + 1, line.indexOf("}")).split(",") : [];
    if (inner.length === want.length && want.every((l) => inner.includes(l))) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}

test("POST /api/resources with group: registers into it, moves a known resource, absent leaves it, null ungroups", async () => {
  await withServer({}, async (s) => {
    const first = await register(s, "a1", "dc-us");
    assert.equal(first.status, 201, first.text);
    assert.deepEqual({ ...first.json, id: undefined }, { kind: "PROXY", value: "a1", id: undefined, created: true, group: "dc-us", maxLeases: 1 });
    assert.equal((await register(s, "u1")).json.group, null, "a new resource without the key has no group");

    // Absent: unchanged, nothing happens (no event, no revision step).
    const revision = JSON.parse(await snapshot(s)).revision;
    const again = await register(s, "a1");
    assert.equal(again.status, 200);
    assert.deepEqual([again.json.created, again.json.group], [false, "dc-us"]);
    assert.equal((await register(s, "a1", "dc-us")).json.group, "dc-us", "the same group: no move");
    assert.equal(JSON.parse(await snapshot(s)).revision, revision, "nothing changed");

    // A different group moves it; null takes it out of every group.
    const moved = await register(s, "a1", "residential-de");
    assert.deepEqual([moved.status, moved.json.created, moved.json.group], [200, false, "residential-de"]);
    assert.equal((await resources(s)).find((r) => r.value === "a1").group, "residential-de");
    assert.equal((await register(s, "a1", null)).json.group, null);
    assert.equal((await resources(s)).find((r) => r.value === "a1").group, null);

    const log = (await events(s)).map(({ type, value, group }) => ({ type, value, group }));
    assert.deepEqual(log, [
      { type: "RESOURCE_REGISTERED", value: "a1", group: "dc-us" },
      { type: "RESOURCE_REGISTERED", value: "u1", group: null },
      { type: "RESOURCE_REGROUPED", value: "a1", group: "residential-de" },
      { type: "RESOURCE_REGROUPED", value: "a1", group: null },
    ]);
    // The snapshot keeps a group only where there is one.
    await register(s, "u1", "dc-us");
    const snap = JSON.parse(await snapshot(s));
    assert.deepEqual(snap.registered.map((r) => [r.value, r.group]), [["a1", undefined], ["u1", "dc-us"]]);
  });
});

test("GET /api/resources?group=NAME keeps that group's resources; ?group= (empty) those with none", async () => {
  await withServer({}, async (s) => {
    for (const [v, g] of [["a1", "A"], ["a2", "A"], ["b1", "B"], ["u1", undefined], ["u2", null]]) assert.equal((await register(s, v, g)).status, 201);
    assert.deepEqual(values(await resources(s, "?group=A")), ["a1", "a2"]);
    assert.deepEqual(values(await resources(s, "?group=B")), ["b1"]);
    assert.deepEqual(values(await resources(s, "?group=")), ["u1", "u2"]);
    assert.deepEqual(values(await resources(s, "?group=C")), []);
    assert.deepEqual(values(await resources(s)), ["a1", "a2", "b1", "u1", "u2"]);
    // A name that needs escaping, and the filter combined with the others.
    assert.equal((await register(s, "x1", "tier 1/é")).status, 201);
    assert.deepEqual(values(await resources(s, `?group=${encodeURIComponent("tier 1/é")}`)), ["x1"]);
    await fail(s, "a2", "shop");
    await fail(s, "a2", "shop");
    assert.deepEqual(values(await resources(s, "?group=A&state=COOLING&context=shop")), ["a2"]);
    assert.deepEqual(values(await resources(s, "?group=&state=COOLING&context=shop")), []);
  });
});

test("POST /api/leases with groups: the first group with a candidate, the lease carries its group; 409 Retry-After for the listed groups only", async () => {
  await withServer({}, async (s) => {
    for (const [v, g] of [["a1", "A"], ["b1", "B"], ["u1", undefined]]) await register(s, v, g);
    const a = await acquire(s, "shop", ["A", "B"]);
    assert.equal(a.status, 201, a.text);
    assert.deepEqual([a.json.value, a.json.group], ["a1", "A"]);
    assert.equal(typeof a.json.leaseId, "string");
    // A is taken: the next tier.
    const b = await acquire(s, "shop", ["A", "B"]);
    assert.deepEqual([b.status, b.json.value, b.json.group], [201, "b1", "B"]);
    await call(s.url, "DELETE", `/api/leases/${b.json.leaseId}`);
    // Renewal keeps the group on the lease.
    const renewed = await call(s.url, "POST", `/api/leases/${a.json.leaseId}/renewal`);
    assert.deepEqual([renewed.status, renewed.json.group], [200, "A"]);

    // b1 blocked for 90 s; a1 leased until T0 + 30 s; u1 free.
    assert.equal((await call(s.url, "POST", "/api/resources/PROXY/b1/block?seconds=90")).status, 204);
    const onlyB = await acquire(s, "shop", ["B"]);
    assertProblem(onlyB, 409, "nothing-eligible");
    assert.equal(onlyB.headers.get("retry-after"), "90", "B's block alone decides");
    assert.match(onlyB.json.detail, /listed groups/);
    const both = await acquire(s, "shop", ["B", "A"]);
    assertProblem(both, 409, "nothing-eligible");
    assert.equal(both.headers.get("retry-after"), "30", "the earliest of A and B: a1's lease");
    // u1 (no group) is free all along: an acquire without groups gets it, and so does [null].
    const none = await acquire(s, "shop", ["B", null]);
    assert.deepEqual([none.status, none.json.value, none.json.group], [201, "u1", null]);
    const nothing = await acquire(s, "shop", [null]);
    assertProblem(nothing, 409, "nothing-eligible");
    assert.equal(nothing.headers.get("retry-after"), "30", "u1's lease, just taken");
    // A permanent block leaves nothing that time alone could bring back: no Retry-After.
    await call(s.url, "POST", "/api/resources/PROXY/b1/block?permanent=true");
    const never = await acquire(s, "shop", ["B"]);
    assertProblem(never, 409, "nothing-eligible");
    assert.equal(never.headers.get("retry-after"), null);
    // An unknown group is a group with no resources, not an error.
    assertProblem(await acquire(s, "shop", ["Z"]), 409, "nothing-eligible");
    const rejected = (await events(s)).filter((e) => e.type === "ACQUISITION_REJECTED");
    assert.equal(rejected.length, 5, "one ACQUISITION_REJECTED per refused acquire");
  });
});

test("bad group values are 400 naming the field (group, groups, groups[i]) and change nothing", async () => {
  await withServer({}, async (s) => {
    await register(s, "a1", "A");
    await register(s, "b1", "B");
    const before = await snapshot(s);
    const cases = [
      [{ kind: "PROXY", value: "a1", group: 5 }, "bad-request", /^group must be/],
      [{ kind: "PROXY", value: "a1", group: ["A"] }, "bad-request", /^group must be/],
      [{ kind: "PROXY", value: "a1", group: { name: "A" } }, "bad-request", /^group must be/],
      [{ kind: "PROXY", value: "a1", group: false }, "bad-request", /^group must be/],
      [{ kind: "PROXY", value: "a1", group: "" }, "invalid-argument", /^group must not be blank/],
      [{ kind: "PROXY", value: "a1", group: " \t\u3000" }, "invalid-argument", /^group must not be blank/],
      [{ kind: "PROXY", value: "a1", group: "g".repeat(65) }, "invalid-argument", /^group must be at most 64 UTF-8 bytes/],
      [{ kind: "PROXY", value: "a1", group: "é".repeat(33) }, "invalid-argument", /^group must be at most 64 UTF-8 bytes/],
      [{ kind: "PROXY", value: "a1", group: "a\u200bb" }, "invalid-argument", /^group must not contain control or format characters/],
      [{ kind: "PROXY", value: "new", group: "" }, "invalid-argument", /^group must not be blank/],
    ];
    for (const [body, problem, detail] of cases) {
      const r = await call(s.url, "POST", "/api/resources", { body });
      assertProblem(r, 400, problem, JSON.stringify(body));
      assert.match(r.json.detail, detail, JSON.stringify(body));
    }
    const leases = [
      [{ context: "c", groups: "A" }, "bad-request", /^groups must be an array/],
      [{ context: "c", groups: null }, "bad-request", /^groups must be an array/],
      [{ context: "c", groups: { 0: "A" } }, "bad-request", /^groups must be an array/],
      [{ context: "c", groups: [] }, "invalid-argument", /^groups must list 1 to 16 groups/],
      [{ context: "c", groups: Array.from({ length: 17 }, (_, i) => `g${i}`) }, "invalid-argument", /^groups must list 1 to 16 groups \(got 17\)/],
      [{ context: "c", groups: ["A", 5] }, "bad-request", /^groups\[1\] must be/],
      [{ context: "c", groups: ["A", "B", ["C"]] }, "bad-request", /^groups\[2\] must be/],
      [{ context: "c", groups: ["A", "B", "A"] }, "invalid-argument", /^groups\[2\] repeats an earlier entry/],
      [{ context: "c", groups: [null, "A", null] }, "invalid-argument", /^groups\[2\] repeats an earlier entry/],
      [{ context: "c", groups: ["A", " "] }, "invalid-argument", /^groups\[1\] must not be blank/],
      [{ context: "c", groups: ["A", "B", "x".repeat(65)] }, "invalid-argument", /^groups\[2\] must be at most 64 UTF-8 bytes/],
      [{ context: "c", group: "A" }, "bad-request", /^unknown field/],
    ];
    for (const [body, problem, detail] of leases) {
      const r = await call(s.url, "POST", "/api/leases", { body });
      assertProblem(r, 400, problem, JSON.stringify(body));
      assert.match(r.json.detail, detail, JSON.stringify(body));
    }
    for (const [query, problem, detail] of [
      ["?group=%20", "invalid-argument", /group must not be blank/],
      [`?group=${"g".repeat(65)}`, "invalid-argument", /group must be at most 64 UTF-8 bytes/],
      ["?group=A&group=B", "bad-request", /"group" is given more than once/],
      ["?groups=A", "bad-request", /unknown query parameter/],
    ]) {
      const r = await call(s.url, "GET", `/api/resources${query}`);
      assertProblem(r, 400, problem, query);
      assert.match(r.json.detail, detail, query);
    }
    assert.equal(await snapshot(s), before, "nothing changed: no event, no revision step, no lease");
  });
});

test("PUT /api/config takes minGapMs, minGapMsByContext and maxCoolingPercent; refusals name the field", async () => {
  await withServer({}, async (s) => {
    const r = await call(s.url, "PUT", "/api/config", { body: { minGapMs: 5000, minGapMsByContext: { "slow-site": 60000 }, maxCoolingPercent: 50 } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.json.minGapMs, r.json.minGapMsByContext, r.json.maxCoolingPercent], [5000, { "slow-site": 60000 }, 50]);
    // The map is replaced whole, never merged.
    const replaced = await call(s.url, "PUT", "/api/config", { body: { minGapMsByContext: { other: 1 } } });
    assert.deepEqual(replaced.json.minGapMsByContext, { other: 1 });
    assert.deepEqual((await call(s.url, "GET", "/api/config")).json.minGapMsByContext, { other: 1 });
    const before = await snapshot(s);
    for (const [patch, field] of [
      [{ maxCoolingPercent: 0 }, "maxCoolingPercent"],
      [{ maxCoolingPercent: 101 }, "maxCoolingPercent"],
      [{ maxCoolingPercent: 50.5 }, "maxCoolingPercent"],
      [{ minGapMs: -1 }, "minGapMs"],
      [{ minGapMs: 2 ** 31 + 1 }, "minGapMs"],
      [{ minGapMs: "5" }, "minGapMs"],
      [{ minGapMsByContext: { "": 5 } }, "minGapMsByContext"],
      [{ minGapMsByContext: { c: -5 } }, "minGapMsByContext"],
      [{ minGapMsByContext: [5] }, "minGapMsByContext"],
      [{ minGapMs: 10, maxCoolingPercent: 0 }, "maxCoolingPercent"],
    ]) {
      const bad = await call(s.url, "PUT", "/api/config", { body: patch });
      assertProblem(bad, 400, "invalid-config", JSON.stringify(patch));
      assert.ok(bad.json.detail.includes(field), `${JSON.stringify(patch)}: ${bad.json.detail}`);
    }
    assert.equal(await snapshot(s), before, "nothing half-applied");
  });
});

test("PUT /api/config takes a minGapMsByContext as large as the engine allows (4096 destinations), beyond the 64 KiB body limit of other routes", async () => {
  await withServer({}, async (s) => {
    // 4096 real-looking destinations: about 190 KB of JSON, three times the other routes' limit.
    const map = Object.fromEntries(Array.from({ length: 4096 }, (_, i) => [`checkout-${i}.shop-${i % 97}.example-retailer.com`, 1000 + i]));
    const body = { minGapMsByContext: map };
    assert.ok(JSON.stringify(body).length > 3 * 64 * 1024);
    const r = await call(s.url, "PUT", "/api/config", { body });
    assert.equal(r.status, 200, r.text);
    assert.equal(Object.keys(r.json.minGapMsByContext).length, 4096);
    assert.equal((await call(s.url, "GET", "/api/config")).json.minGapMsByContext["checkout-4095.shop-21.example-retailer.com"], 5095);
    // One entry too many is the engine's refusal naming the field, not a 413.
    const over = await call(s.url, "PUT", "/api/config", { body: { minGapMsByContext: { ...map, "one-more.example": 1 } } });
    assertProblem(over, 400, "invalid-config");
    assert.match(over.json.detail, /minGapMsByContext/);
    // Still bounded: a body no legal config reaches is refused before it is read. A host that
    // answers 413 while the client is still sending may close the connection under it (workerd
    // does, now and then, under load): then the client sees the connection end, not the 413.
    const huge = await call(s.url, "PUT", "/api/config", { body: { minGapMsByContext: { x: 1 }, pad: "x".repeat(9 * 2 ** 20) } }).catch((e) => e);
    if (huge instanceof Error) assert.equal(huge.message, "fetch failed", String(huge.cause ?? huge));
    else assertProblem(huge, 413, "body-too-large");
    assert.equal((await call(s.url, "GET", "/api/config")).json.minGapMsByContext["checkout-4095.shop-21.example-retailer.com"], 5095, "unchanged");
    // The other routes keep their limit.
    assertProblem(await call(s.url, "POST", "/api/leases", { body: { context: "c", pad: "x".repeat(70 * 1024) } }), 413, "body-too-large");
  });
});

test("views carry group, pacedUntil and held; pacing keeps a resource out of acquire until its gap passes", async () => {
  await withServer({ config: { minGapMs: 5000, maxCoolingPercent: 50 } }, async (s) => {
    for (const [v, g] of [["a1", "A"], ["a2", "A"], ["b1", "B"]]) await register(s, v, g);
    await report(s, "a1", "shop", { ok: true, latencyMs: 20 });
    const cellOf = async (value, query = "") => (await resources(s, query)).find((r) => r.value === value).cells[0];
    const paced = await cellOf("a1");
    assert.deepEqual([paced.context, paced.pacedUntil, paced.held], ["shop", T0 + 5000, false]);
    assert.equal((await resources(s)).find((r) => r.value === "a1").group, "A");
    // a1 is paced in shop: an A acquire gets a2, then A has nothing until the gap passes.
    const l = await acquire(s, "shop", ["A"]);
    assert.equal(l.json.value, "a2");
    await call(s.url, "DELETE", `/api/leases/${l.json.leaseId}`);
    await report(s, "a2", "shop", { ok: true });
    const wait = await acquire(s, "shop", ["A"]);
    assertProblem(wait, 409, "nothing-eligible");
    assert.equal(wait.headers.get("retry-after"), "5", "the pacing end");
    s.clock.now = T0 + 5000;
    assert.equal((await cellOf("a1")).pacedUntil, null);
    assert.equal((await acquire(s, "shop", ["A"])).status, 201);

    // The cooling cap: 3 resources, 50 % → 1 may cool per context. a1 cools; a2's cooldown is
    // suppressed and its cell is held.
    s.clock.now = T0 + 20_000;
    for (const v of ["a1", "a1", "a2", "a2"]) await fail(s, v, "site");
    const a1 = (await resources(s, "?context=site")).find((r) => r.value === "a1").cells[0];
    const a2 = (await resources(s, "?context=site")).find((r) => r.value === "a2").cells[0];
    assert.deepEqual([a1.state, a1.held], ["COOLING", false]);
    assert.deepEqual([a2.state, a2.held, a2.consecutiveFailures], ["HEALTHY", true, 1]);
  });
});

test("audit log, event stream and metrics: RESOURCE_REGROUPED, COOLDOWN_SUPPRESSED, suppressions by context, acquisitions by group", async () => {
  await withServer({ config: { maxCoolingPercent: 50, leaseTtlMs: 1000 } }, async (s) => {
    const stream = await openStream(s.url, { query: "?after=0" });
    try {
      for (const [v, g] of [["a1", "A"], ["a2", "A"], ["b1", "B"], ["u1", undefined]]) await register(s, v, g);
      await register(s, "b1", "A"); // moved
      await register(s, "b1", "B"); // and back
      // 4 resources at 50 % → 2 may cool per context: a1 and a2 cool in "site", then b1's
      // cooldown is suppressed there, and u1's in "site" too; in "other" b1 cools (nothing else does).
      for (const v of ["a1", "a1", "a2", "a2", "b1", "b1", "u1", "u1"]) await fail(s, v, "site");
      await fail(s, "b1", "other");
      await fail(s, "b1", "other");
      // Acquisitions: A twice (a1 and a2 in "shop"), B once (only B listed), no group once, one rejected.
      const granted = [];
      for (const groups of [["A"], ["A"], ["B"], [null], ["A"]]) {
        const r = await acquire(s, "shop", groups);
        granted.push(r.status === 201 ? r.json.group : r.status);
      }
      assert.deepEqual(granted, ["A", "A", "B", null, 409]);

      const log = await events(s);
      const regrouped = log.filter((e) => e.type === "RESOURCE_REGROUPED");
      assert.deepEqual(regrouped.map(({ kind, value, group, id }) => ({ kind, value, group, id: typeof id })), [
        { kind: "PROXY", value: "b1", group: "A", id: "string" },
        { kind: "PROXY", value: "b1", group: "B", id: "string" },
      ]);
      const suppressed = log.filter((e) => e.type === "COOLDOWN_SUPPRESSED");
      assert.deepEqual(suppressed.map(({ value, context, cause }) => ({ value, context, cause })), [
        { value: "b1", context: "site", cause: "TIMEOUT" },
        { value: "u1", context: "site", cause: "TIMEOUT" },
      ]);
      assert.equal(log.filter((e) => e.type === "RESOURCE_COOLED").length, 3, "a1 and a2 in site, b1 in other");
      const registered = log.filter((e) => e.type === "RESOURCE_REGISTERED").map((e) => e.group);
      assert.deepEqual(registered, ["A", "A", "B", null]);

      // The stream delivers the same events, the same bytes.
      await stream.waitFor((c) => c.events().length >= log.length, 5000, "every event on the stream");
      const streamed = stream.events().map(({ _id, _event, ...e }) => e);
      assert.deepEqual(streamed, log);
      assert.ok(stream.events().some((e) => e._event === "COOLDOWN_SUPPRESSED" && e.context === "site"));

      const text = (await call(s.url, "GET", "/metrics")).text;
      assert.match(text, /^# TYPE repute_cooldowns_suppressed_total counter$/m);
      assert.match(text, /^# TYPE repute_acquisitions_by_group_total counter$/m);
      assert.equal(sample(text, "repute_cooldowns_suppressed_total", { context: "site" }), 2);
      assert.equal(sample(text, "repute_cooldowns_suppressed_total", { context: "other" }), undefined, "none suppressed there");
      assert.equal(sample(text, "repute_acquisitions_by_group_total", { group: "A" }), 2);
      assert.equal(sample(text, "repute_acquisitions_by_group_total", { group: "B" }), 1);
      assert.equal(sample(text, "repute_acquisitions_by_group_total", { group: "" }), 1, 'group="" is no group');
      assert.equal(sample(text, "repute_acquisitions_total", { context: "shop", result: "granted" }), 4);
      assert.equal(sample(text, "repute_acquisitions_total", { context: "shop", result: "rejected" }), 1);
      assert.equal(sample(text, "repute_events_total", { type: "COOLDOWN_SUPPRESSED" }), 2);
      assert.equal(sample(text, "repute_events_total", { type: "RESOURCE_REGROUPED" }), 2);
    } finally {
      stream.close();
    }
  });
});

test("group labels are bounded: past 100 distinct groups, acquisitions count as _other", async () => {
  await withServer({}, async (s) => {
    for (let i = 0; i < 102; i++) assert.equal((await register(s, `p${i}`, `g${i}`)).status, 201);
    for (let i = 0; i < 102; i++) assert.equal((await acquire(s, "shop", [`g${i}`])).status, 201);
    const text = (await call(s.url, "GET", "/metrics")).text;
    const labels = text.split("\n").filter((l) => l.startsWith("repute_acquisitions_by_group_total{"));
    assert.equal(labels.length, 101, "100 groups and _other");
    assert.equal(sample(text, "repute_acquisitions_by_group_total", { group: "g0" }), 1);
    assert.equal(sample(text, "repute_acquisitions_by_group_total", { group: "g99" }), 1);
    assert.equal(sample(text, "repute_acquisitions_by_group_total", { group: "g100" }), undefined);
    assert.equal(sample(text, "repute_acquisitions_by_group_total", { group: "_other" }), 2);
  });
});
