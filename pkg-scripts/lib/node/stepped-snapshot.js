// The Node host's checkpoint taken in short steps: `Pool.snapshot()` of a 126,000-cell pool
// holds the event loop for most of a second, so the host keeps every resource's part of the
// snapshot (lib/snapshot-parts.js) in memory and retakes only the resources touched since
// (host-core.js's `_touched` / `_touchedAll` hooks, which open-pool.js forwards here).
//
// A checkpoint (`take`): the touched resources' parts are retaken in steps that share the
// loop's turns with other stepped work (`stepLater`, lib/next-turn.js) — every part, listed
// page by page, after `touchedAll` (a config change, an import, a start). Calls go on between
// steps and touch more resources; while many are touched, another stepped pass follows. Then
// one synchronous step drains the pool's events (which touch their resources), retakes what
// was touched meanwhile and takes the head: the parts kept are then all those of that moment,
// and joined (`pieces()`, which the snapshot store writes one by one) they are the bytes
// `Pool.snapshot()` would have given then. The parts do not change again until the next `take`.
//
// Owns: the parts, the touched set, the canonical order of the kept parts (their keys and how
// they compare). Does not own: when to checkpoint or the file (open-pool.js,
// snapshot-store.js), the join (snapshot-parts.js).

import { STEP_BUDGET_MS, stepLater } from "../next-turn.js";
import { snapshotPieces } from "../snapshot-parts.js";
import { KIND_CODE } from "../vocabulary.js";

/** Touched resources beyond which another stepped pass runs before the synchronous step. */
const SETTLE = 256;
/** Stepped passes at most, however busy the pool: then the synchronous step takes the rest. */
const MAX_PASSES = 4;
/** Resources a page lists when every part is retaken. */
const PAGE = 32;

/** A kept part's key: its kind's code, then its value as it is — half the memory of the hex
 * row key (`rowKey`, which the edge's rows keep), for a pool whose parts are all kept here:
 * 381,000 values of 1 KB held 760 MB more as hex. Ordered by `keyCompare`, not `<`. */
const partKey = (kind, value) => `${KIND_CODE.get(kind)}${value}`;

/** Orders two part keys as the snapshot orders resources: kind code, then the value's UTF-8
 * bytes, which is code point order. UTF-16 units order the same but where a surrogate (half
 * of a code point above U+FFFF) meets a unit from U+E000 to U+FFFF: the surrogate's code point
 * is the greater, though its unit is the smaller. */
