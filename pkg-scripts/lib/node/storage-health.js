// Whether the pool folder takes durable writes, and what a refused durable step answers.
//
// Owns: the storage state of one pool folder (healthy, or failing: since when, why, and which
// writes are failing), the `STORAGE_UNAVAILABLE` error that every refused durable step throws
// (503 `urn:repute:problem:storage-unavailable` with `Retry-After` at the HTTP boundary,
// problems.js), the free-space check (`statfs`) that admits an operator action before it
// changes anything, and the reason `/readyz` gives. Does not own: the writes (snapshot-store.js,
// reservations.js), what is undone when one fails (change-log.js) or when writes are retried
// (open-pool.js).
//
// A write is "storage" when the file system refused it (a Node system error: it carries a
// `syscall`): ENOSPC, EDQUOT, EIO, EROFS, EACCES… Each kind of write reports itself under a
// `source` ("snapshot", "reservation"), so that one that succeeds does not hide another that
// still fails: the folder is healthy again only when every source has succeeded since its
// failure. An operator action refused for want of free space fails the source "space" (so
// `/readyz` says so before any write has failed), cleared by `spaceCheck` once there is room.
// Only transitions are reported to `onError` (a full disk would otherwise log every second).

import { statfsSync } from "node:fs";

/** Seconds a client is told to wait before retrying a refused durable step. */
export const RETRY_AFTER_SECONDS = 5;

/** True for an error the file system raised (as opposed to a refusal by our own rules). */
export function isStorageError(e) {
  return e !== null && typeof e === "object" && typeof e.syscall === "string";
}

/** The error of a durable step refused because the folder takes no writes (see the header). */
export function storageUnavailable(detail) {
  const e = new Error(`storage unavailable: ${detail}; nothing was changed`);
  e.code = "STORAGE_UNAVAILABLE";
  e.retryAfter = RETRY_AFTER_SECONDS;
  return e;
}

/** "ENOSPC (write)" or the message: what a failed write says, without the folder's path. */
const why = (e) => (isStorageError(e) ? `${e.code} (${e.syscall})` : String(e?.message ?? e));

export class StorageHealth {
  #dir;
  #onError;
  /** source → { error, since } for each kind of write failing now. */
  #failing = new Map();

  /** @param {string} dir the pool folder @param {{onError?: (e: Error) => void}} [options] */
  constructor(dir, { onError = () => {} } = {}) {
    this.#dir = dir;
    this.#onError = onError;
  }

  /** True while any kind of write is failing. */
  get failing() {
    return this.#failing.size > 0;
  }

  /** Records that a `source` write failed with `error` (or, for "space", a message). */
  failed(source, error) {
    const what = typeof error === "string" ? error : why(error);
    const known = this.#failing.get(source);
    if (known) {
      known.what = what;
      return;
    }
    const first = this.#failing.size === 0;
    this.#failing.set(source, { what, since: new Date() });
    if (first) this.#onError(new Error(`storage failing: ${source}: ${typeof error === "string" ? error : error?.message}`));
  }

  /** Records that a `source` write succeeded. */
  succeeded(source) {
    if (this.#failing.delete(source) && this.#failing.size === 0) {
      this.#onError(new Error("storage recovered: durable writes succeed again"));
    }
  }

  /** `{reason, detail}` while failing (for `/readyz`), else null. The detail names the error
   * code, never the folder's path (`/readyz` is open). */
  readiness() {
    if (!this.failing) return null;
    const parts = [...this.#failing].map(([source, f]) => `${source}: ${f.what} (since ${f.since.toISOString()})`);
    return { reason: "storage-unavailable", detail: parts.join("; ") };
  }

  /** The refusal for the current failure (a 503 to the caller). */
  unavailable() {
    const [source, f] = this.#failing.entries().next().value ?? ["storage", { what: "unknown" }];
    return storageUnavailable(`${source}: ${f.what}`);
  }

  /** Bytes free for this process in the folder's file system, or null where `statfs` fails. */
  freeBytes() {
    try {
      const s = statfsSync(this.#dir);
      return s.bavail * s.bsize;
    } catch {
      return null;
    }
  }

  /**
   * Throws STORAGE_UNAVAILABLE, before anything changes, when the folder has fewer than `need`
   * bytes free, or when writes are failing and `probe()` (a small real write) fails too.
   * Otherwise returns: the caller applies its change and the write it awaits decides.
   */
  admit(need, probe) {
    if (!this.spaceCheck(need)) throw this.unavailable();
    if (this.failing && !probe()) throw this.unavailable();
  }

  /** Whether `need` bytes are free (true where `statfs` cannot tell); fails or clears the
   * source "space" accordingly. */
  spaceCheck(need) {
    const free = this.freeBytes();
    if (free !== null && free < need) {
      this.failed("space", `${free} bytes free in the data folder, ${need} needed to save a change`);
      return false;
    }
    this.succeeded("space");
    return true;
  }
}
