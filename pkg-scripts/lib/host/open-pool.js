// `openPool`: one `Pool` in this process, made durable on disk and observable.
//
// - Snapshots are written atomically (snapshot-store.js) every `checkpointMs`, after a burst of
//   `burst` mutations, and on close / SIGTERM / SIGINT; operator actions (register,
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
//   and unblock by restoring the block that was there. Hot-path calls keep running while the
//   write is in flight, so rolling back by restoring an earlier snapshot would lose their
//   leases; an inverse call loses nothing of theirs (a lease taken on a resource whose
//   registration is rolled back ends with it).
// - A deregister has no inverse (its cells and their history are gone), and an import cannot be
//   swapped back (leases taken from the imported pool during its write would be lost, their
//   tokens handed out again). Both are written ahead: the new state is built beside the live
//   pool (deregister: on a scratch copy restored from the live snapshot, an O(pool) cost for a
//   rare action; import: the imported pool itself), stored, and only then made live.
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
// A new operator action takes the same path: `#admit()`, apply it to the live pool, then
// `await #saved(undo)` (or, without an inverse, a write-ahead step like `#deregisterStep`); its
// refusals reach HTTP as 503 storage-unavailable through problems.js.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Pool } from "../node-engine.js";
import { acquireLock } from "./lock.js";
import { SnapshotStore } from "./snapshot-store.js";
import { AuditLog } from "./audit-log.js";
import { OutcomeLog } from "./outcome-log.js";
import { startProber } from "./prober.js";
import { HostMetrics } from "./metrics.js";
import { ContextHealth, contextsOf } from "./context-health.js";
import { annotate, configChanges } from "./operator-note.js";
import { ChangeLog } from "./change-log.js";
import { StorageHealth, isStorageError, storageUnavailable } from "./storage-health.js";
import { Reservations, checkStartRoom, readReserve } from "./reservations.js";
import { MAX_SAFE, checkImportRoom, exhausted, liftPool, restoreAbove, revisionOf } from "../counters.js";
import { loadKey } from "./key-file.js";
import { ResourceIds } from "../resource-id.js";
import { call } from "../call/call.js";
import { Waiters, nextStep, waitOptions } from "../waiters.js";

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

