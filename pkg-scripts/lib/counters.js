// A pool's counters across restarts and imports, for every host (Node folder, Durable Object,
// memory): the limits near 2^53 and restoring with the revision, fencing high-water mark and
// next event seq raised to a floor (`Pool.restore`'s `atLeast`) (tokens and seqs used before a crash, or by the live pool during an
// import, are never handed out again). Pure: no storage, no engine of its own (the caller passes
// its `Pool` class).

export const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** Imports with a counter above this are refused (see lib/node/reservations.js). */
export const IMPORT_CEILING = 2 ** 52;

/** The pool's three counters, by their names in a snapshot and in `stats()`: each stays at
 * most 2^53 − 1 (the engine refuses a call that would take one past it: src/pool/counters.rs),
 * so each needs room below that for the pool to go on. The room rules below (an import, a
 * start) hold for all three; this list is the one place that names them. */
export const COUNTERS = ["revision", "fencingHighWater", "nextEventSeq"];

/** A COUNTERS_EXHAUSTED error: the revision, tokens or seqs cannot go on. */
export function exhausted(message) {
  const hint = "its revision, tokens and event seqs cannot go on; start a new data folder (import a snapshot with lower counters only if nothing downstream relies on the old tokens)";
  return Object.assign(new Error(`${message}: ${hint}`), { code: "COUNTERS_EXHAUSTED" });
}

/** Throws INVALID_SNAPSHOT when a counter of an imported snapshot (`counters`: its `stats()`)
 * is above IMPORT_CEILING: such a pool would have too little room left (at 2^53 − 1 a revision
 * refuses every write, for good). */
export function checkImportRoom(counters) {
  for (const name of COUNTERS) {
    const v = counters[name];
    if (v > IMPORT_CEILING) {
      throw Object.assign(new Error(`${name} ${v} is above 2^52 (${IMPORT_CEILING}): an import must leave room below 2^53 − 1 for the pool to go on, at least 2^52 (too close to 2^53, revisions, tokens and seqs could not stay exact)`), {
        code: "INVALID_SNAPSHOT",
      });
    }
  }
}

export const revisionOf = (json) => Number(/"revision":(\d+)/.exec(json)?.[1] ?? NaN);

/** `Pool.restore(json, options)` with the revision, fencing high-water mark and next event seq
 * raised by the engine to at least `floor`'s (`{revision?, fencing?, eventSeq?}`). */
export function restoreAbove(Pool, json, floor, options) {
  const atLeast = { revision: floor.revision ?? 0, fencingHighWater: floor.fencing ?? 0, nextEventSeq: floor.eventSeq ?? 0 };
  return Pool.restore(json, { ...options, atLeast });
}

/** `pool` itself when its counters are at `floor` already; else a lifted copy restored with
 * `Pool.restore(…, options)` (and `pool` is freed). */
export function liftPool(Pool, pool, floor, options) {
  const s = pool.stats();
  if (s.fencingHighWater >= (floor.fencing ?? 0) && s.nextEventSeq >= (floor.eventSeq ?? 0) && s.revision >= (floor.revision ?? 0)) return pool;
  const lifted = restoreAbove(Pool, pool.snapshot(), floor, options);
  pool.free();
  return lifted;
}
