// The Node host's snapshot writes (open-pool.js): a snapshot stored through the store
// (snapshot-store.js, atomic and never back in revision) with the bookkeeping around it — the
// revision and size last written, the folder's health, the checkpoint metrics — and the
// operator changes waiting for it settled (change-log.js): saved once on disk, undone when
// the write fails. Callers serialize the writes.

import { revisionOf } from "../counters.js";
import { isStorageError, storageUnavailable } from "./storage-health.js";

export class SnapshotWriter {
  #store;
  #health;
  #changes;
  #metrics;
  #onError;
  #monotonicMs;
  #lastRevision = -1;
  /** Length of the last snapshot written (what the next one needs, about). */
  #lastBytes = 0;

  /** `store` a SnapshotStore, `health` the folder's StorageHealth, `changes` the ChangeLog,
   * `metrics` the host's (checkpointed / checkpointFailed). */
  constructor({ store, health, changes, metrics, onError, monotonicMs }) {
    this.#store = store;
    this.#health = health;
    this.#changes = changes;
    this.#metrics = metrics;
    this.#onError = onError;
    this.#monotonicMs = monotonicMs;
  }

  get lastBytes() {
    return this.#lastBytes;
  }

  /**
   * Stores a snapshot that contains the first `covered` waiting changes (`json`, its text; or a
   * stepped one's `{head, pieces}`), and settles them; when the write fails, every waiting
   * change is undone (change-log.js) and this throws. Skipped when nothing changed since the
   * last write — unless writes are failing: then every write is also a probe of the folder.
   */
  async persist(json, covered, started) {
    const revision = revisionOf(json.head ?? json);
    if (revision !== this.#lastRevision || this.#health.failing) {
      try {
        await this.put(json, revision, started);
      } catch (e) {
        this.#changes.failed(e);
        throw e;
      }
    }
    this.#changes.saved(covered);
  }

  /** `store.write` of `json` (a snapshot's text, or a stepped one's `{pieces}`) with the
   * bookkeeping; a file-system error becomes STORAGE_UNAVAILABLE. */
  async put(json, revision, started = this.#monotonicMs()) {
    let stored;
    let bytes = typeof json === "string" ? json.length : 0;
    const text = typeof json === "string" ? json : (function* counted() {
      for (const piece of json.pieces()) {
        bytes += piece.length;
        yield piece;
      }
    })();
    try {
      stored = await this.#store.write(text, revision);
    } catch (e) {
      this.#metrics.checkpointFailed();
      if (!isStorageError(e)) {
        this.#onError(e);
        throw e;
      }
      this.#health.failed("snapshot", e);
      throw Object.assign(storageUnavailable(`snapshot: ${e.code} (${e.syscall})`), { cause: e });
    }
    if (!stored) {
      this.#metrics.checkpointFailed();
      const e = Object.assign(new Error(`snapshot revision ${revision} refused: the stored one is newer`), { code: "STALE_SNAPSHOT" });
      this.#onError(e);
      throw e;
    }
    this.#health.succeeded("snapshot");
    this.#lastRevision = revision;
    this.#lastBytes = bytes;
    this.#metrics.checkpointed(this.#monotonicMs() - started);
  }
}
