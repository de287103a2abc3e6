// The crash reservation of fencing tokens and event seqs: `<dir>/reserve.json`.
//
// Owns: reading, checking and writing that file; the reservation in force (tokens up to
// `fencing` and seqs below `eventSeq` may be handed out: after a `kill -9` a restarted pool
// starts above them, so nothing handed out is ever handed out again); reserving ahead early;
// the limits near 2^53. Does not own: the pool's counters (the engine's), deciding what to do
// with a token or an event the reservation does not cover (open-pool.js refuses the acquire, or
// holds the event back), the storage state (storage-health.js, told of every write).
//
// Reserving ahead early: the reservation is extended by `step` while at least half a step is
// still unused, so a disk that fills up is noticed (and reported) long before the edge, and the
// pool keeps serving from what is left. Only at the edge must a call wait for the write — and
// when the write fails the call is refused before it changes anything. After a failed write,
// calls do not try again for `retryMs` (a full disk must not cost a syscall per request).
//
// Near 2^53: the file never holds a number above 2^53 − 1 (`Number.MAX_SAFE_INTEGER`, the
// largest every host represents exactly); a token or seq past it is never covered. A snapshot
// is refused on import when its counters are above 2^52 (a pool that issued 4.5 × 10^15
// tokens, at 10 000 a second, would be 14 000 years old: such a snapshot is crafted or
// damaged), and a folder is refused at start when fewer than 2^32 tokens or seqs are left.

import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fsyncDirSync } from "./fsync.js";
import { isStorageError } from "./storage-health.js";
import { COUNTERS, MAX_SAFE, exhausted } from "../counters.js";

export { MAX_SAFE, IMPORT_CEILING, checkImportRoom, exhausted } from "../counters.js";
/** A start with fewer than this many tokens or seqs left below 2^53 is refused. */
export const START_ROOM = 2 ** 32;
const FILE = "reserve.json";

const isCount = (v) => Number.isSafeInteger(v) && v >= 0;

/**
 * Reads `<dir>/reserve.json`: zeros when there is none. Throws (code RESERVE_DAMAGED) when it is
 * not what this module writes — ignoring it could hand out tokens used before a crash.
 */
export function readReserve(dir) {
  const file = join(dir, FILE);
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if (e.code === "ENOENT") return { fencing: 0, eventSeq: 0 };
    throw e;
  }
  let r;
  try {
    r = JSON.parse(text);
  } catch {
    r = null;
  }
  if (r === null || typeof r !== "object") throw damaged(file, "is not a JSON object");
  for (const k of ["fencing", "eventSeq"]) {
    if (typeof r[k] !== "number" || !Number.isInteger(r[k]) || r[k] < 0) throw damaged(file, `has no valid ${k}`);
    if (r[k] > MAX_SAFE) throw exhausted(`${file} reserves ${k} up to ${r[k]}, past 2^53 − 1`);
  }
  return { fencing: r.fencing, eventSeq: r.eventSeq };
}

/** Throws COUNTERS_EXHAUSTED when a pool starting from these counters (`COUNTERS` names; a
 * missing one is not checked) has too little room. */
export function checkStartRoom(dir, counters) {
  for (const name of COUNTERS) {
    const v = counters[name];
    if (v > MAX_SAFE - START_ROOM) {
      throw exhausted(`the pool in ${dir} starts with ${name} ${v} (snapshot, reserve.json and audit log), fewer than 2^32 below 2^53`);
    }
  }
}

function damaged(file, problem) {
  return Object.assign(new Error(`${file} ${problem}; remove it only if no token or seq was handed out since the last snapshot`), {
    code: "RESERVE_DAMAGED",
  });
}

/** Writes `reserve.json` durably and synchronously (temp file, fsync, rename, fsync the folder). */
function writeReserve(dir, reserve) {
  const tmp = join(dir, `${FILE}.tmp`);
  try {
    const fd = openSync(tmp, "w", 0o600);
    try {
      writeFileSync(fd, JSON.stringify(reserve));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, join(dir, FILE));
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // not there, or the folder refuses that too
    }
    throw e;
  }
  fsyncDirSync(dir);
}

export class Reservations {
  #dir;
  #step;
  #health;
  #retryMs;
  /** No write is tried before this (`monotonicMs()`), after a failed one. */
  #retryAt = 0;
  #monotonicMs;
  #fencing;
  #eventSeq;

  /**
   * @param {string} dir the pool folder
   * @param {{fencing: number, eventSeq: number}} reserve what is on disk (`readReserve`)
   * @param {{step: number, health: import("./storage-health.js").StorageHealth, retryMs: number, monotonicMs?: () => number}} options
   */
  constructor(dir, reserve, { step, health, retryMs, monotonicMs = () => performance.now() }) {
    this.#monotonicMs = monotonicMs;
    this.#dir = dir;
    this.#fencing = reserve.fencing;
    this.#eventSeq = reserve.eventSeq;
    this.#step = step;
    this.#health = health;
    this.#retryMs = retryMs;
  }

  /** The highest token that may be handed out. */
  get fencing() {
    return this.#fencing;
  }

  /** Seqs below this may be handed out. */
  get eventSeq() {
    return this.#eventSeq;
  }

  /**
   * True when token `token` and seq `seq` may be handed out. Reserves ahead first (see the
   * header) when less than half a step is left; never throws. The fast path is two comparisons.
   */
  cover(token, seq) {
    const half = this.#step / 2;
    if (this.#fencing - token >= half && this.#eventSeq - seq > half) return true;
    if (this.#monotonicMs() >= this.#retryAt) this.#tryWrite(token, seq);
    return token <= this.#fencing && seq < this.#eventSeq;
  }

  /** Writes the reservation (ahead of `token` and `seq`) now: a probe of the folder. True when
   * written. */
  probe(token, seq) {
    return this.#tryWrite(token, seq);
  }

  /** Like `probe`, but throws what the write threw (at start, where there is nobody to refuse). */
  writeAhead(token, seq) {
    this.#write(this.#ahead(token, seq));
  }

  /**
   * After a clean stop: the reservation becomes exactly what was used (`fencing` the last token,
   * `nextEventSeq` the next seq), so the next start continues without a jump. Throws what the
   * write threw.
   */
  handBack(fencing, nextEventSeq) {
    this.#write({ fencing: Math.min(fencing, MAX_SAFE), eventSeq: Math.min(nextEventSeq, MAX_SAFE) });
  }

  #ahead(token, seq) {
    return {
      fencing: Math.min(MAX_SAFE, Math.max(this.#fencing, token + this.#step)),
      eventSeq: Math.min(MAX_SAFE, Math.max(this.#eventSeq, seq + 1 + this.#step)),
    };
  }

  #tryWrite(token, seq) {
    try {
      this.#write(this.#ahead(token, seq));
      return true;
    } catch (e) {
      this.#retryAt = this.#monotonicMs() + this.#retryMs;
      this.#health.failed("reservation", isStorageError(e) ? e : new Error(e?.message ?? String(e)));
      return false;
    }
  }

  #write(next) {
    writeReserve(this.#dir, next);
    this.#fencing = next.fencing;
    this.#eventSeq = next.eventSeq;
    this.#health.succeeded("reservation");
  }
}
