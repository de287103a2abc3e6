// `openPool`: one `Pool` in this process, made durable on disk — the Node shell over the host
// core (lib/host/host-core.js, which owns events, counters, waits, metrics and the call wiring;
// this file adds the folder, its lock, the audit and outcome logs, timers, signals, the prober).
//
// - Snapshots are written atomically (snapshot-store.js, through snapshot-writer.js) every
//   `checkpointMs`, after a burst of `burst` mutations, and on close / SIGTERM / SIGINT, taken
//   in short steps that leave the event loop to the workers (stepped-snapshot.js: only what
//   was touched since is retaken, and what is stored is the pool as it was when the last step
//   ran); operator actions (register,
//   deregister, block, unblock, setConfig, snapshot import) are on disk before their promise resolves
//   (concurrent ones share one write). A write never goes back in revision; one process owns
//   the folder (lock.js).
// - Fencing tokens and event seqs are reserved ahead in `reserve.json` (reservations.js), so
//   even after a `kill -9` a restarted pool never hands out a token or a seq that was used
//   before the crash (it skips ahead instead; after a clean close it continues where it stopped).
// - Events go to the audit log (audit-log.js), to `on(type, cb)` / `addEventListener`
//   listeners and to `events()` async iterators; a failing or slow consumer never blocks or
//   fails a pool call, and what is dropped is counted.
// - A recovery prober (prober.js) runs when `prober` is given.
// - Every resource has an opaque id (`resource-id.js`) under a key kept in the folder
//   (`resource-id.key`, key-file.js); events carry it beside their masked value.
//
// When the disk refuses a write (full, read-only, failing), no call may crash the process, no
// caller may be told a change is saved when it is not, and a refused call changes nothing. The
// design, and why:
// - Operator actions are admitted before they change anything (storage-health.js): refused with
//   STORAGE_UNAVAILABLE when the folder has less free space than the last snapshot needs (plus a
//   margin), or when writes are failing and a small real write (the reservation) fails too. This
//   catches a full disk without touching the pool.
// - An admitted action that still meets a failed write (space taken meanwhile, a read-only
//   remount, EIO) is rolled back (change-log.js): register by deregistering what it added, block
//   and unblock by restoring the block that was there, deregister by reinstating the resource
//   from its snapshot part taken just before (`Pool.reinstate`: its cells and history come back,
//   its leases stay ended — no token is handed out twice), a config change by setting the
//   config before back. Hot-path calls keep running while the write is in flight, so rolling
//   back by restoring an earlier snapshot would lose their leases; an inverse call loses nothing
//   of theirs (a lease taken on a resource whose registration is rolled back ends with it). No
//   operator action but an import copies the whole pool on the event loop.
// - A config change that loses state (a smaller window or event buffer: what it drops cannot
//   come back) or whose undo a grown pool could refuse (larger limits) has no inverse
//   (operator-undo.js `configUndoable`), and an import cannot be swapped back (leases taken from
//   the imported pool during its write would be lost, their tokens handed out again). Both are
//   written ahead: the new state is stored beside the live pool, which goes on serving, and only
//   then made live (config: the live parts taken in steps under a scratch head with the change,
//   each part's windows cut in turn for a smaller window, write-ahead.js; import: the imported
//   pool itself).
// - The hot path (acquire, report, release, renew) writes nothing but the reservation, and only
//   rarely: it is reserved ahead early, so a full disk is reported long before the edge and the
//   pool keeps serving workers from what is left. An acquire whose token the reservation does
//   not cover, when it cannot be extended, is refused before the engine is called. Events whose
//   seqs it does not cover are held back (delivered to nobody, so a restart may reuse their
//   seqs harmlessly) until it can be extended, and while any are held back the hot path is
//   refused, so that they stay few.
// - Timer writes (interval, burst) and the audit log never throw: failures are recorded (and
//   `/readyz` reports them). While writes fail, a retry timer (`storageRetryMs`) probes the
//   folder and writes what is pending; once everything is written the folder is healthy again,
//   by itself.
// - Counters near 2^53: see reservations.js (imports and starts without room are refused; the
//   reservation never passes 2^53 − 1; a token past it is refused, never handed out twice).
// A new operator action takes the same path in the core: `_admit()`, apply it to the live pool,
// then `await _persist(undo)` (or, without an inverse, `_writeAhead`); its refusals reach HTTP
// as 503 storage-unavailable through problems.js.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Pool } from "../engine/node-engine.js";
import { HostCore } from "../host/host-core.js";
import { acquireLock } from "./lock.js";
import { SnapshotStore } from "./snapshot-store.js";
import { SteppedSnapshot } from "./stepped-snapshot.js";
import { AuditLog } from "./audit-log.js";
import { OutcomeLog } from "./outcome-log.js";
import { startProber } from "./prober.js";
import { ChangeLog } from "./change-log.js";
import { stepAhead } from "./write-ahead.js";
import { StorageHealth } from "./storage-health.js";
import { SnapshotWriter } from "./snapshot-writer.js";
import { Reservations, checkStartRoom, readReserve } from "./reservations.js";
import { MAX_SAFE, exhausted, restoreAbove, revisionOf } from "../counters.js";
import { buildImport } from "./import-steps.js";
import { loadKey } from "./key-file.js";

