// The pool server as a real child process (`node pkg-scripts/bin/repute.js serve --data DIR
// --port 0`), stopped and started again on the same folder: after SIGTERM (exit 0, final
// snapshot) everything is restored — resources, cells, blocklist — no lease is held, tokens and
// event seqs continue; after SIGKILL the state of the last checkpoint is restored plus every
// operator action acknowledged before the kill, tokens still only grow and no seq is reused;
// a second server on a folder in use refuses to start, naming the lock holder; and groups, held
// cells and the v2 config survive both kinds of stop.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { once } from "node:events";
import net from "node:net";
import { call, resourcePath, tempDir, spawnServe } from "./_http-support.mjs";

const children = new Set();
const dirs = [];
after(async () => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function newDir() {
  const d = await tempDir("restart");
  dirs.push(d);
  return d;
}

async function start(dir, extra = []) {
  const p = spawnServe(["--data", dir, "--port", "0", ...extra]);
  children.add(p.child);
  p.exited.then(() => children.delete(p.child));
  const url = await p.ready;
  return { ...p, url };
}

const ok = async (promise, status, what) => {
  const r = await promise;
  assert.equal(r.status, status, `${what}: ${r.status} ${r.text}`);
  return r;
};

async function allEvents(url) {
  const out = [];
  let after = 0;
  for (;;) {
    const r = await ok(call(url, "GET", `/api/events?after=${after}&limit=1000`), 200, "events");
    out.push(...r.json.events);
    if (r.json.next === null) return out;
    after = r.json.next;
  }
}

const resources = async (url) => (await ok(call(url, "GET", "/api/resources"), 200, "resources")).json.resources;
const snapshot = async (url) => JSON.parse((await ok(call(url, "GET", "/api/snapshot"), 200, "snapshot")).text);
const register = (url, kind, value) => call(url, "POST", "/api/resources", { body: { kind, value } });
const report = (url, value, context, outcome) => call(url, "POST", "/api/outcomes", { body: { kind: "PROXY", value, context, outcome } });
const acquire = (url, context) => call(url, "POST", "/api/leases", { body: { context } });

/** Registers, reports, blocks and leases; returns the tokens granted. */
async function populate(url) {
  for (const v of ["p1", "p2", "p3", "p4", "p5", "p6"]) await ok(register(url, "PROXY", v), 201, `register ${v}`);
  await ok(register(url, "ACCOUNT", "acc:1/x|y é"), 201, "register account");
  await ok(report(url, "p1", "shop", { ok: false, failure: "TIMEOUT", latencyMs: 800 }), 204, "report");
  await ok(report(url, "p1", "shop", { ok: false, failure: "TIMEOUT" }), 204, "report"); // COOLING
  await ok(report(url, "p2", "shop", { ok: false, failure: "BLOCKED" }), 204, "report"); // score -30
  await ok(report(url, "p3", "search", { ok: true, latencyMs: 12 }), 204, "report");
  await ok(report(url, "p3", "shop", { ok: false, failure: "SLOW", latencyMs: 3000 }), 204, "report");
  await ok(call(url, "POST", resourcePath("PROXY", "p4", "/block?seconds=3600")), 204, "block p4");
  await ok(call(url, "POST", resourcePath("PROXY", "p5", "/block?permanent=true")), 204, "block p5");
  const tokens = [];
  for (const ctx of ["search", "search", "shop"]) tokens.push((await ok(acquire(url, ctx), 201, `acquire ${ctx}`)).json.token);
  return tokens;
}

/** Resolves with the live snapshot once `<dir>/snapshot.json` holds its revision or a later one:
 * the child's periodic checkpoint wrote everything done so far. The child tells no one when it
 * writes, so the file is read until it does (instead of a fixed sleep past a few intervals). */
async function checkpointed(url, dir) {
  const live = await snapshot(url);
  for (let i = 0; ; i++) {
    const stored = await readFile(path.join(dir, "snapshot.json"), "utf8").then(JSON.parse, () => null);
    if (stored?.revision >= live.revision) return live;
    assert.ok(i < 500, `no checkpoint of revision ${live.revision} within 10 s (on disk: ${stored?.revision})`);
    await new Promise((r) => setTimeout(r, 20)); // real time: the child's checkpoint timer is real
  }
}

const withoutLeases = (list) => list.map((r) => ({ ...r, lease: null, leases: [] }));

function assertNoDuplicateSeqs(events) {
  const seqs = events.map((e) => e.seq);
  assert.equal(new Set(seqs).size, seqs.length, "a seq appears twice");
  for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i] > seqs[i - 1], `seqs out of order at ${i}`);
}

