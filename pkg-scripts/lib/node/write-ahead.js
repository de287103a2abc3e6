// The snapshot a batch of written-ahead changes gives (open-pool.js `_writeAhead`: config
// changes with no inverse), built beside the live pool, which goes on serving: it is stored
// first, and only then are the changes made to the live pool.
//
// `stepAhead`: the live pool's parts taken in steps, as a checkpoint takes them
// (stepped-snapshot.js), under the head of a scratch pool restored from the live head alone —
// no resource, at the head's instant — with the changes applied (a limit a change lowers is
// checked against the live pool, which the empty scratch cannot do). For a change of the head
// only (a smaller event buffer, larger limits) that is all; for a smaller `windowSize`, each
// resource's part is also put into the scratch (`Pool.reinstate`, which cuts its windows to the
// scratch's window as a restore cuts them, and as `setConfig` cuts the live pool's), read back
// and taken out again, one resource at a time as the pieces are written. Nothing is copied
// whole on the event loop (it used to be: the live snapshot, a restore into a scratch and its
// snapshot — three passes, ~1 s on a 126,000-cell pool).
//
// `from`: `{Pool, pool(), bare, drain(), waiting()}` — the engine, the live pool, the clock and
// randomness options a copy takes (its own config, not the host's overrides: the live config is
// the one in force), the host's drain, and how many changes wait for the disk (a snapshot taken
// now contains them). A change that throws on the scratch keeps its error (`d.error`): the live
// pool would refuse it the same way.

const capacity = (message) => Object.assign(new Error(message), { code: "CAPACITY_EXCEEDED" });

/** Applies each change of `batch` to a scratch made by `fresh(head)` from `head` (text: a
 * head alone), refusing as the live pool would a limit below what it holds (`live`: its
 * stats; the scratch is then made again from the head before, so that the refused change
 * leaves no revision step). Answers the scratch, its window before and the smallest it had. */
function applied(batch, fresh, head, live) {
  let scratch = fresh(head);
  const initial = scratch.config().windowSize;
  let window = initial;
  for (const d of batch) {
    const before = scratch.snapshotPart();
    try {
      d.ahead(scratch);
      const { maxResources, maxCells, windowSize } = scratch.config();
      if (maxResources < live.registered) throw capacity(`maxResources = ${maxResources} is below the ${live.registered} resources the pool holds`);
      if (maxCells < live.cells) throw capacity(`maxCells = ${maxCells} is below the ${live.cells} cells the pool holds`);
      window = Math.min(window, windowSize);
    } catch (e) {
      d.error = e;
      scratch.free();
      scratch = fresh(before);
    }
  }
  return { scratch, initial, window };
}

/** `parts`: the host's SteppedSnapshot. Answers `{json, covered, done}`: `json.pieces()` reads
 * the scratch, which `done()` frees once they are written. */
export async function stepAhead(batch, { Pool, pool, bare, drain, waiting }, parts) {
  const taken = await parts.take(pool, drain, waiting);
  const live = pool().stats();
  const at = Number(/"takenAt":(\d+)/.exec(taken.head)[1]);
  const fresh = (head) => Pool.restore(`${head},"registered":[],"blocklist":[],"cells":[]}`, { ...bare, now: () => at });
  const { scratch, initial, window } = applied(batch, fresh, taken.head, live);
  try {
    const head = scratch.snapshotPart();
    let pieces = () => taken.pieces(head);
    if (window < initial) {
      // Windows cut to the smallest the batch set (a later larger one keeps them so).
      scratch.setConfig({ windowSize: window });
      pieces = () => taken.pieces(head, (part) => cut(scratch, part));
    }
    return { json: { head, pieces }, covered: taken.moment, done: () => scratch.free() };
  } catch (e) {
    scratch.free();
    throw e;
  }
}

/** `part` with its cells' windows cut to `scratch`'s window: put in, read back, taken out. */
function cut(scratch, part) {
  const { kind, value } = JSON.parse(part.slice(0, part.indexOf("\n")));
  scratch.reinstate(part);
  const again = scratch.snapshotPart(kind, value);
  scratch.deregister(kind, value);
  scratch.drainEvents();
  return again;
}
