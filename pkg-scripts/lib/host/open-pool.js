// `openPool`: one `Pool` in this process, made durable on disk and observable.
//
// - Snapshots are written atomically (snapshot-store.js) every `checkpointMs`, after a burst of
//   `burst` mutations, and on close / SIGTERM / SIGINT; operator actions (register,
//   deregister, block, unblock, snapshot import) are on disk before their promise resolves
//   (concurrent ones share one write). A write never goes back in revision; one process owns
//   the folder (lock.js).
// - Fencing tokens and event seqs are reserved ahead in `reserve.json` (a tiny file written
//   synchronously once per 65 536 tokens or seqs), so even after a `kill -9` a restarted pool
//   never hands out a token or a seq that was used before the crash (it skips ahead instead;
//   after a clean close it continues where it stopped).
// - Events go to the audit log (audit-log.js), to `on(type, cb)` / `addEventListener`
//   listeners and to `events()` async iterators; a failing or slow consumer never blocks or
//   fails a pool call, and what is dropped is counted.
// - A recovery prober (prober.js) runs when `prober` is given.
// - Every resource has an opaque id (`resource-id.js`) under a key kept in the folder
//   (`resource-id.key`, key-file.js); events carry it beside their masked value.

import { writeFileSync, readFileSync, openSync, fsyncSync, closeSync, renameSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Pool } from "../../node.js";
import { acquireLock } from "./lock.js";
import { SnapshotStore } from "./snapshot-store.js";
import { AuditLog } from "./audit-log.js";
import { startProber } from "./prober.js";
import { fsyncDirSync } from "./fsync.js";
import { HostMetrics } from "./metrics.js";
import { loadKey } from "./key-file.js";
import { ResourceIds } from "../resource-id.js";

const RESERVE_STEP = 65536;

/** Reads `reserve.json` (fencing and seq reservations), or zeros. */
function readReserve(dir) {
  try {
    const r = JSON.parse(readFileSync(join(dir, "reserve.json"), "utf8"));
    return { fencing: Number(r.fencing) || 0, eventSeq: Number(r.eventSeq) || 0 };
  } catch {
    return { fencing: 0, eventSeq: 0 };
  }
}

/** Writes `reserve.json` durably, synchronously (rare: once per RESERVE_STEP). */
function writeReserve(dir, reserve) {
  const tmp = join(dir, "reserve.json.tmp");
  const fd = openSync(tmp, "w");
  try {
    writeFileSync(fd, JSON.stringify(reserve));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(dir, "reserve.json"));
  fsyncDirSync(dir);
}

/**
 * Raises a stored snapshot's fencing high-water mark and next event seq to at least the
 * reserved ones (a crash may have used some past the last checkpoint). The snapshot is
 * canonical, so these top-level fields have one spelling.
 */
function lift(json, reserve) {
  return json.replace(/"fencingHighWater":(\d+),"nextEventSeq":(\d+)/, (_, f, s) =>
    `"fencingHighWater":${Math.max(Number(f), reserve.fencing)},"nextEventSeq":${Math.max(Number(s), reserve.eventSeq)}`);
}

const revisionOf = (json) => Number(/"revision":(\d+)/.exec(json)?.[1] ?? NaN);

/**
 * Restores `json` (any JSON spelling) with `options`, with its fencing high-water mark and
 * next event seq raised to at least `reserve`'s. The engine validates the text first; only
 * when a lift is needed is the pool re-read from its own canonical snapshot, patched.
 */
