// The request target, which alone decides the route: its path and query (RFC 9112 §3.2.1,
// origin-form). The Host header never takes part in routing (it is the origin guard's), so
// `Host: 127.0.0.1/api/snapshot?` cannot turn `GET /healthz` into a snapshot export. Any other
// form — absolute (`http://x/`), authority (`x:80`), asterisk (`*`) — or a character outside
// printable ASCII is a 400, never a 500.

import { HttpProblem } from "./problems.js";

// A path starting with "/", then printable ASCII except "#" (a fragment is never sent).
const ORIGIN_FORM = /^\/[\x21\x22\x24-\x7e]*$/;

/**
 * The origin-form target of `request` as sent, not URL-normalized (a value "." or ".." is
 * addressed as %2E or %2E%2E, which a URL parser would resolve away). An adapter that has the
 * raw target passes it as `request.target` (Node: `req.url`); otherwise it is the path and query
 * of `request.url`, an absolute URL (a web `Request`, already normalized by its platform).
 */
function rawTarget(request) {
  if (typeof request.target === "string") return request.target;
  const url = request.url;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const hash = url.indexOf("#", start);
  return hash < 0 ? url.slice(start) : url.slice(start, hash);
}

/** The target's query, parsed on first use (most routes take none and never ask). */
class Target {
  #target;
  #url = null;

  constructor(target) {
    this.#target = target;
  }

  /** True when the target has a query that is not empty (`/x?` has none). */
  get hasQuery() {
    const q = this.#target.indexOf("?");
    return q >= 0 && q < this.#target.length - 1;
  }

  get searchParams() {
    // The scheme and host are fixed, so nothing in the target can become an authority.
    this.#url ??= new URL(`http://target.invalid${this.#target}`);
    return this.#url.searchParams;
  }
}

/**
 * `{ path, url }`: the raw path (percent-escapes kept) and the target as an object whose
 * `searchParams` are the query (a URL's, made when first asked for). Throws a 400 problem for a
 * target that is not origin-form.
 */
export function requestTarget(request) {
  const target = rawTarget(request);
  if (!ORIGIN_FORM.test(target)) {
    throw new HttpProblem(400, "bad-request", "the request target must be a path starting with / (origin-form), in printable ASCII");
  }
  const q = target.indexOf("?");
  return { path: q < 0 ? target : target.slice(0, q), url: new Target(target) };
}
