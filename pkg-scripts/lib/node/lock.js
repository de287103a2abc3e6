// Single-owner lock of a pool folder: `<dir>/LOCK`.
//
// Owns: creating the LOCK file exclusively, deciding whether an existing one is stale (its owner
// crashed), taking a stale one over, and releasing our own. It does not own what the folder holds
// (snapshots, audit log): the host takes this lock first and keeps it while it writes there.
//
// A lock is stale only when it was written on this host and its process is provably gone:
// `process.kill(pid, 0)` says ESRCH, or (Linux) the machine has rebooted since (`bootId`), or the
// pid now belongs to another process (its start time in `/proc/<pid>/stat` differs from the one
// recorded, e.g. pid 1 of a restarted container). An empty lock is stale once it has stayed empty
// for `EMPTY_GRACE_MS`: its creator writes it a few microseconds after creating it, so an empty
// lock that old is what a crash between the two left (a power cut, a kill -9 at that instant).
// A lock from another host, or one that cannot be read, is never taken over: the error says how
// to clear it by hand.

import { open, readFile, rename, stat, unlink, mkdir } from "node:fs/promises";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fsyncDir } from "./fsync.js";

const LOCK = "LOCK";
/** How long a takeover waits for another process that is taking over the same stale lock. */
const TAKEOVER_WAIT_MS = 2000;
/** An unreadable takeover marker older than this is the remnant of a crash during a takeover. */
const TAKEOVER_STALE_MS = 5000;
/** An empty lock file older than this (by its mtime, or since we first saw it empty) is stale. */
const EMPTY_GRACE_MS = 1000;

let tmpCounter = 0;

/**
 * @typedef {object} LockHolder
 * @property {number} pid process id of the owner
 * @property {string} host `os.hostname()` of the owner
 * @property {string} startedAt ISO time the lock was taken
 * @property {string} [bootId] Linux only: `/proc/sys/kernel/random/boot_id` of the owner's boot
 * @property {number} [procStart] Linux only: the owner's start time (clock ticks since boot)
 */

/**
 * @typedef {object} PoolLock
 * @property {LockHolder} holder what this lock wrote into `<dir>/LOCK`
 * @property {() => Promise<void>} release removes `<dir>/LOCK` if it is still ours (idempotent;
 *   a lock file that now names another holder is left alone)
 */

/**
 * Takes the single-owner lock of a pool folder (created if missing).
 *
 * Creates `<dir>/LOCK` with O_EXCL holding `{pid, host, startedAt}` (plus `bootId`/`procStart` on
 * Linux). If it exists and is stale (this host, owner process gone; or empty for `EMPTY_GRACE_MS`,
 * waited for when it is younger), it is taken over atomically:
 * our lock is written to a temporary file and renamed over it (one taker at a time, guarded by
 * `LOCK.takeover`), then re-read to confirm it is ours. Otherwise — a live owner, including this
 * very process, a lock from another host, an unreadable lock — it throws.
 *
 * @param {string} dir the pool folder
 * @returns {Promise<PoolLock>}
 * @throws {Error & {code: "POOL_LOCKED", dir: string, file: string, holder: LockHolder | null}}
 */
