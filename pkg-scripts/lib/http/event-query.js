// `GET /api/events` with filters: `type` (one event type, or several separated by commas),
// `context` (exact), `resource` (a resource's opaque id, as events carry it) and `before` (only
// events with a smaller seq), over the host's keyset-paginated log (`readEvents`). The log is
// read forward from `after` in pages and filtered here, so every host serves the same filters.
//
// A filtered read stops at `limit` matches, at `before`, at the log's end, or after scanning
// MAX_SCAN events; `next` is then the seq to pass as `after` to go on (the last match returned,
// or the last event scanned), or null when nothing follows within `before`.

import { bad } from "./problems.js";
import { EVENT_TYPES } from "../vocabulary.js";

/** Events one filtered request reads at most (a client pages on with `next`). */
export const MAX_SCAN = 50_000;
const SCAN_PAGE = 1000;

/** The filter a query asks for (`q`: URLSearchParams), or null when it asks for none. */
export function eventFilterOf(q) {
  const filter = {};
  if (q.has("type")) {
    const types = q.get("type").split(",");
    for (const t of types) if (!EVENT_TYPES.includes(t)) throw bad(`type: ${JSON.stringify(t.slice(0, 40))} is not an event type (the types are ${EVENT_TYPES.join(", ")})`);
    filter.types = new Set(types);
  }
  if (q.has("context")) {
    if (q.get("context") === "") throw bad("context must not be empty");
    filter.context = q.get("context");
  }
  if (q.has("resource")) {
    if (q.get("resource") === "") throw bad("resource must be a resource id");
    filter.resource = q.get("resource");
  }
  if (q.has("before")) {
    const raw = q.get("before");
    if (!/^\d{1,16}$/.test(raw)) throw bad("before must be a non-negative integer");
    filter.before = Number(raw);
  }
  return Object.keys(filter).length === 0 ? null : filter;
}

const passes = (e, f) =>
  (!f.types || f.types.has(e.type)) && (f.context === undefined || e.context === f.context) && (f.resource === undefined || e.id === f.resource);

/** `{events, next}` of the events after `after` that pass `filter` (see the header). */
export async function readFiltered(host, { after, limit, filter }) {
  const out = [];
  let scanned = 0;
  let cursor = after;
  const before = filter.before ?? Infinity;
  for (;;) {
    const page = await host.readEvents({ after: cursor, limit: SCAN_PAGE });
    for (const e of page.events) {
      if (e.seq >= before) return { events: out, next: null };
      scanned++;
      cursor = e.seq;
      if (!passes(e, filter)) continue;
      if (out.length === limit) return { events: out, next: out[limit - 1].seq };
      out.push(e);
    }
    if (page.next === null) return { events: out, next: null };
    if (scanned >= MAX_SCAN) return { events: out, next: cursor };
  }
}