test("SIGTERM: exit 0 with a final snapshot; a restart restores resources, cells and blocklist, holds no lease, continues tokens and seqs", async () => {
  const dir = await newDir();
  const first = await start(dir); // default checkpoint interval (30 s): only the final snapshot counts
  const tokens = await populate(first.url);
  const heldBefore = (await ok(acquire(first.url, "held"), 201, "acquire held")).json;
  tokens.push(heldBefore.token);
  const viewBefore = await resources(first.url);
  assert.equal(viewBefore.filter((r) => r.lease).length, 4);
  const snapBefore = await snapshot(first.url);
  const eventsBefore = await allEvents(first.url);
  assert.ok(eventsBefore.length > 10);

  first.child.kill("SIGTERM");
  const stopped = await first.exited;
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.match(stopped.stdout, /repute: SIGTERM: draining\nrepute: stopped\n/);

  // The final snapshot on disk is the state at the stop.
  const onDisk = JSON.parse(await readFile(path.join(dir, "snapshot.json"), "utf8"));
  assert.equal(onDisk.revision, snapBefore.revision);
  assert.equal(onDisk.fencingHighWater, Math.max(...tokens));
  for (const k of ["registered", "blocklist", "cells", "config", "nextEventSeq"]) assert.deepEqual(onDisk[k], snapBefore[k], k);

  const second = await start(dir);
  assert.match(second.out.stdout, /7 resources/);
  // It listened before restoring (so /readyz could say 503 meanwhile), on the same address.
  const [, listening, serving] = /^repute: listening on (\S+); opening .*\nrepute: serving (\S+) /.exec(second.out.stdout) ?? [];
  assert.ok(listening && listening === serving, second.out.stdout);
  const viewAfter = await resources(second.url);
  assert.deepEqual(viewAfter, withoutLeases(viewBefore), "resources, cells and blocks restored; no lease");
  const p1 = viewAfter.find((r) => r.value === "p1").cells[0];
  assert.equal(p1.state, "COOLING");
  assert.equal(p1.cooldownCause, "TIMEOUT");
  assert.equal(viewAfter.find((r) => r.value === "p2").cells[0].score, -30);
  assert.deepEqual(viewAfter.find((r) => r.value === "p5").blocked, { permanent: true });
  assert.ok(viewAfter.find((r) => r.value === "p4").blocked.until > Date.now());

  // A lease id from before the restart names no lease now (404/409, not a server error).
  assert.equal((await call(second.url, "POST", `/api/leases/${heldBefore.leaseId}/renewal`)).status, 409);
  assert.equal((await call(second.url, "DELETE", `/api/leases/${heldBefore.leaseId}`)).status, 404);

  // Tokens continue above every one issued before; seqs continue after the last one.
  const eventsKept = await allEvents(second.url);
  assert.deepEqual(eventsKept, eventsBefore, "the audit log survived the restart");
  const lastSeq = eventsBefore.at(-1).seq;
  const leases = [];
  for (const ctx of ["search", "search", "shop"]) leases.push((await ok(acquire(second.url, ctx), 201, "acquire after restart")).json);
  for (const l of leases) assert.ok(l.token > Math.max(...tokens), `token ${l.token} after restart`);
  const eventsAfter = await allEvents(second.url);
  assertNoDuplicateSeqs(eventsAfter);
  const fresh = eventsAfter.filter((e) => e.seq > lastSeq);
  assert.equal(fresh.length, 3);
  assert.equal(fresh[0].seq, lastSeq + 1, "after a clean stop seqs continue without a gap");
  assert.deepEqual(fresh.map((e) => e.token), leases.map((l) => l.token));

  second.child.kill("SIGTERM");
  assert.equal((await second.exited).code, 0);
});

