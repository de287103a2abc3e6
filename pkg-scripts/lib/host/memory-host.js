// `MemoryHost`: the host contract the HTTP handler serves (host.d.ts, `Host`) over one `Pool`,
// in memory, with no file system — for tests, browsers, and as the base of the edge worker's
// Durable Object host (edge/durable-host.js), which adds storage through the hooks below.
//
// Owns: the live pool (given its `Pool` class, Node's or the web build's), draining its events
// after every call to the event log (a bounded ring here), to subscribers and to the metrics
// (text-metrics.js); resource ids (resource-id.js, under a key it is given or makes); imports
// (never to a lower revision; tokens and seqs continue above what was used, counters.js).
// Does not own: durability. A subclass makes it durable by overriding the hooks:
// - `_touched(kind, value)` — a call or an event named this resource (its stored state may have
//   changed); `_touchedAll()` — every resource may have changed (config change, import);
// - `_admitToken()` — before an acquire, which hands out the token `_fencing + 1`;
// - `_logged(events)` — new events, in seq order, before any subscriber sees them;
// - `_mutated()` — after any call that changed the pool (to schedule a checkpoint);
// - `async _persist()` — after an operator action is applied, before it is acknowledged; if it
//   throws, the action is refused (the subclass puts the pool back as it was stored).
// A memory host's hooks do nothing but keep the last `eventsKept` events for `readEvents`.

import { ResourceIds } from "../resource-id.js";
import { TextMetrics } from "./text-metrics.js";
import { ContextHealth, contextsOf } from "./context-health.js";
import { annotate, configChanges } from "./operator-note.js";
import { checkImportRoom, liftPool } from "../counters.js";
import { Waiters, nextStep, waitOptions } from "../waiters.js";

