// What a Crawlee request's outcome says about the proxy it went through (README "Crawlee"): the
// one classification (lib/outcome/classify.js) applied to what a crawler's
// hooks see — the answer's head in a postNavigationHook, and the error in an
// errorHandler / failedRequestHandler, where Crawlee has often rewrapped the transport's error
// into a message (a `SessionError` for proxy errors and blocked status codes, a plain `Error`
// for a timed-out request). Pure: no I/O, no clock, no Crawlee import. crawler-binding.js
// reports the verdicts.

import { BLOCKED_STATUSES, classifyError, classifyResult, proxyRefused } from "../outcome/classify.js";

/** Answers that mean "the destination refused this proxy": the classification's BLOCKED
 * statuses (401, 403, 429, 451). */
export const BLOCKED_STATUS_CODES = BLOCKED_STATUSES;

/** The proxy's own refusal of our credentials: an answer from the proxy, not the destination. */
export const PROXY_AUTH_REQUIRED = 407;

/** What a proxy-chain relay answers when its upstream proxy failed (proxy-chain's
 * badGatewayStatusCodes): the browser crawlers give each page's proxy to Chromium through one,
 * and proxy services built on it answer the same. Not the destination's answer: 597 is the
 * upstream proxy refusing our credentials (its 407), the rest a failed connection through it. */
const RELAY_FAILURES = Object.freeze({
  590: "refused the tunnel",
  592: "answered out of range",
  593: "was not found",
  594: "refused the connection",
  595: "reset the connection",
  596: "broke the connection",
  597: "refused our credentials",
  599: "failed",
});

/** `{ status, headers, url }` of an answer's head: an HTTP crawler's response (`statusCode`,
 * `headers`, `url`) or a browser's (Playwright's `status()`, `headers()`, `url()`). */
export function headOf(response) {
  const read = (v) => (typeof v === "function" ? v.call(response) : v);
  return { status: read(response?.statusCode) ?? read(response?.status), headers: read(response?.headers), url: read(response?.url) };
}

/** The proxy leg as the browser timed it — from the request's start (connecting through the
 * proxy included) to the first byte of the answer's head, Playwright's `timing().responseStart`
 * — or null when the response has no such timing (an HTTP crawler's: its hooks time it). A
 * browser's navigation ends at the page's load, long after the head. */
export function browserLegMs(response) {
  let t;
  try {
    t = typeof response?.request === "function" ? response.request()?.timing?.() : undefined;
  } catch {
    return null;
  }
  const ms = t?.responseStart;
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? ms : null;
}

/**
 * The verdict on an answer's head (`ctx.response` of a crawler: headOf). An answer from the proxy
 * itself — its 407, or a relay's failure status (RELAY_FAILURES) — is the proxy's failure
 * (`proxy: true`, CONNECTION_RESET; `credentials` when ours were refused: 407, a relay's 597).
 * A status in `blockedStatusCodes` is BLOCKED; a default blocked code that the list leaves out
 * is an answer like a 404 (nothing reported); the rest as the classification reads it. A 2xx
 * or 3xx is `"ok"` here; whether it was SLOW or a soft ban is judged when the body has been read.
 */
export async function classifyAnswer(response, { blockedStatusCodes = BLOCKED_STATUS_CODES, wallNow = Date.now() } = {}) {
  const { status, headers } = headOf(response);
  const relay = RELAY_FAILURES[status];
  if (relay !== undefined) {
    return { ...proxyRefused(status, { credentials: status === 597 }), proxy: true, reason: `the proxy ${relay} (${status} from the relay)` };
  }
  if (status === PROXY_AUTH_REQUIRED) return { ...proxyRefused(status), proxy: true };
  const head = { statusCode: status, headers };
  const v = await classifyResult(head, { latencyMs: 0, slowThresholdMs: Infinity, wallNow });
  if (blockedStatusCodes.includes(status)) {
    return v.report === "BLOCKED" ? v : { ...v, report: "BLOCKED", deliver: false, retryable: true, reason: `the destination refused this resource (${status})` };
  }
  if (v.report === "BLOCKED") return { ...v, report: null, deliver: true, retryable: false, reason: `answered ${status}` };
  return v;
}

/** Messages along an error's `cause` chain. */
function text(error) {
  const parts = [];
  for (let e = error, depth = 0; e && depth < 8; e = e.cause, depth++) parts.push(typeof e === "object" ? String(e.message ?? "") : String(e));
  return parts.join("\n");
}

const verdict = (report, reason, fields = {}) => ({ report, deliver: false, retryable: true, reached: true, phase: "send", reason, ...fields });

/** Transport codes Crawlee quotes in the messages of the errors it rewraps, and Chromium's
 * network errors (`page.goto: net::ERR_…`) in a browser crawler's. */
const QUOTED_CODE = /\b(ECONNRESET|ECONNREFUSED|ECONNABORTED|EPIPE|ETIMEDOUT|ESOCKETTIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|ERR_PROXY_CONNECTION_FAILED|ERR_TUNNEL_CONNECTION_FAILED|ERR_CONNECTION_RESET|ERR_CONNECTION_CLOSED|ERR_CONNECTION_REFUSED|ERR_EMPTY_RESPONSE|ERR_TIMED_OUT|ERR_CONNECTION_TIMED_OUT)\b/;

/**
 * The verdict on the error a crawler's error handler receives for a request whose answer was
 * not judged yet (the navigation or the body failed). `report` is a failure type, or null when
 * the error is not the proxy's fault (a bug, a decode error, the user's handler).
 */
export function classifyCrawleeError(error) {
  const message = text(error);
  // The proxy refused us: HTTP proxies answer CONNECT / forwarded requests with a status.
  const proxy = /Proxy responded with (\d{3})/.exec(message);
  if (proxy) return proxyRefused(Number(proxy[1]));
  // Crawlee's own block detection (session pool status codes, retryOnBlocked's selectors).
  const refused = /Request blocked - received (\d{3}) status code|Blocked by status code (\d{3})/.exec(message);
  if (refused) return verdict("BLOCKED", `the destination refused this resource (${refused[1] ?? refused[2]})`, { phase: "receive", status: Number(refused[1] ?? refused[2]) });
  if (/Found selectors: /.test(message)) return verdict("BLOCKED", "the answer is a block page", { phase: "receive" });
  // A request that did not finish in time: got's timeouts become "request timed out after N
  // seconds.", the navigation and handler timeouts "… timed out after N seconds".
  if (/\btimed out after\b/i.test(message) || error?.name === "TimeoutError") return verdict("TIMEOUT", "the request timed out");
  // The transport's own error (its code on the error or a cause), as the call layer reads it.
  const own = classifyError(error);
  if (own.report !== null) return own;
  // A rewrapped one (Crawlee's SessionError for proxy errors) only quotes the code.
  const quoted = QUOTED_CODE.exec(message);
  if (quoted) {
    const code = quoted[1];
    if (["ETIMEDOUT", "ESOCKETTIMEDOUT", "ERR_TIMED_OUT", "ERR_CONNECTION_TIMED_OUT"].includes(code)) return verdict("TIMEOUT", `timed out (${code})`, { code });
    return verdict("CONNECTION_RESET", `connection failed (${code})`, { code });
  }
  return own;
}
