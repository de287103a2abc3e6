// The classification contract (README "What an outcome says about a resource"), written out
// once as literal expectations, and checked from each of its three users: the resilient-call
// layer (tests/calls/classify.test.mjs), the prober on real sockets (tests/server/prober.test.mjs)
// and the Crawlee drop-in (tests/crawlee/classify.test.mjs). Not derived from the code's table:
// a change there must change this file too.

/** An answer's status → what the pool is told: "ok", a failure type, or null (nothing: the
 * answer speaks about the request or the server; the prober calls it inconclusive). */
export const STATUS_CASES = Object.freeze([
  [200, "ok"], [204, "ok"], [302, "ok"], [304, "ok"],
  [401, "BLOCKED"], [403, "BLOCKED"], [429, "BLOCKED"], [451, "BLOCKED"],
  // The proxy refusing our credentials is not a site block.
  [407, "CONNECTION_RESET"], [502, "CONNECTION_RESET"],
  [408, "TIMEOUT"], [504, "TIMEOUT"],
  [400, null], [404, null], [410, null], [422, null], [500, null], [501, null], [503, null],
]);

/** undici's messages for the proxy refusing to carry a request, and the status in them: always
 * CONNECTION_RESET in the connect phase, before the request reached the server. */
export const PROXY_REFUSALS = Object.freeze([
  ["Proxy response (407) !== 200 when HTTP Tunneling", 407],
  ["Proxy Authentication Required (407)", 407],
  ["Proxy response (502) !== 200 when HTTP Tunneling", 502],
  ["Proxy response (403) !== 200 when HTTP Tunneling", 403],
]);
