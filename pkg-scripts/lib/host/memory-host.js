// `MemoryHost`: the host contract (host.d.ts, `Host`) in memory, with no storage — for tests,
// browsers and `repute/handler` users: the platform-neutral core (host-core.js) with the last
// `eventsKept` events in a ring for `readEvents`. Durable shells extend the core instead
// (lib/node/open-pool.js, lib/edge/durable-host.js).

import { HostCore } from "./host-core.js";

export class MemoryHost extends HostCore {
  #log = [];
  #eventsKept = 10000;

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
   * default the platform's), `maxWaiters` (default 10000) and `onError` (where a throwing
   * subscriber or listener is reported; default: nowhere).
   */
  async open({ Pool, config, now = Date.now, seed, random, key, snapshot = null, floor = {}, eventsKept = 10000, timers, maxWaiters = 10_000, onError }) {
    key ??= globalThis.crypto.getRandomValues(new Uint8Array(32));
    await this._configure({ Pool, config, now, seed, random, key, timers, maxWaiters, onError });
    this.#eventsKept = eventsKept;
    const { options } = this._engine;
    this._setPool(snapshot === null ? new Pool(options) : Pool.restore(snapshot, options), floor);
    this.ready = true;
  }

  _logged(events) {
    for (const e of events) this.#log.push(e);
    if (this.#log.length > this.#eventsKept) this.#log.splice(0, this.#log.length - this.#eventsKept);
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

  close() {
    this._stopDelivery();
    this._freePool();
  }
}
