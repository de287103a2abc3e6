// The outcome log: every outcome a worker reported (`report`), in order, for replaying a live
// pool's traffic through another policy (the console's Replay). Kept beside the audit log, not
// in it: the engine's events keep their own `seq` numbering and `GET /api/events` its shape.
//
// A record: `{ seq, at, kind, value, context, outcome }` — `seq` numbers the outcome log's own
// records (1, 2, …; not an event seq), `at` is the host clock when the report was applied,
// `value` is masked as the engine masks it in events (so a record names the resource as the
// events do, and no credential reaches the disk), `outcome` is `{ ok, failure?, latencyMs? }`.
// Storage is an `AuditLog` (JSON lines, rotation, retention, crash repair, keyset reads) in
// `<dir>/outcomes/audit/`; like the audit log it never blocks or fails the pool.
import { join } from "node:path";
import { AuditLog } from "./audit-log.js";
import { maskValue } from "../mask.js";

export class OutcomeLog {
  #log;
  #seq;

  /** @private use `OutcomeLog.open` */
  constructor(log) {
    this.#log = log;
    this.#seq = log.lastSeq;
  }

  /** Opens (creating it if needed) the outcome log of the pool folder `dir`; `options` as
   * `AuditLog.open`'s. The caller holds the folder's lock. */
  static async open(dir, options) {
    return new OutcomeLog(await AuditLog.open(join(dir, "outcomes"), options));
  }

  /** Records one applied report. Synchronous, never throws (see `AuditLog.append`). */
  record(kind, value, context, outcome, at) {
    const o = { ok: outcome.ok === true };
    if (!o.ok) o.failure = outcome.failure;
    if (outcome.latencyMs !== undefined) o.latencyMs = outcome.latencyMs;
    this.#log.append([{ seq: ++this.#seq, at: Math.floor(at), kind, value: maskValue(value), context, outcome: o }]);
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
