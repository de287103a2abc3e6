// The one classification of an outcome (README "What an outcome says about a resource", the
// contract): status codes, error codes and phases → what the pool is told (a success, one of
// the five failure types, or nothing), whether the caller gets the result, whether another
// resource may be tried, and the phase the attempt had reached. Its three users read it here
// and nowhere else: the resilient-call layer (lib/call/attempt.js), the prober
// (lib/node/prober.js: a `null` report is an inconclusive probe) and the Crawlee drop-in
// (lib/crawlee/outcome.js). Pure: no I/O, no clock (latency and the wall clock come in as
// arguments).
//
// A verdict: { report: "ok" | FailureType | null, deliver: boolean, retryable: boolean,
//              phase, reason, reached, status?, code?, retryAfterMs? }
// - `report`: what `host.report` is told; null = nothing (not the resource's fault).
// - `deliver`: the result goes back to the caller as it is (a success, a SLOW success, a 404).
// - `reached`: the request may have reached the server (a non-idempotent call is then never
//   retried); false only when the failure proves it did not (refused, DNS, connect timeout,
//   TLS, the proxy refusing the tunnel).

/** Phases, in order. `send` covers writing the request and, unless an attempt marks `wait`,
 * waiting for the answer's head (proxyFetch marks no `wait`). Any other name an attempt or a
 * `classify` gives is recorded as `other` (it may have reached the server): phases are metrics
 * labels, and a caller's names (a URL in them) must not grow their number. */
export const PHASES = Object.freeze(["connect", "tls", "send", "wait", "receive"]);
const KNOWN_PHASES = new Set(PHASES);

/** `name` if it is one of PHASES, else "other". */
export const phaseName = (name) => (KNOWN_PHASES.has(name) ? name : "other");

const TIMEOUT_CODES = new Map([
  ["UND_ERR_CONNECT_TIMEOUT", "connect"],
  ["ETIMEDOUT", "connect"],
  ["UND_ERR_HEADERS_TIMEOUT", "send"],
  ["UND_ERR_BODY_TIMEOUT", "receive"],
  ["ESOCKETTIMEDOUT", null],
  ["ERR_SOCKET_CONNECTION_TIMEOUT", "connect"],
]);
/** Failures before a byte of the request could reach the server. */
const NOT_REACHED_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL"]);
/** Node's own ERR_ codes that are network failures; every other ERR_ code (ERR_INVALID_URL,
 * ERR_INVALID_ARG_TYPE …) is a bug of the attempt, not a failure of the resource. */
const NODE_NETWORK_CODES = new Set([
  "ERR_STREAM_PREMATURE_CLOSE", "ERR_SOCKET_CLOSED", "ERR_SOCKET_CLOSED_BEFORE_CONNECTION",
  "ERR_HTTP2_STREAM_ERROR", "ERR_HTTP2_SESSION_ERROR", "ERR_HTTP2_GOAWAY_SESSION", "ERR_HTTP2_STREAM_CANCEL",
]);
/** undici codes for a wrong use of the client: bugs, not network failures. */
const USAGE_CODES = new Set(["UND_ERR_INVALID_ARG", "UND_ERR_INVALID_RETURN_VALUE", "UND_ERR_NOT_SUPPORTED", "UND_ERR_ABORTED"]);

/** Codes and messages along an error's `cause` chain (and AggregateError members). */
function trail(error) {
  const codes = [];
  const messages = [];
  const names = [];
  for (let e = error, depth = 0; e && typeof e === "object" && depth < 8; e = e.cause, depth++) {
    if (typeof e.code === "string") codes.push(e.code);
    if (typeof e.message === "string") messages.push(e.message);
    if (typeof e.name === "string") names.push(e.name);
    if (Array.isArray(e.errors)) for (const x of e.errors) if (typeof x?.code === "string") codes.push(x.code);
  }
  return { codes, names, text: messages.join("\n") };
}

const verdict = (report, fields) => ({ report, deliver: false, retryable: true, reached: true, ...fields });

/**
 * A thrown error. `phase`: how far the attempt got (null: unknown); `timedOut`: our own
 * attempt timer fired.
 */
