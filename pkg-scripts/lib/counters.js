// A pool's counters across restarts and imports, for every host (Node folder, Durable Object,
// memory): the limits near 2^53 and restoring with the revision, fencing high-water mark and
// next event seq raised to a floor (`Pool.restore`'s `atLeast`) (tokens and seqs used before a crash, or by the live pool during an
// import, are never handed out again). Pure: no storage, no engine of its own (the caller passes
// its `Pool` class).

export const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** Imports with a counter above this are refused (see lib/host/reservations.js). */
export const IMPORT_CEILING = 2 ** 52;

/** A COUNTERS_EXHAUSTED error: tokens or seqs cannot go on. */
export function exhausted(message) {
  const hint = "tokens and event seqs cannot go on; start a new data folder (import a snapshot with lower counters only if nothing downstream relies on the old tokens)";
  return Object.assign(new Error(`${message}: ${hint}`), { code: "COUNTERS_EXHAUSTED" });
}

/** Throws INVALID_SNAPSHOT when an imported snapshot's counters are above IMPORT_CEILING. */
export function checkImportRoom(fencing, nextEventSeq) {
  for (const [name, v] of [["fencingHighWater", fencing], ["nextEventSeq", nextEventSeq]]) {
    if (v > IMPORT_CEILING) {
      throw Object.assign(new Error(`${name} ${v} is above 2^52: too close to 2^53 for tokens and seqs to stay exact`), {
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
