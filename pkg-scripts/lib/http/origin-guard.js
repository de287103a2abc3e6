// Who may address the server, by the `Host` and `Origin` headers, checked before any route
// (the console's static files included). Two policies, chosen by the host of the handler:
// - loopback only (a server without tokens): the `Host` must name a loopback address —
//   `localhost`, 127.0.0.0/8 or [::1], any port — so a page that rebinds its own DNS name to
//   127.0.0.1 is refused; and a request whose `Origin` is not loopback (`null` included) is
//   refused, so no other site can make a browser post to the pool.
// - any host (a server with tokens): a cross-origin request (an `Origin` other than the
//   request's own scheme-less origin, `Host`) must carry a token; a browser sends a token
//   cross-origin only after a CORS preflight, which this server never grants.
// A same-origin console (page and API on one origin) passes both; so does curl (no `Origin`).
// A `Host` that is not `host[:port]` is a 400 whatever the policy (RFC 9112 §3.2).

import { HttpProblem } from "./problems.js";

// RFC 3986 host (IP-literal or reg-name / IPv4) and an optional port; the URL parser then
// normalizes it and checks the port's range.
const HOST_SYNTAX = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)(:[0-9]*)?$/;

/** The normalized `host[:port]` of a Host value (default port of `scheme` dropped), or null. */
function authority(host, scheme = "http:") {
  if (!HOST_SYNTAX.test(host)) return null;
  try {
    const url = new URL(`${scheme}//${host}`);
    return url.pathname === "/" && !url.username && !url.password ? url : null;
  } catch {
    return null;
  }
}

/** The Origin header as a URL when it is a well-formed http(s) origin, else null. */
function originUrl(origin) {
  try {
    const url = new URL(origin);
    return url.protocol === "http:" || url.protocol === "https:" ? url : null;
  } catch {
    return null;
  }
}

/** True for localhost, 127.0.0.0/8 and [::1] (hostnames as the URL parser normalizes them). */
export function isLoopbackName(hostname) {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** The Host the request names: the header, or (a web `Request` without one) its URL's. */
function hostOf(request) {
  const header = request.headers.get("host");
  if (header !== null) return header;
  return typeof request.target === "string" ? null : new URL(request.url).host;
}

/**
 * A check for requests: `guard(request)` throws a problem (400 malformed Host, 403
 * `forbidden-host` or `forbidden-origin`) or returns. `loopbackOnly`: the first policy above,
 * else the second. A request without a `Host` (HTTP/1.0; never a browser) is judged by its
 * `Origin` alone.
 */
export function originGuard({ loopbackOnly }) {
  // Nearly every request names the same Host: its parse is kept (one URL parse less per call).
  let lastHost = null;
  let lastOwn = null;
  return (request) => {
    const host = hostOf(request);
    if (host !== lastHost) {
      lastOwn = host === null ? null : authority(host);
      lastHost = host;
    }
    const own = lastOwn;
    if (host !== null && own === null) throw new HttpProblem(400, "bad-request", "the Host header is not a valid host[:port]");
    const origin = request.headers.get("origin");
    if (loopbackOnly) {
      if (own !== null && !isLoopbackName(own.hostname)) {
        throw new HttpProblem(403, "forbidden-host",
          "without tokens the server answers only requests addressed to localhost, 127.0.0.1 or [::1]");
      }
      const from = origin === null ? null : originUrl(origin);
      if (origin !== null && (from === null || !isLoopbackName(from.hostname))) {
        throw new HttpProblem(403, "forbidden-origin", "without tokens the server refuses requests from pages that are not on a loopback address");
      }
      return;
    }
    if (origin === null || request.headers.get("authorization") !== null) return;
    const from = originUrl(origin);
    const same = from !== null && host !== null && authority(host, from.protocol)?.host === from.host;
    if (!same) throw new HttpProblem(403, "forbidden-origin", "a cross-origin request needs a bearer token");
  };
}
