// Operator changes applied in memory and not yet on disk, each with its undo.
//
// Owns: the order of those changes, settling them when a snapshot that contains them is stored,
// and undoing them when a write fails. Does not own: the changes themselves or the writes
// (open-pool.js), what a failure is called (storage-health.js).
//
// A failed write undoes every change still waiting, newest first — also those applied after the
// failed write's snapshot was taken: undoing only the older ones would run their undos under
// newer changes (a block undone beneath a later unblock of the same resource would come back
// when that unblock is undone in turn). Each waiting caller then gets the failure: nothing it
// asked for is in force.

export class ChangeLog {
  /** @type {{undo: (() => void) | null, resolve: () => void, reject: (e: Error) => void}[]} */
  #waiting = [];
  #onUndoError;

  /** @param {(e: Error) => void} onUndoError where an undo that throws is reported */
  constructor(onUndoError) {
    this.#onUndoError = onUndoError;
  }

  /** Changes waiting for the disk; a snapshot taken now contains the first `size`. */
  get size() {
    return this.#waiting.length;
  }

  /**
   * Records a change just applied in memory (`undo` null: it changed nothing, but reports a
   * state that must be on disk first). Resolves once a snapshot containing it is stored; rejects
   * with the write's error once it is undone.
   */
  add(undo) {
    return new Promise((resolve, reject) => this.#waiting.push({ undo, resolve, reject }));
  }

  /** The first `n` changes are on disk. */
  saved(n) {
    for (const c of this.#waiting.splice(0, n)) c.resolve();
  }

  /** A write failed: undoes every waiting change, newest first, and rejects each with `error`. */
  failed(error) {
    const undone = this.#waiting.splice(0);
    for (let i = undone.length - 1; i >= 0; i--) {
      try {
        undone[i].undo?.();
      } catch (e) {
        this.#onUndoError(e);
      }
    }
    for (const c of undone) c.reject(error);
  }
}