test("SIGKILL: the last checkpoint plus every acknowledged operator action are restored; tokens grow; no seq is reused", async () => {
  const dir = await newDir();
  const first = await start(dir, ["--checkpoint-ms", "100"]);
  const tokens = await populate(first.url);
  const checkpointedState = await checkpointed(first.url, dir);

  // Operator actions right before the kill: each acknowledged only once on disk.
  await ok(register(first.url, "SESSION", "late:1/é"), 201, "late register");
  await ok(call(first.url, "POST", resourcePath("PROXY", "p6", "/block?permanent=true")), 204, "late block");
  await ok(call(first.url, "DELETE", resourcePath("PROXY", "p5", "/block")), 200, "late unblock");
  await ok(call(first.url, "DELETE", resourcePath("PROXY", "p2")), 204, "late deregister");
  // Worker actions right before the kill (may or may not reach the disk).
  const late = await ok(acquire(first.url, "late"), 201, "late acquire");
  tokens.push(late.json.token);
  await ok(report(first.url, "p3", "search", { ok: true }), 204, "late report");
  const seenSeqs = (await allEvents(first.url)).map((e) => e.seq);
  const maxSeq = Math.max(...seenSeqs);

  first.child.kill("SIGKILL");
  const killed = await first.exited;
  assert.equal(killed.signal, "SIGKILL");

  const second = await start(dir, ["--checkpoint-ms", "100"]);
  const view = await resources(second.url);
  const byValue = new Map(view.map((r) => [`${r.kind}/${r.value}`, r]));
  // The acknowledged operator actions.
  assert.ok(byValue.has("SESSION/late:1/é"), "late register restored");
  assert.deepEqual(byValue.get("PROXY/p6").blocked, { permanent: true }, "late block restored");
  assert.equal(byValue.get("PROXY/p5").blocked, null, "late unblock restored");
  assert.ok(!byValue.has("PROXY/p2"), "late deregister restored");
  // The checkpointed state.
  const restored = await snapshot(second.url);
  const cellsOf = (snap) => snap.cells.filter((c) => c.value !== "p2" && !(c.value === "p3" && c.context === "search"));
  assert.deepEqual(cellsOf(restored), cellsOf(checkpointedState), "cells as checkpointed");
  assert.ok(restored.blocklist.some((b) => b.value === "p4"), "the temporary block of p4");
  assert.deepEqual(restored.config, checkpointedState.config);
  // No lease survives.
  assert.ok(view.every((r) => r.lease === null));
  // Tokens: larger than any issued before the kill.
  const next = await ok(acquire(second.url, "search"), 201, "acquire after kill");
  assert.ok(next.json.token > Math.max(...tokens), `token ${next.json.token} vs ${Math.max(...tokens)}`);
  assert.ok(restored.fencingHighWater > Math.max(...tokens));
  // Seqs: never reused — no duplicate in the log, and every new event above every seq seen.
  await ok(register(second.url, "PROXY", "after-kill"), 201, "register after kill");
  const events = await allEvents(second.url);
  assertNoDuplicateSeqs(events);
  const known = new Set(seenSeqs);
  const fresh = events.filter((e) => !known.has(e.seq));
  assert.ok(fresh.length >= 2, "the new events are in the log");
  for (const e of fresh) assert.ok(e.seq > maxSeq, `seq ${e.seq} (${e.type}) reuses the range up to ${maxSeq}`);
  // The events seen before the kill that reached the log are unchanged.
  const before = new Map((await allEvents(second.url)).map((e) => [e.seq, e]));
  assert.ok(seenSeqs.filter((q) => before.has(q)).length > 0);

  second.child.kill("SIGTERM");
  assert.equal((await second.exited).code, 0);
});