/** Free space an operator action needs beyond the last snapshot's size (any single change —
 * a 1 KiB value escaped six times over, twice — fits, with room for the audit log). */
const SPACE_MARGIN = 256 * 1024;

/** The runtime's timers: the process's own. Tests pass virtual ones (same shape) to step time. */
const SYSTEM_TIMERS = Object.freeze({
  monotonicMs: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (t) => clearTimeout(t),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (t) => clearInterval(t),
});

/** A timer that does not keep the process alive (virtual timers have no `unref`). */
const unref = (t) => (t?.unref?.(), t);

function remask(kind, value) {
  try {
    return Pool.maskValue(kind, value);
  } catch {
    return "***"; // not a kind: a damaged line
  }
}

/** Options: see README "Node runtime". */
export async function openPool(options = {}) {
  const host = new PoolHost();
  await host._open(options);
  return host;
}

export class PoolHost extends HostCore {
  #dir;
  #lock;
  #store;
  #audit;
  /** The reported outcomes, for replay (`recordOutcomes`), or null. */
  #outcomes = null;
  #prober = null;
  #onError;
  #burst;
  #burstGapMs;
  #lastBurst = -Infinity;
  #burstTimer = null;
  #timer = null;
  /** The runtime's timers and monotonic clock (`SYSTEM_TIMERS`, or a test's virtual ones). */
  #timers;
  #mutations = 0;
  #writing = Promise.resolve();
  /** Imports, one at a time; aborted (their threads ended) on close. */
  #importing = Promise.resolve();
  #closing = new AbortController();
  #pendingDurable = null;
  /** Operator changes in memory, waiting for the disk (change-log.js). */
  #changes;
  /** Write-ahead steps (config changes without an inverse) waiting for the next write. */
  #ahead = [];
  /** Snapshot writes and their bookkeeping (snapshot-writer.js). */
  #writer;
  /** The live pool's snapshot in parts, retaken as resources are touched. */
  #parts = new SteppedSnapshot();
  #health;
  /** @type {Reservations} */
  #reserve;
  #retryTimer = null;
  #retrying = false;
  /** The last seq delivered. */
  #lastSeq = 0;
  /** Events drained but past the reservation: delivered once it is extended. */
  #held = [];
  #signalHandler = null;