export class MemoryHost {
  #Pool;
  #pool = null;
  #poolOptions;
  #overrides;
  #ids;
  #metrics = new TextMetrics(this);
  #sites = new ContextHealth(() => this.now());
  #subscribers = new Set();
  /** The highest token handed out. */
  #fencing = 0;
  #log = [];
  #eventsKept = 10000;
  /** Waiting acquires (waiters.js), made on the first wait; its options. */
  #waiters = null;
  #waitOptions;
  #resourceId = (kind, value) => {
    this._touched(kind, value);
    return this.#ids.of(kind, value);
  };
  ready = false;

  /** Options: see `open`. */
  static async create(options) {
    const host = new this();
    await host.open(options);
    return host;
  }

  /**
   * `Pool` (the engine's class), `config` (a partial config: a new pool's, or overrides of a
   * restored one's), `now`, `seed` or `random` (as `Pool` takes them), `key` (≥ 16 bytes for
   * resource ids; default: fresh random bytes), `snapshot` (text to restore; default a new
   * pool), `floor` ({fencing, eventSeq}: counters the pool must start at or above),
   * `eventsKept` (default 10000), `timers` ({setTimeout, clearTimeout} for waiting acquires;
   * default the platform's) and `maxWaiters` (default 10000).
   */
  async open({ Pool, config, now = Date.now, seed, random, key, snapshot = null, floor = {}, eventsKept = 10000, timers, maxWaiters = 10_000 }) {
    this.#Pool = Pool;
    this.#waitOptions = { ...(timers ? { timers } : {}), max: maxWaiters };
    this.#ids = await ResourceIds.create(key ?? globalThis.crypto.getRandomValues(new Uint8Array(32)));
    this.#poolOptions = { now, ...(random ? { random } : {}), ...(seed !== undefined ? { seed } : {}) };
    this.#overrides = config;
    this.#eventsKept = eventsKept;
    this._setPool(snapshot === null ? new Pool(this.#restoreOptions()) : Pool.restore(snapshot, this.#restoreOptions()), floor);
    this.ready = true;
  }

  #restoreOptions() {
    return { ...this.#poolOptions, ...(this.#overrides ? { config: this.#overrides } : {}) };
  }

  /** Makes `pool` (lifted to `floor`) the live pool, freeing the one before. For subclasses. */
  _setPool(pool, floor = {}) {
    const next = liftPool(this.#Pool, pool, floor, this.#restoreOptions());
    this.#pool?.free();
    this.#pool = next;
    this.#fencing = next.stats().fencingHighWater;
  }

  /** The live pool, for subclasses (reads only: changes go through this host's methods). */
  get _pool() {
    return this.#pool;
  }

  /** The engine's `Pool` class and the options every restore takes, for subclasses. */
  get _engine() {
    return { Pool: this.#Pool, options: this.#restoreOptions() };
  }

  /** The highest token handed out. */
  get _fencing() {
    return this.#fencing;
  }

  // --- hooks (see the header) --------------------------------------------------------------

  _touched() {}
  _touchedAll() {}
  _admitToken() {}
  _mutated() {}
  async _persist() {}
  _logged(events) {
    for (const e of events) this.#log.push(e);
    if (this.#log.length > this.#eventsKept) this.#log.splice(0, this.#log.length - this.#eventsKept);
  }

  // --- events ------------------------------------------------------------------------------

  /** Delivers the pool's new events: the log first, then metrics and subscribers. `note`: an
   * operator action's actor, reason and changes (operator-note.js), for the events it caused. */
  _drain(note = null) {
    const events = annotate(this.#pool.drainEvents({ resourceId: this.#resourceId }), note);
    if (events.length === 0) return;
    this._logged(events);
    this.#metrics.events(events);
    for (const e of events) {
      for (const s of this.#subscribers) {
        try {
          s(e);
        } catch {
          // a subscriber's failure is its own
        }
      }
    }
  }

  #after(note = null) {
    this._drain(note);
    this._mutated();
  }

  /** Live events, synchronously, as they are drained; returns the unsubscribe function. */
  subscribe(listener) {
    this.#subscribers.add(listener);
    return () => this.#subscribers.delete(listener);
  }

  /** The event log by seq (keyset pagination): `{events, next}`. */
  async readEvents({ after = 0, limit = 100 } = {}) {
    this._drain();
    const out = [];
    for (const e of this.#log) {
      if (e.seq <= after) continue;
      out.push(e);
      if (out.length > limit) break;
    }
    const more = out.length > limit;
    if (more) out.length = limit;
    return { events: out, next: more ? out[limit - 1].seq : null };
  }

  // --- the hot path --------------------------------------------------------------------------

  now() {
    return this.#poolOptions.now();
  }

  /** `options`: `{ groups }` (SPEC §3, groups), or none. */
  acquire(context, options) {
    this._admitToken();
    const lease = this.#pool.acquire(context, options);
    this.#metrics.acquired(context, lease);
    this.#sites.acquired(context, lease);
    if (lease && lease.token > this.#fencing) this.#fencing = lease.token;
    this.#after();
    return lease;
  }

  /** `acquire` with no ACQUISITION_REJECTED when it grants nothing (a wait's retry). */
  acquireQuiet(context, options) {
    this._admitToken();
    const lease = this.#pool.acquireQuiet(context, options);
    if (lease) {
      this.#metrics.acquired(context, lease);
      this.#sites.acquired(context, lease);
      if (lease.token > this.#fencing) this.#fencing = lease.token;
      this.#after();
    }
    return lease;
  }

  /** A lease within `waitMs` (SPEC §3, waiting; lib/waiters.js). */
  acquireWait(context, options) {
    try {
      const [groups, waitMs, signal] = waitOptions(options);
      this.#waiters ??= Waiters.over(this, this.#waitOptions);
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
  _kick() {
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
      this._admitToken();
      const got = this.#pool.finish(lease, outcome, { next: { context: next.context, groups: next.groups } });
      this._touched(lease.kind, lease.value);
      this.#sites.reported(lease.context, outcome);
      this.#metrics.acquired(next.context ?? lease.context, got);
      this.#sites.acquired(next.context ?? lease.context, got);
      if (got && got.token > this.#fencing) this.#fencing = got.token;
      this.#after();
      return got;
    }
    this.#pool.finish(lease, outcome);
    this._touched(lease.kind, lease.value);
    this.#sites.reported(lease.context, outcome);
    this.#after();
    this._kick();
    if (next === undefined) return null;
    const context = next.context ?? lease.context;
    const groups = next.groups === undefined ? {} : { groups: next.groups };
    if (next.waitMs > 0) return this.acquireWait(context, { ...groups, waitMs: next.waitMs, ...(next.signal ? { signal: next.signal } : {}) });
    return this.acquire(context, next.groups === undefined ? undefined : groups);
  }

  report(kind, value, context, outcome) {
    this.#pool.report(kind, value, context, outcome);
    this._touched(kind, value);
    this.#sites.reported(context, outcome);
    this.#after();
    this._kick(); // a probe's success ends a cooldown
  }

  renew(lease) {
    const renewed = this.#pool.renew(lease);
    this.#after();
    return renewed;
  }

  release(lease) {
    const released = this.#pool.release(lease);
    this.#after();
    if (released) this._kick();
    return released;
  }

  // --- operator actions: applied, then `_persist`ed before they resolve --------------------

  // `note` (each optional): `{actor, reason}` of the caller, added to the events the action
  // causes (operator-note.js).

  /** `options`: `{ group }` moves a known resource (SPEC §3, groups), or none. */
  async register(kind, value, options, note) {
    this._drain(); // earlier events are not this action's
    const added = this.#pool.register(kind, value, options);
    this._touched(kind, value);
    this.#after(note);
    this._kick(); // a new resource, or a raised maxLeases
    await this._persist();
    return added;
  }

  async deregister(kind, value, note) {
    this._drain();
    const removed = this.#pool.deregister(kind, value);
    this._touched(kind, value);
    this.#after(note);
    await this._persist();
    return removed;
  }

  async block(kind, value, how, note) {
    this._drain();
    this.#pool.block(kind, value, how);
    this._touched(kind, value);
    this.#after(note);
    await this._persist();
  }

  async unblock(kind, value, note) {
    this._drain();
    const unblocked = this.#pool.unblock(kind, value);
    this._touched(kind, value);
    this.#after(note);
    if (unblocked) this._kick();
    await this._persist();
    return unblocked;
  }

  async setConfig(patch, note) {
    this._drain();
    const before = this.#pool.config();
    this.#pool.setConfig(patch);
    this._touchedAll();
    this.#after({ ...note, changes: configChanges(before, this.#pool.config()) });
    this._kick();
    await this._persist();
    return this.#pool.config();
  }

  /** Replaces the pool with a snapshot: refused (STALE_SNAPSHOT) below the live revision,
   * (INVALID_SNAPSHOT) with counters too close to 2^53; tokens and seqs continue above what
   * the live pool used, so importing its own export changes none of its numbers. */
  async importSnapshot(json) {
    const { Pool, options } = this._engine;
    this._drain();
    const live = this.#pool.stats();
    let next = Pool.restore(json, options);
    try {
      const own = next.stats();
      checkImportRoom(own);
      if (own.revision < live.revision) {
        throw Object.assign(new Error(`the snapshot's revision ${own.revision} is older than the pool's ${live.revision}`), {
          code: "STALE_SNAPSHOT",
        });
      }
    } catch (e) {
      next.free();
      throw e;
    }
    this._setPool(next, { fencing: Math.max(live.fencingHighWater, this.#fencing), eventSeq: live.nextEventSeq });
    this._touchedAll();
    this.#after();
    this._kick(); // the waits go on, served from the imported pool
    await this._persist();
  }

  // --- reads ---------------------------------------------------------------------------------

  config() {
    return this.#pool.config();
  }

  stats() {
    const s = this.#pool.stats();
    this._drain();
    return { ...s, auditDropped: 0, deliveryDropped: 0, ...this.#metrics.checkpointStats() };
  }

  snapshot() {
    const s = this.#pool.snapshot();
    this._drain();
    return s;
  }

  resources(filter) {
    return this.#pool.resources(filter);
  }

  resource(kind, value) {
    return this.#pool.resource(kind, value);
  }

  nextChangeAt(context, options) {
    return this.#pool.nextChangeAt(context, options);
  }

  resourceId(kind, value) {
    return this.#ids.of(kind, value);
  }

  /** Per-context health (`GET /api/contexts`, context-health.js). */
  contexts() {
    return contextsOf(this, this.#sites);
  }

  resourceById(id) {
    return this.#ids.find(id, () => this.#pool.resources());
  }

  /** `resourceById` without holding up other work: the pool is searched a page at a time, with
   * turns of the event loop between pages (the HTTP handler's lookup). */
  resourceLookup(id) {
    return this.#ids.findInPages(id, (after) => this.#pool.resources({ limit: 25, ...(after ? { after } : {}) }));
  }

  maskValue(kind, value) {
    return this.#Pool.maskValue(kind, value);
  }

  readiness() {
    return this.ready ? { ready: true } : { ready: false, reason: "not-ready", detail: "the pool is not open" };
  }

  // --- metrics -------------------------------------------------------------------------------

  /** The metrics object (text-metrics.js), for subclasses to record checkpoints. */
  get _metrics() {
    return this.#metrics;
  }

  metrics() {
    return this.#metrics.text();
  }

  observeRequest(route, method, status, seconds) {
    this.#metrics.request(route, method, status, seconds);
  }

  streamCut() {
    this.#metrics.streamCut();
  }

  close() {
    this.ready = false;
    this.#waiters?.close(Object.assign(new Error("the pool is closing"), { code: "POOL_CLOSED" }));
    this.#subscribers.clear();
    this.#pool?.free();
    this.#pool = null;
  }
}
