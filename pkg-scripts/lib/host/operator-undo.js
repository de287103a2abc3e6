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
 * Whether setting `before` (the whole config in force) back undoes `patch` exactly: not when
 * it lowers `windowSize` (windows are cut: the outcomes dropped cannot come back) or
 * `eventBufferSize` (events past the new bound are dropped), nor when it raises `maxResources`
 * or `maxCells` (the pool may grow past the old limit before the undo, which would then be
 * refused). Every other field is a value the engine reads from the next call on (SPEC §3):
 * the config before, set back, gives the pool back. A patch the engine refuses is undoable
 * (it changes nothing).
 */
export function configUndoable(before, patch) {
  if (typeof patch !== "object" || patch === null) return true;
  const lower = (k) => typeof patch[k] === "number" && patch[k] < before[k];
  const higher = (k) => typeof patch[k] === "number" && patch[k] > before[k];
  return !(lower("windowSize") || lower("eventBufferSize") || higher("maxResources") || higher("maxCells"));
}
