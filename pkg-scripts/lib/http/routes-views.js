// The read routes of the HTTP handler (handler.js), for viewers and operators: the dashboard
// (`GET /api/resources`, whole or a page; dashboard.js), one resource, a resource's id from its
// kind and value, and the event and outcome logs. Values are shown masked to a viewer
// (resource-views.js).

import { HttpProblem } from "./problems.js";
import { JSON_TYPE, body } from "./request-body.js";
import { json } from "./replies.js";
import { showResources } from "./resource-views.js";
import { dashboard } from "./dashboard.js";
import { eventFilterOf, readFiltered } from "./event-query.js";
import { bad, kindOf, maskedFor, nonNegativeInt, pageOf, text } from "./arguments.js";

/** The view routes' handlers over `host`; `lookup(id)` finds the resource an id names (or
 * null), `bodyLimit` bounds a request's body. */
export function viewRoutes({ host, lookup, bodyLimit }) {
  return {
    /** `GET /api/resources`: the dashboard, filtered; `?limit=N&after=ID` a page of it. */
    async resources(req, q, parts, role) {
      const filter = {};
      if (q.has("context")) filter.context = q.get("context");
      if (q.has("state")) filter.state = q.get("state");
      // `?group=` (empty) asks for the resources with no group: a group name is never blank.
      if (q.has("group")) filter.group = q.get("group") === "" ? null : q.get("group");
      // `?limit=N&after=ID`: a page, in canonical order, after the resource ID names; `next`
      // names the page's last resource while there may be more.
      const paged = q.has("limit") || q.has("after");
      if (paged) {
        filter.limit = nonNegativeInt("limit", q.get("limit"), 100);
        if (filter.limit < 1 || filter.limit > 1000) throw bad("limit must be in 1..=1000");
        if (q.has("after")) {
          filter.after = await lookup(q.get("after"));
          if (!filter.after) throw bad("after names no registered resource (removed since the page before?): start again without it");
        }
      }
      return { status: 200, headers: { "content-type": JSON_TYPE }, body: dashboard(host, filter, maskedFor(role, q)) };
    },
    /** A resource's id from a body's kind and value: what a client asks before naming the
     * resource in a path, so that no value (a credential, perhaps) is in a URL. */
    async resourceId(req) {
      const b = await body(req, bodyLimit, ["kind", "value"]);
      return json(200, { id: host.resourceId(kindOf(b.kind), text("value", b.value)) });
    },
    /** One resource with its cells' windows (the console's detail), shown as the dashboard
     * shows it (its id; masked for a viewer). */
    resource: (q, { kind, value }, role) =>
      json(200, showResources(host, [host.resource(kind, value)], { masked: maskedFor(role, q) })[0]),
    async events(req, q) {
      const { after, limit } = pageOf(q);
      const filter = eventFilterOf(q);
      return json(200, filter ? await readFiltered(host, { after, limit, filter }) : await host.readEvents({ after, limit }));
    },
    async outcomes(req, q) {
      const page = await host.readOutcomes?.(pageOf(q));
      if (!page) throw new HttpProblem(404, "outcomes-not-recorded", "this pool does not record reported outcomes (start it with --record-outcomes)");
      return json(200, page);
    },
  };
}
