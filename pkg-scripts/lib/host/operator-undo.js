// What puts an operator change back (host-core.js passes it to `_persist` as the change's undo,
// which the Node shell runs when the write fails): a resource's group and block before the
// change, and restoring a block. Pure functions over a live pool.

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
