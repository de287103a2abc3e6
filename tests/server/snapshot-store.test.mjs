// Durable snapshots (pkg-scripts/lib/node/snapshot-store.js): round trip with a backup, the
// never-backwards guard (lower refused and the file unchanged, equal stored, concurrent writes
// with mixed revisions), damaged files (SNAPSHOT_DAMAGED naming the file and the backup; never
// overwritten or made the backup), cleanup of a crashed writer's temporary files, and a crash
// simulation: a child process writing snapshots in a loop is killed with SIGKILL 20 times, and
// after each kill the snapshot reads back whole and its revision never went down.
// Deterministic: the kill delays come from a seeded PRNG; the assertions hold for any timing.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { SnapshotStore } from "../../pkg-scripts/lib/node/snapshot-store.js";
import { mulberry32 } from "../../pkg-scripts/lib/mulberry32.js";

const STORE_URL = new URL("../../pkg-scripts/lib/node/snapshot-store.js", import.meta.url).href;
const root = await mkdtemp(path.join(os.tmpdir(), "repute-snap-"));
after(() => rm(root, { recursive: true, force: true }));
let dirs = 0;
const newDir = () => path.join(root, `pool-${++dirs}`);

/** A snapshot text as the engine would make it (canonical key order), with some bulk. */
function snap(revision, tag = "", cells = 3) {
  const list = Array.from({ length: cells }, (_, i) => ({ context: `c${i}`, score: i, tag }));
  return JSON.stringify({ format: "repute-snapshot", version: 2, revision, takenAt: 1_700_000_000_000, cells: list });
}


test("round trip: write, read back the same text, the previous one becomes the backup", async () => {
  const dir = newDir();
  const store = await SnapshotStore.open(dir); // creates the folder
  assert.equal(store.lastRevision, null);
  assert.equal(await store.read(), null);
  assert.equal(await store.readBackup(), null);

  assert.equal(await store.write(snap(1, "a"), 1), true);
  assert.deepEqual(await store.read(), { json: snap(1, "a"), revision: 1 });
  assert.equal(await store.readBackup(), null, "nothing was there to keep");
  assert.equal(await store.write(snap(2, "b"), 2), true);
  assert.deepEqual(await store.read(), { json: snap(2, "b"), revision: 2 });
  assert.deepEqual(await store.readBackup(), { json: snap(1, "a"), revision: 1 });
  assert.equal(store.lastRevision, 2);
  if (process.platform !== "win32") {
    assert.equal(statSync(path.join(dir, "snapshot.json")).mode & 0o777, 0o600, "owner only");
  }
  assert.deepEqual(readdirSync(dir).sort(), ["snapshot.json", "snapshot.prev.json"], "no temporary file left");
  await store.close();

  const again = await SnapshotStore.open(dir);
  assert.equal(again.lastRevision, 2, "the guard starts from the stored revision");
  assert.equal(await again.write(snap(1, "old"), 1), false);
  await again.close();
});

test("a snapshot given in pieces is stored as their text joined, read lazily when its turn comes", async () => {
  const store = await SnapshotStore.open(newDir());
  const text = snap(4, "ü-pieces", 50_000); // megabytes, with multi-byte characters (whole in each piece)
  let read = 0;
  const pieces = (function* () {
    for (let i = 0; i < text.length; i += 65_536) {
      read++;
      yield text.slice(i, i + 65_536);
    }
  })();
  const first = store.write(snap(3), 3);
  const written = store.write(pieces, 4);
  assert.equal(read, 0, "nothing read before the write's turn");
  assert.equal(await first, true);
  assert.equal(await written, true);
  assert.ok(read > 10);
  assert.deepEqual(await store.read(), { json: text, revision: 4 });
  await assert.rejects(store.write(42, 5), { code: "INVALID_ARGUMENT" });
  await assert.rejects(store.write(null, 5), { code: "INVALID_ARGUMENT" });
  await store.close();
});

