// The host contract (host.d.ts) over a Durable Object's storage: the host core
// (lib/host/host-core.js) whose hooks record what changed and write it to SQLite (sql-store.js).
//
// Cost proportional to change: every call or event that names a resource marks it; a
// checkpoint writes the snapshot's head and only the marked resources' rows, with the events
// drained since the last one, in one transaction. A config change or an import marks every
// resource (a rare operator action: one full write).
// - Operator actions (register, deregister, block, unblock, config, import) are checkpointed
//   before they are acknowledged. If that write fails the action is refused (503
//   storage-unavailable) and the pool goes back to the last checkpoint, as after a crash (if
//   that cannot be read either, every request answers 503 until it can: `recover`).
// - The hot path (acquire, report, renew, release) writes nothing but, rarely, the reservation:
//   its changes are checkpointed by an alarm `checkpointMs` after the first one (alarms are
//   delivered at least once and retried: a checkpoint rewrites whole rows and clears its marks
//   only once committed, so running it twice is harmless), or at once past `burst` pending
//   changes. A crash loses at most the reports and releases since the last checkpoint.
// - Fencing tokens and event seqs are reserved ahead by `reserveStep` (renewed at half), with
//   a small write that the Durable Object's output gate holds every answer behind; a restart
//   starts above the reservation, so a token or seq is never handed out twice. If that write
//   fails, calls go on while the stored reservation still covers them.

import { HostCore } from "../host/host-core.js";
import { SqlStore } from "./sql-store.js";
import { rowKey } from "../snapshot-parts.js";

const storageUnavailable = (cause) =>
  Object.assign(new Error("the Durable Object's storage refused the write; nothing was changed"), { code: "STORAGE_UNAVAILABLE", retryAfter: 1, cause });

export class DurableHost extends HostCore {
  #ctx;
  #store;
  /** Resources changed since the last checkpoint: row key → [kind, value]. */
  #dirty = new Map();
  #all = false;
  /** Events drained since the last checkpoint, in seq order. */
  #pending = [];
  #reserve;
  #step;
  #checkpointMs;
  #burst;
  #eventsKept;
  #alarmSet = false;
  /** An operator action was refused and the pool not yet put back (see `recover`). */
  #stale = false;
  /** The last checkpoint: rows and bytes written, ms taken, resources written. */
  lastCheckpoint = null;

  /**
   * Restores the object's pool from its storage (or makes a new one) and reserves ahead.
   * `ctx` (the Durable Object state), `Pool` (the engine), `config` (overrides), `seed`,
   * `checkpointMs` (default 10000), `burst` (default 5000), `eventsKept` (default 100000),
   * `reserveStep` (default 65536).
   */
  static async restore({ ctx, Pool, config, seed, now = Date.now, checkpointMs = 10000, burst = 5000, eventsKept = 100000, reserveStep = 65536 }) {
    const host = new DurableHost();
    host.#ctx = ctx;
    host.#store = new SqlStore(ctx.storage);
    host.#step = reserveStep;
    host.#checkpointMs = checkpointMs;
    host.#burst = burst;
    host.#eventsKept = eventsKept;
    const key = host.#store.key((n) => crypto.getRandomValues(new Uint8Array(n)));
    const stored = host.#store.load();
    const reserve = host.#store.reserve();
    await host._configure({ Pool, config, now, seed, key });
    const { options } = host._engine;
    host._setPool(stored ? Pool.restore(stored.snapshot, options) : new Pool(options), reserve);
    host.ready = true;
    const s = host._pool.stats();
    host.#reserve = { fencing: s.fencingHighWater + reserveStep, eventSeq: s.nextEventSeq + reserveStep };
    host.#store.writeReserve(host.#reserve);
    // A config override that changed the stored config may have changed cells too: rewrite all.
    if (!stored || (config && JSON.stringify(JSON.parse(`${stored.head}}`).config) !== JSON.stringify(host._pool.config()))) host._touchedAll();
    host.checkpoint();
    return host;
  }

  get store() {
    return this.#store;
  }

  // --- hooks (host-core.js) -----------------------------------------------------------------

