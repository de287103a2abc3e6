// The Node host's checkpoint taken in steps (pkg-scripts/lib/node/stepped-snapshot.js): while
// a large pool's checkpoint is taken, other work runs between its steps (the event loop is not
// held for the whole snapshot) and the changes it makes are in what is stored; and, over random
// sequences of calls interleaved with checkpoints, what is stored is byte for byte
// `pool.snapshot()` at the moment the checkpoint's last step ran, and a restart restores it.
//
// Deterministic: a manual clock, seeds, `checkpointMs: 0`, a seeded sequence of calls. No
// timing is asserted (how long the loop is held is a figure: pkg-scripts/perf/bench-checkpoint.mjs).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Pool, openPool } from "repute";
import { mulberry32 } from "../../pkg-scripts/lib/mulberry32.js";

const T0 = 1_700_000_000_000;
const root = await mkdtemp(path.join(os.tmpdir(), "repute-stepped-"));
const opened = new Set();
after(async () => {
  for (const h of opened) await h.close().catch(() => {});
  await rm(root, { recursive: true, force: true });
});
let dirs = 0;

async function open(dir, clock, options = {}) {
  const host = await openPool({ dir, now: () => clock.t, seed: 5, checkpointMs: 0, burst: 1e9, handleSignals: false, onError: () => {}, ...options });
  opened.add(host);
  return host;
}
const stored = (dir) => readFileSync(path.join(dir, "snapshot.json"), "utf8");
const revisionOf = (json) => Number(/"revision":(\d+)/.exec(json)[1]);
const TAKEN_AT = /"takenAt":\d+/;
const turn = () => new Promise((r) => setImmediate(r));

test("a 30,000-cell checkpoint is taken in steps: calls run between them, and what they changed is stored", async (t) => {
  const R = 6000;
  const C = 5;
  const clock = { t: T0 };
  const value = (i) => `http://user${i}:pass${i}@proxy-${i}.example.net:8080`;
  const seeded = new Pool({ config: { maxResources: R, maxCells: R * C }, seed: 1, now: () => clock.t });
  for (let i = 0; i < R; i++) seeded.register("PROXY", value(i));
  for (let c = 0; c < C; c++) for (let i = 0; i < R; i++) seeded.report("PROXY", value(i), `site-${c}.example`, { ok: true, latencyMs: 100 + (i % 50) });
  const dir = path.join(root, `pool-${++dirs}`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, "snapshot.json"), seeded.snapshot());
  seeded.free();
  const host = await open(dir, clock);
  assert.equal(host.stats().cells, R * C);
  // Every resource touched: the checkpoint retakes all 30,000 cells.
  for (let i = 0; i < R; i++) host.report("PROXY", value(i), "site-0.example", { ok: true, latencyMs: 90 });
  const before = host.stats().revision;

  // A probe: one call a turn of the loop, and the longest gap between two turns.
  let running = true;
  let ticks = 0;
  let longest = 0;
  let last = performance.now();
  const probe = (async () => {
    while (running) {
      await turn();
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      host.report("PROXY", value(ticks % R), "site-1.example", { ok: true, latencyMs: 80 });
      ticks++;
    }
  })();
  await host.checkpoint();
  running = false;
  await probe;
  const file = stored(dir);
  t.diagnostic(`probe turns during the checkpoint: ${ticks}; longest gap between turns: ${longest.toFixed(1)} ms`);
  // Taken all at once (the snapshot first, then the file written), the stored revision would be
  // the one at the call: the probe's reports came after. In steps, those made before the last
  // step are in it.
  assert.ok(revisionOf(file) >= before + 3, `the probe's reports made while the checkpoint was taken are stored (revision ${revisionOf(file)}, was ${before} at the call, ${ticks} probe turns)`);
  // What is stored is a whole, consistent snapshot of that moment: it restores, and with no call
  // in between, the next checkpoint stores exactly the live snapshot.
  assert.equal(Pool.restore(file, { now: () => clock.t }).stats().cells, R * C);
  host.report("PROXY", value(1), "site-2.example", { ok: false, failure: "TIMEOUT" });
  await host.checkpoint();
  assert.equal(stored(dir), host.snapshot());
  await host.close();
});

/** Resources a folder starts with (each with cells in two contexts), so that retaking every
 * part takes several steps (a checkpoint here takes about 26 turns of the loop). Not more: the
 * test takes the live snapshot at every turn, and its cost grows with the pool (2,000 took
 * twice as long, 42 s, for the same rule: the 30,000-cell test above is the large pool). */
const FILLERS = 1000;
const filler = (i) => ["PROXY", `filler-${i}.example:3128`];

/** A folder holding a snapshot of FILLERS resources at `clock`. */
function seededFolder(clock) {
  const dir = path.join(root, `pool-${++dirs}`);
  mkdirSync(dir);
  const pool = new Pool({ seed: 2, now: () => clock.t });
  for (let i = 0; i < FILLERS; i++) pool.register(...filler(i));
  for (const context of ["checkout-us", "b"]) for (let i = 0; i < FILLERS; i++) pool.report(...filler(i), context, { ok: i % 5 !== 0, ...(i % 5 ? { latencyMs: i % 300 } : { failure: "TIMEOUT" }) });
  writeFileSync(path.join(dir, "snapshot.json"), pool.snapshot());
  pool.free();
  return dir;
}

