// The pool client's errors (`repute/client`): one `PoolClientError` class whose `code` is the
// embedded pool's for the same refusal — the server's problem+json `type`
// (`urn:repute:problem:<name>`, lib/http/problems.js) mapped back — or one of the client's own
// for what only a network has (CONNECTION_FAILED, REQUEST_TIMEOUT, ABORTED, CLOSED). Also the
// `Retry-After` parser. Messages never carry the token, a URL or a resource's value: they name
// the operation, the status and the server's `detail` (which the server redacts), redacted again;
// a transport `cause` that holds a secret is a redacted copy (call/errors.js redactError).

import { redactError, redactSecrets } from "../call/errors.js";

/** Problem name → code. The engine's and the host's codes are the embedded pool's. */
const BY_PROBLEM = {
  "invalid-argument": "INVALID_ARGUMENT",
  "bad-request": "INVALID_ARGUMENT",
  "body-too-large": "INVALID_ARGUMENT",
  "unsupported-media-type": "INVALID_ARGUMENT",
  "invalid-config": "INVALID_CONFIG",
  "invalid-snapshot": "INVALID_SNAPSHOT",
  "unsupported-snapshot-version": "UNSUPPORTED_SNAPSHOT_VERSION",
  "capacity-exceeded": "CAPACITY_EXCEEDED",
  "unknown-resource": "UNKNOWN_RESOURCE",
  "stale-snapshot": "STALE_SNAPSHOT",
  "storage-unavailable": "STORAGE_UNAVAILABLE",
  "counters-exhausted": "COUNTERS_EXHAUSTED",
  unauthorized: "UNAUTHORIZED",
  forbidden: "FORBIDDEN",
  "not-ready": "NOT_READY",
  "too-many-streams": "TOO_MANY_STREAMS",
  "event-id-ahead": "EVENT_ID_AHEAD",
  "import-in-progress": "IMPORT_IN_PROGRESS",
  "lease-finished": "LEASE_FINISHED",
  "too-many-waiting": "TOO_MANY_WAITING",
  "shutting-down": "SHUTTING_DOWN",
  "not-found": "NOT_FOUND",
  "method-not-allowed": "NOT_FOUND",
  internal: "SERVER_ERROR",
};

/** Every code a client call can fail with. */
export const CLIENT_CODES = Object.freeze([
  ...new Set([
    ...Object.values(BY_PROBLEM),
    "SERVER_ERROR", // also any other 5xx, or an answer that is not the pool's (no problem+json)
    "HTTP_ERROR", // any other unexpected status
    "CONNECTION_FAILED", // no connection, or it broke before a whole answer came (`reached` says whether the request may have been sent)
    "REQUEST_TIMEOUT", // no whole answer within `timeoutMs`
    "ABORTED", // the caller's signal (the client's or the call's) aborted it
    "CLOSED", // the client was closed
  ]),
]);

/** Codes worth trying again later (the same call may succeed). */
const RETRYABLE = new Set([
  "CONNECTION_FAILED",
  "REQUEST_TIMEOUT",
  "NOT_READY",
  "STORAGE_UNAVAILABLE",
  "TOO_MANY_STREAMS",
  "TOO_MANY_WAITING",
  "SHUTTING_DOWN",
  "IMPORT_IN_PROGRESS",
  "SERVER_ERROR",
]);

export class PoolClientError extends Error {
  /**
   * @param {string} code one of CLIENT_CODES
   * @param {string} message (redacted here)
   * @param {object} [fields] status, type, retryAfterMs, reached, attempts, cause
   */
  constructor(code, message, fields = {}) {
    super(redactSecrets(message), fields.cause === undefined ? undefined : { cause: redactError(fields.cause) });
    this.name = "PoolClientError";
    this.code = code;
    this.retryable = RETRYABLE.has(code) || (code === "SERVER_ERROR" && fields.status === 503);
    if (fields.status !== undefined) this.status = fields.status;
    if (fields.type !== undefined) this.type = fields.type;
    if (fields.retryAfterMs !== undefined) this.retryAfterMs = fields.retryAfterMs;
    if (fields.reached !== undefined) this.reached = fields.reached;
    if (fields.attempts !== undefined) this.attempts = fields.attempts;
  }
}

/** `Retry-After` (delay-seconds or an HTTP date) in ms from `now`, or undefined. */
export function retryAfterMs(header, now = Date.now()) {
  if (header === undefined || header === null) return undefined;
  const text = String(header).trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The error for an answer the operation did not expect. `problem`: the parsed body or null. */
export function answerError(op, status, problem, retryAfter) {
  const name = typeof problem?.type === "string" && problem.type.startsWith("urn:repute:problem:") ? problem.type.slice(19) : null;
  const code = (name && BY_PROBLEM[name]) ?? (status >= 500 ? "SERVER_ERROR" : "HTTP_ERROR");
  const detail = typeof problem?.detail === "string" ? `: ${problem.detail}` : "";
  return new PoolClientError(code, `${op}: ${status}${name ? ` ${name}` : ""}${detail}`, {
    status,
    ...(name ? { type: problem.type } : {}),
    ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
  });
}

export const invalidArgument = (message) => new PoolClientError("INVALID_ARGUMENT", message);