  _touched(kind, value) {
    if (!this.#all) this.#dirty.set(rowKey(kind, value), [kind, value]);
  }

  _touchedAll() {
    this.#all = true;
    this.#dirty.clear();
  }

  /** An acquire's token must be under the reservation (raised at half). */
  _admitHot(token) {
    if (!token) return;
    const next = this._fencing + 1;
    if (next <= this.#reserve.fencing - this.#step / 2) return;
    this.#extend({ ...this.#reserve, fencing: next + this.#step }, next <= this.#reserve.fencing);
  }

  _logged(events) {
    const last = events[events.length - 1].seq;
    if (last > this.#reserve.eventSeq - this.#step / 2) this.#extend({ ...this.#reserve, eventSeq: last + 1 + this.#step }, last < this.#reserve.eventSeq);
    for (const e of events) this.#pending.push(e);
  }

  /** Raises the reservation. If storage refuses, the call goes on while what it hands out is
   * still `covered` by the stored reservation (the next call tries again); past it, refused
   * (by `_logged`, after the call was applied: its events are dropped, never served). */
  #extend(reserve, covered) {
    try {
      this.#store.writeReserve(reserve);
    } catch (e) {
      if (covered) return;
      throw storageUnavailable(e);
    }
    this.#reserve = reserve;
  }

  _mutated() {
    if (this.#dirty.size + this.#pending.length >= this.#burst) {
      try {
        this.checkpoint();
      } catch {
        // the alarm retries
      }
    }
    if (!this.#alarmSet && (this.#dirty.size > 0 || this.#pending.length > 0 || this.#all)) {
      this.#alarmSet = true;
      this.#ctx.storage.setAlarm(Date.now() + this.#checkpointMs); // the platform's clock, not the pool's
    }
  }

  async _persist() {
    try {
      this.checkpoint();
    } catch (e) {
      this.#stale = true;
      this.recover();
      throw storageUnavailable(e);
    }
  }

  /** After a refused operator action, puts the pool back as the last checkpoint stored it;
   * false while storage cannot be read (then the object serves nothing and stores nothing, so
   * the refused action is never applied later). */
  recover() {
    if (!this.#stale) return true;
    try {
      this.#reload();
    } catch {
      return false;
    }
    this.#stale = false;
    return true;
  }

  /** Puts the pool back as the last checkpoint stored it (after a refused operator action). */
  #reload() {
    const { Pool, options } = this._engine;
    const stored = this.#store.load();
    this.#dirty.clear();
    this.#all = !stored;
    this.#pending = [];
    this._setPool(stored ? Pool.restore(stored.snapshot, options) : new Pool(options), this.#reserve);
  }

  // --- durability -----------------------------------------------------------------------------

  /** Writes what changed since the last checkpoint, in one transaction (see the header). */
  checkpoint() {
    if (!this.recover()) throw storageUnavailable(new Error("the last checkpoint cannot be read back"));
    const started = performance.now();
    this._drain();
    const pool = this._pool;
    const head = pool.snapshotPart();
    const names = this.#all ? pool.resources().map((r) => [rowKey(r.kind, r.value), [r.kind, r.value]]) : [...this.#dirty];
    const writes = names.map(([key, [kind, value]]) => ({ key, part: pool.snapshotPart(kind, value) }));
    let written;
    try {
      written = this.#store.commit({ head, writes, replaceAll: this.#all, events: this.#pending, keep: this.#eventsKept, reserve: this.#reserve });
    } catch (e) {
      this._metrics.checkpointFailed();
      throw e;
    }
    this.#dirty.clear();
    this.#all = false;
    this.#pending = [];
    const ms = performance.now() - started;
    this._metrics.checkpointed(ms);
    this.lastCheckpoint = { ...written, resources: writes.length, ms };
    return this.lastCheckpoint;
  }

  /** The alarm: checkpoint (thrown errors make the runtime retry it). */
  alarm() {
    this.#alarmSet = false;
    if (!this.recover()) throw storageUnavailable(new Error("the last checkpoint cannot be read back"));
    if (this.#dirty.size > 0 || this.#pending.length > 0 || this.#all) this.checkpoint();
  }

  async readEvents({ after = 0, limit = 100 } = {}) {
    this._drain();
    const need = limit + 1;
    const out = this.#store.events(after, need);
    for (const e of this.#pending) {
      if (out.length >= need) break;
      if (e.seq > after && (out.length === 0 || e.seq > out[out.length - 1].seq)) out.push(e);
    }
    const more = out.length > limit;
    if (more) out.length = limit;
    return { events: out, next: more ? out[limit - 1].seq : null };
  }

  /** What is pending (for tests and the benchmark). */
  pending() {
    return { resources: this.#all ? "all" : this.#dirty.size, events: this.#pending.length, reserve: { ...this.#reserve } };
  }
}
