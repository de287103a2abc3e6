// The edge worker (a module worker for workerd / Cloudflare): one pool per region, each in its
// own Durable Object (`PoolObject`, pool-object.js) named by the region (`idFromName`), so each
// region has exactly one writer. `/regions/{region}/api/...` (and `/metrics`, `/healthz`,
// `/readyz` under the region) goes to that region's object, which serves the same HTTP API as
// the Node server; `/healthz` at the root answers for the worker itself. A region name is 1 to
// 63 characters of a–z, 0–9 and "-", starting with a letter or digit.
//
// Bindings: `POOL` (the Durable Object namespace of `PoolObject`, SQLite-backed),
// `REPUTE_REGIONS` (optional: the region names served, comma-separated; any other region is a
// 404 before an object is made, so a stranger cannot create stored regions by naming them),
// `REPUTE_LOCATION_HINTS` (optional: region name → Durable Objects location hint, an object or
// its JSON text; a region's object is created near that place — the hint counts only when the
// object is first made; a region not listed is placed where its first request came from), and
// the object's own (pool-object.js). See wrangler.toml and the README's "Edge worker".

import { problemReply, HttpProblem } from "../http/problems.js";
import { REGION_NAME, allowedRegions, locationHints } from "./regions.js";

export { PoolObject } from "./pool-object.js";

const REGION = /^\/regions\/([^/?]*)(\/.*)?$/;

function problem(status, name, detail) {
  const { headers, body } = problemReply(new HttpProblem(status, name, detail));
  return new Response(body, { status, headers });
}

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (pathname === "/healthz") return Response.json({ status: "ok" });
    const m = REGION.exec(pathname);
    if (!m) return problem(404, "not-found", "no such route: the API is under /regions/{region}/api/");
    if (!REGION_NAME.test(m[1])) return problem(400, "bad-request", "a region name is 1 to 63 characters of a-z, 0-9 and -, starting with a letter or digit");
    const allowed = allowedRegions(env.REPUTE_REGIONS);
    if (typeof allowed === "string") return problem(500, "misconfigured", allowed);
    if (allowed && !allowed.has(m[1])) return problem(404, "no-such-region", "this worker does not serve that region (REPUTE_REGIONS)");
    const hints = locationHints(env.REPUTE_LOCATION_HINTS);
    if (typeof hints === "string") return problem(500, "misconfigured", hints);
    const hint = hints?.get(m[1]);
    const stub = env.POOL.get(env.POOL.idFromName(m[1]), hint ? { locationHint: hint } : undefined);
    return stub.fetch(request);
  },
};