const NAMES = [
  filler(0), filler(1), filler(FILLERS / 2 - 1), filler(FILLERS - 1),
  ["PROXY", "http://a:secret@p1.example:8080"], ["PROXY", "p2.example:80"], ["PROXY", "p3.example:80"],
  ["PROXY", "ä-proxy.example:81"], ["PROXY", "p5"], ["PROXY", "p6"], ["PROXY", "zz-last"],
  ["ACCOUNT", "user:pass"], ["ACCOUNT", "acct-2"], ["ACCOUNT", "😀"], ["ACCOUNT", "\uFF5E-acct"], ["SESSION", "s1"], ["SESSION", "s2"],
];
const CONTEXTS = ["checkout-us", "search-eu", "ü-ctx", "b"];
const FAILURES = ["TIMEOUT", "BLOCKED", "SLOW", "CONNECTION", "AUTH"];

/** One random call (hot path or operator), or a step of the clock. Operator calls are not
 * awaited (their writes queue behind the checkpoint running): their promises go to `pending`.
 * Refusals (an unknown resource, a lease gone) are expected: a refused call changes nothing. */
function randomCall(host, rnd, clock, leases, pending) {
  try {
    oneCall(host, rnd, clock, leases, pending);
  } catch (e) {
    if (!e.code) throw e;
  }
}

function oneCall(host, rnd, clock, leases, pending) {
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const [kind, value] = pick(NAMES);
  const r = rnd();
  if (r < 0.03) {
    // Many resources touched at once: more than one stepped pass retakes them.
    for (let i = 0; i < 400; i++) host.report(...filler(Math.floor(rnd() * FILLERS)), pick(CONTEXTS), { ok: true, latencyMs: 3 });
    return;
  }
  const quiet = (p) => pending.push(p.catch(() => {}));
  if (r < 0.25) host.report(kind, value, pick(CONTEXTS), rnd() < 0.6 ? { ok: true, latencyMs: Math.floor(rnd() * 900) } : { ok: false, failure: pick(FAILURES) });
  else if (r < 0.4) {
    const lease = host.acquire(pick(CONTEXTS));
    if (lease) leases.push(lease);
  } else if (r < 0.47 && leases.length > 0) host.release(leases.splice(Math.floor(rnd() * leases.length), 1)[0]);
  else if (r < 0.6) clock.t += Math.floor(rnd() * 20_000);
  else if (r < 0.72) quiet(host.register(kind, value));
  else if (r < 0.78) quiet(host.deregister(kind, value));
  else if (r < 0.86) quiet(host.block(kind, value, rnd() < 0.3 ? { permanent: true } : { seconds: 1 + Math.floor(rnd() * 60) }));
  else if (r < 0.92) quiet(host.unblock(kind, value));
  else if (r < 0.95) quiet(host.setConfig({ leaseTtlMs: 10_000 + Math.floor(rnd() * 50_000) }));
  else host.report(kind, value, pick(CONTEXTS), { ok: true, latencyMs: 1 });
}

test("random calls interleaved with stepped checkpoints: each stores the live snapshot of its last step; restarts restore it", async (t) => {
  let interleaved = 0;
  for (const seed of [1, 2, 3]) {
    const rnd = mulberry32(seed);
    const clock = { t: T0 };
    const dir = seededFolder(clock);
    let host = await open(dir, clock);
    const leases = [];
    const pending = [];
    for (let round = 0; round < 40; round++) {
      for (let n = Math.floor(rnd() * 8); n > 0; n--) randomCall(host, rnd, clock, leases, pending);
      // Calls go on while the checkpoint is taken: what is stored is the pool as it was between
      // two of them (the last step runs in a turn of its own). (Operator calls made before are
      // settled first: a write-ahead queued before the checkpoint commits between two calls.)
      await Promise.all(pending.splice(0));
      // Enough touched that the checkpoint takes several steps, with calls between them (an
      // operator write before it may have stored everything else already).
      // (A few fillers are among NAMES, and may be deregistered: those are skipped.)
      for (let i = 0; i < 300; i++) {
        try {
          host.report(...filler((round * 300 + i) % FILLERS), "b", { ok: true, latencyMs: 3 });
        } catch (e) {
          if (e.code !== "UNKNOWN_RESOURCE") throw e;
        }
      }
      const moments = [host.snapshot()];
      let done = false;
      const checkpoint = host.checkpoint().finally(() => (done = true));
      while (!done) {
        await turn();
        if (done) break;
        randomCall(host, rnd, clock, leases, pending);
        moments.push(host.snapshot());
      }
      await checkpoint;
      const file = stored(dir);
      // (Or, when nothing changed since the last write, that write is kept: it is not redone.)
      // (Or a checkpoint that found nothing changed since the last write — one queued before it,
      // a write-ahead's — keeps that write: the same state, taken at an earlier time.)
      const kept = moments.some((m) => m.replace(TAKEN_AT, "") === file.replace(TAKEN_AT, ""));
      if (moments.indexOf(file) > 0) interleaved++;
      assert.ok(moments.includes(file) || kept, `seed ${seed}, round ${round}: the stored snapshot was the live one at a moment of the checkpoint`);
      // With no call in between, a checkpoint stores exactly the live snapshot.
      await host.register("PROXY", `round-${round}`); // a change, so the write is not skipped
      await host.checkpoint();
      assert.equal(stored(dir), host.snapshot(), `seed ${seed}, round ${round}`);
      assert.equal(Pool.restore(stored(dir), { now: () => clock.t }).snapshot(), host.snapshot());
      if (round % 10 === 9) {
        // A restart restores what the last checkpoint (the one on close) stored.
        const live = host.snapshot();
        await host.close();
        assert.equal(stored(dir), live);
        host = await open(dir, clock);
        assert.equal(host.snapshot(), live, `seed ${seed}, round ${round}: restored after a restart`);
      }
    }
    await host.close();
  }
  t.diagnostic(`checkpoints that stored calls made while they were taken: ${interleaved} of 120`);
  assert.ok(interleaved >= 5, `checkpoints stored a state made by calls while they were taken (${interleaved} times)`);
});
