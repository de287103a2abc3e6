// The audit log (pkg-scripts/lib/node/audit-log.js): keyset pagination with after/limit/next over
// files and the write queue, rotation by size (file names carry their first seq; reads span files
// and find their place by binary search), retention by count and by age (injected clock, set
// mtimes), a full queue that drops and counts but never throws, refused events, a failing disk,
// and a restart after a crash that cut the last line.
// Deterministic: events and read positions come from fixed seeds; no test waits on a timer.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, readdirSync, readFileSync, statSync, utimesSync } from "node:fs";
import { mkdir, mkdtemp, rm, rmdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { AuditLog } from "../../pkg-scripts/lib/node/audit-log.js";
import { mulberry32 } from "../../pkg-scripts/lib/mulberry32.js";

const root = await mkdtemp(path.join(os.tmpdir(), "repute-audit-"));
after(() => rm(root, { recursive: true, force: true }));
let dirs = 0;
const newDir = () => path.join(root, `pool-${++dirs}`);
const T = 1_700_000_000_000;
const DAY = 86_400_000;

/** PoolEvent-like objects with the given seqs. */
const events = (seqs) =>
  seqs.map((seq) => ({ seq, type: "RESOURCE_LEASED", at: T + seq, kind: "PROXY", value: `p${seq % 7}`, context: "c" }));
const range = (from, to, step = 1) => Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);
const seqsOf = (page) => page.events.map((e) => e.seq);
const files = (dir) => readdirSync(path.join(dir, "audit")).sort();
const firstSeqOf = (name) => Number(name.slice(6, 22));


/** Reads everything after `after` page by page; checks each page's `next`. */
async function readAll(log, after = 0, limit = 37) {
  const out = [];
  for (;;) {
    const page = await log.read({ after, limit });
    assert.ok(page.events.length <= limit);
    out.push(...page.events);
    if (page.next === null) return out;
    assert.equal(page.events.length, limit);
    assert.equal(page.next, page.events.at(-1).seq);
    after = page.next;
  }
}

test("append then read: pages by after/limit with next; events come back as appended", async () => {
  const dir = newDir();
  const log = await AuditLog.open(dir);
  assert.equal(log.lastSeq, 0);
  assert.deepEqual(await log.read(), { events: [], next: null });
  const evs = events(range(1, 250));
  log.append(evs.slice(0, 100));
  log.append(evs.slice(100));
  assert.equal(log.lastSeq, 250);
  await log.flush();
  assert.deepEqual(files(dir), ["audit-0000000000000001.jsonl"]);
  assert.equal(readFileSync(path.join(dir, "audit", files(dir)[0]), "utf8"), evs.map((e) => JSON.stringify(e) + "\n").join(""));

  let page = await log.read({ after: 0, limit: 100 });
  assert.deepEqual(page.events, evs.slice(0, 100));
  assert.equal(page.next, 100);
  page = await log.read({ after: page.next, limit: 100 });
  assert.deepEqual(seqsOf(page), range(101, 200));
  assert.equal(page.next, 200);
  page = await log.read({ after: page.next, limit: 100 });
  assert.deepEqual(seqsOf(page), range(201, 250));
  assert.equal(page.next, null, "nothing more");
  page = await log.read({ after: 150, limit: 100 });
  assert.deepEqual(seqsOf(page), range(151, 250));
  assert.equal(page.next, null, "exactly the rest: no empty extra page");
  assert.deepEqual(await log.read({ after: 250 }), { events: [], next: null });
  assert.deepEqual(await log.read({ after: 10_000 }), { events: [], next: null });

  // Defaults and clamping: limit 100 by default, 1..1000.
  assert.equal((await log.read()).events.length, 100);
  assert.deepEqual(seqsOf(await log.read({ after: 7, limit: 0 })), [8]);
  assert.deepEqual(seqsOf(await log.read({ after: 7.9, limit: 2.5 })), [8, 9]);
  assert.deepEqual(seqsOf(await log.read({ after: -5, limit: 1 })), [1]);
  log.append(events(range(251, 1300)));
  page = await log.read({ limit: 5000 });
  assert.equal(page.events.length, 1000);
  assert.equal(page.next, 1000);
  await assert.rejects(log.read({ after: "10" }), { code: "INVALID_ARGUMENT" });
  await assert.rejects(log.read({ limit: NaN }), { code: "INVALID_ARGUMENT" });
  await log.close();
});

