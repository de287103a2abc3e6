// The edge pool's storage: SQLite tables in a Durable Object (`ctx.storage.sql`), written in one
// transaction per checkpoint (`ctx.storage.transactionSync`), so a reader — the object after
// an eviction or a crash — sees the last complete checkpoint and nothing torn.
//
// Tables:
// - `meta (k, v)`: `head` — the snapshot's head as the engine writes it (`Pool.snapshotPart()`:
//   revision, takenAt, counters, config); `reserve` — `{fencing, eventSeq}`, the tokens and event
//   seqs reserved ahead (a restart starts above them, so none handed out is handed out again);
//   `key` — the resource-id key (hex).
// - `resources (k, chunk, part)`: one resource per key, its three snapshot lines (`registered`
//   entry, `blocklist` entry or "", cells) in chunks of at most CHUNK characters (a row holds
//   at most 2 MB; a character is at most 3 bytes of UTF-8, or 4 per surrogate pair, and a chunk
//   never ends between the two halves of a pair). The key is
//   the kind's code then the value's UTF-8 bytes in hex: the tables' byte order is the
//   snapshot's canonical order (`rowKey`, lib/snapshot-parts.js), so `ORDER BY k` joins back
//   (`compose`, the same file) the exact bytes of `Pool.snapshot()`.
//   The blocklist is the second line of each resource's row: a block is written with the
//   resource it blocks, in one row.
// - `events (seq, event)`: the audit log (the events as served), all but the newest `keep` rows
//   deleted at each checkpoint.
// Does not own: what changed (durable-host.js), the snapshot format (the engine's).

import { compose } from "../snapshot-parts.js";

/** Characters per chunk of a resource row: ≤ 1.5 MB of UTF-8, under the 2 MB row limit. */
export const CHUNK = 512 * 1024;

const isHighSurrogate = (code) => code >= 0xd800 && code < 0xdc00;

export class SqlStore {
  #storage;
  #sql;
  /** A fault to inject (tests): throw after this many row writes of the next checkpoint. */
  failAfter = null;

  /** @param storage a Durable Object's `ctx.storage` (SQLite-backed) */
  constructor(storage) {
    this.#storage = storage;
    this.#sql = storage.sql;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)`);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS resources (k TEXT NOT NULL, chunk INTEGER NOT NULL, part TEXT NOT NULL, PRIMARY KEY (k, chunk)) WITHOUT ROWID`);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, event TEXT NOT NULL)`);
  }

  #meta(k) {
    const rows = this.#sql.exec("SELECT v FROM meta WHERE k = ?", k).toArray();
    return rows.length ? rows[0].v : null;
  }

  /** The resource-id key: made (from `random`) and stored on the first start. */
  key(random) {
    let hex = this.#meta("key");
    if (hex === null) {
      hex = Array.from(random(32), (b) => b.toString(16).padStart(2, "0")).join("");
      this.#sql.exec("INSERT INTO meta (k, v) VALUES ('key', ?)", hex);
    }
    return Uint8Array.from(hex.match(/../g), (h) => parseInt(h, 16));
  }

  /** `{fencing, eventSeq}` reserved so far (zeros on a first start). */
  reserve() {
    const v = this.#meta("reserve");
    return v === null ? { fencing: 0, eventSeq: 0 } : JSON.parse(v);
  }

  /** A fault to inject (tests): every `writeReserve` throws while this is set. */
  failReserve = false;

  /** Raises the reservation (one row, atomic). */
  writeReserve(reserve) {
    if (this.failReserve) throw Object.assign(new Error("injected storage failure"), { code: "STORAGE_UNAVAILABLE" });
    this.#sql.exec("INSERT OR REPLACE INTO meta (k, v) VALUES ('reserve', ?)", JSON.stringify(reserve));
  }

  /** A fault to inject (tests): every `load` throws while this is set. */
  failLoad = false;

  /** The stored snapshot, composed (null when nothing was ever checkpointed), and its head. */
  load() {
    if (this.failLoad) throw Object.assign(new Error("injected storage failure"), { code: "STORAGE_UNAVAILABLE" });
    const head = this.#meta("head");
    if (head === null) return null;
    const parts = [];
    let key = null;
    let text = "";
    for (const row of this.#sql.exec("SELECT k, part FROM resources ORDER BY k, chunk")) {
      if (row.k !== key) {
        if (key !== null) parts.push(text);
        key = row.k;
        text = "";
      }
      text += row.part;
    }
    if (key !== null) parts.push(text);
    return { head, snapshot: compose(head, parts), resources: parts.length };
  }

  /**
   * One checkpoint, in one transaction: `head`; for each of `writes` ({key, part}) its rows
   * replaced (`part` null: deleted) — or, with `replaceAll`, every row replaced by `writes`;
   * `events` appended and all but the newest `keep` deleted; `reserve`. Returns the rows and
   * bytes written. Either all of it is stored, or (it throws) none.
   */
  commit({ head, writes, replaceAll = false, events, keep, reserve }) {
    let rows = 0;
    let bytes = 0;
    const fault = this.failAfter;
    this.failAfter = null;
    const counted = (cursor, size) => {
      rows += cursor.rowsWritten;
      bytes += size;
      if (fault !== null && rows > fault) throw Object.assign(new Error("injected storage failure"), { code: "STORAGE_UNAVAILABLE" });
    };
    this.#storage.transactionSync(() => {
      if (replaceAll) this.#sql.exec("DELETE FROM resources");
      for (const { key, part } of writes) {
        if (!replaceAll) counted(this.#sql.exec("DELETE FROM resources WHERE k = ?", key), 0);
        if (part === null) continue;
        let piece;
        for (let i = 0, chunk = 0; i < part.length || chunk === 0; i += piece.length, chunk++) {
          piece = part.slice(i, i + CHUNK);
          // Never split a surrogate pair: a lone half would be stored as U+FFFD.
          if (piece.length === CHUNK && isHighSurrogate(piece.charCodeAt(CHUNK - 1))) piece = piece.slice(0, -1);
          counted(this.#sql.exec("INSERT INTO resources (k, chunk, part) VALUES (?, ?, ?)", key, chunk, piece), key.length + piece.length);
        }
      }
      for (const e of events) {
        const text = JSON.stringify(e);
        counted(this.#sql.exec("INSERT OR REPLACE INTO events (seq, event) VALUES (?, ?)", e.seq, text), text.length);
      }
      if (events.length > 0) {
        // The newest `keep` rows, not seqs: seqs jump past the reservation at every restart.
        counted(this.#sql.exec("DELETE FROM events WHERE seq < (SELECT seq FROM events ORDER BY seq DESC LIMIT 1 OFFSET ?)", keep - 1), 0);
      }
      counted(this.#sql.exec("INSERT OR REPLACE INTO meta (k, v) VALUES ('head', ?)", head), head.length);
      counted(this.#sql.exec("INSERT OR REPLACE INTO meta (k, v) VALUES ('reserve', ?)", JSON.stringify(reserve)), 0);
    });
    return { rows, bytes };
  }

  /** The audit log from `after`, at most `limit` events, oldest first. */
  events(after, limit) {
    return this.#sql.exec("SELECT event FROM events WHERE seq > ? ORDER BY seq LIMIT ?", after, limit).toArray().map((r) => JSON.parse(r.event));
  }

  /** Rows and bytes stored (for the benchmark and the README's limits). */
  size() {
    const count = (t) => this.#sql.exec(`SELECT count(*) AS n FROM ${t}`).one().n;
    return { resourceRows: count("resources"), eventRows: count("events"), databaseBytes: this.#sql.databaseSize };
  }
}