export function keyCompare(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const sx = x >= 0xd800 && x <= 0xdfff;
    const sy = y >= 0xd800 && y <= 0xdfff;
    if (sx !== sy && (sx ? y : x) >= 0xe000) return sx ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

const poolClosed = () => Object.assign(new Error("the pool is closed"), { code: "POOL_CLOSED" });

export class SteppedSnapshot {
  /** Part key (`partKey`) → part (`Pool.snapshotPart`), for every registered resource as taken. */
  #parts = new Map();
  /** The keys of `#parts` in canonical order, but for `#added` and, if `#removed`, some gone. */
  #order = [];
  #added = [];
  #removed = false;
  /** Resources touched since their part was taken: "kind\0value" → [kind, value]. */
  #dirty = new Map();
  /** Every part must be retaken (nothing is kept yet, or everything may have changed). */
  #all = true;

  touched(kind, value) {
    if (!this.#all) this.#dirty.set(`${kind}\0${value}`, [kind, value]);
  }

  touchedAll() {
    this.#all = true;
    this.#dirty.clear();
  }

  /**
   * Takes the snapshot of `pool()` (the live pool, read at each step: null once closed), in
   * steps, then in one synchronous step that calls `drain()` (the host's: delivers the pool's
   * events, touching their resources) and `moment()` (what the caller notes of that moment).
   * Resolves to `{ head, moment, pieces }`: `pieces()` yields the snapshot's text in order
   * (`pieces(other, cells)`: with another head, and each part's cells line from `cells(part)`,
   * for a change written ahead from these parts).
   */
  async take(pool, drain, moment) {
    try {
      for (let pass = 0; pass < MAX_PASSES; pass++) {
        drain();
        if (!this.#all && this.#dirty.size <= SETTLE) break;
        await this.#stepped(this.#all ? this.#allParts(pool) : this.#touchedParts(pool));
      }
      for (;;) {
        drain();
        if (this.#all) run(this.#allParts(pool));
        run(this.#touchedParts(pool));
        const head = live(pool).snapshotPart();
        drain(); // what the head's reading of the clock changed (an expiry) touches its resources
        if (this.#all || this.#dirty.size > 0) continue;
        return { head, moment: moment(), pieces: (other = head, cells) => this.#pieces(other, cells) };
      }
    } catch (e) {
      this.touchedAll(); // touched resources may have been dropped unread
      throw e;
    }
  }

  /** Runs `work` (a generator yielding between resources) in steps of about STEP_BUDGET_MS. */
  async #stepped(work) {
    let done = false;
    while (!done) {
      done = await stepLater(() => {
        const until = performance.now() + STEP_BUDGET_MS;
        for (;;) {
          if (work.next().done) return true;
          if (performance.now() >= until) return false;
        }
      });
    }
  }

  /** Retakes the parts of the resources touched so far (stops if every part must be). */
  *#touchedParts(pool) {
    const batch = this.#dirty;
    this.#dirty = new Map();
    for (const [kind, value] of batch.values()) {
      if (this.#all) return;
      this.#take(live(pool), kind, value);
      yield;
    }
  }

  /** Retakes every part, page by page (starts over if `touchedAll` comes meanwhile). */
  *#allParts(pool) {
    this.#all = false;
    this.#dirty.clear();
    const parts = new Map();
    const order = [];
    for (let after; ;) {
      const p = live(pool);
      const page = p.resources(after === undefined ? { limit: PAGE } : { after, limit: PAGE });
      for (const { kind, value } of page) {
        const key = partKey(kind, value);
        order.push(key);
        parts.set(key, p.snapshotPart(kind, value));
      }
      if (page.length < PAGE) break;
      after = { kind: page[PAGE - 1].kind, value: page[PAGE - 1].value };
      yield;
      if (this.#all) return;
    }
    this.#parts = parts;
    this.#order = order;
    this.#added = [];
    this.#removed = false;
  }

  #take(pool, kind, value) {
    const key = partKey(kind, value);
    const part = pool.snapshotPart(kind, value);
    if (part === null) {
      if (this.#parts.delete(key)) this.#removed = true;
      return;
    }
    if (!this.#parts.has(key)) this.#added.push(key);
    this.#parts.set(key, part);
  }

  /** The keys of the kept parts in canonical order: the last order without the parts gone,
   * merged with those added (sorted; a key gone and added again is listed once). */
  #ordered() {
    if (this.#added.length === 0 && !this.#removed) return this.#order;
    const has = (k) => this.#parts.has(k);
    const kept = this.#removed ? this.#order.filter(has) : this.#order;
    const added = this.#added.filter(has).sort(keyCompare);
    const out = [];
    for (let i = 0, j = 0; i < kept.length || j < added.length; ) {
      const k = j >= added.length || (i < kept.length && keyCompare(kept[i], added[j]) <= 0) ? kept[i++] : added[j++];
      if (out.length === 0 || out[out.length - 1] !== k) out.push(k);
    }
    this.#order = out;
    this.#added = [];
    this.#removed = false;
    return out;
  }

  *#pieces(head, cells) {
    const order = this.#ordered();
    const parts = this.#parts;
    yield* snapshotPieces(head, { *[Symbol.iterator]() { for (const k of order) yield parts.get(k); } }, cells);
  }
}

/** The live pool, or POOL_CLOSED. */
function live(pool) {
  const p = pool();
  if (!p) throw poolClosed();
  return p;
}

/** Runs `work` to its end, in this turn. */
function run(work) {
  while (!work.next().done);
}
