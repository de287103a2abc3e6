// The snapshot a batch of written-ahead changes gives (open-pool.js `_writeAhead`: config
// changes with no inverse), built beside the live pool, which goes on serving: it is stored
// first, and only then are the changes made to the live pool.
//
// - `wholeAhead`: on a scratch copy of the whole live pool — its snapshot, a restore and a
//   snapshot again, three passes over the pool on the event loop — for a change that changes
//   every resource's part (a smaller `windowSize` cuts every window);
// - `headAhead`: for changes of the snapshot's head only (a smaller event buffer, larger
//   limits): the live pool's parts taken in steps, as a checkpoint takes them
//   (stepped-snapshot.js), under the head of a scratch pool restored from the live head alone —
//   no resource, at the head's instant — with the changes applied. Nothing is copied whole.
//
// `from`: `{Pool, pool(), bare, drain(), waiting()}` — the engine, the live pool, the clock and
// randomness options a copy takes (its own config, not the host's overrides: the live config is
// the one in force), the host's drain, and how many changes wait for the disk (a snapshot taken
// now contains them). Each answers `{json, covered}` for the host's write: the snapshot (text,
// or `{head, pieces}`) and the waiting changes it contains. A change that throws on the scratch
// keeps its error (`d.error`): the live pool would refuse it the same way.

/** Applies each change of `batch` to `scratch` and answers `read()` of the result. */
function applied(batch, scratch, read) {
  for (const d of batch) {
    try {
      d.ahead(scratch);
    } catch (e) {
      d.error = e;
    }
  }
  return read();
}

export function wholeAhead(batch, { Pool, pool, bare, drain, waiting }) {
  const live = pool().snapshot();
  drain();
  const covered = waiting();
  const scratch = Pool.restore(live, bare);
  try {
    return { json: applied(batch, scratch, () => scratch.snapshot()), covered };
  } finally {
    scratch.free();
  }
}

/** `parts`: the host's SteppedSnapshot. */
export async function headAhead(batch, { Pool, pool, bare, drain, waiting }, parts) {
  const taken = await parts.take(pool, drain, waiting);
  const at = Number(/"takenAt":(\d+)/.exec(taken.head)[1]);
  const scratch = Pool.restore(`${taken.head},"registered":[],"blocklist":[],"cells":[]}`, { ...bare, now: () => at });
  try {
    const head = applied(batch, scratch, () => scratch.snapshotPart());
    return { json: { head, pieces: () => taken.pieces(head) }, covered: taken.moment };
  } finally {
    scratch.free();
  }
}