export function classifyError(error, { phase = null, timedOut = false } = {}) {
  const { codes, names, text } = trail(error);
  const code = codes[0];
  const at = phase ?? "send";
  if (timedOut) return verdict("TIMEOUT", { phase: at, reason: "the attempt timed out", reached: phase !== "connect" && phase !== "tls" });
  // The OS reports ETIMEDOUT and the unreachable codes on an established socket too: once the
  // attempt has marked `send`, `wait` or `receive` (or a phase of its own: `other`), the request
  // may have reached the server whatever the code says.
  const wentOut = phase !== null && phase !== "connect" && phase !== "tls";
  const timeout = codes.find((c) => TIMEOUT_CODES.has(c));
  if (timeout) {
    const p = wentOut && timeout === "ETIMEDOUT" ? phase : (TIMEOUT_CODES.get(timeout) ?? at);
    return verdict("TIMEOUT", { phase: p, code: timeout, reason: `timed out (${timeout})`, reached: p !== "connect" });
  }
  const tlsCode = codes.some((c) => /^(ERR_TLS_|ERR_SSL_|UND_ERR_PRX_TLS)/.test(c) || /CERT/.test(c));
  // A peer that drops the connection mid-handshake (ECONNRESET "… before secure TLS connection
  // was established") is a flaky network or proxy, not configuration: another resource may work.
  if (!tlsCode && /before secure tls connection/i.test(text)) {
    return verdict("CONNECTION_RESET", { phase: "tls", code, reason: "the connection closed during the TLS handshake", reached: false });
  }
  if (tlsCode || /certificate|ssl routines|tls handshake/i.test(text)) {
    // Certificates and TLS set-up are configuration: trying again does not fix them.
    return verdict("TLS_HANDSHAKE", { phase: "tls", code, reason: "TLS handshake failed", retryable: false, reached: false });
  }
  // The proxy refused us: 407 to a forwarded request, or any non-200 answer to CONNECT. Not the
  // destination's answer: CONNECTION_RESET whatever the status (407: our credentials refused).
  const refused = /Proxy Authentication Required \((407)\)|Proxy response \((\d+)\) !== 200/.exec(text);
  if (refused) return proxyRefused(Number(refused[1] ?? refused[2]), { code });
  // An answer that is not HTTP (undici's HTTPParserError, often without a code): a broken
  // proxy, or a port that speaks something else. The resource is to blame; another may work.
  if (names.includes("HTTPParserError") || codes.some((c) => c.startsWith("HPE_"))) {
    return verdict("CONNECTION_RESET", { phase: at, code: codes.find((c) => c.startsWith("HPE_")), reason: "the answer was not HTTP", reached: at !== "connect" && at !== "tls" });
  }
  const pre = codes.find((c) => NOT_REACHED_CODES.has(c));
  if (pre) return verdict("CONNECTION_RESET", { phase: wentOut ? phase : "connect", code: pre, reason: `could not connect (${pre})`, reached: wentOut });
  const transport = codes.find((c) => /^E(?!RR_)[A-Z0-9_]+$/.test(c) || NODE_NETWORK_CODES.has(c) || (c.startsWith("UND_ERR_") && !USAGE_CODES.has(c)));
  if (transport) return verdict("CONNECTION_RESET", { phase: at, code: transport, reason: `connection failed (${transport})`, reached: at !== "connect" });
  // Not a network failure: a decode error or a bug of the attempt. The resource is not to blame
  // and the same attempt would fail the same way.
  return { report: null, deliver: false, retryable: false, reached: true, phase: at, code, reason: "the attempt threw" };
}

/**
 * What an answer's status says about the resource it went through, for the statuses that say
 * something (2xx and 3xx are successes; a status not listed speaks about the request or the
 * server, not the resource: nothing is reported and the answer is the caller's).
 * - `report`: the failure type, or null (nothing reported);
 * - `retryable`: another resource may be tried (the answer is not delivered).
 * 407 is the proxy refusing us (our credentials), not the destination refusing this exit:
 * CONNECTION_RESET, as any proxy that cannot carry the request — never a site block.
 */