export class PoolHost extends EventTarget {
  #dir;
  #pool;
  #poolOptions;
  #lock;
  #store;
  #audit;
  /** The reported outcomes, for replay (`recordOutcomes`), or null. */
  #outcomes = null;
  #prober = null;
  #metrics;
  /** Per-context rolling counters (context-health.js). */
  #sites = new ContextHealth(() => this.now());
  #onError;
  #checkpointMs;
  #burst;
  #burstGapMs;
  #lastBurst = -Infinity;
  #burstTimer = null;
  #timer = null;
  /** The runtime's timers and monotonic clock (`SYSTEM_TIMERS`, or a test's virtual ones). */
  #timers;
  #mutations = 0;
  #lastRevision = -1;
  #writing = Promise.resolve();
  #pendingDurable = null;
  /** Operator changes in memory, waiting for the disk (change-log.js). */
  #changes;
  /** Deregistrations waiting for their write-ahead step. */
  #deregistrations = [];
  /** Length of the last snapshot written (what the next one needs, about). */
  #lastBytes = 0;
  #health;
  /** @type {Reservations} */
  #reserve;
  #retryTimer = null;
  #retrying = false;
  /** The highest token handed out. */
  #fencing = 0;
  /** The last seq delivered. */
  #lastSeq = 0;
  /** Events drained but past the reservation: delivered once it is extended. */
  #held = [];
  #drainScheduled = false;
  #subscribers = new Set();
  /** Wakes waiting `events()` iterators (on close). */
  #wakers = new Set();
  /** The listener wrappers `addEventListener` registered, by listener. */
  #wrapped = new WeakMap();
  /** Config given to every restore (host options, prober default). */
  #overrides;
  #deliveryDropped = 0;
  /** Resource ids (see `resourceId`), and the function that names an event's resource. */
  #ids;
  #idOf = (kind, value) => this.#ids.of(kind, value);
  #closed = false;
  #signalHandler = null;
  /** Waiting acquires (waiters.js), made on the first wait, and the most at once. */
  #waiters = null;
  #maxWaiters;
  ready = false;

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
    this.#maxWaiters = maxWaiters;
    this.#dir = dir;
    this.#onError = onError;
    this.#health = new StorageHealth(dir, { onError });
    this.#changes = new ChangeLog(onError);
    this.#checkpointMs = checkpointMs;
    this.#burst = burst;
    this.#burstGapMs = burstGapMs;
    mkdirSync(dir, { recursive: true });
    this.#lock = await acquireLock(dir);
    try {
      this.#ids = await ResourceIds.create(await loadKey(dir, "resource-id.key"));
      this.#store = await SnapshotStore.open(dir);
      const stored = fromBackup ? await this.#store.readBackup() : await this.#store.read();
      if (fromBackup && !stored) throw Object.assign(new Error(`no backup snapshot in ${dir}`), { code: "NO_BACKUP" });
      this.#audit = await AuditLog.open(dir, { ...audit, now });
      if (recordOutcomes) {
        const name = (kind, value) => ({ value: Pool.maskValue(kind, value), id: this.#ids.of(kind, value) });
        this.#outcomes = await OutcomeLog.open(dir, name, { ...audit, now });
      }
      const reserved = readReserve(dir);
      // A prober decides the cells it can test: by default only BLOCKED cooldowns are
      // half-open trials (a synthetic probe cannot judge a site block; real traffic can).
      // The same overrides apply to a new pool, a restored one and an imported snapshot.
      const overrides = prober ? { halfOpenCauses: ["BLOCKED"], ...config } : config;
      this.#overrides = overrides;
      this.#poolOptions = { now, ...(random ? { random } : {}), ...(seed !== undefined ? { seed } : {}) };
      // Whatever was used before (reserved, or logged) is never handed out again, even when
      // the folder has no snapshot (a first start after a crash before the first write).
      reserved.eventSeq = Math.max(reserved.eventSeq, this.#audit.lastSeq + 1);
      checkStartRoom(dir, { fencingHighWater: reserved.fencing, nextEventSeq: reserved.eventSeq });
      const restoreOptions = this.#restoreOptions();
      if (stored) {
        try {
          this.#pool = restoreAbove(Pool, stored.json, reserved, restoreOptions);
        } catch (e) {
          // The engine names the field, never the text; say which file, and the way out.
          if (e.code !== "INVALID_SNAPSHOT" && e.code !== "UNSUPPORTED_SNAPSHOT_VERSION") throw e;
          const file = join(this.#store.dir, fromBackup ? "snapshot.prev.json" : "snapshot.json");
          const way = fromBackup ? "" : "; start with --from-backup (fromBackup: true) to use the previous one";
          throw Object.assign(new Error(`${file} cannot be restored: ${e.message}${way}`), { code: e.code, file });
        }
      } else {
        const fresh = new Pool(restoreOptions);
        const s = fresh.stats();
        if (s.fencingHighWater >= reserved.fencing && s.nextEventSeq >= reserved.eventSeq) {
          this.#pool = fresh;
        } else {
          this.#pool = restoreAbove(Pool, fresh.snapshot(), reserved, restoreOptions);
          fresh.free();
        }
      }
      const stats = this.#pool.stats();
      checkStartRoom(dir, stats);
      this.#fencing = stats.fencingHighWater;
      this.#lastSeq = stats.nextEventSeq - 1;
      this.#metrics = new HostMetrics(this, timers.monotonicMs);
      this.#reserve = new Reservations(dir, reserved, { step: reserveStep, health: this.#health, retryMs: storageRetryMs, monotonicMs: timers.monotonicMs });
      this.#reserve.writeAhead(this.#fencing, this.#lastSeq);
      await this.checkpoint();
    } catch (e) {
      await this.#audit?.close();
      this.#pool?.free();
      this.#pool = null;
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

  get dir() {
    return this.#dir;
  }

  /** The host clock (what the pool reads). */
  now() {
    return this.#poolOptions.now();
  }

  /** Options of every restore: the host's clock and randomness, and its config overrides. */
  #restoreOptions() {
    return { ...this.#poolOptions, ...(this.#overrides ? { config: this.#overrides } : {}) };
  }

  // --- the pool's API --------------------------------------------------------------------

  /** After `burst` mutations a snapshot is written early — at most once per `burstGapMs`, so
   * that steady heavy traffic (every acquire is a mutation) is left to the interval instead of
   * stalling the event loop with a snapshot every few hundred milliseconds. */
  #mutated() {
    this.#scheduleDrain();
    if (++this.#mutations < this.#burst || this.#burstTimer) return;
    const wait = this.#lastBurst + this.#burstGapMs - this.#timers.monotonicMs();
    this.#burstTimer = unref(this.#timers.setTimeout(() => {
      this.#burstTimer = null;
      this.#mutations = 0;
      this.#lastBurst = this.#timers.monotonicMs();
      this.checkpoint().catch(() => {});
    }, Math.max(0, wait)));
  }

  #scheduleDrain() {
    if (this.#drainScheduled) return;
    this.#drainScheduled = true;
    queueMicrotask(() => {
      try {
        this.#drain();
      } catch (e) {
        this.#onError(e); // never an uncaught exception from a microtask
      }
    });
  }

  /**
   * Admits a hot-path call (see the header): refused while events are held back, and an
   * acquire (`token`) also when its token is past the reservation and it cannot be extended.
   */
  #admitHot(token) {
    if (this.#held.length > 0) {
      this.#drain();
      if (this.#held.length > 0) throw this.#health.unavailable();
    }
    if (token && !this.#reserve.cover(this.#fencing + 1, this.#lastSeq + 1)) {
      throw this.#fencing >= MAX_SAFE ? exhausted(`fencing token ${this.#fencing} is 2^53 − 1`) : this.#health.unavailable();
    }
  }

  #leased(lease) {
    if (lease) {
      Object.defineProperty(lease, Symbol.dispose, { value: () => this.release(lease), enumerable: false });
      if (lease.token > this.#fencing) this.#fencing = lease.token;
    }
    return lease;
  }

  /** `options`: `{ groups }` (SPEC §3, groups), or none. */
  acquire(context, options) {
    this.#admitHot(true);
    const lease = this.#pool.acquire(context, options);
    this.#metrics.acquired(context, lease);
    this.#sites.acquired(context, lease);
    this.#mutated();
    return this.#leased(lease);
  }

  /** `acquire` with no ACQUISITION_REJECTED when it grants nothing (a wait's retry). */
  acquireQuiet(context, options) {
    this.#admitHot(true);
    const lease = this.#pool.acquireQuiet(context, options);
    if (lease) {
      this.#metrics.acquired(context, lease);
      this.#sites.acquired(context, lease);
      this.#mutated();
    }
    return this.#leased(lease);
  }

  /** A lease within `waitMs` (SPEC §3, waiting; lib/waiters.js), on the host's timers. */
  acquireWait(context, options) {
    try {
      const [groups, waitMs, signal] = waitOptions(options);
      this.#waiters ??= Waiters.over(this, { timers: this.#timers, max: this.#maxWaiters });
      return this.#waiters.wait(context, groups, waitMs, signal);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Waiting acquires now. */
  get waiting() {
    return this.#waiters?.size ?? 0;
  }

  /** Serves waiting acquires after a call that may have made a candidate. */
  #kick() {
    if (this.#waiters?.size > 0) this.#waiters.kick();
  }

  /**
   * Finishes a step (SPEC §3): report, release, and with `next: {context?, groups?, waitMs?,
   * signal?}` the next lease — acquired through this host after the waits queued before it
   * are served (a Lease or null, or a promise of one when it waits); with none queued and no
   * wait asked for, in one engine call.
   */
  finish(lease, outcome, options) {
    const next = nextStep(options, true);
    if (next !== undefined && !(next.waitMs > 0) && this.waiting === 0) {
      // Nobody waits to be served first: the whole step in one call into the engine.
      this.#admitHot(true);
      const to = next.context ?? lease.context;
      const got = this.#pool.finish(lease, outcome, { next: { context: next.context, groups: next.groups } });
      this.#outcomes?.record(lease.kind, lease.value, lease.context, outcome, this.now());
      this.#sites.reported(lease.context, outcome);
      this.#metrics.acquired(to, got);
      this.#sites.acquired(to, got);
      this.#mutated();
      return this.#leased(got);
    }
    this.#admitHot(false);
    this.#pool.finish(lease, outcome);
    this.#outcomes?.record(lease.kind, lease.value, lease.context, outcome, this.now());
    this.#sites.reported(lease.context, outcome);
    this.#mutated();
    this.#kick();
    if (next === undefined) return null;
    const context = next.context ?? lease.context;
    const groups = next.groups === undefined ? {} : { groups: next.groups };
    if (next.waitMs > 0) return this.acquireWait(context, { ...groups, waitMs: next.waitMs, ...(next.signal ? { signal: next.signal } : {}) });
    return this.acquire(context, next.groups === undefined ? undefined : groups);
  }

  acquireResource(kind, value, context) {
    this.#admitHot(true);
    const lease = this.#pool.acquireResource(kind, value, context);
    this.#mutated();
    return this.#leased(lease);
  }

  report(kind, value, context, outcome) {
    this.#admitHot(false);
    this.#pool.report(kind, value, context, outcome);
    this.#outcomes?.record(kind, value, context, outcome, this.now());
    this.#sites.reported(context, outcome);
    this.#mutated();
    this.#kick(); // a probe's success ends a cooldown
  }

  renew(lease) {
    this.#admitHot(false);
    const renewed = this.#pool.renew(lease);
    this.#scheduleDrain();
    return this.#leased(renewed);
  }

  release(lease) {
    this.#admitHot(false);
    const released = this.#pool.release(lease);
    if (released) {
      this.#mutated();
      this.#kick();
    }
    return released;
  }

  /** A resilient call through this pool (lib/call/call.js, README "Resilient calls"), on the
   * host's timers and clock, its RNG when it was given one; errors of its own reports and
   * releases go to `onError`. */
  call(context, attempt, options = {}) {
    const random = this.#poolOptions.random;
    return call(this, context, attempt, {
      now: this.#timers.monotonicMs,
      timers: this.#timers,
      wallNow: () => this.now(),
      onError: this.#onError,
      metrics: this.#metrics.calls,
      ...(random ? { random } : {}),
      ...options,
    });
  }

  // Operator actions resolve once the state they report is on disk — also when they changed
  // nothing (a concurrent call may have made the change they observe). Each is admitted first
  // (refused with STORAGE_UNAVAILABLE when the folder cannot take the write), and rolled back
  // when the write fails after all (see the header).

  /** Throws STORAGE_UNAVAILABLE, before anything changes, when the folder cannot take a
   * snapshot `extra` bytes larger than the last one. */
  #admit(extra = 0) {
    this.#health.admit(this.#need(extra), () => this.#reserve.probe(this.#fencing, this.#lastSeq));
  }

  /** Bytes free that a snapshot `extra` bytes larger than the last one needs, with a margin. */
  #need(extra = 0) {
    return this.#lastBytes + (this.#lastBytes >> 3) + extra + SPACE_MARGIN;
  }

  /** Waits for a write of the change just applied (`undo` reverts it; null: nothing changed). */
  #saved(undo) {
    const saved = this.#changes.add(undo);
    this.#durable();
    return saved;
  }

  /** `options`: `{ group }` (SPEC §3, groups). A known resource that moves to another group
   * moves back if the write fails. */
  async register(kind, value, options, note) {
    this.#admit();
    const group = options?.group;
    const before = group === undefined ? undefined : this.#groupOf(kind, value);
    this.#drain();
    const added = this.#pool.register(kind, value, options);
    this.#drain(true, note);
    this.#kick(); // a new resource, or a raised maxLeases
    const moved = !added && before !== undefined && before !== group;
    const undo = added ? () => this.#pool.deregister(kind, value) : moved ? () => this.#pool.register(kind, value, { group: before }) : null;
    await this.#saved(undo);
    return added;
  }

  /** The resource's group now (null: none), or undefined when it is not registered (or the
   * call is refused: `register` then refuses it the same way). */
  #groupOf(kind, value) {
    try {
      return this.#pool.resource(kind, value).group;
    } catch {
      return undefined;
    }
  }

