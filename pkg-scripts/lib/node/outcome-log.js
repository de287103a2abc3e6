// The outcome log: every outcome a worker reported (`report`), in order, for replaying a live
// pool's traffic through another policy (the console's Replay). Kept beside the audit log, not
// in it: the engine's events keep their own `seq` numbering and `GET /api/events` its shape.
//
// A record: `{ seq, at, kind, value, id, context, outcome }` — `seq` numbers the outcome log's
// own records (1, 2, …; not an event seq), `at` is the host clock when the report was applied,
// `value` is masked by the engine's rule and `id` is the resource's opaque id, as in events (so
// a record names the resource as the events do, and no credential reaches the disk), `outcome`
// is `{ ok, failure?, latencyMs? }`.
// Storage is an `AuditLog` (JSON lines, rotation, retention, crash repair, keyset reads) in
// `<dir>/outcomes/audit/`; like the audit log it never blocks or fails the pool.
import { join } from "node:path";
import { AuditLog } from "./audit-log.js";

export class OutcomeLog {
  #log;
  #seq;
  #name;

  /** @private use `OutcomeLog.open` */
  constructor(log, name) {
    this.#log = log;
    this.#seq = log.lastSeq;
    this.#name = name;
  }

  /** Opens (creating it if needed) the outcome log of the pool folder `dir`; `options` as
   * `AuditLog.open`'s. `name(kind, value)` gives how a record shows its resource: `{ value, id }`,
   * the value masked (the host's engine rule and resource ids). The caller holds the folder's
   * lock. */
  static async open(dir, name, options) {
    return new OutcomeLog(await AuditLog.open(join(dir, "outcomes"), options), name);
  }

  /** Records one applied report. Synchronous, never throws (see `AuditLog.append`). */
  record(kind, value, context, outcome, at) {
    const o = { ok: outcome.ok === true };
    if (!o.ok) o.failure = outcome.failure;
    if (outcome.latencyMs !== undefined) o.latencyMs = outcome.latencyMs;
    const { value: shown, id } = this.#name(kind, value);
    this.#log.append([{ seq: ++this.#seq, at: Math.floor(at), kind, value: shown, id, context, outcome: o }]);
  }

  /** Records with `seq > after`: `{ outcomes, next }` (keyset pagination, as `GET /api/events`). */
  async read(page) {
    const { events, next } = await this.#log.read(page);
    return { outcomes: events, next };
  }

  /** Records lost (queue full, failed write). */
  get dropped() {
    return this.#log.dropped;
  }

  flush() {
    return this.#log.flush();
  }

  close() {
    return this.#log.close();
  }
}
