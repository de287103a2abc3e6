// The edge worker's own promises, in real workerd (Miniflare) with its Durable Objects' SQLite
// storage in a temporary folder: regions are isolated; each region's pool is made and seeded by
// the engine inside its object; a restart (Miniflare disposed, a new one on the same folder)
// keeps cells, blocklist and the fencing high-water mark, and hands out larger tokens than
// before; groups and held cells survive it, and grouped acquires pick as before; reports reach
// storage by the alarm; a 100k-cell pool round-trips through storage byte for byte; a
// checkpoint after one report writes a few rows; a storage failure midway through a checkpoint
// leaves the previous state readable and the next checkpoint completes it; an operator action
// that cannot be stored is refused and changes nothing; the event stream works.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { startEdge, tempDir } from "./_edge-support.mjs";
import { rm } from "node:fs/promises";
import { Pool } from "../../pkg-scripts/node.js";

const T0 = 1_700_000_000_000;
const dirs = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function edge(dir, bindings = {}) {
  return startEdge({ persist: dir, bindings: { REPUTE_TEST_HOOKS: "1", REPUTE_TEST_NOW: String(T0), ...bindings } });
}

async function folder() {
  const d = await tempDir("edge-durable");
  dirs.push(d);
  return d;
}

/** One request to a region: `{status, text, json}`. */
async function call(e, region, method, path, body, headers = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    init.headers["content-type"] = "application/json";
  }
  const res = await fetch(`${e.url}/regions/${region}${path}`, init);
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, text, json, headers: res.headers };
}

const report = (e, region, value, context, outcome) => call(e, region, "POST", "/api/outcomes", { kind: "PROXY", value, context, outcome });
const snapshotOf = async (e, region) => JSON.parse((await call(e, region, "GET", "/api/snapshot")).text);

test("two regions are isolated: a block in one is invisible in the other", async () => {
  const e = await edge(await folder());
  try {
    for (const r of ["eu", "us"]) assert.equal((await call(e, r, "POST", "/api/resources", { kind: "PROXY", value: "shared:1" })).status, 201);
    assert.equal((await call(e, "eu", "POST", "/api/resources/PROXY/shared%3A1/block?permanent=true")).status, 204);
    assert.equal((await call(e, "eu", "POST", "/api/leases", { context: "c" })).status, 409);
    const us = await call(e, "us", "POST", "/api/leases", { context: "c" });
    assert.equal(us.status, 201);
    assert.equal((await snapshotOf(e, "us")).blocklist.length, 0);
    assert.equal((await snapshotOf(e, "eu")).blocklist.length, 1);
    assert.equal((await call(e, "Bad_Region", "GET", "/api/stats")).status, 400);
    assert.equal((await fetch(`${e.url}/api/stats`)).status, 404);
  } finally {
    await e.close();
  }
});

test("each region's pool is made and seeded inside its Durable Object by the engine (getrandom in workerd): two regions with the same history pick differently", async () => {
  const e = await edge(await folder());
  try {
    const values = Array.from({ length: 16 }, (_, i) => `p:${i}`);
    const picks = {};
    for (const r of ["eu", "us"]) {
      for (const value of values) assert.equal((await call(e, r, "POST", "/api/resources", { kind: "PROXY", value })).status, 201);
      picks[r] = [];
      for (let i = 0; i < 24; i++) {
        const l = await call(e, r, "POST", "/api/leases", { context: "c" });
        assert.equal(l.status, 201, l.text);
        picks[r].push(l.json.value);
        assert.equal((await call(e, r, "DELETE", `/api/leases/${l.json.leaseId}`)).status, 204);
      }
    }
    // Equal weights over 16 candidates: the same 24 picks by chance is about 16^-24.
    assert.notDeepEqual(picks.eu, picks.us, "seeded from entropy, not from a constant");
    assert.ok(new Set(picks.eu).size > 4, "picks spread over the pool");
  } finally {
    await e.close();
  }
});