test("read includes events still in the write queue, with no duplicate or gap while the writer runs", async () => {
  const dir = newDir();
  const log = await AuditLog.open(dir, { maxFileBytes: 4096, maxFiles: 1000 });
  log.append(events(range(1, 50)));
  await log.flush();
  log.append(events(range(51, 60)));
  // Nothing of 51..60 can be on disk yet: append only queued them.
  assert.deepEqual(seqsOf(await log.read({ after: 40, limit: 1000 })), range(41, 60));

  // Reads racing the writer (and its rotations) always see a gap-free prefix in order.
  let next = 61;
  for (let round = 0; round < 200; round++) {
    log.append(events(range(next, next + 24)));
    next += 25;
    const page = await log.read({ after: 0, limit: 1000 });
    const seqs = seqsOf(page);
    assert.deepEqual(seqs, range(1, seqs.length), `round ${round}`);
    assert.ok(seqs.length >= Math.min(1000, next - 1), `round ${round}: saw ${seqs.length}`);
  }
  await log.flush();
  assert.ok(files(dir).length > 5, "the writer rotated meanwhile");
  assert.deepEqual((await readAll(log, 0, 997)).map((e) => e.seq), range(1, next - 1));
  await log.close();
});

test("rotation by size: files start with their first seq, stay under the size, reads span them", async () => {
  const dir = newDir();
  const maxFileBytes = 1000;
  const log = await AuditLog.open(dir, { maxFileBytes, maxFiles: 1000 });
  // Gaps in the seqs (the engine drops events when its buffer overflows): step 3.
  const seqs = range(5, 1500, 3);
  for (let i = 0; i < seqs.length; i += 40) log.append(events(seqs.slice(i, i + 40)));
  await log.flush();
  const names = files(dir);
  assert.ok(names.length > 20, `${names.length} files`);
  for (const name of names) {
    const text = readFileSync(path.join(dir, "audit", name), "utf8");
    assert.ok(Buffer.byteLength(text) <= maxFileBytes, `${name} is ${Buffer.byteLength(text)} bytes`);
    assert.match(name, /^audit-\d{16}\.jsonl$/);
    assert.equal(JSON.parse(text.slice(0, text.indexOf("\n"))).seq, firstSeqOf(name), "named by its first seq");
    assert.ok(text.endsWith("\n"));
  }
  assert.deepEqual((await readAll(log)).map((e) => e.seq), seqs);
  await log.close();

  // After a restart, from any position (present, missing, in a file's first or last line, before
  // everything, past the end): exactly the events after it, from the disk only.
  const again = await AuditLog.open(dir, { maxFileBytes, maxFiles: 1000 });
  assert.equal(again.lastSeq, seqs.at(-1));
  const rand = mulberry32(3);
  const positions = [0, 4, 5, 6, ...names.flatMap((n) => [firstSeqOf(n) - 1, firstSeqOf(n)]), seqs.at(-1), seqs.at(-1) + 5];
  for (let i = 0; i < 100; i++) positions.push(Math.floor(rand() * 1520));
  for (const after of positions) {
    const limit = 1 + Math.floor(rand() * 30);
    const want = seqs.filter((s) => s > after);
    const page = await again.read({ after, limit });
    assert.deepEqual(seqsOf(page), want.slice(0, limit), `after ${after} limit ${limit}`);
    assert.equal(page.next, want.length > limit ? want[limit - 1] : null);
  }
  await again.close();
});

test("one big file: every position is found, across lines longer than the read chunks", async () => {
  const dir = newDir();
  const log = await AuditLog.open(dir);
  const rand = mulberry32(11);
  const seqs = [];
  const evs = [];
  for (let seq = 1; seqs.length < 6000; seq += 1 + Math.floor(rand() * 3)) {
    seqs.push(seq);
    // Mostly short lines, some of 5-20 KB, two of ~100 KB (longer than any single read).
    const r = rand();
    const size = r < 0.97 ? Math.floor(rand() * 80) : r < 0.9997 ? 5000 + Math.floor(rand() * 15000) : 100_000;
    evs.push({ seq, type: "RESOURCE_COOLED", at: T + seq, value: "v".repeat(size) });
  }
  evs[2500].value = "w".repeat(100_000);
  log.append(evs);
  await log.flush();
  assert.equal(files(dir).length, 1);
  assert.ok(statSync(path.join(dir, "audit", files(dir)[0])).size > 1_000_000);
  const bySeq = new Map(evs.map((e) => [e.seq, e]));
  const positions = [0, 1, 2, seqs[2499], seqs[2500], seqs.at(-2), seqs.at(-1)];
  for (let i = 0; i < 150; i++) positions.push(Math.floor(rand() * (seqs.at(-1) + 2)));
  for (const after of positions) {
    const limit = 1 + Math.floor(rand() * 20);
    const want = seqs.filter((s) => s > after).slice(0, limit);
    const page = await log.read({ after, limit });
    assert.deepEqual(seqsOf(page), want, `after ${after}`);
    for (const e of page.events) assert.deepEqual(e, bySeq.get(e.seq));
  }
  await log.close();
});

