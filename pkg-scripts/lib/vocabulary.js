// The engine's words, spelled once for every JavaScript file of the package and the console:
// resource kinds, failure types and the cell states a view shows, in the engine's order, and
// the small codes the WebAssembly facade takes for kinds and outcomes (src/wasm/facade.rs: kind 0
// PROXY, 1 ACCOUNT, 2 SESSION; outcome 0 success, 1..=5 the failure types in this order).
// Copied beside the console's vendored package by pkg-scripts/build.

export const KINDS = Object.freeze(["PROXY", "ACCOUNT", "SESSION"]);
export const FAILURE_TYPES = Object.freeze(["BLOCKED", "TLS_HANDSHAKE", "CONNECTION_RESET", "TIMEOUT", "SLOW"]);
/** `BLOCKLISTED` is a view: the stored state shows again after unblock. */
export const VIEW_STATES = Object.freeze(["HEALTHY", "COOLING", "RECOVERING", "BLOCKLISTED"]);

/** Every event type (SPEC §4), in the engine's order (src/events.rs). */
export const EVENT_TYPES = Object.freeze([
  "RESOURCE_REGISTERED", "RESOURCE_DEREGISTERED", "RESOURCE_LEASED", "LEASE_RELEASED", "LEASE_EXPIRED",
  "RESOURCE_COOLED", "RESOURCE_RECOVERED", "RESOURCE_BLOCKLISTED", "RESOURCE_UNBLOCKED", "BLOCK_EXPIRED",
  "ACQUISITION_REJECTED", "CONFIG_CHANGED", "RESOURCE_REGROUPED", "COOLDOWN_SUPPRESSED", "RESOURCE_RECONFIGURED",
]);
/** Lease churn: the events of every acquire and release, most of a busy pool's log. */
export const LEASE_CHURN = Object.freeze(["RESOURCE_LEASED", "LEASE_RELEASED", "ACQUISITION_REJECTED"]);

// Maps, not object literals: "toString" or "__proto__" must not pass for a kind.
/** Kind → the facade's code. */
export const KIND_CODE = new Map(KINDS.map((k, i) => [k, i]));
/** Failure type → the facade's outcome code (0 is a success). */
export const FAILURE_CODE = new Map(FAILURE_TYPES.map((f, i) => [f, i + 1]));

export const isKind = (k) => KIND_CODE.has(k);
/** "PROXY, ACCOUNT or SESSION": for messages. */
export const oneOf = (words) => `${words.slice(0, -1).join(", ")} or ${words.at(-1)}`;