test("a lower revision is refused and leaves both files unchanged; an equal one is stored", async () => {
  const dir = newDir();
  const store = await SnapshotStore.open(dir);
  await store.write(snap(4, "x"), 4);
  await store.write(snap(5, "y"), 5);
  const main = readFileSync(path.join(dir, "snapshot.json"));
  const prev = readFileSync(path.join(dir, "snapshot.prev.json"));

  assert.equal(await store.write(snap(3, "lower"), 3), false);
  assert.deepEqual(readFileSync(path.join(dir, "snapshot.json")), main);
  assert.deepEqual(readFileSync(path.join(dir, "snapshot.prev.json")), prev);
  assert.equal(store.lastRevision, 5);

  assert.equal(await store.write(snap(5, "same revision, new text"), 5), true);
  assert.deepEqual(await store.read(), { json: snap(5, "same revision, new text"), revision: 5 });
  await store.close();
});

test("concurrent writes with mixed revisions, issued without awaiting, never leave a lower revision", async () => {
  const dir = newDir();
  const store = await SnapshotStore.open(dir);
  const rand = mulberry32(7);
  const revisions = Array.from({ length: 60 }, () => Math.floor(rand() * 40));
  // A reader polls the file the whole time: the revision it sees never goes down.
  let done = false;
  let seen = -1;
  const reader = (async () => {
    while (!done) {
      const s = await store.read();
      if (s) {
        assert.ok(s.revision >= seen, `revision went from ${seen} to ${s.revision}`);
        seen = s.revision;
      }
      await new Promise((r) => setImmediate(r));
    }
  })();
  const results = await Promise.all(revisions.map((r, i) => store.write(snap(r, `w${i}`), r)));
  done = true;
  await reader;

  // What a compare-and-set in issue order gives.
  let stored = -1;
  const expected = revisions.map((r) => (r >= stored ? ((stored = r), true) : false));
  assert.deepEqual(results, expected);
  const last = revisions.findLastIndex((r, i) => expected[i]);
  assert.deepEqual(await store.read(), { json: snap(stored, `w${last}`), revision: stored });
  assert.equal(store.lastRevision, Math.max(...revisions));
  await store.close();
});

test("a damaged snapshot: SNAPSHOT_DAMAGED naming the file and the backup; kept, never made the backup", async () => {
  const dir = newDir();
  const main = path.join(dir, "snapshot.json");
  const prev = path.join(dir, "snapshot.prev.json");
  let store = await SnapshotStore.open(dir);
  await store.write(snap(1, "first", 50), 1);
  await store.write(snap(2, "second", 50), 2);
  await store.close();
  const size = statSync(main).size;
  await truncate(main, Math.floor(size / 2)); // a torn write, a bad disk, a careless copy
  const torn = readFileSync(main);

  store = await SnapshotStore.open(dir); // opening does not throw
  await assert.rejects(store.read(), (e) => {
    assert.equal(e.code, "SNAPSHOT_DAMAGED");
    assert.equal(e.file, main);
    assert.ok(e.message.startsWith(`${main} is not valid JSON (`), e.message);
    assert.ok(e.message.includes(`${torn.length} bytes`), e.message);
    assert.ok(e.message.includes(`the previous good snapshot is ${prev} (revision 1)`), e.message);
    assert.match(e.message, /--from-backup/);
    assert.ok(e.stack.includes("--from-backup"), "the printed stack carries the whole message");
    return true;
  });
  assert.deepEqual(readFileSync(main), torn, "reading changes nothing");
  assert.deepEqual(await store.readBackup(), { json: snap(1, "first", 50), revision: 1 });
  assert.equal(store.lastRevision, 1, "the guard falls back to the backup's revision");
  assert.equal(await store.write(snap(0, "older than the backup"), 0), false);

  // Started from the backup, the host writes on: the damaged file is kept aside, the good
  // backup stays the backup.
  assert.equal(await store.write(snap(2, "restored"), 2), true);
  assert.deepEqual(await store.read(), { json: snap(2, "restored"), revision: 2 });
  assert.deepEqual(await store.readBackup(), { json: snap(1, "first", 50), revision: 1 });
  const aside = readdirSync(dir).filter((n) => n.startsWith("snapshot.damaged-"));
  assert.equal(aside.length, 1);
  assert.deepEqual(readFileSync(path.join(dir, aside[0])), torn);
  assert.equal(await store.write(snap(3, "next"), 3), true);
  assert.deepEqual(await store.readBackup(), { json: snap(2, "restored"), revision: 2 });
  await store.close();
});