  /** Written ahead (see the header): settles once a snapshot without the resource is stored,
   * and only then removes it from the live pool. Concurrent ones share one step. */
  deregister(kind, value, note) {
    try {
      this.#admit();
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => {
      if (this.#deregistrations.push({ kind, value, note, resolve, reject }) > 1) return;
      const run = this.#writing.then(() => this.#deregisterStep(this.#deregistrations.splice(0)));
      this.#writing = run.catch(() => {});
    });
  }

  async block(kind, value, how, note) {
    this.#admit();
    const before = this.#blockOf(kind, value);
    this.#drain();
    this.#pool.block(kind, value, how);
    this.#drain(true, note);
    await this.#saved(() => this.#restoreBlock(kind, value, before));
  }

  async unblock(kind, value, note) {
    this.#admit();
    const before = this.#blockOf(kind, value);
    this.#drain();
    const unblocked = this.#pool.unblock(kind, value);
    this.#drain(true, note);
    if (unblocked) this.#kick();
    await this.#saved(unblocked ? () => this.#restoreBlock(kind, value, before) : null);
    return unblocked;
  }

  /** The resource's block now (`{until}` or `{permanent: true}`), or null. */
  #blockOf(kind, value) {
    return this.#pool.resources({ state: "BLOCKLISTED" }).find((r) => r.kind === kind && r.value === value)?.blocked ?? null;
  }