test("SIGKILL after worker-only activity: the periodic checkpoint (--checkpoint-ms 100) has it", async () => {
  const dir = await newDir();
  const first = await start(dir, ["--checkpoint-ms", "100"]);
  await populate(first.url);
  // Only worker calls from here on: nothing forces a write but the checkpoint timer.
  for (const v of ["p1", "p3", "p6"]) await ok(report(first.url, v, "periodic", { ok: false, failure: "CONNECTION_RESET" }), 204, "report");
  const leases = [];
  for (let i = 0; i < 2; i++) leases.push((await ok(acquire(first.url, "periodic"), 201, "acquire")).json.token);
  const expected = (await snapshot(first.url)).cells.filter((c) => c.context === "periodic");
  assert.equal(expected.length, 3);
  await checkpointed(first.url, dir);
  first.child.kill("SIGKILL");
  assert.equal((await first.exited).signal, "SIGKILL");

  const second = await start(dir, ["--checkpoint-ms", "100"]);
  const restored = await snapshot(second.url);
  assert.deepEqual(restored.cells.filter((c) => c.context === "periodic"), expected);
  assert.ok(restored.fencingHighWater >= Math.max(...leases));
  const next = await ok(acquire(second.url, "periodic"), 201, "acquire after kill");
  assert.ok(next.json.token > Math.max(...leases));
  second.child.kill("SIGTERM");
  assert.equal((await second.exited).code, 0);
});

test("a second server on a folder in use refuses to start, naming the lock holder", async () => {
  const dir = await newDir();
  const first = await start(dir);
  await ok(register(first.url, "PROXY", "x"), 201, "register");
  const second = spawnServe(["--data", dir, "--port", "0"]);
  children.add(second.child);
  const r = await second.exited;
  assert.notEqual(r.code, 0);
  assert.doesNotMatch(r.stdout, /serving/);
  assert.match(r.stderr, /is locked by pid (\d+)/);
  assert.equal(Number(/is locked by pid (\d+)/.exec(r.stderr)[1]), first.child.pid);
  assert.match(r.stderr, /still running/);
  // The first one is unaffected.
  assert.equal((await resources(first.url)).length, 1);
  first.child.kill("SIGTERM");
  assert.equal((await first.exited).code, 0);
  // Once it has stopped, the folder can be used again.
  const third = await start(dir);
  assert.equal((await resources(third.url)).length, 1);
  third.child.kill("SIGTERM");
  assert.equal((await third.exited).code, 0);
});

