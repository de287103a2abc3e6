// The durable audit log of one pool's events: JSON lines in `<dir>/audit/audit-<first seq>.jsonl`.
//
// Owns: queueing events without ever blocking or failing the pool (SPEC §4: a slow or failing
// consumer never slows a pool operation, and what it drops is counted), the one background writer,
// rotation by size, retention by count and age, keyset reads by `seq` (SPEC §8
// `GET /api/events?after=SEQ&limit=N`; the file search is audit-files.js), and recovery of the
// last file after a crash (audit-files.js repairs it). Does not own:
// the events themselves (the engine's `PoolEvent`s from `drainEvents()`), locking the folder (the
// caller holds `acquireLock(dir)`), when to flush.
//
// Layout: each file holds events in increasing `seq`; its name carries the seq of its first event,
// padded to 16 digits, so the names sort like the seqs and file i holds exactly the seqs in
// [first(i), first(i + 1)). A read finds its file from the names, then its line by a binary search
// on byte offsets (lines are in seq order), and reads forward from there: a page costs a few small
// reads, not a scan of 16 MiB.

import { chmod, mkdir, open, readdir, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { fsyncDir } from "./fsync.js";
import { lowerBound, readFiles, repairTail } from "./audit-files.js";

const NAME_RE = /^audit-(\d{16,})\.jsonl$/;
const MAX_LIMIT = 1000;
const EMPTY = Object.freeze([]);
/** Events name resources and contexts: the files are the owner's alone (older ones are narrowed
 * to this at open). */
const FILE_MODE = 0o600;

/**
 * @typedef {object} AuditLogOptions
 * @property {number} [maxFileBytes] a new file is started before one would grow past this
 *   (default 16 MiB; a single longer line still gets a file of its own)
 * @property {number} [maxFiles] files kept, the current one included (default 32)
 * @property {number} [maxAgeMs] a file last written longer ago than this is deleted (default 7 days)
 * @property {number} [queueLimit] events waiting for the disk at most; more are dropped and counted
 *   (default 65536)
 * @property {() => number} [now] clock for retention, epoch ms (default `Date.now`)
 */

/**
 * The audit log of a pool folder.
 *
 * `append` is synchronous, cheap and never throws: events go to an in-memory queue that one
 * background writer appends to the current file. Files are fsynced by `flush()` and `close()` (and
 * when a file is rotated), not on every write: a process crash (kill -9) loses nothing that was
 * written, a power cut may lose what came after the last `flush()`.
 */
export class AuditLog {
  #dir;
  #maxFileBytes;
  #maxFiles;
  #maxAgeMs;
  #queueLimit;
  #now;

  /** @type {{firstSeq: number, path: string}[]} files by increasing first seq; the last is current */
  #files = [];
  /** Bytes in the current file (the last of #files). */
  #size = 0;
  /** @type {import("node:fs/promises").FileHandle | null} append handle of the current file */
  #fh = null;
  /** The current file may end with a partial line (a failed write): start a new one. */
  #mustRotate = false;

  /** Events waiting for the writer; append pushes here, the writer swaps in a new array. */
  #queue = [];
  /** The batch the writer is writing (never mutated: readers may hold it). */
  #inflight = EMPTY;
  #running = null;
  /** @type {{resolve: () => void, reject: (e: Error) => void}[]} */
  #waiters = [];
  #dirty = false;
  #dirDirty = false;

  #lastSeq = 0;
  /** Highest seq ever passed to append, written or not: the floor for the next one. */
  #lastSeen = 0;
  #dropped = 0;
  #rejected = 0;
  /** @type {Error | null} */
  #lastError = null;
  /** A write failure not yet reported by a flush. */
  #unreported = null;
  #closed = false;
  #closing = null;

  /** @private use `AuditLog.open` */
  constructor(dir, o) {
    this.#dir = dir;
    this.#maxFileBytes = o.maxFileBytes;
    this.#maxFiles = o.maxFiles;
    this.#maxAgeMs = o.maxAgeMs;
    this.#queueLimit = o.queueLimit;
    this.#now = o.now;
  }

  /**
   * Opens (creating it if needed) the audit log in `<dir>/audit/`. Finds the files by name, repairs
   * the last one after a crash (a partial last line is cut off, or completed when it is whole JSON
   * missing only its newline), takes `lastSeq` from it, and applies retention.
   * @param {string} dir the pool folder
   * @param {AuditLogOptions} [options]
   * @returns {Promise<AuditLog>}
   */
  static async open(
    dir,
    {
      maxFileBytes = 16 * 2 ** 20,
      maxFiles = 32,
      maxAgeMs = 7 * 86_400_000,
      queueLimit = 65_536,
      now = Date.now,
    } = {},
  ) {
    if (typeof dir !== "string" || dir === "") throw invalid("AuditLog.open: dir must be a path");
    positiveInt("maxFileBytes", maxFileBytes);
    positiveInt("maxFiles", maxFiles);
    positiveInt("queueLimit", queueLimit);
    if (typeof maxAgeMs !== "number" || !(maxAgeMs > 0)) {
      throw invalid("AuditLog.open: maxAgeMs must be a positive number (Infinity keeps files forever)");
    }
    if (typeof now !== "function") throw invalid("AuditLog.open: now must be a function");
    const auditDir = path.join(path.resolve(dir), "audit");
    await mkdir(auditDir, { recursive: true, mode: 0o700 });
    const log = new AuditLog(auditDir, { maxFileBytes, maxFiles, maxAgeMs, queueLimit, now });
    await log.#init();
    return log;
  }

  async #init() {
    const files = [];
    for (const name of await readdir(this.#dir)) {
      const m = NAME_RE.exec(name);
      const firstSeq = m ? Number(m[1]) : NaN;
      if (!Number.isSafeInteger(firstSeq)) continue;
      const file = path.join(this.#dir, name);
      if (((await stat(file)).mode & 0o077) !== 0) await chmod(file, FILE_MODE);
      files.push({ firstSeq, path: file });
    }
    files.sort((a, b) => a.firstSeq - b.firstSeq);
    this.#files = files;
    if (files.length > 0) {
      const cur = files[files.length - 1];
      const { size, lastSeq } = await repairTail(cur.path);
      this.#size = size;
      // An empty (or unreadable) last file still bounds what came before it.
      this.#lastSeq = lastSeq ?? cur.firstSeq - 1;
      this.#lastSeen = this.#lastSeq;
    }
    await this.#retain();
  }

  /** Highest seq in the log: written, or queued to be (0 when empty). */
  get lastSeq() {
    return this.#lastSeq;
  }

  /** Events lost: the queue was full, a write failed, or they came after `close()`. */
  get dropped() {
    return this.#dropped;
  }

  /** Events refused by `append`: not an object with an integer `seq` above every seq before it. */
  get rejected() {
    return this.#rejected;
  }

  /** The last write error of the background writer, or null. */
  get lastError() {
    return this.#lastError;
  }

  /** The folder of the files (`<dir>/audit`, absolute). */
  get dir() {
    return this.#dir;
  }

  /**
   * Queues events for the disk. Synchronous; never blocks, never throws. Each event must be an
   * object with an integer `seq` higher than every seq appended before (also across restarts:
   * higher than `lastSeq` at open); others are refused and counted in `rejected`. Beyond
   * `queueLimit` events waiting for the disk, the excess is dropped and counted in `dropped`.
   * @param {readonly {seq: number}[]} events in seq order (the engine's `drainEvents()`)
   */
  append(events) {
    // Never fail the pool because of its audit log: nothing here may throw.
    if (!Array.isArray(events)) events = events == null ? EMPTY : [events];
    let added = false;
    for (let i = 0; i < events.length; i++) {
      const ev = events[i];
      let seq;
      try {
        seq = ev !== null && typeof ev === "object" ? ev.seq : undefined;
      } catch {
        seq = undefined; // a throwing getter
      }
      if (!Number.isSafeInteger(seq) || seq <= this.#lastSeen) {
        this.#rejected++;
        continue;
      }
      this.#lastSeen = seq;
      if (this.#closed || this.#inflight.length + this.#queue.length >= this.#queueLimit) {
        this.#dropped++;
        continue;
      }
      this.#queue.push(ev);
      this.#lastSeq = seq;
      added = true;
    }
    if (added) this.#kick();
  }

  /**
   * Reads events with `seq > after`, in seq order, including those still waiting for the disk.
   * @param {{after?: number, limit?: number}} [page] `limit` is clamped to 1..1000
   * @returns {Promise<{events: object[], next: number | null}>} `next` is the last returned seq
   *   when more events follow it (pass it as `after`), else null
   * @throws {TypeError & {code: "INVALID_ARGUMENT"}} when `after` or `limit` is not a number
   */
  async read({ after = 0, limit = 100 } = {}) {
    if (typeof after !== "number" || Number.isNaN(after)) throw invalid("read: after must be a number");
    if (typeof limit !== "number" || Number.isNaN(limit)) throw invalid("read: limit must be a number");
    after = Math.max(0, Math.floor(after));
    limit = Math.min(MAX_LIMIT, Math.max(1, Math.floor(limit)));
    const need = limit + 1; // one more than asked tells whether more follow

    // What is not on disk yet, as of now: the batch being written, then the queue. The writer
    // swaps arrays instead of mutating them, and append only pushes past qLen.
    const inflight = this.#inflight;
    const queue = this.#queue;
    const qLen = queue.length;
    const cutoff = inflight.length > 0 ? inflight[0].seq : qLen > 0 ? queue[0].seq : Infinity;
    const files = this.#files.slice();

    const out = [];
    if (after + 1 < cutoff && files.length > 0) await readFiles(files, after, cutoff, need, out);
    for (const [arr, len] of [[inflight, inflight.length], [queue, qLen]]) {
      for (let i = lowerBound(arr, len, after); i < len && out.length < need; i++) out.push({ ...arr[i] });
    }
    const more = out.length > limit;
    if (more) out.length = limit;
    return { events: out, next: more ? out[limit - 1].seq : null };
  }

  /**
   * Resolves when every event appended so far is written and fsynced. Rejects with the write
   * error (code "AUDIT_WRITE_FAILED") when events were lost to a failed write since the last
   * flush that reported one; they are counted in `dropped`.
   * @returns {Promise<void>}
   */
  flush() {
    return new Promise((resolve, reject) => {
      this.#waiters.push({ resolve, reject });
      this.#kick();
    });
  }

  /**
   * Flushes, then closes the current file. Events appended afterwards are dropped. Idempotent.
   * Never rejects, so that a caller's shutdown goes on (releasing the lock): a failure to write or
   * sync is counted in `dropped` and kept in `lastError`.
   * @returns {Promise<void>}
   */
  close() {
    if (this.#closing === null) {
      this.#closed = true;
      this.#closing = (async () => {
        await this.flush().catch(() => {}); // already in lastError
        while (this.#running) await this.#running;
        const fh = this.#fh;
        this.#fh = null;
        await fh?.close().catch((e) => {
          this.#failed(e, 0, "closing the current file failed");
        });
      })();
    }
    return this.#closing;
  }

  #kick() {
    if (this.#running) return;
    this.#running = this.#run()
      .catch((e) => this.#failed(e, 0, "the audit writer stopped"))
      .finally(() => {
        this.#running = null;
        if (this.#queue.length > 0 || this.#waiters.length > 0) this.#kick();
      });
  }

  /** The background writer: drains the queue batch by batch, then serves flushes. */
  async #run() {
    await null; // let append return first
    for (;;) {
      if (this.#queue.length > 0) {
        const batch = this.#queue;
        this.#queue = [];
        this.#inflight = batch;
        await this.#writeBatch(batch);
        this.#inflight = EMPTY;
        continue;
      }
      if (this.#waiters.length > 0) {
        const waiters = this.#waiters;
        this.#waiters = [];
        try {
          await this.#sync();
        } catch (e) {
          this.#failed(e, 0, "written events may not be on disk (fsync failed)");
        }
        const err = this.#unreported;
        this.#unreported = null;
        for (const w of waiters) err ? w.reject(err) : w.resolve();
        continue;
      }
      return;
    }
  }

  async #writeBatch(batch) {
    let done = 0; // events of the batch written or given up
    let lines = [];
    let bytes = 0;
    try {
      for (const ev of batch) {
        let line;
        try {
          line = JSON.stringify(ev);
        } catch {
          line = undefined; // a BigInt, a cycle, a throwing toJSON
        }
        if (typeof line !== "string" || line[0] !== "{") {
          done++;
          this.#rejected++; // not serializable as a JSON object
          continue;
        }
        line += "\n";
        const len = Buffer.byteLength(line);
        const full = this.#size + bytes > 0 && this.#size + bytes + len > this.#maxFileBytes;
        if (this.#files.length === 0 || this.#mustRotate || full) {
          await this.#appendLines(lines);
          done += lines.length;
          lines = [];
          bytes = 0;
          await this.#rotate(ev.seq);
        }
        lines.push(line);
        bytes += len;
      }
      await this.#appendLines(lines);
      done += lines.length;
    } catch (e) {
      this.#failed(e, batch.length - done);
    }
  }

  async #appendLines(lines) {
    if (lines.length === 0) return;
    if (this.#fh === null) {
      this.#fh = await open(this.#files[this.#files.length - 1].path, "a", FILE_MODE);
    }
    const buf = Buffer.from(lines.join(""));
    const before = this.#size;
    try {
      for (let off = 0; off < buf.length; ) {
        const { bytesWritten } = await this.#fh.write(buf, off, buf.length - off);
        off += bytesWritten;
      }
    } catch (e) {
      // Cut a partial line off; if even that fails, the next event starts a new file.
      try {
        await this.#fh.truncate(before);
      } catch {
        this.#mustRotate = true;
      }
      throw e;
    }
    this.#size += buf.length;
    this.#dirty = true;
  }

  /** Starts a new current file for events from `firstSeq` on, then applies retention. */
  async #rotate(firstSeq) {
    if (this.#fh !== null) {
      const fh = this.#fh;
      this.#fh = null;
      try {
        if (this.#dirty) await fh.sync();
        this.#dirty = false;
      } finally {
        await fh.close().catch(() => {});
      }
    }
    const file = path.join(this.#dir, `audit-${String(firstSeq).padStart(16, "0")}.jsonl`);
    const fh = await open(file, "a", FILE_MODE);
    const { size } = await fh.stat();
    this.#fh = fh;
    this.#size = size;
    this.#mustRotate = false;
    this.#dirDirty = true;
    const last = this.#files[this.#files.length - 1];
    if (last?.path !== file) this.#files.push({ firstSeq, path: file });
    try {
      await this.#retain();
    } catch (e) {
      this.#lastError = e; // retention is best effort; the events are written
    }
  }

  /**
   * Deletes the oldest files beyond `maxFiles`, and files last written more than `maxAgeMs` ago
   * (by mtime, against `now()`); never the current (last) file.
   */
  async #retain() {
    let now;
    try {
      now = this.#now();
    } catch (e) {
      this.#lastError = e;
      now = NaN; // no age-based deletion this time
    }
    const keep = [];
    let excess = this.#files.length - this.#maxFiles;
    const last = this.#files.length - 1;
    for (let i = 0; i < this.#files.length; i++) {
      const f = this.#files[i];
      let drop = false;
      if (i < last) {
        if (excess > 0) {
          drop = true;
        } else {
          const st = await stat(f.path).catch(() => null);
          drop = st === null || now - st.mtimeMs > this.#maxAgeMs;
        }
      }
      if (drop) {
        try {
          await unlink(f.path);
        } catch (e) {
          if (e.code !== "ENOENT") {
            this.#lastError = e;
            keep.push(f);
            continue;
          }
        }
        excess--;
        this.#dirDirty = true;
      } else {
        keep.push(f);
      }
    }
    this.#files = keep;
  }

  async #sync() {
    if (this.#fh !== null && this.#dirty) {
      await this.#fh.sync();
      this.#dirty = false;
    }
    if (this.#dirDirty) {
      await fsyncDir(this.#dir);
      this.#dirDirty = false;
    }
  }

  #failed(e, lost, what = `${lost} event(s) could not be written`) {
    this.#dropped += lost;
    const err = new Error(`audit log ${this.#dir}: ${what}: ${e.message}`, { cause: e });
    err.code = "AUDIT_WRITE_FAILED";
    this.#lastError = err;
    this.#unreported = err;
  }
}

function positiveInt(name, v) {
  if (!Number.isSafeInteger(v) || v < 1) throw invalid(`AuditLog.open: ${name} must be a positive integer`);
}

function invalid(message) {
  const e = new TypeError(message);
  e.code = "INVALID_ARGUMENT";
  return e;
}
