// Durable JSON snapshots of one pool: `<dir>/snapshot.json` and its backup `snapshot.prev.json`.
//
// Owns: atomic, crash-safe replacement of the snapshot file; the never-backwards guard on
// `revision` (SPEC §6: compare-and-set, not read-then-write); telling a damaged file apart from a
// missing one, in words that never quote the file (it holds credentials). Does not own: locking
// the folder (the caller holds `acquireLock(dir)`), what the snapshot means (the engine's
// `Pool.snapshot()` / `Pool.restore()`), when to write.
//
// Why not `write-file-atomic` (npm's own temp-file + fsync + rename): it would cover only the
// easy third of a write, and not the way this store needs it — it names its temporary file itself
// (`<file>.<hash>`, not `snapshot.json.tmp-<pid>-<n>`, which `open` relies on to clean up after a
// crashed writer); it issues a single `write()` and ignores a short count, so on a nearly full
// disk it can fsync and rename a truncated file over a good snapshot; the backup link and the
// directory fsync would still be ours; its current major (8) requires Node 22 while this package
// supports Node 20; and it would be the package's first runtime dependency (with
// `signal-exit`). The steps below are the whole of it.

import { copyFile, link, mkdir, open, readFile, readdir, rename, unlink } from "node:fs/promises";
import { constants as fsConstants } from "node:fs";
import path from "node:path";
import { fsyncDir } from "./fsync.js";
import { jsonProblem } from "./json-problem.js";

const MAIN = "snapshot.json";
const PREV = "snapshot.prev.json";
const FORMAT = "repute-snapshot";
/** Temporary files of a write: `snapshot.json.tmp-<pid>-<n>` and `snapshot.prev.json.tmp-…`. */
const TMP_RE = /^snapshot(?:\.prev)?\.json\.tmp-(\d+)-\d+$/;
/** Errors of `link()` on file systems without hard links: the backup is copied instead. */
const NO_LINK = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK", "EACCES"]);

/**
 * @typedef {object} StoredSnapshot
 * @property {string} json the file's text, exactly as stored (give it to `Pool.restore`)
 * @property {number} revision its `revision` field
 */

/**
 * Atomic, never-backwards snapshot files in one pool folder.
 *
 * A write goes: the new text to `snapshot.json.tmp-<pid>-<n>`, fsync; a hard link
 * `snapshot.prev.json.tmp-<pid>-<n>` to the current `snapshot.json`; the temporary file renamed
 * over `snapshot.json`; the link renamed over `snapshot.prev.json`; the folder fsynced. So
 * `snapshot.json` never disappears, not even for an instant, and a crash at any moment leaves the
 * old or the new snapshot in it, and a whole backup that is older than it.
 *
 * Writes are serialized inside the process and compared with the revision held in memory, so
 * concurrent `write()` calls never leave a lower revision on disk.
 *
 * Files written are readable by their owner only (mode 0600): a snapshot holds resource values,
 * which may carry credentials.
 */
export class SnapshotStore {
  #dir;
  #main;
  #prev;
  /** @type {number | null} revision of the snapshot stored in `snapshot.json` (see `open`) */
  #revision = null;
  /** "absent" | "good" | "damaged": what `snapshot.json` held at `open`, then what we wrote. */
  #state = "absent";
  /** Tail of the chain that serializes writes. */
  #chain = Promise.resolve();
  #n = 0;
  #closed = false;

  /** @param {string} dir use `SnapshotStore.open` */
  constructor(dir) {
    this.#dir = dir;
    this.#main = path.join(dir, MAIN);
    this.#prev = path.join(dir, PREV);
  }

  /**
   * Opens the store in `dir` (created if missing). Does not lock: the caller holds the folder's
   * lock. Never throws for a damaged snapshot (`read()` does). Removes temporary files left by
   * writers that crashed (their pid is gone). The stored revision it starts from is that of
   * `snapshot.json`; when that file is damaged, that of the backup (a lower bound of what was
   * stored), when both are unusable, none.
   * @param {string} dir
   * @returns {Promise<SnapshotStore>}
   */
  static async open(dir) {
    if (typeof dir !== "string" || dir === "") throw new TypeError("SnapshotStore.open: dir must be a path");
    dir = path.resolve(dir);
    await mkdir(dir, { recursive: true });
    const store = new SnapshotStore(dir);
    await store.#init();
    return store;
  }