test("retention by count: the oldest files beyond maxFiles go; reads start at the oldest kept", async () => {
  const dir = newDir();
  const log = await AuditLog.open(dir, { maxFileBytes: 600, maxFiles: 3 });
  for (let s = 1; s <= 300; s += 10) log.append(events(range(s, s + 9)));
  await log.flush();
  const names = files(dir);
  assert.equal(names.length, 3);
  const oldest = firstSeqOf(names[0]);
  assert.ok(oldest > 1);
  const all = await readAll(log);
  assert.deepEqual(all.map((e) => e.seq), range(oldest, 300));
  assert.deepEqual(seqsOf(await log.read({ after: 0, limit: 2 })), [oldest, oldest + 1]);
  await log.close();
  // At open too, with a smaller maxFiles; the current (newest) file is always kept.
  const again = await AuditLog.open(dir, { maxFileBytes: 600, maxFiles: 1 });
  assert.deepEqual(files(dir), [names[2]]);
  assert.equal(again.lastSeq, 300);
  await again.close();
});

test("retention by age: files last written before now - maxAgeMs go (at open and on rotation), never the current one", async () => {
  const dir = newDir();
  // The injected clock starts at the real time, since the files written here get real mtimes.
  const T0 = Date.now();
  let now = T0;
  const opts = { maxFileBytes: 600, maxAgeMs: 7 * DAY, now: () => now };
  let log = await AuditLog.open(dir, opts);
  for (let s = 1; s <= 100; s += 10) log.append(events(range(s, s + 9)));
  await log.close();
  const names = files(dir);
  assert.ok(names.length >= 4);
  const at = (name, daysAgo) => {
    const t = (T0 - daysAgo * DAY) / 1000;
    utimesSync(path.join(dir, "audit", name), t, t);
  };
  // Last written 10.5, 9.5, 8.5 … days ago (no file sits on the boundary); the current (last)
  // file 30 days ago.
  names.forEach((n, i) => at(n, 10.5 - i));
  at(names.at(-1), 30);

  log = await AuditLog.open(dir, opts);
  const kept = names.filter((n, i) => 10.5 - i < 7 || i === names.length - 1);
  assert.ok(kept.length < names.length && kept.length > 1);
  assert.deepEqual(files(dir), kept, "older than 7 days deleted, except the current file");
  assert.equal(log.lastSeq, 100);

  // Time passes. All kept files were last written a day ago; the next events go to the current
  // file, then to new ones (rotations, which apply retention).
  for (const n of kept) at(n, 1);
  now = T0 + 2 * DAY;
  log.append(events(range(101, 110)));
  await log.flush();
  assert.ok(files(dir).length > kept.length, "rotated");
  for (const n of kept) assert.ok(files(dir).includes(n), `${n}, 3 days old, is kept`);
  now = T0 + 6.5 * DAY;
  log.append(events(range(111, 200)));
  await log.flush();
  const left = files(dir);
  const current = names.at(-1); // rewritten today: 6.5 days old
  for (const n of kept) assert.equal(left.includes(n), n === current, `${n} at 7.5 days old`);
  assert.equal((await log.read({ after: 0, limit: 1000 })).events.at(-1).seq, 200);
  await log.close();
});

test("a full queue drops the excess and counts it; append never throws, and refuses bad events", async () => {
  const dir = newDir();
  const log = await AuditLog.open(dir, { queueLimit: 10 });
  log.append(events(range(1, 100))); // one call, far past the limit: nothing can be written yet
  assert.equal(log.dropped, 90);
  assert.equal(log.lastSeq, 10, "the log's last seq is the last event it kept");
  await log.flush();
  log.append(events(range(101, 105)));
  assert.equal(log.dropped, 90, "room again once written");
  await log.flush();
  assert.deepEqual((await readAll(log)).map((e) => e.seq), [...range(1, 10), ...range(101, 105)]);

  // Bad input: counted in `rejected`, never thrown.
  const poison = { get seq() { throw new Error("boom"); } };
  assert.doesNotThrow(() => {
    log.append(null);
    log.append(undefined);
    log.append([null, 42, "x", { seq: "106" }, { seq: 106.5 }, { type: "no seq" }]);
    log.append(events([105, 50])); // not above the last seq
    log.append([poison]);
    log.append({ seq: 106, type: "single event, not in an array" });
    log.append([{ seq: 107, big: 10n }]); // cannot be serialized
  });
  assert.equal(log.rejected, 9);
  await log.flush();
  assert.deepEqual(seqsOf(await log.read({ after: 105 })), [106]);
  assert.equal(log.rejected, 10, "the BigInt event was refused by the writer");
  await log.close();
  log.append(events([200]));
  assert.equal(log.dropped, 91, "after close: dropped");
  await log.close(); // idempotent
});

