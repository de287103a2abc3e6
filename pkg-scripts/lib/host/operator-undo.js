// What puts an operator change back (host-core.js passes it to `_persist` as the change's undo,
// which the Node shell runs when the write fails): a resource's group and block before the
// change, restoring a block, and which config changes setting the config before back undoes
// (a deregistration's undo is the engine's: `Pool.reinstate`). Pure functions over a live pool.

/** The resource's group now (null: none), or undefined when it is not registered (or the call
 * is refused: `register` then refuses it the same way). */
export function groupOf(pool, kind, value) {
  try {
    return pool.resource(kind, value).group;
  } catch {
    return undefined;
  }
}

/** The resource's block now (`{until}` or `{permanent: true}`), or null. */
export function blockOf(pool, kind, value) {
  return pool.resources({ state: "BLOCKLISTED" }).find((r) => r.kind === kind && r.value === value)?.blocked ?? null;
}

/** Puts back the block `before` (null: none) at `now`; a timed one ends when it would have. */
export function restoreBlock(pool, now, kind, value, before) {
  const left = before && !before.permanent ? before.until - now : 0;
  if (before?.permanent) pool.block(kind, value, { permanent: true });
  else if (left > 0) pool.block(kind, value, { seconds: left / 1000 });
  else pool.unblock(kind, value);
}

/**
 * How a config change is made durable (`before`: the whole config in force; `patch`: the change):
 * - "inverse": applied at once, and undone by setting `before` back if its write fails — when
 *   that gives the pool back: every field but those below is a value the engine reads from the
 *   next call on (SPEC §3);
 * - "head": written ahead, but only the snapshot's head changes (the config, a revision step, a
 *   seq): a smaller `eventBufferSize` (events past the new bound are dropped: they cannot come
 *   back) or a larger `maxResources` or `maxCells` (the pool may grow past the old limit before
 *   an undo, which would then be refused), with no smaller `windowSize` or limit;
 * - "whole": written ahead on a copy of the whole pool: a smaller `windowSize` (every window is
 *   cut: the outcomes dropped cannot come back, and every cell's text changes).
 * A patch the engine refuses is "inverse" (it changes nothing).
 */
export function configWay(before, patch) {
  if (typeof patch !== "object" || patch === null) return "inverse";
  const lower = (k) => typeof patch[k] === "number" && patch[k] < before[k];
  const higher = (k) => typeof patch[k] === "number" && patch[k] > before[k];
  if (lower("windowSize")) return "whole";
  if (!lower("eventBufferSize") && !higher("maxResources") && !higher("maxCells")) return "inverse";
  return lower("maxResources") || lower("maxCells") ? "whole" : "head";
}
