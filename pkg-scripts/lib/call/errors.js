// The resilient call layer's errors (README "Resilient calls"): one `CallError` class with a
// stable `code`, whether the caller may try the whole call again later (`retryable`), how many
// attempts ran, why retrying stopped (`stopReason`) and what each attempt met (`failures`).
// Messages never carry a secret: proxy credentials (`user:pass@` in a URL), `Authorization` /
// `Proxy-Authorization` values, bearer tokens, API-key headers and secret query / form
// parameters (client_secret, tokens, passwords) are redacted before they are written, and a
// `cause` that holds one is replaced by a redacted copy (redactError). Owns no
// policy: call.js decides which error to throw.

import { redactCredentials } from "../outcome/redact.js";

/** The codes a call can fail with. */
export const CALL_CODES = Object.freeze([
  "DEADLINE_EXCEEDED", // the call's deadline passed, or no attempt fits in what is left
  "POOL_EXHAUSTED", // no (other) resource could be leased; `retryAfterMs` says when one may be
  "RETRY_BUDGET_EXHAUSTED", // the process-wide retry budget refused a retry
  "NOT_RETRYABLE", // the failure, or the call (not idempotent), may not be retried
  "ATTEMPTS_EXHAUSTED", // `retry.maxAttempts` attempts failed
  "ABORTED", // the caller's signal aborted the call
  "CAPACITY_EXCEEDED", // too many calls at once (bulkhead)
  "CREDENTIAL_UNAVAILABLE", // a credentialCache's load failed
  "INVALID_ARGUMENT", // a bad option
]);

/** Removes secrets from text: URL credentials, authorization and API-key header values, bearer
 * tokens, secret query / form parameters. */
export function redactSecrets(text) {
  return redactCredentials(String(text))
    .replace(/((?:proxy-)?authorization["']?\s*[:=]\s*["']?)[^"'\r\n,}]+/gi, "$1***")
    .replace(/\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{4,}/gi, "$1 ***")
    // API-key headers, and secrets as query or form parameters (OAuth's client_secret,
    // access / refresh tokens, api keys, passwords).
    .replace(/((?:x-)?api-?key["']?\s*[:=]\s*["']?)[^"'\s,;}&]+/gi, "$1***")
    .replace(/([?&;\s]|^)((?:access_|refresh_|id_)?token|client_secret|secret|api_?key|password|passwd|pwd)=[^&\s"';#]+/gi, "$1$2=***");
}

const MAX_DEPTH = 8;
const changes = (text) => typeof text === "string" && redactSecrets(text) !== text;

/** Whether `value` (a thrown value, an error's cause) holds a secret anywhere in its text: an
 * error's message, stack and own properties, its cause chain and AggregateError members. What
 * cannot be looked through (too deep, circular) counts as holding one. */
function holdsSecret(value, depth = 0) {
  if (value === null || value === undefined) return false;
  if (typeof value !== "object") return changes(value);
  if (depth > MAX_DEPTH) return true;
  if (value instanceof Error) {
    if (changes(value.message) || changes(value.stack)) return true;
    for (const [k, v] of Object.entries(value)) if (k !== "cause" && k !== "errors" && holdsSecret(v, depth + 1)) return true;
    if (holdsSecret(value.cause, depth + 1)) return true;
    return Array.isArray(value.errors) && value.errors.some((x) => holdsSecret(x, depth + 1));
  }
  let text;
  try {
    text = JSON.stringify(value);
  } catch {
    return true;
  }
  return changes(text);
}

/**
 * `value` (what an attempt threw, kept as a call's `cause`) with no secret in it: the value
 * itself when it holds none, else a copy — an error of the same class whose message, stack,
 * own properties and cause chain are redacted (properties that cannot be made safe are left
 * out), or the redacted text of anything else.
 */
export function redactError(value, depth = 0) {
  if (!holdsSecret(value)) return value;
  if (!(value instanceof Error)) {
    if (typeof value === "string") return redactSecrets(value);
    let text;
    try {
      text = JSON.stringify(value);
    } catch {
      text = undefined;
    }
    return redactSecrets(text ?? "[a value that cannot be shown]");
  }
  const copy = Object.create(Object.getPrototypeOf(value));
  const hidden = (name, v) => Object.defineProperty(copy, name, { value: v, writable: true, configurable: true, enumerable: false });
  hidden("message", redactSecrets(value.message ?? ""));
  if (typeof value.stack === "string") hidden("stack", redactSecrets(value.stack));
  if (Object.hasOwn(value, "name")) hidden("name", value.name);
  for (const [k, v] of Object.entries(value)) {
    if (k === "cause" || k === "errors") continue;
    if (typeof v === "string") copy[k] = redactSecrets(v);
    else if (depth < MAX_DEPTH && !holdsSecret(v, depth + 1)) copy[k] = v;
  }
  if (value.cause !== undefined && depth < MAX_DEPTH) hidden("cause", redactError(value.cause, depth + 1));
  if (Array.isArray(value.errors) && depth < MAX_DEPTH) hidden("errors", value.errors.map((x) => redactError(x, depth + 1)));
  return copy;
}

/**
 * One attempt's failure as the error lists it.
 * @typedef {object} AttemptFailure
 * @property {number} attempt         1-based
 * @property {string | null} resource the resource as events show it (credentials masked)
 * @property {string | null} failure  the failure type reported, or null (nothing reported)
 * @property {string} phase           connect | tls | send | wait | receive | other
 * @property {string} reason          what happened, redacted
 * @property {number} [status]        the HTTP status, when there was an answer
 * @property {string} [code]          the transport error's code
 */

export class CallError extends Error {
  /**
   * @param {string} code one of CALL_CODES
   * @param {string} message (redacted here)
   * @param {object} [fields] retryable, attempts, stopReason, failures, retryAfterMs, response, cause
   */
  constructor(code, message, fields = {}) {
    super(redactSecrets(message), fields.cause === undefined ? undefined : { cause: safeCause(fields.cause) });
    this.name = "CallError";
    this.code = code;
    this.retryable = fields.retryable ?? false;
    this.attempts = fields.attempts ?? 0;
    this.stopReason = fields.stopReason ?? code.toLowerCase().replaceAll("_", "-");
    this.failures = fields.failures ?? [];
    if (fields.retryAfterMs !== undefined) this.retryAfterMs = fields.retryAfterMs;
    // The last answer (an HTTP response the call would not return), unread, for the caller.
    if (fields.response !== undefined) Object.defineProperty(this, "response", { value: fields.response, enumerable: false });
  }
}

/** redactError, for an object that does not let itself be read (a throwing getter, a Proxy). */
function safeCause(cause) {
  try {
    return redactError(cause);
  } catch {
    return new Error("[the cause could not be read safely]");
  }
}

export const invalidOption = (message) => new CallError("INVALID_ARGUMENT", message, { stopReason: "invalid-argument" });