export const STATUS_TABLE = Object.freeze({
  401: Object.freeze({ report: "BLOCKED", retryable: true, reason: "the destination refused this resource (401)" }),
  403: Object.freeze({ report: "BLOCKED", retryable: true, reason: "the destination refused this resource (403)" }),
  407: Object.freeze({ report: "CONNECTION_RESET", retryable: true, reason: "the proxy refused our credentials (407)" }),
  // The server gave up waiting for the request (RFC 9110 §15.5.9): the request's way there,
  // through this resource, was too slow.
  408: Object.freeze({ report: "TIMEOUT", retryable: true, reason: "request timeout (408)" }),
  429: Object.freeze({ report: "BLOCKED", retryable: true, reason: "the destination refused this resource (429)" }),
  // Unavailable for legal reasons: a geo-block, the destination refusing this exit's location.
  451: Object.freeze({ report: "BLOCKED", retryable: true, reason: "the destination refused this resource (451)" }),
  500: Object.freeze({ report: null, retryable: true, reason: "the server failed (500)" }),
  502: Object.freeze({ report: "CONNECTION_RESET", retryable: true, reason: "bad gateway (502)" }),
  503: Object.freeze({ report: null, retryable: true, reason: "the server failed (503)" }),
  504: Object.freeze({ report: "TIMEOUT", retryable: true, reason: "gateway timeout (504)" }),
});

/** The statuses that mean "the destination refused this resource": BLOCKED in the table. */
export const BLOCKED_STATUSES = Object.freeze(
  Object.keys(STATUS_TABLE).map(Number).filter((s) => STATUS_TABLE[s].report === "BLOCKED"),
);

/**
 * The proxy refused to carry the request (its own answer to CONNECT or to a forwarded request,
 * or a relay's): CONNECTION_RESET before reaching the server; `credentials` when it refused ours
 * (407), so a caller can load them again.
 */
export function proxyRefused(status, fields = {}) {
  const credentials = status === 407;
  const reason = credentials ? "the proxy refused our credentials (407)" : `the proxy refused the request (${status})`;
  return verdict("CONNECTION_RESET", { phase: "connect", status, reason, reached: false, credentials, ...fields });
}

/** The status of an HTTP-response-like result (`status` of fetch, `statusCode` of undici.request). */
export function statusOf(result) {
  if (result === null || typeof result !== "object") return null;
  const s = typeof result.status === "number" ? result.status : result.statusCode;
  return Number.isInteger(s) && s >= 100 && s <= 599 ? s : null;
}

function header(headers, name) {
  if (!headers) return null;
  if (typeof headers.get === "function") return headers.get(name);
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : (v ?? null);
}

/** `Retry-After` (delay-seconds or an HTTP date, RFC 9110 §10.2.3) in ms from `wallNow`, or null. */
export function retryAfterMs(value, wallNow) {
  if (value === null || value === undefined) return null;
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - wallNow) : null;
}

/**
 * A result the attempt returned. `isBlocked(result)` (the soft-ban / block-page predicate, may
 * be async) sees it first. Results that are not HTTP-response-like are successes.
 */
export async function classifyResult(result, { latencyMs, slowThresholdMs = 2000, isBlocked = null, wallNow = Date.now() } = {}) {
  const status = statusOf(result);
  const after = status === null ? null : retryAfterMs(header(result.headers, "retry-after"), wallNow);
  const extra = { phase: "receive", ...(status === null ? {} : { status }), ...(after === null ? {} : { retryAfterMs: after }) };
  if (isBlocked && (await isBlocked(result))) return verdict("BLOCKED", { ...extra, reason: "the answer is a block page" });
  if (status === null || (status >= 200 && status < 400)) {
    const slow = latencyMs >= slowThresholdMs;
    return { report: slow ? "SLOW" : "ok", deliver: true, retryable: false, reached: true, ...extra, reason: slow ? "slow success" : "success" };
  }
  const row = STATUS_TABLE[status];
  if (row) return verdict(row.report, { ...extra, retryable: row.retryable, reason: row.reason });
  // Other 4xx/5xx speak about the request or the server, not the resource.
  return { report: null, deliver: true, retryable: false, reached: true, ...extra, reason: `answered ${status}` };
}