  async _open({
    dir = "./data",
    config,
    now = Date.now,
    random,
    seed,
    checkpointMs = 30000,
    burst = 1000,
    burstGapMs = 1000,
    audit = {},
    recordOutcomes = false,
    prober,
    fromBackup = false,
    handleSignals = true,
    onError = (e) => console.error("repute:", e.message),
    reserveStep = 65536,
    storageRetryMs = 1000,
    timers = SYSTEM_TIMERS,
    maxWaiters = 10_000,
  } = {}) {
    this.#timers = timers;
    this.#dir = dir;
    this.#onError = onError;
    this.#health = new StorageHealth(dir, { onError });
    this.#changes = new ChangeLog(onError);
    this.#burst = burst;
    this.#burstGapMs = burstGapMs;
    mkdirSync(dir, { recursive: true });
    this.#lock = await acquireLock(dir);
    try {
      // A prober decides the cells it can test: by default only BLOCKED cooldowns are
      // half-open trials (a synthetic probe cannot judge a site block; real traffic can).
      // The same overrides apply to a new pool, a restored one and an imported snapshot.
      const overrides = prober ? { halfOpenCauses: ["BLOCKED"], ...config } : config;
      await this._configure({
        Pool, config: overrides, now, seed, random, key: await loadKey(dir, "resource-id.key"), timers, maxWaiters, onError,
        deferDrain: true,
      });
      this.#store = await SnapshotStore.open(dir);
      this.#writer = new SnapshotWriter({
        store: this.#store, health: this.#health, changes: this.#changes, metrics: this._metrics, onError, monotonicMs: timers.monotonicMs,
      });
      const stored = fromBackup ? await this.#store.readBackup() : await this.#store.read();
      if (fromBackup && !stored) throw Object.assign(new Error(`no backup snapshot in ${dir}`), { code: "NO_BACKUP" });
      this.#audit = await AuditLog.open(dir, { ...audit, now });
      if (recordOutcomes) {
        const name = (kind, value) => ({ value: Pool.maskValue(kind, value), id: this.resourceId(kind, value) });
        this.#outcomes = await OutcomeLog.open(dir, name, { ...audit, now });
      }
      const reserved = readReserve(dir);
      // Whatever was used before (reserved, or logged) is never handed out again, even when
      // the folder has no snapshot (a first start after a crash before the first write).
      reserved.eventSeq = Math.max(reserved.eventSeq, this.#audit.lastSeq + 1);
      checkStartRoom(dir, { fencingHighWater: reserved.fencing, nextEventSeq: reserved.eventSeq });
      this._setPool(this.#restored(stored, reserved, fromBackup));
      const stats = this._pool.stats();
      checkStartRoom(dir, stats);
      this.#lastSeq = stats.nextEventSeq - 1;
      this.#reserve = new Reservations(dir, reserved, { step: reserveStep, health: this.#health, retryMs: storageRetryMs, monotonicMs: timers.monotonicMs });
      this.#reserve.writeAhead(this._fencing, this.#lastSeq);
      await this.checkpoint();
    } catch (e) {
      await this.#audit?.close();
      this._freePool();
      await this.#lock.release();
      throw e;
    }
    if (checkpointMs > 0) {
      this.#timer = unref(timers.setInterval(() => this.checkpoint().catch(() => {}), checkpointMs));
    }
    this.#retryTimer = unref(timers.setInterval(() => this.#retryStorage(), storageRetryMs));
    if (prober) this.#prober = startProber(this, { ...prober, onError: prober.onError ?? onError });
    if (handleSignals) {
      this.#signalHandler = (signal) => {
        this.close().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
      };
      process.once("SIGTERM", this.#signalHandler);
      process.once("SIGINT", this.#signalHandler);
    }
    this.ready = true;
  }

  /** The pool the folder holds (`stored`, or a new one), above every counter `reserved`. */
  #restored(stored, reserved, fromBackup) {
    const { options } = this._engine;
    if (stored) {
      try {
        return restoreAbove(Pool, stored.json, reserved, options);
      } catch (e) {
        // The engine names the field, never the text; say which file, and the way out.
        if (e.code !== "INVALID_SNAPSHOT" && e.code !== "UNSUPPORTED_SNAPSHOT_VERSION") throw e;
        const file = join(this.#store.dir, fromBackup ? "snapshot.prev.json" : "snapshot.json");
        const way = fromBackup ? "" : "; start with --from-backup (fromBackup: true) to use the previous one";
        throw Object.assign(new Error(`${file} cannot be restored: ${e.message}${way}`), { code: e.code, file });
      }
    }
    const fresh = new Pool(options);
    const s = fresh.stats();
    if (s.fencingHighWater >= reserved.fencing && s.nextEventSeq >= reserved.eventSeq) return fresh;
    const lifted = restoreAbove(Pool, fresh.snapshot(), reserved, options);
    fresh.free();
    return lifted;
  }

  get dir() {
    return this.#dir;
  }

  // --- hooks (host-core.js) ----------------------------------------------------------------

  _touched(kind, value) {
    this.#parts.touched(kind, value);
  }

  _touchedAll() {
    this.#parts.touchedAll();
  }

  /** After `burst` mutations a snapshot is written early — at most once per `burstGapMs`, so
   * that steady heavy traffic (every acquire is a mutation) is left to the interval instead of
   * stalling the event loop with a snapshot every few hundred milliseconds. */
  _mutated() {
    if (++this.#mutations < this.#burst || this.#burstTimer) return;
    const wait = this.#lastBurst + this.#burstGapMs - this.#timers.monotonicMs();
    this.#burstTimer = unref(this.#timers.setTimeout(() => {
      this.#burstTimer = null;
      this.#mutations = 0;
      this.#lastBurst = this.#timers.monotonicMs();
      this.checkpoint().catch(() => {});
    }, Math.max(0, wait)));
  }

  /**
   * Admits a hot-path call (see the header): refused while events are held back, and an
   * acquire (`token`) also when its token is past the reservation and it cannot be extended.
   */
  _admitHot(token) {
    if (this.#held.length > 0) {
      this._drain();
      if (this.#held.length > 0) throw this.#health.unavailable();
    }
    if (token && !this.#reserve.cover(this._fencing + 1, this.#lastSeq + 1)) {
      throw this._fencing >= MAX_SAFE ? exhausted(`fencing token ${this._fencing} is 2^53 − 1`) : this.#health.unavailable();
    }
  }

  /** The events the reservation covers (`extend`: after extending it if needed); the rest are
   * held back, in order, for a later drain (see the header). */
  _admitEvents(events, extend) {
    if (this.#held.length > 0) {
      events = this.#held.concat(events);
      this.#held = [];
    }
    if (events.length === 0) return events;
    const last = events[events.length - 1].seq;
    if (!(extend ? this.#reserve.cover(this._fencing, last) : last < this.#reserve.eventSeq)) {
      const edge = this.#reserve.eventSeq;
      const cut = events.findIndex((e) => e.seq >= edge);
      this.#held = events.slice(cut);
      events = events.slice(0, cut);
    }
    return events;
  }

  _logged(events) {
    this.#lastSeq = events[events.length - 1].seq;
    this.#audit.append(events);
  }

  _reported(kind, value, context, outcome) {
    this.#outcomes?.record(kind, value, context, outcome, this.now());
  }

  /** Throws STORAGE_UNAVAILABLE, before anything changes, when the folder cannot take a
   * snapshot `extra` bytes larger than the last one. */
  _admit(extra = 0) {
    this.#health.admit(this.#need(extra), () => this.#reserve.probe(this._fencing, this.#lastSeq));
  }

  /** Waits for a write of the change just applied (`undo` reverts it; null: nothing changed). */
  _persist(undo) {
    const saved = this.#changes.add(undo);
    this.#durable();
    return saved;
  }

  /** Written ahead (see the header): settles once a snapshot of the live pool with `ahead`
   * applied is stored (write-ahead.js), and only then `commit`s the change to the live pool.
   * Concurrent ones share one write. */
  _writeAhead(ahead, commit) {
    return new Promise((resolve, reject) => {
      if (this.#ahead.push({ ahead, commit, resolve, reject }) > 1) return;
      const run = this.#writing.then(() => this.#aheadStep(this.#ahead.splice(0)));
      this.#writing = run.catch(() => {});
    });
  }

  /** Tokens and seqs used so far by `live` and the audit log. */
  _used(live) {
    const used = super._used(live);
    return { ...used, eventSeq: Math.max(used.eventSeq, this.#audit.lastSeq + 1) };
  }

  _storedRevision() {
    return this.#store.lastRevision;
  }

  _storageReadiness() {
    return this.#health.readiness();
  }

  get _auditDropped() {
    return this.#audit.dropped;
  }

  /** Bytes free that a snapshot `extra` bytes larger than the last one needs, with a margin. */
  #need(extra = 0) {
    const last = this.#writer?.lastBytes ?? 0;
    return last + (last >> 3) + extra + SPACE_MARGIN;
  }

  /** Replaces the pool with a snapshot (operator import; its text, or its UTF-8 bytes, which
   * are handed over to the import's thread), under the host's config overrides (refusals: see
   * the core). Built without holding the event loop (import-steps.js: read and restored on a
   * worker thread, rebuilt here in steps), then written ahead: stored first (serialized with
   * snapshot writes, which go on meanwhile) and only then made live; the live pool serves
   * until then. Tokens and seqs continue above everything used so far — which, in a running
   * process, the live pool and the audit log know exactly (the crash reservation is only for
   * restarts). One import at a time. */
  importSnapshot(input) {
    try {
      this._admit(input.length);
    } catch (e) {
      return Promise.reject(e);
    }
    const run = this.#importing.then(() => this.#import(input));
    this.#importing = run.catch(() => {});
    return run;
  }

  async #import(input) {
    if (this._closed) throw Object.assign(new Error("the pool is closing"), { code: "POOL_CLOSED" });
    const { options } = this._engine;
    const floor = this._importFloor();
    const built = await buildImport(Pool, input, {
      config: options.config,
      options,
      onHead: (counters) => this._checkImport(counters, floor),
      signal: this.#closing.signal,
    });
    input = null;
    /** The floor of the imported pool's counters: what the live pool used, and its revision. */
    const above = () => {
      const live = this._pool.stats();
      const used = this._used(live);
      return { revision: Math.max(live.revision, this._storedRevision()), fencingHighWater: used.fencing, nextEventSeq: used.eventSeq };
    };
    const store = this.#writing.then(async () => {
      try {
        await this.#write(); // what is waiting is stored (or undone) under the pool it was made in
        built.raise(above());
        const head = built.head();
        await this.#writer.put({ head, pieces: () => built.pieces(head) }, revisionOf(head));
        // The live pool went on serving during the write: continue above what it used.
        built.raise(above());
      } catch (e) {
        built.free();
        throw e;
      }
      this._swapIn(built.finish());
      // Changes made to the old pool during the write are replaced by the import, which is
      // stored: as if they had come just before it.
      this.#changes.saved(this.#changes.size);
    });
    this.#writing = store.catch(() => {});
    return store;
  }

  /** Prometheus text, as a promise: `PoolHost.metrics()` has always returned one (repute.d.ts;
   * prom-client's was asynchronous), and callers may `.then` it. */
  metrics() {
    return Promise.resolve(super.metrics());
  }

  // --- the logs --------------------------------------------------------------------------

  /** The audit log, by seq (keyset pagination). */
  async readEvents({ after = 0, limit = 100 } = {}) {
    this._drain();
    const page = await this.#audit.read({ after, limit });
    for (const e of page.events) {
      // Lines written before resource ids (and the masking of every value form) came in: mask
      // their values again by today's rule. Lines with an id are masked already.
      if (typeof e.kind === "string" && typeof e.value === "string" && e.id === undefined) e.value = remask(e.kind, e.value);
    }
    return page;
  }

  /** The outcome log, by its own seq: `{ outcomes, next }`, or null when outcomes are not
   * recorded (`recordOutcomes`). */
  readOutcomes({ after = 0, limit = 100 } = {}) {
    return this.#outcomes?.read({ after, limit }) ?? null;
  }

  // --- durability ------------------------------------------------------------------------

  /** Writes a snapshot if anything changed since the last one. Serialized. */
  checkpoint() {
    const run = this.#writing.then(() => this.#write());
    this.#writing = run.catch(() => {});
    return run;
  }

  /** One snapshot write of the live pool, taken in steps (callers serialize through
   * `#writing`): it contains the changes waiting when its last step ran. */
  async #write() {
    if (!this._pool) return;
    const started = this.#timers.monotonicMs();
    const taken = await this.#parts.take(() => this._pool, () => this._drain(), () => this.#changes.size);
    await this.#writer.persist(taken, taken.moment, started);
  }

  /** One write-ahead step for a batch of `_writeAhead`s: the live pool's parts, taken in steps,
   * under a head with each `ahead` applied (and, for a smaller window, each part's cells cut in
   * turn as it is written: write-ahead.js) are stored; then each is `commit`ted to the live
   * pool. Nothing is copied whole on the event loop. */
  async #aheadStep(batch) {
    try {
      if (!this._pool) throw Object.assign(new Error("the pool is closed"), { code: "POOL_CLOSED" });
      const started = this.#timers.monotonicMs();
      const from = { Pool, pool: () => this._pool, bare: this._engine.bare, drain: () => this._drain(), waiting: () => this.#changes.size };
      const { json, covered, done } = await stepAhead(batch, from, this.#parts);
      try {
        if (batch.some((d) => !d.error)) await this.#writer.persist(json, covered, started);
      } finally {
        done();
      }
    } catch (e) {
      for (const d of batch) d.reject(d.error ?? e);
      return;
    }
    for (const d of batch) {
      if (d.error) d.reject(d.error);
      else {
        try {
          d.resolve(d.commit());
        } catch (e) {
          d.reject(e);
        }
      }
    }
  }

  /** Schedules a write of the current state; concurrent callers share one. Its outcome reaches
   * the changes waiting for it through the change log. */
  #durable() {
    this.#pendingDurable ??= Promise.resolve().then(() => {
      this.#pendingDurable = null;
      this.checkpoint().catch(() => {});
    });
  }

  /** While writes fail (timer, every `storageRetryMs`): once there is room and a small write
   * succeeds, releases held-back events and writes the pending snapshot. */
  async #retryStorage() {
    if (!this.#health.failing || this.#retrying || this._closed) return;
    this.#retrying = true;
    try {
      if (!this.#health.spaceCheck(this.#need())) return;
      if (!this.#reserve.probe(this._fencing, this.#lastSeq)) return;
      this._drain();
      await this.checkpoint().catch(() => {});
    } finally {
      this.#retrying = false;
    }
  }

  /** Stops the prober and timers, writes a final snapshot, closes the audit log, releases
   * the folder. */
  async close() {
    if (this._closed) return;
    this._stopDelivery();
    this.#closing.abort();
    if (this.#signalHandler) {
      process.off("SIGTERM", this.#signalHandler);
      process.off("SIGINT", this.#signalHandler);
    }
    this.#timers.clearInterval(this.#timer);
    this.#timers.clearInterval(this.#retryTimer);
    this.#timers.clearTimeout(this.#burstTimer);
    await this.#prober?.stop();
    try {
      await this.checkpoint();
      // A clean stop used nothing past what the final snapshot says: hand the reservation back,
      // so the next start continues tokens and seqs without a jump. Events held back are
      // covered by it: they go to the audit log before it closes.
      const s = this._pool.stats();
      this.#reserve.handBack(s.fencingHighWater, s.nextEventSeq);
      this._drain(null, false);
    } finally {
      await this.#audit.close();
      await this.#outcomes?.close();
      await this.#store.close();
      this._freePool();
      await this.#lock.release();
    }
  }

  async [Symbol.asyncDispose]() {
    await this.close();
  }
}
