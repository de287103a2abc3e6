// `HostCore`: the host contract the HTTP handler serves (host.d.ts, `Host`) over one `Pool`,
// written once for every platform. The in-memory host (memory-host.js), the Node host
// (lib/node/open-pool.js: a data folder) and the edge's Durable Object host
// (lib/edge/durable-host.js: SQLite) extend it and add only what their platform has, through
// the hooks below. Platform-neutral: no Node API, no storage.
//
// Owns: the live pool (given its `Pool` class, Node's or the web build's); draining its events
// after every call, to the event log (a hook), the metrics (metrics.js) and the in-process
// consumers (event-hub.js, its base: a throwing consumer is reported to `onError` and never
// fails a pool call); the highest token handed out; waiting acquires (waiters.js); per-context
// health (context-health.js); operator notes (operator-note.js) and undos (operator-undo.js);
// resource ids (resource-id.js, under the key it is given); imports (never to a lower revision;
// tokens and seqs continue above what was used, counters.js); resilient calls (lib/call).
// Does not own: durability. A shell makes it durable by overriding the hooks:
// - `_touched(kind, value)` — a call or an event named this resource (its stored state may have
//   changed); `_touchedAll()` — every resource may have changed (config change, import);
// - `_admitHot(token)` — before a hot-path call (`token`: it hands out the token `_fencing + 1`);
//   throws to refuse it before the engine is called;
// - `_admit(extra)` — before an operator action changes anything (`extra`: bytes it adds);
// - `_admitEvents(events, extend)` — the drained events that may be delivered now (a shell may
//   hold the rest back for a later drain); `_logged(events)` — new events, in seq order,
//   before any subscriber sees them;
// - `_reported(kind, value, context, outcome)` — an outcome was reported;
// - `_mutated()` — after a hot-path call that changed the pool (to schedule a checkpoint);
// - `async _persist(undo)` — after an operator action is applied, before it is acknowledged
//   (`undo` reverts it, null when there is nothing to revert); if it throws, the action is
//   refused (the shell puts the pool back: by `undo`, or as it was stored);
// - `async _writeAhead(ahead, commit)` — an operator action with no inverse (a config change
//   that loses state, operator-undo.js `configUndoable`): by default `commit()` then
//   `_persist`; a shell may store what `ahead(scratch)` gives first;
// - `_used(live)`, `_storedRevision()` — counters and revision an import must stay above;
// - `_storageReadiness()`, `_auditDropped` — what `/readyz` and `stats()` add.
// A hook that does nothing is the memory host's behaviour.

import { ResourceIds } from "../resource-id.js";
import { HostMetrics } from "./metrics.js";
import { ContextHealth, contextsOf } from "./context-health.js";
import { annotate, configChanges } from "./operator-note.js";
import { checkImportRoom, liftPool } from "../counters.js";
import { Waiters, nextStep, waitOptions } from "../waiters.js";
import { call } from "../call/call.js";
import { EventHub } from "./event-hub.js";
import { blockOf, configUndoable, groupOf, restoreBlock } from "./operator-undo.js";

/** An import's text: `input` itself, or its UTF-8 bytes decoded. */
function snapshotText(input) {
  if (typeof input === "string") return input;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(input);
  } catch {
    throw Object.assign(new Error("the snapshot is not valid UTF-8"), { code: "INVALID_SNAPSHOT" });
  }
}

const closing = () => Object.assign(new Error("the pool is closing"), { code: "POOL_CLOSED" });