  /** Puts back the block `before` (null: none); a timed one ends when it would have. */
  #restoreBlock(kind, value, before) {
    const left = before && !before.permanent ? before.until - this.now() : 0;
    if (before?.permanent) this.#pool.block(kind, value, { permanent: true });
    else if (left > 0) this.#pool.block(kind, value, { seconds: left / 1000 });
    else this.#pool.unblock(kind, value);
  }

  /** Changes the config in force (the engine validates it; nothing changes on an error) and
   * resolves to the whole config once it is on disk. Written ahead like a deregister: a
   * smaller window or event buffer drops what it no longer holds, which no inverse call could
   * put back. A later restart still applies the host's `config` option over it: start-up
   * options win. */
  async setConfig(patch, note) {
    this.#admit();
    const run = this.#writing.then(() => this.#writeAhead((scratch) => scratch.setConfig(patch)));
    this.#writing = run.catch(() => {});
    await run;
    this.#drain();
    const before = this.#pool.config();
    this.#pool.setConfig(patch);
    this.#drain(true, { ...note, changes: configChanges(before, this.#pool.config()) });
    this.#kick();
    return this.#pool.config();
  }

  /** Replaces the pool with a snapshot (operator import), under the host's config overrides.
   * Refused (code STALE_SNAPSHOT) when its revision is lower than the stored snapshot's or the
   * live pool's: a revision never goes back; (INVALID_SNAPSHOT) when its counters are too close
   * to 2^53. Serialized with snapshot writes; written ahead: the imported pool is stored first
   * and only then replaces the live one, which goes on serving meanwhile. Tokens and seqs
   * continue above everything used so far — which, in a running process, the live pool and the
   * audit log know exactly (the crash reservation is only for restarts), so importing a pool's
   * own export changes none of its numbers. */
  importSnapshot(json) {
    try {
      this.#admit(json.length);
    } catch (e) {
      return Promise.reject(e);
    }
    const run = this.#writing.then(async () => {
      await this.#write(); // what is waiting is stored (or undone) under the pool it was made in
      const options = this.#restoreOptions();
      const live = this.#pool.stats();
      let next = Pool.restore(json, options);
      try {
        const own = next.stats();
        checkImportRoom(own);
        next = liftPool(Pool, next, this.#used(live), options);
        const revision = next.stats().revision;
        const floor = Math.max(this.#store.lastRevision, live.revision);
        if (revision < floor) {
          throw Object.assign(new Error(`the snapshot's revision ${revision} is older than the pool's ${floor}`), {
            code: "STALE_SNAPSHOT",
          });
        }
        await this.#put(next.snapshot(), revision);
        // The live pool went on serving during the write: continue above what it used.
        const moved = this.#pool.stats();
        next = liftPool(Pool, next, { ...this.#used(moved), revision: moved.revision }, options);
      } catch (e) {
        next.free();
        throw e;
      }
      this.#drain();
      this.#pool.free();
      this.#pool = next;
      this.#fencing = next.stats().fencingHighWater;
      // Changes made to the old pool during the write are replaced by the import, which is
      // stored: as if they had come just before it.
      this.#changes.saved(this.#changes.size);
      this.#kick(); // the waits go on, served from the imported pool

    });
    this.#writing = run.catch(() => {});
    return run;
  }

  /** Tokens and seqs used so far by `live` (a stats object) and the audit log. */
  #used(live) {
    return { fencing: Math.max(live.fencingHighWater, this.#fencing), eventSeq: Math.max(live.nextEventSeq, this.#audit.lastSeq + 1) };
  }

  snapshot() {
    const s = this.#pool.snapshot();
    this.#scheduleDrain();
    return s;
  }

  resources(filter) {
    return this.#pool.resources(filter);
  }

  resource(kind, value) {
    return this.#pool.resource(kind, value);
  }

  dueForRecoveryProbe() {
    return this.#pool.dueForRecoveryProbe();
  }

  nextChangeAt(context, options) {
    return this.#pool.nextChangeAt(context, options);
  }

  stats() {
    const s = this.#pool.stats();
    this.#scheduleDrain();
    return { ...s, auditDropped: this.#audit.dropped, deliveryDropped: this.#deliveryDropped, ...this.#metrics.checkpointStats() };
  }

  config() {
    return this.#pool.config();
  }

  // --- resource ids and masking ----------------------------------------------------------

  /** The resource's opaque id: stable for this folder (its key), revealing nothing. */
  resourceId(kind, value) {
    return this.#ids.of(kind, value);
  }

  /** The resource `id` names ({kind, value}), or null: one the pool holds, or one it held
   * lately (whether it is still registered is for the call that uses it to say). */
  resourceById(id) {
    return this.#ids.find(id, () => this.#pool.resources());
  }

  /** Per-context health (`GET /api/contexts`, context-health.js). */
  contexts() {
    return contextsOf(this, this.#sites);
  }

  /** `resourceById` without holding up other work: the pool is searched a page at a time, with
   * turns of the event loop between pages (the HTTP handler's lookup). */
  resourceLookup(id) {
    return this.#ids.findInPages(id, (after) => this.#pool.resources({ limit: 25, ...(after ? { after } : {}) }));
  }

  /** The value as events show it (`Pool.maskValue`). */
  maskValue(kind, value) {
    return Pool.maskValue(kind, value);
  }

  // --- events ----------------------------------------------------------------------------

  /** Delivers the pool's new events — those the reservation covers (`extend`: after extending
   * it if needed); the rest are held back, in order, for a later drain (see the header).
   * `note`: an operator action's actor, reason and changes, for the events it caused
   * (operator-note.js; the caller drains before the action, so these are its events). */
  #drain(extend = true, note = null) {
    this.#drainScheduled = false;
    if (!this.#pool) return;
    let events = annotate(this.#pool.drainEvents({ resourceId: this.#idOf }), note);
    if (this.#held.length > 0) {
      events = this.#held.concat(events);
      this.#held = [];
    }
    if (events.length === 0) return;
    const last = events[events.length - 1].seq;
    if (!(extend ? this.#reserve.cover(this.#fencing, last) : last < this.#reserve.eventSeq)) {
      const edge = this.#reserve.eventSeq;
      const cut = events.findIndex((e) => e.seq >= edge);
      this.#held = events.slice(cut);
      events = events.slice(0, cut);
      if (events.length === 0) return;
    }
    this.#lastSeq = events[events.length - 1].seq;
    this.#audit.append(events);
    this.#metrics.events(events);
    for (const e of events) {
      for (const s of this.#subscribers) {
        try {
          s(e);
        } catch (error) {
          this.#onError(error);
        }
      }
      this.dispatchEvent(new CustomEvent(e.type, { detail: e }));
      this.dispatchEvent(new CustomEvent("event", { detail: e }));
    }
  }

  /** EventTarget, with listeners guarded: one that throws is reported to `onError` (Node's
   * EventTarget would turn it into an uncaught exception and end the process). */
  addEventListener(type, listener, options) {
    if (listener === null || listener === undefined) return;
    let wrapper = this.#wrapped.get(listener);
    if (!wrapper) {
      wrapper = (ev) => {
        try {
          if (typeof listener === "function") listener.call(this, ev);
          else listener.handleEvent(ev);
        } catch (error) {
          this.#onError(error);
        }
      };
      this.#wrapped.set(listener, wrapper);
    }
    super.addEventListener(type, wrapper, options);
  }

  removeEventListener(type, listener, options) {
    super.removeEventListener(type, this.#wrapped.get(listener) ?? listener, options);
  }

  /** Calls `cb(event)` for events of `type` (`"event"` for all); returns a disposer. A
   * throwing callback is reported to `onError` and does not affect the pool. */
  on(type, cb) {
    const listener = (ev) => cb(ev.detail);
    this.addEventListener(type, listener);
    return () => this.removeEventListener(type, listener);
  }

  /** Live events, synchronously, as they are drained (for the HTTP stream). */
  subscribe(listener) {
    this.#subscribers.add(listener);
    return () => this.#subscribers.delete(listener);
  }

  /**
   * Events as an async iterator. `after`: replay from the audit log first (events with a
   * larger seq), then live. At most `queue` undelivered events are kept; a consumer that
   * falls further behind loses the oldest (counted in `stats().deliveryDropped`).
   */
  events({ signal, after = null, queue = 10000 } = {}) {
    const host = this;
    return {
      async *[Symbol.asyncIterator]() {
        const buffer = [];
        let wake = null;
        let last = after ?? 0;
        const unsubscribe = host.subscribe((e) => {
          buffer.push(e);
          if (buffer.length > queue) {
            buffer.shift();
            host.#deliveryDropped++;
          }
          wake?.();
        });
        const onAbort = () => wake?.();
        signal?.addEventListener("abort", onAbort);
        host.#wakers.add(onAbort);
        try {
          if (after !== null) {
            for (;;) {
              const page = await host.readEvents({ after: last, limit: 1000 });
              for (const e of page.events) {
                last = e.seq;
                yield e;
              }
              if (page.next === null) break;
            }
          }
          while (!signal?.aborted && !host.#closed) {
            if (buffer.length === 0) {
              await new Promise((r) => {
                wake = r;
              });
              wake = null;
              continue;
            }
            const e = buffer.shift();
            if (e.seq > last) {
              last = e.seq;
              yield e;
            }
          }
        } finally {
          unsubscribe();
          signal?.removeEventListener("abort", onAbort);
          host.#wakers.delete(onAbort);
        }
      },
    };
  }

  /** The audit log, by seq (keyset pagination). */
  async readEvents({ after = 0, limit = 100 } = {}) {
    this.#drain();
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

  /** One snapshot write of the live pool (callers serialize through `#writing`). */
  async #write() {
    if (!this.#pool) return;
    const started = this.#timers.monotonicMs();
    const json = this.#pool.snapshot();
    this.#drain();
    await this.#persist(json, this.#changes.size, started);
  }

  /**
   * Stores `json`, a snapshot that contains the first `covered` waiting changes, and settles
   * them; when the write fails, every waiting change is undone (change-log.js) and this throws.
   * Skipped when nothing changed since the last write — unless writes are failing: then every
   * write is also a probe of the folder.
   */
  async #persist(json, covered, started) {
    const revision = revisionOf(json);
    if (revision !== this.#lastRevision || this.#health.failing) {
      try {
        await this.#put(json, revision, started);
      } catch (e) {
        this.#changes.failed(e);
        throw e;
      }
    }
    this.#changes.saved(covered);
  }

  /** `#store.write` with the bookkeeping; a file-system error becomes STORAGE_UNAVAILABLE. */
  async #put(json, revision, started = this.#timers.monotonicMs()) {
    let stored;
    try {
      stored = await this.#store.write(json, revision);
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
    this.#lastBytes = json.length;
    this.#metrics.checkpointed(this.#timers.monotonicMs() - started);
  }

  /** The write-ahead step of deregistrations (see `deregister`): applied to a scratch copy of
   * the live pool, stored, then applied to the live pool. */
  async #deregisterStep(batch) {
    try {
      await this.#writeAhead((scratch) => {
        for (const d of batch) {
          try {
            scratch.deregister(d.kind, d.value);
          } catch (e) {
            d.error = e; // a bad argument: refused by the live pool the same way
          }
        }
      });
    } catch (e) {
      for (const d of batch) d.reject(d.error ?? e);
      return;
    }
    for (const d of batch) {
      if (d.error) d.reject(d.error);
      else {
        this.#drain();
        d.resolve(this.#pool.deregister(d.kind, d.value));
        this.#drain(true, d.note);
      }
    }
    this.#scheduleDrain(); // RESOURCE_DEREGISTERED reaches listeners now, not at the next call
  }

  /** A write-ahead step (see the header): `apply(scratch)` makes the change on a copy restored
   * from the live snapshot, which is stored; the caller then makes it on the live pool. Throws
   * what `apply` throws (nothing is written then) or what the write meets. */
  async #writeAhead(apply) {
    if (!this.#pool) throw Object.assign(new Error("the pool is closed"), { code: "POOL_CLOSED" });
    const started = this.#timers.monotonicMs();
    const live = this.#pool.snapshot();
    this.#drain();
    const covered = this.#changes.size;
    // Its own config, not the overrides: the live pool's config is the one in force.
    const scratch = Pool.restore(live, this.#poolOptions);
    let json;
    try {
      apply(scratch);
      json = scratch.snapshot();
    } finally {
      scratch.free();
    }
    await this.#persist(json, covered, started);
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
    if (!this.#health.failing || this.#retrying || this.#closed) return;
    this.#retrying = true;
    try {
      if (!this.#health.spaceCheck(this.#need())) return;
      if (!this.#reserve.probe(this.#fencing, this.#lastSeq)) return;
      this.#drain();
      await this.checkpoint().catch(() => {});
    } finally {
      this.#retrying = false;
    }
  }

  /** `/readyz`: ready once open, while the folder takes writes; else why not. */
  readiness() {
    if (!this.ready) return { ready: false, reason: "not-ready", detail: "the pool is not open" };
    const failing = this.#health.readiness();
    return failing ? { ready: false, ...failing } : { ready: true };
  }

  // --- metrics -----------------------------------------------------------------------------

  /** Prometheus text exposition of the host's metrics. */
  metrics() {
    return this.#metrics.text();
  }

  observeRequest(route, method, status, seconds) {
    this.#metrics.request(route, method, status, seconds);
  }

  streamCut() {
    this.#metrics.streamCut();
  }

  /** Stops the prober and timers, writes a final snapshot, closes the audit log, releases
   * the folder. */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    this.ready = false;
    this.#waiters?.close(Object.assign(new Error("the pool is closing"), { code: "POOL_CLOSED" }));
    this.#subscribers.clear();
    for (const wake of this.#wakers) wake();
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
      const s = this.#pool.stats();
      this.#reserve.handBack(s.fencingHighWater, s.nextEventSeq);
      this.#drain(false);
    } finally {
      await this.#audit.close();
      await this.#outcomes?.close();
      await this.#store.close();
      this.#pool.free();
      this.#pool = null;
      await this.#lock.release();
    }
  }

  async [Symbol.asyncDispose]() {
    await this.close();
  }
}