export async function acquireLock(dir) {
  if (typeof dir !== "string" || dir === "") throw new TypeError("acquireLock: dir must be a path");
  dir = path.resolve(dir);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, LOCK);
  const me = ourHolder();
  const body = JSON.stringify(me) + "\n";
  const deadline = Date.now() + TAKEOVER_WAIT_MS;
  let emptySince = null;

  for (;;) {
    let created = false;
    try {
      await writeSynced(file, body, "wx");
      created = true;
      await fsyncDir(dir);
      return handle(file, me);
    } catch (e) {
      if (created) await unlink(file).catch(() => {});
      if (created || e.code !== "EEXIST") throw e;
    }
    const seen = await readLock(file);
    if (seen === null) continue; // released between our create and our read: try again
    if (seen.raw === "") {
      // Its creator is between create and write (it fills it at once), or crashed there.
      emptySince ??= Date.now();
      if (!(await emptyTooLong(file, emptySince))) {
        await sleep(10);
        continue;
      }
    } else if (seen.holder === null) {
      throw lockedError(dir, file, null, seen.problem);
    } else {
      const verdict = judge(seen.holder);
      if (verdict !== "stale") throw lockedError(dir, file, seen.holder, verdict);
    }

    const took = await takeOver(dir, file, seen.raw, body, deadline);
    if (took === "retry") continue;
    const now = await readLock(file);
    if (now !== null && now.raw === body) return handle(file, me);
    // Someone else won the takeover (or released it again): report whoever holds it now.
    if (now === null) continue;
    throw lockedError(dir, file, now.holder, now.holder ? judge(now.holder) : now.problem);
  }
}

/** The lock content this process writes. */
function ourHolder() {
  /** @type {LockHolder} */
  const h = { pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString() };
  const boot = bootId();
  const start = procStartOf(process.pid);
  if (boot !== null) h.bootId = boot;
  if (start !== null) h.procStart = start;
  return h;
}

function handle(file, me) {
  let released = false;
  return {
    holder: { ...me },
    async release() {
      if (released) return;
      released = true;
      const cur = await readLock(file);
      if (cur === null || cur.holder === null) return;
      const h = cur.holder;
      if (h.pid !== me.pid || h.host !== me.host || h.startedAt !== me.startedAt) return;
      await unlink(file).catch((e) => {
        if (e.code !== "ENOENT") throw e;
      });
    },
  };
}

/**
 * Replaces the stale lock whose text was `staleRaw` by ours. Only one process at a time does it:
 * the one that creates `LOCK.takeover` (O_EXCL). Returns "done" when our rename happened,
 * "retry" when the lock changed meanwhile (the caller starts over and judges the new holder).
 */
async function takeOver(dir, file, staleRaw, body, deadline) {
  const marker = file + ".takeover";
  for (;;) {
    try {
      await writeSynced(marker, body, "wx");
      break;
    } catch (e) {
      if (e.code !== "EEXIST") throw e;
    }
    // Another taker is at work (for a few milliseconds), or crashed while at it.
    const other = await readLock(marker);
    if (other === null) continue;
    let dead = false;
    if (other.holder !== null) dead = judge(other.holder) === "stale";
    else dead = Date.now() - (await mtimeMs(marker)) > TAKEOVER_STALE_MS;
    if (dead) {
      await unlink(marker).catch(() => {});
      continue;
    }
    if (Date.now() > deadline) {
      throw lockedError(dir, file, other.holder, "taking over", marker);
    }
    await sleep(10);
    return "retry"; // the other taker has likely finished: judge the lock again
  }
  try {
    const cur = await readLock(file);
    if (cur === null || cur.raw !== staleRaw) return "retry";
    const tmp = `${file}.tmp-${process.pid}-${++tmpCounter}`;
    try {
      await writeSynced(tmp, body, "w");
      await rename(tmp, file);
    } catch (e) {
      await unlink(tmp).catch(() => {});
      throw e;
    }
    await fsyncDir(dir);
    return "done";
  } finally {
    await unlink(marker).catch(() => {});
  }
}

/**
 * Whether a holder's process is still there: "stale" (provably gone, same host), "alive",
 * "foreign" (another host: never judged), "self" (this very process holds it).
 * @param {LockHolder} h
 */
function judge(h) {
  if (h.host !== os.hostname()) return "foreign";
  const boot = bootId();
  if (boot !== null && typeof h.bootId === "string" && h.bootId !== boot) return "stale";
  if (!pidAlive(h.pid)) return "stale";
  if (boot !== null && h.bootId === boot && Number.isSafeInteger(h.procStart)) {
    const start = procStartOf(h.pid);
    if (start !== null && start !== h.procStart) return "stale"; // the pid was reused
  }
  return h.pid === process.pid ? "self" : "alive";
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code !== "ESRCH"; // EPERM: alive, owned by another user
  }
}