function restoreLifted(json, reserve, options) {
  const pool = Pool.restore(json, options);
  const s = pool.stats();
  if (s.fencingHighWater >= reserve.fencing && s.nextEventSeq >= reserve.eventSeq) return pool;
  const canonical = pool.snapshot();
  pool.free();
  return Pool.restore(lift(canonical, reserve), options);
}

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
  #prober = null;
  #metrics;
  #onError;
  #checkpointMs;
  #burst;
  #burstGapMs;
  #lastBurst = -Infinity;
  #burstTimer = null;
  #timer = null;
  #mutations = 0;
  #lastRevision = -1;
  #writing = Promise.resolve();
  #pendingDurable = null;
  #reserve;
  #lastSeq = 0;
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
    prober,
    fromBackup = false,
    handleSignals = true,
    onError = (e) => console.error("repute:", e.message),
  } = {}) {
    this.#dir = dir;
    this.#onError = onError;
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
      this.#reserve = readReserve(dir);
      // A prober decides the cells it can test: by default only BLOCKED cooldowns are
      // half-open trials (a synthetic probe cannot judge a site block; real traffic can).
      // The same overrides apply to a new pool, a restored one and an imported snapshot.
      const overrides = prober ? { halfOpenCauses: ["BLOCKED"], ...config } : config;
      this.#overrides = overrides;
      this.#poolOptions = { now, ...(random ? { random } : {}), ...(seed !== undefined ? { seed } : {}) };
      // Whatever was used before (reserved, or logged) is never handed out again, even when
      // the folder has no snapshot (a first start after a crash before the first write).
      this.#reserve.eventSeq = Math.max(this.#reserve.eventSeq, this.#audit.lastSeq + 1);
      const restoreOptions = { ...this.#poolOptions, ...(overrides ? { config: overrides } : {}) };
      if (stored) {
        try {
          this.#pool = restoreLifted(stored.json, this.#reserve, restoreOptions);
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
        if (s.fencingHighWater >= this.#reserve.fencing && s.nextEventSeq >= this.#reserve.eventSeq) {
          this.#pool = fresh;
        } else {
          this.#pool = restoreLifted(fresh.snapshot(), this.#reserve, restoreOptions);
          fresh.free();
        }
      }
      const stats = this.#pool.stats();
      this.#lastSeq = stats.nextEventSeq - 1;
      this.#metrics = new HostMetrics(this);
      this.#ensureReserve(stats.fencingHighWater, stats.nextEventSeq);
      await this.checkpoint();
    } catch (e) {
      await this.#lock.release();
      throw e;
    }
    if (checkpointMs > 0) {
      this.#timer = setInterval(() => this.checkpoint().catch(() => {}), checkpointMs);
      this.#timer.unref();
    }
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

  /** Keeps the reservations ahead of the highest token and seq in use. */
  #ensureReserve(fencing, nextSeq) {
    if (fencing < this.#reserve.fencing && nextSeq <= this.#reserve.eventSeq) return;
    this.#reserve = {
      fencing: Math.max(this.#reserve.fencing, fencing + RESERVE_STEP),
      eventSeq: Math.max(this.#reserve.eventSeq, nextSeq + RESERVE_STEP),
    };
    writeReserve(this.#dir, this.#reserve);
  }

  // --- the pool's API --------------------------------------------------------------------

  /** After `burst` mutations a snapshot is written early — at most once per `burstGapMs`, so
   * that steady heavy traffic (every acquire is a mutation) is left to the interval instead of
   * stalling the event loop with a snapshot every few hundred milliseconds. */
  #mutated() {
    this.#scheduleDrain();
    if (++this.#mutations < this.#burst || this.#burstTimer) return;
    const wait = this.#lastBurst + this.#burstGapMs - performance.now();
    this.#burstTimer = setTimeout(() => {
      this.#burstTimer = null;
      this.#mutations = 0;
      this.#lastBurst = performance.now();
      this.checkpoint().catch(() => {});
    }, Math.max(0, wait));
    this.#burstTimer.unref();
  }

  #scheduleDrain() {
    if (this.#drainScheduled) return;
    this.#drainScheduled = true;
    queueMicrotask(() => this.#drain());
  }

  #withDispose(lease) {
    if (lease) {
      Object.defineProperty(lease, Symbol.dispose, { value: () => this.release(lease), enumerable: false });
      if (lease.token >= this.#reserve.fencing) this.#ensureReserve(lease.token, this.#lastSeq + 1);
    }
    return lease;
  }

  acquire(context) {
    const lease = this.#pool.acquire(context);
    this.#metrics.acquired(context, lease !== null);
    this.#mutated();
    return this.#withDispose(lease);
  }

  acquireResource(kind, value, context) {
    const lease = this.#pool.acquireResource(kind, value, context);
    this.#mutated();
    return this.#withDispose(lease);
  }

  report(kind, value, context, outcome) {
    this.#pool.report(kind, value, context, outcome);
    this.#mutated();
  }

  renew(lease) {
    const renewed = this.#pool.renew(lease);
    this.#scheduleDrain();
    return this.#withDispose(renewed);
  }

  release(lease) {
    const released = this.#pool.release(lease);
    if (released) this.#mutated();
    return released;
  }

  /** Operator actions resolve once the state they report is on disk — also when they
   * changed nothing (a concurrent call may have made the change they observe). */
  async register(kind, value) {
    const added = this.#pool.register(kind, value);
    await this.#durable();
    return added;
  }

  async deregister(kind, value) {
    const removed = this.#pool.deregister(kind, value);
    await this.#durable();
    return removed;
  }

  async block(kind, value, how) {
    this.#pool.block(kind, value, how);
    await this.#durable();
  }

  async unblock(kind, value) {
    const unblocked = this.#pool.unblock(kind, value);
    await this.#durable();
    return unblocked;
  }

  /** Replaces the pool with a snapshot (operator import), under the host's config overrides.
   * Refused (code STALE_SNAPSHOT) when its revision is lower than the stored snapshot's or the
   * live pool's: a revision never goes back. Serialized with snapshot writes; on disk before
   * it resolves. Tokens and seqs continue above everything used so far — which, in a running
   * process, the live pool and the audit log know exactly (the crash reservation is only for
   * restarts), so importing a pool's own export changes none of its numbers. */
  importSnapshot(json) {
    const run = this.#writing.then(async () => {
      const options = { ...this.#poolOptions, ...(this.#overrides ? { config: this.#overrides } : {}) };
      const live = this.#pool.stats();
      const used = {
        fencing: live.fencingHighWater,
        eventSeq: Math.max(live.nextEventSeq, this.#audit.lastSeq + 1),
      };
      const next = restoreLifted(json, used, options);
      const revision = next.stats().revision;
      const floor = Math.max(this.#store.lastRevision, live.revision);
      if (revision < floor) {
        next.free();
        throw Object.assign(new Error(`the snapshot's revision ${revision} is older than the pool's ${floor}`), {
          code: "STALE_SNAPSHOT",
        });
      }
      this.#drain();
      this.#pool.free();
      this.#pool = next;
      const now = next.stats();
      this.#ensureReserve(now.fencingHighWater, now.nextEventSeq);
      this.#lastRevision = -1;
      await this.#write();
    });
    this.#writing = run.catch(() => {});
    return run;
  }

  snapshot() {
    const s = this.#pool.snapshot();
    this.#scheduleDrain();
    return s;
  }

  resources(filter) {
    return this.#pool.resources(filter);
  }

  dueForRecoveryProbe() {
    return this.#pool.dueForRecoveryProbe();
  }

  nextChangeAt(context) {
    return this.#pool.nextChangeAt(context);
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

  /** The value as events show it (`Pool.maskValue`). */
  maskValue(kind, value) {
    return Pool.maskValue(kind, value);
  }

  // --- events ----------------------------------------------------------------------------

  #drain() {
    this.#drainScheduled = false;
    if (this.#closed && !this.#pool) return;
    const events = this.#pool.drainEvents({ resourceId: this.#idOf });
    if (events.length === 0) return;
    this.#lastSeq = events[events.length - 1].seq;
    if (this.#lastSeq >= this.#reserve.eventSeq - 1) this.#ensureReserve(0, this.#lastSeq + 1);
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

  // --- durability ------------------------------------------------------------------------

  /** Writes a snapshot if anything changed since the last one. Serialized. */
  checkpoint() {
    const run = this.#writing.then(() => this.#write());
    this.#writing = run.catch(() => {});
    return run;
  }

  /** One snapshot write (callers serialize through `#writing`). */
  async #write() {
    if (!this.#pool) return;
    const started = performance.now();
    const json = this.#pool.snapshot();
    this.#drain();
    const revision = revisionOf(json);
    if (revision === this.#lastRevision) return;
    try {
      if (!(await this.#store.write(json, revision))) {
        throw Object.assign(new Error(`snapshot revision ${revision} refused: the stored one is newer`), { code: "STALE_SNAPSHOT" });
      }
      this.#lastRevision = revision;
      this.#metrics.checkpointed(performance.now() - started);
    } catch (e) {
      this.#metrics.checkpointFailed();
      this.#onError(e);
      throw e;
    }
  }

  /** Resolves when the current state is on disk; concurrent callers share one write. */
  #durable() {
    this.#pendingDurable ??= Promise.resolve().then(() => {
      this.#pendingDurable = null;
      return this.checkpoint();
    });
    return this.#pendingDurable;
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
    this.#subscribers.clear();
    for (const wake of this.#wakers) wake();
    if (this.#signalHandler) {
      process.off("SIGTERM", this.#signalHandler);
      process.off("SIGINT", this.#signalHandler);
    }
    clearInterval(this.#timer);
    clearTimeout(this.#burstTimer);
    await this.#prober?.stop();
    try {
      await this.checkpoint();
      // A clean stop used nothing past what the final snapshot says: hand the reservation back,
      // so the next start continues tokens and seqs without a jump.
      const s = this.#pool.stats();
      writeReserve(this.#dir, { fencing: s.fencingHighWater, eventSeq: s.nextEventSeq });
    } finally {
      await this.#audit.close();
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
