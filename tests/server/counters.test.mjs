// Fencing tokens and event seqs near 2^53 (pkg-scripts/lib/node/reservations.js and the import
// of open-pool.js). A snapshot whose counters leave too little room below 2^53 is refused on
// import (400, nothing changed) and at start (a clear message naming the folder, also with
// --from-backup); one at the import ceiling (2^52) is taken, and its tokens work end to end —
// lease ids, renew, release, a kill -9 and a restart that skips ahead. The reservation file never
// holds a number past 2^53 − 1, and a token past it is never covered. Real files, real sockets on
// 127.0.0.1, `repute serve` as a child process where a crash is part of the story.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { call, assertProblem, withServer, spawnServe, runServeToExit, tempDir, T0 } from "./_http-support.mjs";
import { openPool } from "../../pkg-scripts/lib/node/open-pool.js";
import { Reservations, readReserve, IMPORT_CEILING } from "../../pkg-scripts/lib/node/reservations.js";
import { StorageHealth } from "../../pkg-scripts/lib/node/storage-health.js";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const reserveOf = (dir) => JSON.parse(readFileSync(path.join(dir, "reserve.json"), "utf8"));

/** The server's export with its revision raised by one and `fields` set (in canonical order). */
async function exportWith(url, fields) {
  const snap = (await call(url, "GET", "/api/snapshot")).json;
  return { ...snap, revision: snap.revision + 1, ...fields };
}

test("an import with a counter above 2^52 is refused with 400 and changes nothing", async () => {
  await withServer({}, async ({ url, pool, dir }) => {
    for (const value of ["a", "b"]) assert.equal((await call(url, "POST", "/api/resources", { body: { kind: "PROXY", value } })).status, 201);
    const before = pool.snapshot();
    const reserve = reserveOf(dir);
    for (const fields of [
      { fencingHighWater: MAX_SAFE - 1 }, // the reported case: two leases got token 2^53
      { fencingHighWater: IMPORT_CEILING + 1 },
      { nextEventSeq: MAX_SAFE },
      { nextEventSeq: IMPORT_CEILING + 1 },
    ]) {
      const res = await call(url, "PUT", "/api/snapshot", { body: await exportWith(url, fields) });
      assertProblem(res, 400, "invalid-snapshot", JSON.stringify(fields));
      assert.match(res.json.detail, /above 2\^52/);
      assert.equal(pool.snapshot(), before, "the pool is unchanged");
      assert.deepEqual(reserveOf(dir), reserve, "reserve.json is unchanged");
    }
    const lease = await call(url, "POST", "/api/leases", { body: { context: "c" } });
    assert.equal(lease.json.token, 1, "tokens go on from where they were");
  });
});

test("an import at the ceiling (2^52) is taken; its tokens work end to end and survive kill -9", async (t) => {
  const dir = await tempDir("counters");
  t.after(() => rm(dir, { recursive: true, force: true }));
  const data = path.join(dir, "data");
  let p = spawnServe(["--data", data, "--port", "0"]);
  t.after(() => p.child.kill("SIGKILL"));
  let url = await p.ready;
  await call(url, "POST", "/api/resources", { body: { kind: "PROXY", value: "a" } });
  await call(url, "POST", "/api/resources", { body: { kind: "PROXY", value: "b" } });
  const res = await call(url, "PUT", "/api/snapshot", { body: await exportWith(url, { fencingHighWater: IMPORT_CEILING, nextEventSeq: IMPORT_CEILING }) });
  assert.equal(res.status, 204, res.text);

  const first = (await call(url, "POST", "/api/leases", { body: { context: "c" } })).json;
  const second = (await call(url, "POST", "/api/leases", { body: { context: "c" } })).json;
  assert.deepEqual([first.token, second.token], [IMPORT_CEILING + 1, IMPORT_CEILING + 2]);
  assert.equal((await call(url, "POST", `/api/leases/${first.leaseId}/renewal`)).status, 200, "renew works");
  assert.equal((await call(url, "DELETE", `/api/leases/${second.leaseId}`)).status, 204, "release works");
  const events = (await call(url, "GET", `/api/events?after=${IMPORT_CEILING - 1}`)).json.events;
  assert.ok(events.length >= 3 && events.every((e, i) => e.seq === IMPORT_CEILING + i), "seqs go on from the import");
  const reserve = reserveOf(data);
  assert.ok(reserve.fencing >= second.token && reserve.fencing <= MAX_SAFE, `reserve.json ${JSON.stringify(reserve)}`);
  assert.ok(reserve.eventSeq > events.at(-1).seq && reserve.eventSeq <= MAX_SAFE);

  // kill -9, then a restart: it starts (the old code could not), and skips ahead.
  p.child.kill("SIGKILL");
  await p.exited;
  for (const args of [[], ["--from-backup"]]) {
    p = spawnServe(["--data", data, "--port", "0", ...args]);
    url = await p.ready;
    const after = (await call(url, "POST", "/api/leases", { body: { context: `after-${args.length}` } })).json;
    assert.ok(after.token > second.token && Number.isSafeInteger(after.token), `token ${after.token} after the restart ${args}`);
    p.child.kill("SIGKILL");
    await p.exited;
  }
});