export class HostCore extends EventHub {
  #Pool;
  #pool = null;
  #poolOptions;
  #overrides;
  #ids;
  #metrics;
  #sites = new ContextHealth(() => this.now());
  /** The highest token handed out. */
  #fencing = 0;
  #timers;
  #monotonicMs;
  #onError;
  /** Hot-path calls deliver their events at the end of the turn (one drain for many calls). */
  #deferDrain = false;
  #drainScheduled = false;
  /** Waiting acquires (waiters.js), made on the first wait; its options. */
  #waiters = null;
  #waitOptions;
  #resourceId = (kind, value) => {
    this._touched(kind, value);
    return this.#ids.of(kind, value);
  };
  ready = false;

  /**
   * The engine and the platform, before any pool: `Pool` (the engine's class), `config` (a
   * partial config: a new pool's, or overrides of a restored one's), `now`, `seed` or `random`
   * (as `Pool` takes them), `key` (≥ 16 bytes for resource ids), `timers` ({setTimeout,
   * clearTimeout}, and `monotonicMs` if the shell has one, for waits, calls and metrics; default
   * the platform's), `maxWaiters`, `onError` (where a consumer's or a listener's failure goes),
   * `deferDrain` (deliver hot-path events at the end of the turn).
   */
  async _configure({ Pool, config, now = Date.now, seed, random, key, timers, maxWaiters = 10_000, onError = () => {}, deferDrain = false }) {
    this.#Pool = Pool;
    this.#timers = timers;
    this.#monotonicMs = timers?.monotonicMs ?? (() => performance.now());
    this.#waitOptions = { ...(timers ? { timers } : {}), max: maxWaiters };
    this.#onError = onError;
    this._useOnError(onError);
    this.#deferDrain = deferDrain;
    this.#ids = await ResourceIds.create(key);
    this.#poolOptions = { now, ...(random ? { random } : {}), ...(seed !== undefined ? { seed } : {}) };
    this.#overrides = config;
    this.#metrics = new HostMetrics(this, this.#monotonicMs);
  }

  #restoreOptions() {
    return { ...this.#poolOptions, ...(this.#overrides ? { config: this.#overrides } : {}) };
  }

  /** Makes `pool` (lifted to `floor`) the live pool, freeing the one before. For shells. */
  _setPool(pool, floor = {}) {
    const next = liftPool(this.#Pool, pool, floor, this.#restoreOptions());
    if (this.#pool !== next) this.#pool?.free();
    this.#pool = next;
    this.#fencing = next.stats().fencingHighWater;
  }

  /** The live pool, for shells (reads only: changes go through this host's methods). */
  get _pool() {
    return this.#pool;
  }

  /** The engine's `Pool` class, the options every restore takes (with the overrides) and the
   * bare clock and randomness (a copy of the live pool keeps its own config), for shells. */
  get _engine() {
    return { Pool: this.#Pool, options: this.#restoreOptions(), bare: this.#poolOptions };
  }

  /** The highest token handed out. */
  get _fencing() {
    return this.#fencing;
  }

  // --- hooks (see the header) --------------------------------------------------------------

  _touched() {}
  _touchedAll() {}
  _admitHot() {}
  _admit() {}
  _admitEvents(events) {
    return events;
  }
  _logged() {}
  _reported() {}
  _mutated() {}
  async _persist() {}
  async _writeAhead(ahead, commit) {
    const result = commit();
    await this._persist(null);
    return result;
  }
  /** Tokens and seqs used so far by `live` (a stats object): an import continues above them. */
  _used(live) {
    return { fencing: Math.max(live.fencingHighWater, this.#fencing), eventSeq: live.nextEventSeq };
  }
  _storedRevision() {
    return 0;
  }
  _storageReadiness() {
    return null;
  }
  get _auditDropped() {
    return 0;
  }

  // --- events ------------------------------------------------------------------------------

  /** Delivers the pool's new events that `_admitEvents` lets through: the log first, then
   * metrics, subscribers and listeners. `note`: an operator action's actor, reason and changes
   * (operator-note.js), for the events it caused (the caller drains before the action, so these
   * are its events). `extend`: passed to `_admitEvents`. */
  _drain(note = null, extend = true) {
    this.#drainScheduled = false;
    if (!this.#pool) return;
    const events = this._admitEvents(annotate(this.#pool.drainEvents({ resourceId: this.#resourceId }), note), extend);
    if (events.length === 0) return;
    this._logged(events);
    this.#metrics.events(events);
    this._publish(events);
  }

  /** Delivers now, or (`deferDrain`) once at the end of this turn. */
  #deliver() {
    if (!this.#deferDrain) return this._drain();
    if (this.#drainScheduled) return;
    this.#drainScheduled = true;
    queueMicrotask(() => {
      try {
        this._drain();
      } catch (e) {
        this.#onError(e); // never an uncaught exception from a microtask
      }
    });
  }

  /** After a hot-path call. */
  #after() {
    this.#deliver();
    this._mutated();
  }

  /** After an operator action: its events now, with its note. (Not `_mutated`: an action is
   * stored by its own `_persist`.) */
  #acted(note) {
    this._drain(note);
  }

  // --- the hot path --------------------------------------------------------------------------

  now() {
    return this.#poolOptions.now();
  }

  /** A granted lease: the highest token noted, and disposable (`using`: released). */
  #leased(lease) {
    if (lease) {
      Object.defineProperty(lease, Symbol.dispose, { value: () => this.release(lease), enumerable: false });
      if (lease.token > this.#fencing) this.#fencing = lease.token;
    }
    return lease;
  }

  /** An acquire's result, counted. */
  #granted(context, lease) {
    this.#metrics.acquired(context, lease);
    this.#sites.acquired(context, lease);
    return this.#leased(lease);
  }

  /** A report's bookkeeping. */
  #reportedBy(kind, value, context, outcome) {
    this._touched(kind, value);
    this._reported(kind, value, context, outcome);
    this.#sites.reported(context, outcome);
  }

  /** `options`: `{ groups }` (SPEC §3, groups), or none. */
  acquire(context, options) {
    this._admitHot(true);
    const lease = this.#granted(context, this.#pool.acquire(context, options));
    this.#after();
    return lease;
  }

  /** `acquire` with no ACQUISITION_REJECTED when it grants nothing (a wait's retry). */
  acquireQuiet(context, options) {
    this._admitHot(true);
    const lease = this.#pool.acquireQuiet(context, options);
    if (!lease) return lease;
    this.#granted(context, lease);
    this.#after();
    return lease;
  }

  /** A lease on one named resource (the prober's trial), uncounted by the metrics. */
  acquireResource(kind, value, context) {
    this._admitHot(true);
    const lease = this.#leased(this.#pool.acquireResource(kind, value, context));
    this.#after();
    return lease;
  }

  /** A lease within `waitMs` (SPEC §3, waiting; lib/waiters.js), on the host's timers. */
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
      this._admitHot(true);
      const got = this.#pool.finish(lease, outcome, { next: { context: next.context, groups: next.groups } });
      this.#reportedBy(lease.kind, lease.value, lease.context, outcome);
      this.#granted(next.context ?? lease.context, got);
      this.#after();
      return got;
    }
    this._admitHot(false);
    this.#pool.finish(lease, outcome);
    this.#reportedBy(lease.kind, lease.value, lease.context, outcome);
    this.#after();
    this._kick();
    if (next === undefined) return null;
    const context = next.context ?? lease.context;
    const groups = next.groups === undefined ? {} : { groups: next.groups };
    if (next.waitMs > 0) return this.acquireWait(context, { ...groups, waitMs: next.waitMs, ...(next.signal ? { signal: next.signal } : {}) });
    return this.acquire(context, next.groups === undefined ? undefined : groups);
  }

  report(kind, value, context, outcome) {
    this._admitHot(false);
    this.#pool.report(kind, value, context, outcome);
    this.#reportedBy(kind, value, context, outcome);
    this.#after();
    this._kick(); // a probe's success ends a cooldown
  }

  renew(lease) {
    this._admitHot(false);
    const renewed = this.#leased(this.#pool.renew(lease));
    this.#after();
    return renewed;
  }

  release(lease) {
    this._admitHot(false);
    const released = this.#pool.release(lease);
    this.#after();
    if (released) this._kick();
    return released;
  }

  /** A resilient call through this pool (lib/call/call.js, README "Resilient calls"), on the
   * host's timers and clock, its RNG when it was given one; errors of its own reports and
   * releases go to `onError`. */
  call(context, attempt, options = {}) {
    const random = this.#poolOptions.random;
    return call(this, context, attempt, {
      now: this.#monotonicMs,
      ...(this.#timers ? { timers: this.#timers } : {}),
      wallNow: () => this.now(),
      onError: this.#onError,
      metrics: this.#metrics.calls,
      ...(random ? { random } : {}),
      ...options,
    });
  }

  // --- operator actions: admitted, applied, then `_persist`ed before they resolve ----------

  // `note` (each optional): `{actor, reason}` of the caller, added to the events the action
  // causes (operator-note.js). They resolve once the state they report is stored — also when
  // they changed nothing (a concurrent call may have made the change they observe).

  /** `options`: `{ group }` moves a known resource (SPEC §3, groups), or none. A known resource
   * that moves to another group moves back if the write fails. */
  async register(kind, value, options, note) {
    this._admit();
    const group = options?.group;
    const before = group === undefined ? undefined : groupOf(this.#pool, kind, value);
    this._drain(); // earlier events are not this action's
    const added = this.#pool.register(kind, value, options);
    this._touched(kind, value);
    this.#acted(note);
    this._kick(); // a new resource, or a raised maxLeases
    const moved = !added && before !== undefined && before !== group;
    await this._persist(added ? () => this.#pool.deregister(kind, value) : moved ? () => this.#pool.register(kind, value, { group: before }) : null);
    return added;
  }

  /** Its inverse is the resource's snapshot part, taken just before (`Pool.reinstate`): its
   * cells and their history come back, not its leases (they ended and stay ended). (Refused
   * only when new cells filled `maxCells` meanwhile: the undo's error then goes to `onError`
   * and the resource stays deregistered, stored by the next write.) */
  async deregister(kind, value, note) {
    this._admit();
    const part = this.#pool.snapshotPart(kind, value);
    this._drain();
    const removed = this.#pool.deregister(kind, value);
    this._touched(kind, value);
    this.#acted(note);
    await this._persist(removed ? () => (this.#pool.reinstate(part), this._kick()) : null);
    return removed;
  }

  async block(kind, value, how, note) {
    this._admit();
    const before = blockOf(this.#pool, kind, value);
    this._drain();
    this.#pool.block(kind, value, how);
    this._touched(kind, value);
    this.#acted(note);
    await this._persist(() => restoreBlock(this.#pool, this.now(), kind, value, before));
  }

  async unblock(kind, value, note) {
    this._admit();
    const before = blockOf(this.#pool, kind, value);
    this._drain();
    const unblocked = this.#pool.unblock(kind, value);
    this._touched(kind, value);
    this.#acted(note);
    if (unblocked) this._kick();
    await this._persist(unblocked ? () => restoreBlock(this.#pool, this.now(), kind, value, before) : null);
    return unblocked;
  }

  /** Changes the config in force (the engine validates it; nothing changes on an error) and
   * resolves to the whole config once stored. Its inverse is the config before — when setting
   * that back gives the pool back (operator-undo.js, `configUndoable`); a change that drops
   * what it cannot give back (a smaller window or event buffer) or whose undo a grown pool could
   * refuse (larger limits) has none: `_writeAhead`. A later restart still applies the host's
   * `config` option over it: start-up options win. */
  async setConfig(patch, note) {
    this._admit();
    if (!configUndoable(this.#pool.config(), patch)) {
      return this._writeAhead(
        (scratch) => scratch.setConfig(patch),
        () => (this.#configure(patch, note), this.#pool.config()),
      );
    }
    const before = this.#configure(patch, note);
    await this._persist(before ? () => (this.#pool.setConfig(before), this._touchedAll(), this._kick()) : null);
    return this.#pool.config();
  }

  /** Applies `patch` to the live pool; the config before, or null when nothing changed. */
  #configure(patch, note) {
    this._drain();
    const before = this.#pool.config();
    if (!this.#pool.setConfig(patch)) return null;
    this._touchedAll();
    this.#acted({ ...note, changes: configChanges(before, this.#pool.config()) });
    this._kick();
    return before;
  }

  /** Replaces the pool with a snapshot (its text, or its UTF-8 bytes): refused (STALE_SNAPSHOT)
   * below the live (or stored) revision, (INVALID_SNAPSHOT) with counters too close to 2^53;
   * tokens and seqs continue above what the live pool used, so importing its own export changes
   * none of its numbers. In one call here (the edge caps an upload at 16 MiB); the Node host
   * builds a large one in steps (lib/node/import-steps.js). */
  async importSnapshot(input) {
    this._admit(input.length);
    this._swapIn(this._imported(snapshotText(input)));
    await this._persist(null);
  }

  /** The pool `json` restores, checked and lifted above what is used (`_imported` of an
   * import); thrown errors free it. */
  _imported(json) {
    const { Pool, options } = this._engine;
    let next = Pool.restore(json, options);
    try {
      this._checkImport(next.stats());
      next = liftPool(Pool, next, this._used(this.#pool.stats()), options);
    } catch (e) {
      next.free();
      throw e;
    }
    return next;
  }

  /** The revision below which an import is stale: the live or the stored pool's, now (an
   * import in steps takes it when the upload is in, as the one-call import did). */
  _importFloor() {
    return Math.max(this._storedRevision(), this.#pool.stats().revision);
  }

  /** Refuses an import whose `counters` (a restored snapshot's revision, fencing high-water
   * mark and next event seq) leave no room, or whose revision is below `floor`. */
  _checkImport(counters, floor = this._importFloor()) {
    checkImportRoom(counters);
    const { revision } = counters;
    if (revision < floor) {
      throw Object.assign(new Error(`the snapshot's revision ${revision} is older than the pool's ${floor}`), { code: "STALE_SNAPSHOT" });
    }
  }

  /** Makes an imported pool live (the old pool's events delivered first). */
  _swapIn(next) {
    this._drain();
    this._setPool(next);
    this._touchedAll();
    this.#acted(null);
    this._kick(); // the waits go on, served from the imported pool
  }

  // --- reads ---------------------------------------------------------------------------------

  config() {
    return this.#pool.config();
  }

  stats() {
    const s = this.#pool.stats();
    this.#deliver();
    return { ...s, auditDropped: this._auditDropped, deliveryDropped: this._deliveryDropped, ...this.#metrics.checkpointStats() };
  }

  /** The canonical snapshot of the live pool. */
  snapshot() {
    const s = this.#pool.snapshot();
    this.#deliver();
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

  /** The resource's opaque id: stable under this host's key, revealing nothing. */
  resourceId(kind, value) {
    return this.#ids.of(kind, value);
  }

  /** Per-context health (`GET /api/contexts`, context-health.js). */
  contexts() {
    return contextsOf(this, this.#sites);
  }

  /** The resource `id` names ({kind, value}), or null: one the pool holds, or one it held
   * lately (whether it is still registered is for the call that uses it to say). */
  resourceById(id) {
    return this.#ids.find(id, () => this.#pool.resources());
  }

  /** `resourceById` without holding up other work: the pool is searched a page at a time, with
   * turns of the event loop between pages (the HTTP handler's lookup). */
  resourceLookup(id) {
    return this.#ids.findInPages(id, (after) => this.#pool.resources({ limit: 25, ...(after ? { after } : {}) }));
  }

  /** The value as events show it (`Pool.maskValue`). */
  maskValue(kind, value) {
    return this.#Pool.maskValue(kind, value);
  }

  /** The resource id of an event's resource (no `_touched`), for shells' logs. */
  get _idOf() {
    return (kind, value) => this.#ids.of(kind, value);
  }

  /** `/readyz`: ready once open, while storage takes writes; else why not. */
  readiness() {
    if (!this.ready) return { ready: false, reason: "not-ready", detail: "the pool is not open" };
    const failing = this._storageReadiness();
    return failing ? { ready: false, ...failing } : { ready: true };
  }

  // --- metrics -------------------------------------------------------------------------------

  /** The metrics object (metrics.js), for shells to record checkpoints. */
  get _metrics() {
    return this.#metrics;
  }

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

  // --- closing -------------------------------------------------------------------------------

  /** Stops serving: waits end (POOL_CLOSED), subscribers and iterators are let go. */
  _stopDelivery() {
    this.ready = false;
    this._stopEvents();
    this.#waiters?.close(closing());
  }

  /** Frees the live pool (the last step of closing). */
  _freePool() {
    this.#pool?.free();
    this.#pool = null;
  }
}
