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
// and the object's own (pool-object.js). See wrangler.toml and the README's "Edge worker".

import { problemReply, HttpProblem } from "../lib/http/problems.js";

export { PoolObject } from "./pool-object.js";

const REGION = /^\/regions\/([^/?]*)(\/.*)?$/;
const REGION_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

function problem(status, name, detail) {
  const { headers, body } = problemReply(new HttpProblem(status, name, detail));
  return new Response(body, { status, headers });
}

/** `REPUTE_REGIONS` as a set of names, `null` when unset (every region), or a string saying
 * what is wrong with it. */
function allowedRegions(value) {
  if (value === undefined || value === null || value === "") return null;
  const names = String(value).split(",").map((n) => n.trim());
  const bad = names.findIndex((n) => !REGION_NAME.test(n));
  if (bad >= 0) return `REPUTE_REGIONS: entry ${bad + 1} is not a region name (1 to 63 characters of a-z, 0-9 and -)`;
  return new Set(names);
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
    const stub = env.POOL.get(env.POOL.idFromName(m[1]));
    return stub.fetch(request);
  },
};
