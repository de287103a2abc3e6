// The options of a call (call.js), validated once, with their defaults (README "Resilient
// calls"): an unknown or out-of-range option is refused with INVALID_ARGUMENT before anything
// is leased.

import { Bulkhead } from "./bulkhead.js";
import { hedgeBudget, retryBudget } from "./budget.js";
import { invalidOption } from "./errors.js";

const SYSTEM_TIMERS = Object.freeze({ setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (t) => clearTimeout(t) });
/** Node (and browsers) run a timer whose delay passes 2^31 − 1 ms — Infinity too — after 1 ms:
 * the call's timers wait for ever on Infinity and at most that long otherwise. */
const MAX_DELAY_MS = 2 ** 31 - 1;
const bounded = (timers) => ({
  setTimeout: (fn, ms) => (ms === Infinity ? null : timers.setTimeout(fn, Math.min(ms, MAX_DELAY_MS))),
  clearTimeout: (t) => (t === null ? undefined : timers.clearTimeout(t)),
});
const OPTION_KEYS = new Set([
  "deadlineMs", "signal", "attemptTimeoutMs", "idempotent", "idempotencyKey", "readOnly", "retry", "classify",
  "isBlocked", "slowThresholdMs", "budget", "now", "wallNow", "timers", "random", "onError", "hedge", "bulkhead", "metrics",
  "groups",
]);
const RETRY_KEYS = new Set(["maxAttempts", "baseDelayMs", "maxDelayMs", "maxRetryAfterMs", "reserveMs"]);

function nonNegative(name, v, { integer = false, min = 0 } = {}) {
  if (!(typeof v === "number" && v >= min && !Number.isNaN(v) && (!integer || Number.isInteger(v)))) {
    throw invalidOption(`${name} must be ${integer ? "an integer" : "a number"} >= ${min}`);
  }
  return v;
}

export function settings(options) {
  if (options === null || typeof options !== "object") throw invalidOption("options must be an object");
  for (const k of Object.keys(options)) if (!OPTION_KEYS.has(k)) throw invalidOption(`unknown option ${k}`);
  const retry = options.retry ?? {};
  for (const k of Object.keys(retry)) if (!RETRY_KEYS.has(k)) throw invalidOption(`unknown option retry.${k}`);
  const s = {
    deadlineMs: nonNegative("deadlineMs", options.deadlineMs ?? 30_000),
    attemptTimeoutMs: nonNegative("attemptTimeoutMs", options.attemptTimeoutMs ?? 10_000, { min: 1 }),
    slowThresholdMs: nonNegative("slowThresholdMs", options.slowThresholdMs ?? 2000),
    maxAttempts: nonNegative("retry.maxAttempts", retry.maxAttempts ?? 3, { integer: true, min: 1 }),
    baseDelayMs: nonNegative("retry.baseDelayMs", retry.baseDelayMs ?? 100),
    maxDelayMs: nonNegative("retry.maxDelayMs", retry.maxDelayMs ?? 2000),
    maxRetryAfterMs: nonNegative("retry.maxRetryAfterMs", retry.maxRetryAfterMs ?? 30_000),
    idempotencyKey: options.idempotencyKey,
    // Retrying is safe for reads, for idempotent operations and with a key the server dedupes on.
    repeatable: options.readOnly === true || options.idempotent === true || options.idempotencyKey !== undefined,
    signal: options.signal,
    classify: options.classify ?? null,
    isBlocked: options.isBlocked ?? null,
    budget: options.budget ?? retryBudget,
    now: options.now ?? (() => performance.now()),
    wallNow: options.wallNow ?? Date.now,
    timers: bounded(options.timers ?? SYSTEM_TIMERS),
    random: options.random ?? Math.random,
    onError: options.onError ?? (() => {}),
  };
  s.metrics = options.metrics ?? null;
  // Every acquire of the call (first attempt, retries, hedges) and its nextChangeAt take the
  // groups; the pool checks the names, their count and repeats at the first acquire.
  if (options.groups !== undefined) {
    const g = options.groups;
    if (!Array.isArray(g) || g.some((x) => x !== null && typeof x !== "string")) throw invalidOption("groups must be an array of group names (strings) or nulls");
    s.acquire = { groups: [...g] };
  } else s.acquire = undefined;
  if (options.bulkhead !== undefined && !(options.bulkhead instanceof Bulkhead)) throw invalidOption("bulkhead must be a Bulkhead");
  s.bulkhead = options.bulkhead ?? null;
  if (options.hedge !== undefined && options.hedge !== false) {
    // A hedged mutation runs twice: only read-only calls are hedged.
    if (options.readOnly !== true) throw invalidOption("hedge is only for readOnly calls (a hedged mutation runs twice)");
    const h = options.hedge === true ? {} : options.hedge;
    if (h === null || typeof h !== "object") throw invalidOption("hedge must be true or { delayMs?, budget? }");
    for (const k of Object.keys(h)) if (k !== "delayMs" && k !== "budget") throw invalidOption(`unknown option hedge.${k}`);
    s.hedge = { delayMs: h.delayMs === undefined ? null : nonNegative("hedge.delayMs", h.delayMs), budget: h.budget ?? hedgeBudget };
  } else s.hedge = null;
  s.reserveMs = nonNegative("retry.reserveMs", retry.reserveMs ?? s.baseDelayMs);
  if (s.idempotencyKey !== undefined && (typeof s.idempotencyKey !== "string" || s.idempotencyKey === "")) {
    throw invalidOption("idempotencyKey must be a non-empty string");
  }
  if (s.signal !== undefined && !(s.signal instanceof AbortSignal)) throw invalidOption("signal must be an AbortSignal");
  for (const f of ["classify", "isBlocked", "now", "wallNow", "random", "onError"]) {
    if (s[f] !== null && typeof s[f] !== "function") throw invalidOption(`${f} must be a function`);
  }
  return s;
}