/** Linux: this boot's id, or null elsewhere. */
function bootId() {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    return null;
  }
}

/** Linux: a process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat). */
function procStartOf(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 2 is "(comm)" and may hold spaces or parentheses: count from the last ")".
    const fields = s.slice(s.lastIndexOf(")") + 2).split(" ");
    const v = Number(fields[19]);
    return Number.isSafeInteger(v) ? v : null;
  } catch {
    return null;
  }
}

/**
 * Reads a lock file: null when it does not exist; `holder: null` with a `problem` when it cannot
 * be understood (empty — a creator between open and write, or a crash right there: see
 * `acquireLock` —, not JSON, or without a positive integer pid, a host and a start time).
 */
async function readLock(file) {
  let raw;
  try {
    raw = await readFile(file, "utf8");
  } catch (e) {
    if (e.code === "ENOENT") return null;
    throw e;
  }
  if (raw === "") return { raw, holder: null, problem: "is empty" };
  let h;
  try {
    h = JSON.parse(raw);
  } catch (e) {
    return { raw, holder: null, problem: `is not valid JSON (${e.message})` };
  }
  const ok =
    h !== null &&
    typeof h === "object" &&
    Number.isSafeInteger(h.pid) &&
    h.pid > 0 &&
    typeof h.host === "string" &&
    typeof h.startedAt === "string";
  if (!ok) return { raw, holder: null, problem: "does not name a pid, host and start time" };
  return { raw, holder: h, problem: null };
}

function lockedError(dir, file, holder, why, marker) {
  let msg;
  if (why === "taking over") {
    const who = holder ? `pid ${holder.pid} on host ${holder.host}` : "another process";
    msg =
      `pool folder ${dir} is locked: its lock is stale but ${who} is taking it over ` +
      `(${marker} exists); if no process uses this folder, remove ${marker}`;
  } else if (holder === null) {
    msg =
      `pool folder ${dir} is locked: its lock file ${file} ${why}; another process may be starting, ` +
      `or one crashed while taking the lock. If no process uses this folder, remove ${file}`;
  } else {
    const who = `pid ${holder.pid} on host ${holder.host} (started ${holder.startedAt})`;
    if (why === "foreign") {
      msg =
        `pool folder ${dir} is locked by ${who}, another host; a lock from another host is never ` +
        `taken over: stop that process, or if it is gone remove ${file}`;
    } else if (why === "self") {
      msg = `pool folder ${dir} is locked by ${who}: this process already holds it`;
    } else {
      msg =
        `pool folder ${dir} is locked by ${who}, which is still running; stop it first ` +
        `(if that pid is now an unrelated process, remove ${file})`;
    }
  }
  const e = new Error(msg);
  e.code = "POOL_LOCKED";
  e.dir = dir;
  e.file = file;
  e.holder = holder;
  return e;
}

/** Writes and fsyncs a small file; a file it created but could not fill is removed again. */
async function writeSynced(file, text, flag) {
  const fh = await open(file, flag, 0o644);
  try {
    await fh.writeFile(text, "utf8");
    await fh.sync();
  } catch (e) {
    await fh.close().catch(() => {});
    await unlink(file).catch(() => {});
    throw e;
  }
  await fh.close();
}


/** Whether the empty lock `file` (empty since `since`, as far as we know) is stale. */
async function emptyTooLong(file, since) {
  const now = Date.now();
  return now - (await mtimeMs(file)) >= EMPTY_GRACE_MS || now - since >= EMPTY_GRACE_MS;
}

async function mtimeMs(file) {
  try {
    return (await stat(file)).mtimeMs;
  } catch {
    return Date.now();
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