test("a damaged snapshot's message never quotes the file (it holds credentials), nor does a damaged backup's", async () => {
  const secret = "hunter2";
  const start = '{"format":"repute-snapshot","version":2,"revision":4,"registered":[{"kind":"PROXY","value":';
  const cases = [
    [`${start}"h.example:1:carol:${secret}`, /not valid JSON \(Unterminated string at position \d+\)/], // cut in the value
    [`${start}"h.example:1:carol:x" ${secret}}]}`, /not valid JSON \(Expected ',' or '}' after property value at position \d+\)/],
    [`${start}${secret}}]}`, /not valid JSON \(an unexpected character\)/], // V8 gives no position here
    [secret, /not valid JSON \(an unexpected character\)/],
    [`{"format":"${secret}","revision":1}`, /is not a repute snapshot/],
    [`{"format":"repute-snapshot","revision":"${secret}"}`, /has an invalid revision/],
    [`{"format":"repute-snapshot","revision":1,"x":"\u0001${secret}`, /not valid JSON/],
  ];
  for (const [text, problem] of cases) {
    const dir = newDir();
    await mkdir(dir);
    await writeFile(path.join(dir, "snapshot.json"), text);
    await writeFile(path.join(dir, "snapshot.prev.json"), text);
    const store = await SnapshotStore.open(dir);
    await assert.rejects(store.read(), (e) => {
      assert.equal(e.code, "SNAPSHOT_DAMAGED");
      assert.match(e.message, problem);
      assert.match(e.message, /the backup is unusable too/);
      assert.ok(!e.message.includes(secret) && !e.stack.includes(secret), e.message);
      return true;
    });
    await assert.rejects(store.readBackup(), (e) => !e.message.includes(secret));
  }
});