test("a restart keeps cells, blocklist and the fencing high-water mark; the alarm stored the reports; tokens only grow", async () => {
  const dir = await folder();
  let e = await edge(dir, { REPUTE_CHECKPOINT_MS: "200" });
  let before;
  let maxToken = 0;
  try {
    for (const v of ["a:1", "b:2", "c:3"]) await call(e, "eu", "POST", "/api/resources", { kind: "PROXY", value: v });
    for (let i = 0; i < 5; i++) {
      const l = await call(e, "eu", "POST", "/api/leases", { context: `ctx-${i % 2}` });
      assert.equal(l.status, 201);
      maxToken = Math.max(maxToken, l.json.token);
      await report(e, "eu", l.json.value, l.json.context, i % 2 ? { ok: true, latencyMs: 40 + i } : { ok: false, failure: "TIMEOUT" });
      await call(e, "eu", "DELETE", `/api/leases/${l.json.leaseId}`);
    }
    await call(e, "eu", "POST", "/api/resources/PROXY/b%3A2/block?seconds=3600");
    await report(e, "eu", "c:3", "late", { ok: false, failure: "SLOW" }); // after the block: only the alarm stores it
    for (let i = 0; i < 100; i++) {
      const p = (await call(e, "eu", "GET", "/__test/pending")).json;
      if (p.resources === 0 && p.events === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual((await call(e, "eu", "GET", "/__test/pending")).json.resources, 0, "the alarm checkpointed the reports");
    before = await snapshotOf(e, "eu");
    assert.ok(before.cells.some((c) => c.context === "late"));
  } finally {
    await e.close();
  }
  e = await edge(dir);
  try {
    const after = await snapshotOf(e, "eu");
    assert.deepEqual(after.registered, before.registered);
    assert.deepEqual(after.blocklist, before.blocklist);
    assert.deepEqual(after.cells, before.cells);
    assert.ok(after.fencingHighWater >= before.fencingHighWater, "the fencing mark never goes back");
    assert.ok(after.nextEventSeq > before.nextEventSeq, "nor does the event seq");
    const l = await call(e, "eu", "POST", "/api/leases", { context: "ctx-1" });
    assert.equal(l.status, 201);
    assert.ok(l.json.token > maxToken, `token ${l.json.token} after the restart is above ${maxToken}`);
    const events = (await call(e, "eu", "GET", "/api/events?limit=1000")).json.events;
    const old = events.filter((ev) => ev.seq < before.nextEventSeq);
    assert.equal(old.length, before.nextEventSeq - 1, "every event before the restart is in the audit log");
    assert.equal(events.at(-1).type, "RESOURCE_LEASED");
    assert.ok(events.every((ev, i) => i === 0 || ev.seq > events[i - 1].seq));
  } finally {
    await e.close();
  }
});

test("a restart keeps groups and held cells (checkpoint, then restore from storage); a grouped acquire picks as before", async () => {
  const dir = await folder();
  let e = await edge(dir);
  const group = [["a1", "cheap"], ["a2", "cheap"], ["b1", "pricey"], ["b2", "pricey"], ["u1", "pricey"]];
  const acquireIn = async (groups) => {
    const l = await call(e, "eu", "POST", "/api/leases", { context: "shop", groups });
    assert.equal(l.status, 201, l.text);
    assert.equal((await call(e, "eu", "DELETE", `/api/leases/${l.json.leaseId}`)).status, 204);
    return [l.json.group, l.json.value];
  };
  /** What grouped acquires give: cheap's only candidate (a2) is held, so [cheap, pricey]
   * escalates to pricey; [cheap] alone still gets a2; [null] gets u1. */
  const picks = async () => {
    const escalated = await acquireIn(["cheap", "pricey"]);
    assert.equal(escalated[0], "pricey");
    assert.ok(["b1", "b2"].includes(escalated[1]), escalated[1]);
    assert.deepEqual(await acquireIn(["cheap"]), ["cheap", "a2"]);
    assert.deepEqual(await acquireIn([null]), [null, "u1"]);
  };
  let before;
  try {
    assert.equal((await call(e, "eu", "PUT", "/api/config", { maxCoolingPercent: 40 })).status, 200);
    for (const [v, g] of group) assert.equal((await call(e, "eu", "POST", "/api/resources", { kind: "PROXY", value: v, group: g })).status, 201);
    assert.equal((await call(e, "eu", "POST", "/api/resources", { kind: "PROXY", value: "u1", group: null })).json.group, null, "moved out");
    // 5 resources at 40 % → 2 may cool in "shop": a1 and b1 cool; a2's cooldown is suppressed.
    for (const v of ["a1", "a1", "b1", "b1", "a2", "a2"]) assert.equal((await report(e, "eu", v, "shop", { ok: false, failure: "TIMEOUT" })).status, 204);
    await picks();
    assert.equal((await call(e, "eu", "GET", "/__test/checkpoint")).status, 200);
    const live = (await call(e, "eu", "GET", "/api/snapshot")).text;
    before = JSON.parse(live);
    assert.equal((await call(e, "eu", "GET", "/__test/stored?full=1")).json.snapshot, live, "the rows join into the live snapshot");
    assert.deepEqual(before.registered.map((r) => [r.value, r.group ?? null]), [...group.slice(0, 4), ["u1", null]]);
    assert.deepEqual(before.cells.filter((c) => c.held).map((c) => [c.value, c.context]), [["a2", "shop"]]);
  } finally {
    await e.close();
  }
  e = await edge(dir);
  try {
    const after = await snapshotOf(e, "eu");
    assert.deepEqual(after.registered, before.registered, "groups intact");
    assert.deepEqual(after.cells, before.cells, "the held cell intact");
    assert.equal(after.config.maxCoolingPercent, 40);
    const views = (await call(e, "eu", "GET", "/api/resources?context=shop")).json.resources;
    assert.deepEqual(views.map((r) => [r.value, r.group]), [...group.slice(0, 4), ["u1", null]]);
    const a2 = views.find((r) => r.value === "a2").cells[0];
    assert.deepEqual([a2.state, a2.held], ["HEALTHY", true]);
    assert.deepEqual((await call(e, "eu", "GET", "/api/resources?group=")).json.resources.map((r) => r.value), ["u1"]);
    await picks();
    const events = (await call(e, "eu", "GET", "/api/events?limit=1000")).json.events;
    const v2 = events.filter((ev) => ev.type === "RESOURCE_REGROUPED" || ev.type === "COOLDOWN_SUPPRESSED" || ev.type === "RESOURCE_REGISTERED");
    assert.deepEqual(v2.map(({ type, value, group, context, cause }) => [type, value, group, context, cause]), [
      ...group.map(([v, g]) => ["RESOURCE_REGISTERED", v, g, undefined, undefined]),
      ["RESOURCE_REGROUPED", "u1", null, undefined, undefined],
      ["COOLDOWN_SUPPRESSED", "a2", undefined, "shop", "TIMEOUT"],
    ], "the audit log kept the registrations' groups, the move (to no group) and the suppression");
  } finally {
    await e.close();
  }
});

/** A snapshot of `resources` × `contexts` cells, made by the Node build of the same engine. */
function bigSnapshot(resources, contexts) {
  let t = T0 - 10_000;
  const pool = new Pool({ seed: 3, now: () => t, config: { maxCells: 500_000 } });
  for (let r = 0; r < resources; r++) pool.register("PROXY", `http://user${r}:pw@10.${r >> 16}.${(r >> 8) & 255}.${r & 255}:8080`);
  for (let c = 0; c < contexts; c++) {
    for (let r = 0; r < resources; r++) {
      const v = `http://user${r}:pw@10.${r >> 16}.${(r >> 8) & 255}.${r & 255}:8080`;
      pool.report("PROXY", v, `site-${c}`, (r + c) % 7 ? { ok: true, latencyMs: (r * 13 + c) % 500 } : { ok: false, failure: "TIMEOUT" });
    }
  }
  t = T0 - 1;
  const json = pool.snapshot();
  pool.free();
  return json;
}

test("a 100k-cell pool round-trips through storage byte for byte; one report then costs a checkpoint of a few rows; a failure midway leaves the last checkpoint and the next completes it", async () => {
  const dir = await folder();
  const json = bigSnapshot(10_000, 10);
  assert.equal(JSON.parse(json).cells.length, 100_000);
  let e = await edge(dir);
  try {
    const put = await call(e, "big", "PUT", "/api/snapshot", json);
    assert.equal(put.status, 204, put.text);
    const live = (await call(e, "big", "GET", "/api/snapshot")).text;
    const stored = (await call(e, "big", "GET", "/__test/stored?full=1")).json;
    assert.equal(stored.resources, 10_000);
    assert.equal(stored.snapshot, live, "the stored rows join into the live snapshot's exact bytes");
    assert.ok(stored.size.resourceRows >= 10_000);

    // One report: one resource's row, the head, the reservation, the event-free log.
    assert.equal((await report(e, "big", "http://user42:pw@10.0.0.42:8080", "site-3", { ok: false, failure: "BLOCKED" })).status, 204);
    const cp = (await call(e, "big", "GET", "/__test/checkpoint")).json;
    assert.equal(cp.resources, 1, "only the reported resource is written");
    assert.ok(cp.rows <= 6, `rows written: ${cp.rows}`);
    assert.ok(cp.bytes < 8 * 1024, `bytes written: ${cp.bytes}`);

    // A failure midway: three resources changed, the transaction fails after two rows.
    const previous = (await call(e, "big", "GET", "/__test/stored?full=1")).json.snapshot;
    for (const r of [1, 2, 3]) await report(e, "big", `http://user${r}:pw@10.0.0.${r}:8080`, "site-0", { ok: false, failure: "SLOW" });
    await call(e, "big", "GET", "/__test/fail-checkpoint?after=2");
    const failed = await call(e, "big", "GET", "/__test/checkpoint");
    assert.equal(failed.status, 503);
    assert.equal(failed.json.pending.resources, 3, "what was not stored is still pending");
    assert.equal((await call(e, "big", "GET", "/__test/stored?full=1")).json.snapshot, previous, "the previous checkpoint is intact");
    const done = await call(e, "big", "GET", "/__test/checkpoint");
    assert.equal(done.status, 200);
    assert.equal(done.json.resources, 3);
    const now = (await call(e, "big", "GET", "/api/snapshot")).text;
    assert.equal((await call(e, "big", "GET", "/__test/stored?full=1")).json.snapshot, now, "the next checkpoint completed it");

    // An operator action whose write fails is refused and changes nothing.
    await call(e, "big", "GET", "/__test/fail-checkpoint?after=0");
    const refused = await call(e, "big", "POST", "/api/resources/PROXY/http%3A%2F%2Fuser7%3Apw%4010.0.0.7%3A8080/block?permanent=true");
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.json.type, "urn:repute:problem:storage-unavailable");
    assert.equal((await snapshotOf(e, "big")).blocklist.length, 0);
  } finally {
    await e.close();
  }
  e = await edge(dir);
  try {
    const restored = await snapshotOf(e, "big");
    const original = JSON.parse(json);
    assert.equal(restored.cells.length, 100_000);
    assert.deepEqual(restored.registered, original.registered);
    const blocked = restored.cells.find((c) => c.value === "http://user42:pw@10.0.0.42:8080" && c.context === "site-3");
    assert.deepEqual(blocked.window.at(-1), ["BLOCKED", null], "the checkpointed report survived");
  } finally {
    await e.close();
  }
});

test("the event stream works on the edge: live events as Server-Sent Events", async () => {
  const e = await edge(await folder());
  try {
    const ac = new AbortController();
    const res = await fetch(`${e.url}/regions/sse/api/events/stream`, { signal: ac.signal });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const reader = res.body.getReader();
    await call(e, "sse", "POST", "/api/resources", { kind: "PROXY", value: "s:1" });
    let text = "";
    const dec = new TextDecoder();
    while (!text.includes("RESOURCE_REGISTERED")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value);
    }
    assert.match(text, /^: connected/);
    assert.match(text, /id: 1\nevent: RESOURCE_REGISTERED\ndata: \{"seq":1/);
    ac.abort();
  } finally {
    await e.close();
  }
});

test("event streams on the edge end after REPUTE_STREAM_MS, so subscribers that left free their places", async () => {
  // The object is not told when a subscriber disconnects: without a lifetime, 32 that left would
  // hold every place until the object is evicted.
  // 3 s: all 32 must be open before the first ends (opening them took over 400 ms on a loaded
  // machine, and the 33rd then found a place free).
  const e = await edge(await folder(), { REPUTE_STREAM_MS: "3000" });
  try {
    const open = () => fetch(`${e.url}/regions/sse/api/events/stream`, { signal: AbortSignal.timeout(5000) });
    let last;
    for (let i = 0; i < 32; i++) {
      const res = await open();
      assert.equal(res.status, 200);
      last = res.body.getReader();
      await last.read();
      if (i < 31) await last.cancel().catch(() => {}); // left: the object is not told
    }
    const full = await open();
    assert.equal(full.status, 503, "32 places taken");
    await full.text();
    // real time: the lifetime runs on workerd's clock. The last stream opened ends last: once it
    // has ended by itself, every place is free again (no fixed sleep past the lifetime).
    for (let done = false; !done; ) ({ done } = await last.read());
    const again = await open();
    assert.equal(again.status, 200, "the places are free again");
    const reader = again.body.getReader();
    let done = false;
    while (!done) ({ done } = await reader.read()); // and this one ends by itself
  } finally {
    await e.close();
  }
});

test("a resource larger than a row is stored in chunks and joins back; the audit log keeps its newest events only", async () => {
  const e = await edge(await folder(), { REPUTE_EVENTS_KEPT: "5" });
  try {
    let t = T0 - 100_000;
    const pool = new Pool({ seed: 5, now: () => t });
    pool.register("ACCOUNT", "login:secret");
    for (let c = 0; c < 2500; c++) {
      for (let i = 0; i < 3; i++) pool.report("ACCOUNT", "login:secret", `destination-${c}`, { ok: true, latencyMs: c + i });
    }
    t = T0 - 1;
    const json = pool.snapshot();
    pool.free();
    const put = await call(e, "wide", "PUT", "/api/snapshot", json);
    assert.equal(put.status, 204, put.text);
    const stored = (await call(e, "wide", "GET", "/__test/stored?full=1")).json;
    assert.ok(stored.snapshot.length > 512 * 1024, `one resource of ${stored.snapshot.length} characters`);
    assert.equal(stored.resources, 1);
    assert.ok(stored.size.resourceRows >= 2, `stored in ${stored.size.resourceRows} chunks`);
    assert.equal(stored.snapshot, (await call(e, "wide", "GET", "/api/snapshot")).text);

    for (let i = 0; i < 10; i++) await call(e, "log", "POST", "/api/resources", { kind: "PROXY", value: `p${i}` });
    const page = (await call(e, "log", "GET", "/api/events?limit=100")).json;
    assert.deepEqual(page.events.map((ev) => ev.seq), [6, 7, 8, 9, 10]);
  } finally {
    await e.close();
  }
});

test("an alarm whose checkpoint fails is retried by the runtime and completes it", async () => {
  const e = await edge(await folder(), { REPUTE_CHECKPOINT_MS: "100" });
  try {
    await call(e, "eu", "POST", "/api/resources", { kind: "PROXY", value: "a:1" });
    const previous = (await call(e, "eu", "GET", "/__test/stored?full=1")).json.snapshot;
    await call(e, "eu", "GET", "/__test/fail-checkpoint?after=0");
    await report(e, "eu", "a:1", "c", { ok: false, failure: "BLOCKED" });
    const failures = async () => Number(/^repute_checkpoint_failures_total (\d+)$/m.exec((await call(e, "eu", "GET", "/metrics")).text)[1]);
    let pending;
    for (let i = 0; i < 300; i++) {
      // Read in this order: a report still pending after the stored state was read means no
      // checkpoint had succeeded when it was read (the retry may succeed at any moment).
      const failed = await failures();
      const stored = (await call(e, "eu", "GET", "/__test/stored?full=1")).json.snapshot;
      pending = (await call(e, "eu", "GET", "/__test/pending")).json;
      if (pending.resources === 0) break;
      if (failed === 1) assert.equal(stored, previous, "the failed alarm left the stored state");
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(await failures(), 1, "the first alarm's checkpoint failed");
    assert.equal(pending.resources, 0, "a retried alarm stored the report");
    const stored = JSON.parse((await call(e, "eu", "GET", "/__test/stored?full=1")).json.snapshot);
    assert.deepEqual(stored.cells.map((c) => [c.context, c.window]), [["c", [["BLOCKED", null]]]]);
  } finally {
    await e.close();
  }
});