test("restart after a crash cut the last line: the fragment is cut off, lastSeq and reads work", async () => {
  const dir = newDir();
  let log = await AuditLog.open(dir, { maxFileBytes: 2000 });
  log.append(events(range(1, 80)));
  await log.close();
  const last = path.join(dir, "audit", files(dir).at(-1));
  const whole = readFileSync(last, "utf8");
  appendFileSync(last, '{"seq":81,"type":"RESOURCE_LEA'); // kill -9 in the middle of a write

  log = await AuditLog.open(dir, { maxFileBytes: 2000 });
  assert.equal(log.lastSeq, 80);
  assert.equal(readFileSync(last, "utf8"), whole, "the partial line is gone");
  log.append(events(range(81, 90)));
  await log.close();
  log = await AuditLog.open(dir, { maxFileBytes: 2000 });
  assert.deepEqual((await readAll(log)).map((e) => e.seq), range(1, 90));
  await log.close();

  // A whole event that only lacks its newline is kept; zeros left by a power cut are cut off.
  const tail = path.join(dir, "audit", files(dir).at(-1));
  appendFileSync(tail, JSON.stringify(events([91])[0]));
  log = await AuditLog.open(dir, { maxFileBytes: 2000 });
  assert.equal(log.lastSeq, 91);
  await log.close();
  appendFileSync(tail, Buffer.alloc(300));
  log = await AuditLog.open(dir, { maxFileBytes: 2000 });
  assert.equal(log.lastSeq, 91);
  assert.ok(readFileSync(tail, "utf8").endsWith("}\n"));
  // Events are refused unless they come after what is on disk (the host lifts the engine's
  // nextEventSeq above lastSeq when it restores).
  log.append(events([90, 91]));
  assert.equal(log.rejected, 2);
  log.append(events([92]));
  assert.deepEqual(seqsOf(await log.read({ after: 89 })), [90, 91, 92]);
  await log.close();
});

test("an empty last file (created, then a crash) still sets lastSeq; garbage lines are skipped", async () => {
  const dir = newDir();
  await mkdir(path.join(dir, "audit"), { recursive: true });
  const a = path.join(dir, "audit", "audit-0000000000000001.jsonl");
  const b = path.join(dir, "audit", "audit-0000000000000011.jsonl");
  appendFileSync(a, events(range(1, 5)).map((e) => JSON.stringify(e) + "\n").join("") + "not json\n");
  appendFileSync(a, events(range(6, 10)).map((e) => JSON.stringify(e) + "\n").join(""));
  appendFileSync(b, "");
  const log = await AuditLog.open(dir);
  assert.equal(log.lastSeq, 10);
  log.append(events([11, 12]));
  await log.flush();
  assert.deepEqual(files(dir), ["audit-0000000000000001.jsonl", "audit-0000000000000011.jsonl"]);
  assert.deepEqual((await readAll(log, 0, 4)).map((e) => e.seq), range(1, 12));
  await log.close();
});

test("a failing write drops the events, counts them and is reported by the next flush; writing resumes", async () => {
  const dir = newDir();
  const log = await AuditLog.open(dir);
  // The first file cannot be created: a directory sits where it goes.
  const blocker = path.join(dir, "audit", "audit-0000000000000001.jsonl");
  await mkdir(blocker);
  assert.doesNotThrow(() => log.append(events(range(1, 5))));
  await assert.rejects(log.flush(), (e) => {
    assert.equal(e.code, "AUDIT_WRITE_FAILED");
    assert.match(e.message, /5 event\(s\) could not be written/);
    return true;
  });
  assert.equal(log.dropped, 5);
  assert.equal(log.lastError.code, "AUDIT_WRITE_FAILED");
  await log.flush(); // reported once
  await rmdir(blocker);
  log.append(events(range(6, 8)));
  await log.flush();
  assert.deepEqual(seqsOf(await log.read()), [6, 7, 8]);
  assert.deepEqual(files(dir), ["audit-0000000000000006.jsonl"]);
  await log.close();

  // close() never rejects (the caller's shutdown must go on): the loss is counted and kept.
  const dir2 = newDir();
  const log2 = await AuditLog.open(dir2);
  await mkdir(path.join(dir2, "audit", "audit-0000000000000001.jsonl"));
  log2.append(events([1, 2]));
  await log2.close();
  assert.equal(log2.dropped, 2);
  assert.equal(log2.lastError.code, "AUDIT_WRITE_FAILED");
});

test("open validates its options", async () => {
  for (const bad of [{ maxFileBytes: 0 }, { maxFiles: 1.5 }, { queueLimit: -1 }, { maxAgeMs: 0 }, { now: 5 }]) {
    await assert.rejects(AuditLog.open(newDir(), bad), { code: "INVALID_ARGUMENT" }, JSON.stringify(bad));
  }
  const log = await AuditLog.open(newDir(), { maxAgeMs: Infinity });
  await log.close();
  assert.ok(statSync(log.dir).isDirectory());
});