test("a start is refused, with a message, when reserve.json or the snapshot leaves fewer than 2^32 below 2^53", async (t) => {
  const dir = await tempDir("counters-start");
  t.after(() => rm(dir, { recursive: true, force: true }));
  /** A pool folder with a snapshot and a backup. */
  const folder = async (name) => {
    const at = path.join(dir, name);
    for (const value of ["a", "b"]) {
      const host = await openPool({ dir: at, now: () => T0, seed: 1, checkpointMs: 0, handleSignals: false, onError: () => {} });
      await host.register("PROXY", value);
      await host.close();
    }
    return at;
  };
  // What the old code left after a kill -9: reserve.json past 2^53 (so --from-backup failed too).
  const past = await folder("past");
  writeFileSync(path.join(past, "reserve.json"), JSON.stringify({ fencing: 9007199254806528, eventSeq: 5 }));
  // A snapshot the old code imported: within 2^53, but with no room left.
  const near = await folder("near");
  const snap = JSON.parse(readFileSync(path.join(near, "snapshot.json"), "utf8"));
  writeFileSync(path.join(near, "snapshot.json"), JSON.stringify({ ...snap, fencingHighWater: MAX_SAFE - 100 }));
  // A snapshot the old code imported with its revision at 2^53 − 1 (issue 26): it started, and
  // then refused every write (409 capacity-exceeded) for good.
  const locked = await folder("locked");
  const lockedSnap = JSON.parse(readFileSync(path.join(locked, "snapshot.json"), "utf8"));
  writeFileSync(path.join(locked, "snapshot.json"), JSON.stringify({ ...lockedSnap, revision: MAX_SAFE }));

  for (const [at, what, modes] of [
    [past, /reserve\.json reserves fencing up to 9007199254806528, past 2\^53/, [[], ["--from-backup"]]],
    [near, /fencingHighWater 9007199254740891 .*fewer than 2\^32 below 2\^53/, [[]]],
    [locked, /revision 9007199254740991 .*fewer than 2\^32 below 2\^53/, [[]]],
  ]) {
    await assert.rejects(openPool({ dir: at, now: () => T0, seed: 1, checkpointMs: 0, handleSignals: false }), (e) => {
      assert.equal(e.code, "COUNTERS_EXHAUSTED");
      assert.match(e.message, what);
      assert.match(e.message, /start a new data folder/);
      return true;
    });
    for (const args of modes) {
      const r = await runServeToExit(["--data", at, "--port", "0", ...args]);
      assert.equal(r.code, 2, `${at} ${args}: ${r.stderr}`);
      assert.match(r.stderr, what);
    }
  }
});

test("reserve.json never holds a number past 2^53 − 1, and a token past it is never covered", async (t) => {
  const dir = await tempDir("counters-reserve");
  t.after(() => rm(dir, { recursive: true, force: true }));
  const health = new StorageHealth(dir);
  const r = new Reservations(dir, { fencing: MAX_SAFE - 10, eventSeq: MAX_SAFE - 10 }, { step: 65536, health, retryMs: 1000 });
  assert.equal(r.cover(MAX_SAFE - 9, MAX_SAFE - 11), true, "inside the reservation (reserving ahead, clamped)");
  assert.deepEqual(readReserve(dir), { fencing: MAX_SAFE, eventSeq: MAX_SAFE });
  assert.equal(r.cover(MAX_SAFE, MAX_SAFE - 1), true, "the last token and seq");
  assert.equal(r.cover(MAX_SAFE + 1, 0), false, "2^53 is never covered");
  assert.equal(r.cover(0, MAX_SAFE), false, "nor is seq 2^53 − 1 (the next seq would be 2^53)");
  assert.deepEqual(readReserve(dir), { fencing: MAX_SAFE, eventSeq: MAX_SAFE });
  assert.equal(health.failing, false);
  // A damaged file is refused, not read as zeros (which could hand tokens out twice).
  writeFileSync(path.join(dir, "reserve.json"), '{"fencing": "many"}');
  assert.throws(() => readReserve(dir), { code: "RESERVE_DAMAGED" });
});
