// A pool's counters across restarts and imports, for every host (Node folder, Durable Object,
// memory): the limits near 2^53 and raising a snapshot's revision, fencing high-water mark and
// next event seq to a floor (tokens and seqs used before a crash, or by the live pool during an
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

/**
 * Raises a canonical snapshot's revision, fencing high-water mark and next event seq to at
 * least `floor`'s (`{revision?, fencing?, eventSeq?}`). These top-level fields lead the
 * canonical text, in this order, with one spelling.
 */
export function lift(json, floor) {
  const up = (v, min) => Math.max(Number(v), min ?? 0);
  return json
    .replace(/"revision":(\d+)/, (_, r) => `"revision":${up(r, floor.revision)}`)
    .replace(/"fencingHighWater":(\d+),"nextEventSeq":(\d+)/, (_, f, s) =>
      `"fencingHighWater":${up(f, floor.fencing)},"nextEventSeq":${up(s, floor.eventSeq)}`);
}

export const revisionOf = (json) => Number(/"revision":(\d+)/.exec(json)?.[1] ?? NaN);

/** `pool` itself when its counters are at `floor` already; else a lifted copy restored with
 * `Pool.restore(…, options)` (and `pool` is freed). */
export function liftPool(Pool, pool, floor, options) {
  const s = pool.stats();
  if (s.fencingHighWater >= (floor.fencing ?? 0) && s.nextEventSeq >= (floor.eventSeq ?? 0) && s.revision >= (floor.revision ?? 0)) return pool;
  const lifted = Pool.restore(lift(pool.snapshot(), floor), options);
  pool.free();
  return lifted;
}
