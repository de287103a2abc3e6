// Errors as `application/problem+json` (RFC 9457), with stable `type` URIs
// (`urn:repute:problem:<name>`). The engine's error codes map to HTTP statuses here, once.

export const PROBLEM_TYPE = "application/problem+json";

/** An HTTP error the handler turns into a problem response. */
export class HttpProblem extends Error {
  constructor(status, name, detail, headers = {}) {
    super(detail);
    this.status = status;
    this.name = name;
    this.headers = headers;
  }
}

/** A 400 bad-request problem saying `detail` (what the request got wrong). */
export const bad = (detail) => new HttpProblem(400, "bad-request", detail);

const ENGINE = {
  INVALID_ARGUMENT: [400, "invalid-argument"],
  INVALID_CONFIG: [400, "invalid-config"],
  INVALID_SNAPSHOT: [400, "invalid-snapshot"],
  UNSUPPORTED_SNAPSHOT_VERSION: [400, "unsupported-snapshot-version"],
  CAPACITY_EXCEEDED: [409, "capacity-exceeded"],
  UNKNOWN_RESOURCE: [404, "unknown-resource"],
  STALE_SNAPSHOT: [409, "stale-snapshot"],
  // A repeated finish of one lease (SPEC §3, finishing a step): nothing was reported again.
  LEASE_FINISHED: [409, "lease-finished"],
  // The host's (storage-health.js, reservations.js): the disk refused a durable write, or the
  // pool's counters are at 2^53 − 1. Nothing was changed; the first passes by itself.
  STORAGE_UNAVAILABLE: [503, "storage-unavailable"],
  COUNTERS_EXHAUSTED: [503, "counters-exhausted"],
};

export const TITLES = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  431: "Request Header Fields Too Large",
  // Not sent to anyone: the client left while its request waited (metrics count it so, as nginx).
  499: "Client Closed Request",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** The problem for any thrown value; engine errors keep their message (secrets are redacted
 * by the engine), anything else becomes a 500 without details. */
export function problemOf(error) {
  if (error instanceof HttpProblem) return error;
  const mapped = error && ENGINE[error.code];
  if (mapped) {
    const headers = Number.isSafeInteger(error.retryAfter) ? { "retry-after": String(error.retryAfter) } : {};
    return new HttpProblem(mapped[0], mapped[1], error.message, headers);
  }
  return new HttpProblem(500, "internal", "the server failed to handle the request");
}

/** The problem as a reply (see handler.js: `{ status, headers, body }`). */
export function problemReply(p, instance) {
  const body = { type: `urn:repute:problem:${p.name}`, title: TITLES[p.status] ?? "Error", status: p.status, detail: p.message };
  if (instance) body.instance = instance;
  return { status: p.status, headers: { "content-type": PROBLEM_TYPE, ...p.headers }, body: JSON.stringify(body) };
}