test("a file without format or revision, or with a bad revision, is damaged; so is a damaged backup", async () => {
  const cases = [
    ["", /is not valid JSON \(it ends too soon\), 0 bytes/],
    ["[1]", /is not a JSON object/],
    ['{"revision":3}', /has no format field/],
    ['{"format":"other","revision":3}', /is not a repute snapshot \(its format is not "repute-snapshot"\)/],
    ['{"format":"repute-snapshot","version":2}', /has no revision field/],
    ['{"format":"repute-snapshot","revision":-1}', /has an invalid revision \(not an integer in 0..2\^53\)/],
    ['{"format":"repute-snapshot","revision":"7"}', /has an invalid revision \(not an integer/],
  ];
  for (const [text, problem] of cases) {
    const dir = newDir();
    await mkdir(dir);
    await writeFile(path.join(dir, "snapshot.json"), text);
    const store = await SnapshotStore.open(dir);
    await assert.rejects(store.read(), (e) => {
      assert.equal(e.code, "SNAPSHOT_DAMAGED");
      assert.match(e.message, problem);
      assert.match(e.message, /there is no backup/);
      return true;
    });
    assert.equal(store.lastRevision, null);
  }
  const dir = newDir();
  await mkdir(dir);
  await writeFile(path.join(dir, "snapshot.json"), "{");
  await writeFile(path.join(dir, "snapshot.prev.json"), '{"format":"repute-snapshot"}');
  const store = await SnapshotStore.open(dir);
  await assert.rejects(store.read(), /the backup is unusable too \(.*snapshot\.prev\.json has no revision field\)/);
  await assert.rejects(store.readBackup(), (e) => e.code === "SNAPSHOT_DAMAGED" && e.file.endsWith("snapshot.prev.json"));
});

test("open removes temporary files of crashed writers only; bad arguments and a closed store", async () => {
  const dir = newDir();
  await mkdir(dir);
  const dead = spawnSync(process.execPath, ["-e", ""]).pid;
  const crashed = [`snapshot.json.tmp-${dead}-3`, `snapshot.prev.json.tmp-${dead}-3`];
  const live = `snapshot.json.tmp-${process.pid}-99`; // a writer that is still running
  for (const n of [...crashed, live]) await writeFile(path.join(dir, n), "partial");
  const store = await SnapshotStore.open(dir);
  assert.deepEqual(readdirSync(dir), [live]);

  await assert.rejects(store.write({ format: "repute-snapshot" }, 1), { code: "INVALID_ARGUMENT" });
  await assert.rejects(store.write(snap(1), -1), { code: "INVALID_ARGUMENT" });
  await assert.rejects(store.write(snap(1), 1.5), { code: "INVALID_ARGUMENT" });
  const pending = store.write(snap(1), 1);
  await store.close(); // waits for the write issued before it
  assert.equal(await pending, true);
  await assert.rejects(store.write(snap(2), 2), { code: "SNAPSHOT_STORE_CLOSED" });
  assert.equal((await store.read()).revision, 1);
});

test("killed with SIGKILL at random moments while writing, 20 times: always a whole snapshot, never backwards", async (t) => {
  const dir = newDir();
  // The child writes ~0.5 MB snapshots with increasing revisions as fast as it can, starting
  // above what is stored; it reports its first completed write, then keeps going until killed.
  const code = `
    import { SnapshotStore } from ${JSON.stringify(STORE_URL)};
    const store = await SnapshotStore.open(process.env.POOL_DIR);
    let rev = store.lastRevision ?? 0;
    const bulk = "x".repeat(500_000);
    for (let n = 0; ; n++) {
      rev++;
      await store.write(JSON.stringify({ format: "repute-snapshot", version: 2, revision: rev, bulk }), rev);
      if (n === 0) console.log(rev);
    }`;
  const rand = mulberry32(42);
  let highest = 0;
  let midWrite = 0;
  for (let round = 0; round < 20; round++) {
    const child = spawn(process.execPath, ["--input-type=module", "-e", code], {
      env: { ...process.env, POOL_DIR: dir },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise((resolve) => child.on("exit", (c, s) => resolve(s)));
    const written = await new Promise((resolve, reject) => {
      child.stdout.once("data", (d) => resolve(Number(String(d).trim())));
      child.once("exit", () => reject(new Error("the writer died before its first write")));
    });
    assert.ok(written > highest, `round ${round}: the writer continued from the stored revision`);
    await new Promise((r) => setTimeout(r, Math.floor(rand() * 20))); // real time: a kill at a random point of a real writer process
    child.kill("SIGKILL");
    assert.equal(await exited, "SIGKILL");
    if (readdirSync(dir).some((n) => n.includes(".tmp-"))) midWrite++;

    const store = await SnapshotStore.open(dir);
    const now = await store.read(); // must not throw: never a torn snapshot
    assert.notEqual(now, null, `round ${round}: the snapshot vanished`);
    assert.ok(now.revision >= written, `round ${round}: revision ${now.revision}, but ${written} was written`);
    highest = now.revision;
    const backup = await store.readBackup(); // the backup is whole too
    if (round > 0) assert.notEqual(backup, null, `round ${round}: no backup`);
    if (backup !== null) assert.ok(backup.revision < now.revision);
    assert.equal(store.lastRevision, now.revision);
    await store.close();
  }
  // Most kills land inside a write (its temporary file is left behind); log it, do not depend on
  // timing for the verdict.
  t.diagnostic(`${midWrite} of 20 kills interrupted a write; last revision ${highest}`);
  assert.deepEqual(
    readdirSync(dir).sort(),
    ["snapshot.json", "snapshot.prev.json"],
    "the killed writers' temporary files were cleaned up",
  );
  assert.equal(JSON.parse(await readFile(path.join(dir, "snapshot.json"), "utf8")).revision, highest);
});