test(
  "SIGTERM completes promptly while an event-stream client keeps its connection open",
  async () => {
    const dir = await newDir();
    const p = await start(dir);
    const port = Number(new URL(p.url).port);
    const sock = net.connect(port, "127.0.0.1");
    await once(sock, "connect");
    sock.on("error", () => {});
    sock.write("GET /api/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await once(sock, "data");
    try {
      p.child.kill("SIGTERM");
      let timer;
      const exited = await Promise.race([
        p.exited.then(() => true),
        new Promise((r) => (timer = setTimeout(() => r(false), 3000))),
      ]);
      clearTimeout(timer);
      assert.ok(exited, "still running 3 s after SIGTERM");
    } finally {
      sock.destroy();
      const r = await p.exited;
      assert.equal(r.code, 0);
    }
  },
);

test("groups, a held cell and the v2 config survive a SIGTERM restart; a regroup acknowledged just before a SIGKILL survives that; grouped acquires pick as before", async () => {
  const dir = await newDir();
  let s = await start(dir);
  await ok(call(s.url, "PUT", "/api/config", { body: { maxCoolingPercent: 40, minGapMs: 0 } }), 200, "config");
  const groups = [["a1", "cheap"], ["a2", "cheap"], ["b1", "pricey"], ["b2", "pricey"], ["u1", null]];
  for (const [v, g] of groups) await ok(call(s.url, "POST", "/api/resources", { body: { kind: "PROXY", value: v, group: g } }), 201, `register ${v}`);
  // 40 % of 5 → 2 cells may cool in "shop": a1 and b1 cool, a2's cooldown is suppressed (held).
  for (const v of ["a1", "a1", "b1", "b1", "a2", "a2"]) await ok(report(s.url, v, "shop", { ok: false, failure: "TIMEOUT" }), 204, `report ${v}`);
  /** [group, value] of a grouped acquire (released at once). */
  const pick = async (groupsList) => {
    const l = await ok(call(s.url, "POST", "/api/leases", { body: { context: "shop", groups: groupsList } }), 201, `acquire ${groupsList}`);
    await ok(call(s.url, "DELETE", `/api/leases/${l.json.leaseId}`), 204, "release");
    return [l.json.group, l.json.value];
  };
  const picks = async () => [await pick(["cheap", "pricey"]), await pick(["cheap"]), await pick([null])];
  const expected = [["pricey", "b2"], ["cheap", "a2"], [null, "u1"]];
  assert.deepEqual(await picks(), expected, "before the restart");
  const before = await snapshot(s.url);
  assert.deepEqual(before.cells.filter((c) => c.held).map((c) => [c.value, c.context]), [["a2", "shop"]]);

  s.child.kill("SIGTERM");
  assert.equal((await s.exited).code, 0);
  s = await start(dir);
  const after = await snapshot(s.url);
  for (const k of ["registered", "cells", "config"]) assert.deepEqual(after[k], before[k], k);
  const a2 = (await resources(s.url)).find((r) => r.value === "a2");
  assert.deepEqual([a2.group, a2.cells[0].held], ["cheap", true]);
  assert.deepEqual(await picks(), expected, "after a SIGTERM restart");

  // A regroup is an operator action: acknowledged only once on disk, so a SIGKILL keeps it.
  const moved = await ok(call(s.url, "POST", "/api/resources", { body: { kind: "PROXY", value: "u1", group: "cheap" } }), 200, "move u1");
  assert.equal(moved.json.group, "cheap");
  s.child.kill("SIGKILL");
  assert.equal((await s.exited).signal, "SIGKILL");
  s = await start(dir);
  assert.equal((await resources(s.url)).find((r) => r.value === "u1").group, "cheap");
  assert.equal((await resources(s.url)).find((r) => r.value === "a2").cells[0].held, true);
  // u1 is now cheap's candidate that is not held: [cheap, pricey] stays on the cheap tier. The
  // pick is among all of cheap's candidates, held a2 included (SPEC §3), by the server's random
  // draw: a2 is an unlikely pick, not an impossible one.
  const tier = [];
  for (let i = 0; i < 12; i++) tier.push(await pick(["cheap", "pricey"]));
  assert.deepEqual([...new Set(tier.map(([g]) => g))], ["cheap"], "never the pricey tier");
  assert.ok(tier.every(([, v]) => v === "u1" || v === "a2"), JSON.stringify(tier));
  assert.ok(tier.some(([, v]) => v === "u1"), "u1 picked");
  const log = (await allEvents(s.url)).filter((e) => e.type === "RESOURCE_REGROUPED" || e.type === "COOLDOWN_SUPPRESSED");
  assert.deepEqual(log.map(({ type, value, group, context }) => [type, value, group ?? context]), [
    ["COOLDOWN_SUPPRESSED", "a2", "shop"],
    ["RESOURCE_REGROUPED", "u1", "cheap"],
  ]);
  s.child.kill("SIGTERM");
  assert.equal((await s.exited).code, 0);
});
