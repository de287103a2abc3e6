// The dashboard's JSON (`GET /api/resources`: `{"resources":[...]}`, and `"next"` for a page),
// built STEP resources at a time — each step in a turn of the event loop shared with every
// other dashboard's (next-turn.js `stepLater`) — and sent as it is built (`Pieces`,
// replies.js): a large one (a second of work and 31 MB of JSON for the whole of a 126k-cell
// pool) neither holds up other requests meanwhile nor waits whole in memory, and a client that
// reads slowly slows its building (the next step is built only once the one before has been
// taken). Each step reads the pool as it is then. The bytes are those of the dashboard built
// at once (tests/server/dashboard-pieces.test.mjs).

import { showResources } from "./resource-views.js";
import { Pieces } from "./replies.js";
import { stepLater } from "../next-turn.js";

/** Resources per step: about 1 ms of work through the handler (70–100 µs a resource), the
 * longest a worker's request waits behind a dashboard (25 held a worker's p99 above 10 ms with
 * four viewers; BENCHMARKS.md "Issue 24 as merged"). */
export const STEP = 10;

/**
 * The dashboard of `filter` (`context`, `state`, `group`; a page with `limit` and `after`, the
 * resource to start after), values masked when `masked`: a string when one step builds all of
 * it (a small pool, a small page), else `Pieces`, a step each.
 */
export function dashboard(host, { limit, after, ...filter }, masked) {
  const step = stepper(host, filter, limit, after, masked);
  const first = step();
  if (first.done) return first.piece;
  return new Pieces(
    (async function* rest() {
      yield first.piece;
      for (;;) {
        const { piece, done } = await stepLater(step);
        yield piece;
        if (done) return;
      }
    })(),
  );
}

/** A function that builds the next step each time it is called: `{ piece, done }`, the
 * pieces joined being the dashboard. */
function stepper(host, filter, limit, after, masked) {
  let last = after;
  let lastId = null;
  let count = 0;
  let opened = false;
  let left = limit ?? Infinity;
  return () => {
    const size = Math.min(left, STEP);
    const views = host.resources({ ...filter, limit: size, ...(last ? { after: last } : {}) });
    let piece = opened ? "" : '{"resources":[';
    opened = true;
    for (const view of showResources(host, views, { masked })) {
      piece += count++ === 0 ? JSON.stringify(view) : `,${JSON.stringify(view)}`;
    }
    left -= views.length;
    if (views.length > 0) {
      last = { kind: views[views.length - 1].kind, value: views[views.length - 1].value };
      lastId = host.resourceId(last.kind, last.value);
    }
    if (views.length === size && left > 0) return { piece, done: false };
    if (limit === undefined) return { piece: `${piece}]}`, done: true };
    return { piece: `${piece}],"next":${count === limit ? JSON.stringify(lastId) : "null"}}`, done: true };
  };
}