  async #init() {
    for (const name of await readdir(this.#dir)) {
      const m = TMP_RE.exec(name);
      if (m && !pidAlive(Number(m[1]))) await unlink(path.join(this.#dir, name)).catch(() => {});
    }
    try {
      const s = await this.read();
      this.#state = s === null ? "absent" : "good";
      this.#revision = s === null ? null : s.revision;
    } catch (e) {
      if (e.code !== "SNAPSHOT_DAMAGED") throw e;
      this.#state = "damaged";
      const b = await this.readBackup().catch(() => null);
      this.#revision = b === null ? null : b.revision;
    }
  }

  /** The folder of this store (absolute). */
  get dir() {
    return this.#dir;
  }

  /**
   * Revision of the snapshot currently stored (see `open`), or null when there is none.
   * @returns {number | null}
   */
  get lastRevision() {
    return this.#revision;
  }

  /**
   * Reads `<dir>/snapshot.json`.
   * @returns {Promise<StoredSnapshot | null>} null when the file does not exist
   * @throws {Error & {code: "SNAPSHOT_DAMAGED", file: string}} when it is truncated, not JSON, not
   *   a repute snapshot or has no valid `revision`; the message names the file, the problem and
   *   the backup to start from. The file is left as it is.
   */
  async read() {
    try {
      return await readSnapshot(this.#main);
    } catch (e) {
      if (e.code !== "SNAPSHOT_DAMAGED") throw e;
      let hint;
      try {
        const b = await readSnapshot(this.#prev);
        hint = b
          ? `the previous good snapshot is ${this.#prev} (revision ${b.revision}); ` +
            "start with --from-backup to use it"
          : `there is no backup (${this.#prev} does not exist)`;
      } catch (be) {
        hint = `the backup is unusable too (${be.message})`;
      }
      throw damaged(this.#main, `${e.problem}; ${hint}`);
    }
  }

  /**
   * Reads the backup `<dir>/snapshot.prev.json` (the snapshot before the last write).
   * @returns {Promise<StoredSnapshot | null>} null when there is no backup
   * @throws {Error & {code: "SNAPSHOT_DAMAGED", file: string}}
   */
  async readBackup() {
    return readSnapshot(this.#prev);
  }

  /**
   * Stores a snapshot unless it would go backwards.
   *
   * Writes are queued behind each other; each compares `revision` with the revision stored at
   * that point. If `snapshot.json` was found damaged at `open`, it is kept aside as
   * `snapshot.damaged-<epoch ms>-<pid>.json` (never deleted, never made the backup) when the
   * first write replaces it.
   *
   * @param {string | Iterable<string>} json the snapshot text (`Pool.snapshot()`), or its pieces
   *   in order (written one by one, so a large snapshot is never one string); its `revision`
   *   field must equal `revision` (it is not parsed here, to keep writes cheap). Pieces are read
   *   when the write's turn comes, once.
   * @param {number} revision non-negative integer
   * @returns {Promise<boolean>} true when stored; false when refused because `revision` is lower
   *   than the stored one (equal is stored)
   * @throws {TypeError & {code: "INVALID_ARGUMENT"}} bad arguments
   * @throws {Error & {code: "SNAPSHOT_STORE_CLOSED"}} after `close()`
   */
  write(json, revision) {
    if (typeof json !== "string" && (json === null || typeof json !== "object" || typeof json[Symbol.iterator] !== "function")) {
      return Promise.reject(invalid("json must be a string or an iterable of strings"));
    }
    if (!Number.isSafeInteger(revision) || revision < 0) {
      return Promise.reject(invalid("revision must be a non-negative integer"));
    }
    if (this.#closed) return Promise.reject(closedError(this.#dir));
    const result = this.#chain.then(() => this.#write(json, revision));
    this.#chain = result.catch(() => {});
    return result;
  }

  async #write(json, revision) {
    if (this.#revision !== null && revision < this.#revision) return false;
    const n = ++this.#n;
    const tmp = `${this.#main}.tmp-${process.pid}-${n}`;
    const prevTmp = `${this.#prev}.tmp-${process.pid}-${n}`;
    let keptAsPrev = false;
    try {
      const fh = await open(tmp, "w", 0o600);
      try {
        await fh.writeFile(json, "utf8"); // pieces: each written whole (short writes retried)
        await fh.sync();
      } finally {
        await fh.close();
      }
      // Give the current file a second name before it loses its own, so that snapshot.json is
      // never missing, not even for an instant.
      if (this.#state === "good") {
        keptAsPrev = await secondName(this.#main, prevTmp, true);
      } else if (this.#state === "damaged") {
        const aside = path.join(this.#dir, `snapshot.damaged-${Date.now()}-${process.pid}.json`);
        await secondName(this.#main, aside, false); // kept for inspection, never the backup
      }
      await rename(tmp, this.#main);
    } catch (e) {
      await unlink(tmp).catch(() => {});
      if (keptAsPrev) await unlink(prevTmp).catch(() => {});
      throw e;
    }
    this.#state = "good";
    this.#revision = revision;
    // Only now does the old snapshot replace the backup: a crash before this line leaves an older
    // backup (and a temporary file that the next open removes), never one equal to snapshot.json.
    if (keptAsPrev) await rename(prevTmp, this.#prev);
    await fsyncDir(this.#dir);
    return true;
  }

  /** Waits for the writes already issued, then refuses new ones. Idempotent. */
  async close() {
    this.#closed = true;
    await this.#chain;
  }
}

/**
 * Gives `file` the extra name `name` (a hard link, or where the file system has none, an
 * fsynced copy). Returns false when `file` does not exist. `replace`: an old `name` is removed
 * first.
 */
async function secondName(file, name, replace) {
  if (replace) await unlink(name).catch(() => {});
  try {
    await link(file, name);
  } catch (e) {
    if (e.code === "ENOENT") return false;
    if (!NO_LINK.has(e.code)) throw e;
    await copyFile(file, name, replace ? 0 : fsConstants.COPYFILE_EXCL);
    const fh = await open(name, "r+");
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  }
  return true;
}

/** Reads and checks one snapshot file; null when it does not exist. */
async function readSnapshot(file) {
  let json;
  try {
    json = await readFile(file, "utf8");
  } catch (e) {
    if (e.code === "ENOENT") return null;
    throw e;
  }
  const size = Buffer.byteLength(json);
  let doc;
  try {
    doc = JSON.parse(json);
  } catch (e) {
    throw damaged(file, `is ${jsonProblem(e)}, ${size} bytes`);
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    throw damaged(file, "is not a JSON object");
  }
  if (!("format" in doc)) throw damaged(file, "has no format field");
  if (doc.format !== FORMAT) {
    throw damaged(file, `is not a repute snapshot (its format is not "${FORMAT}")`);
  }
  if (!("revision" in doc)) throw damaged(file, "has no revision field");
  if (!Number.isSafeInteger(doc.revision) || doc.revision < 0) {
    throw damaged(file, "has an invalid revision (not an integer in 0..2^53)");
  }
  return { json, revision: doc.revision };
}

function damaged(file, problem) {
  const e = new Error(`${file} ${problem}`);
  e.code = "SNAPSHOT_DAMAGED";
  e.file = file;
  e.problem = problem;
  return e;
}

function invalid(message) {
  const e = new TypeError(`SnapshotStore.write: ${message}`);
  e.code = "INVALID_ARGUMENT";
  return e;
}

function closedError(dir) {
  const e = new Error(`the snapshot store of ${dir} is closed`);
  e.code = "SNAPSHOT_STORE_CLOSED";
  return e;
}

function pidAlive(pid) {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code !== "ESRCH";
  }
}
