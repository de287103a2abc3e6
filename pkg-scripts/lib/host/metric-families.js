// The host's Prometheus metric families, defined once: name, type, help text, labels and
// histogram buckets of every family `/metrics` shows, on every host (Node, the edge, memory)
// — metrics.js renders this table; lib/call/metrics.js records the resilient calls' families
// into it. Also the label caps: Prometheus labels must stay bounded, so past
// MAX_CONTEXT_LABELS distinct contexts the rest count as "_other" (the metrics' context labels
// and the per-context health of context-health.js), past MAX_GROUP_LABELS groups likewise.
// Groups get a counter of their own (granted acquires by group) rather than a label on
// repute_acquisitions_total: a label there would multiply its 1000 contexts by the groups.

export const MAX_CONTEXT_LABELS = 1000;
export const MAX_GROUP_LABELS = 100;
/** The label a context or group past its cap is counted under. */
export const OTHER_LABEL = "_other";

const REQUEST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];
const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Every family, in the order `/metrics` shows them. Gauges are read from the host's `stats()`
 * (`stat`: its field) or from the metrics object when scraped. */
export const FAMILIES = Object.freeze([
  { name: "repute_acquisitions_total", type: "counter", help: "Acquire calls by context and result (granted or rejected).", labels: ["context", "result"] },
  { name: "repute_acquisitions_by_group_total", type: "counter", help: 'Granted acquires by the group of the resource leased (group="": none).', labels: ["group"] },
  { name: "repute_cooldowns_suppressed_total", type: "counter", help: "Cooldowns the cooling cap suppressed (COOLDOWN_SUPPRESSED events), by context.", labels: ["context"] },
  { name: "repute_events_total", type: "counter", help: "Pool events by type.", labels: ["type"] },
  { name: "repute_checkpoints_total", type: "counter", help: "Checkpoints written (the pool's state stored: a snapshot file on Node, a SQLite transaction on the edge)." },
  { name: "repute_checkpoint_failures_total", type: "counter", help: "Checkpoint writes that failed or were refused." },
  { name: "repute_stream_cuts_total", type: "counter", help: "Event-stream subscribers cut for not keeping up." },
  { name: "repute_http_request_duration_seconds", type: "histogram", help: "HTTP request durations by route, method and status.", labels: ["route", "method", "status"], buckets: REQUEST_BUCKETS },
  { name: "repute_calls_total", type: "counter", help: "Logical calls by context and result (ok, or the CallError code).", labels: ["context", "result"] },
  { name: "repute_call_duration_seconds", type: "histogram", help: "Logical call durations (every attempt, backoff and wait).", labels: ["context"], buckets: CALL_BUCKETS },
  { name: "repute_call_attempts_total", type: "counter", help: "Attempts by context, what was reported (ok, a failure type, none) or cancelled, and phase.", labels: ["context", "outcome", "phase"] },
  { name: "repute_call_attempt_duration_seconds", type: "histogram", help: "Attempt durations.", labels: ["context"], buckets: CALL_BUCKETS },
  { name: "repute_call_retries_total", type: "counter", help: "Retries started.", labels: ["context"] },
  { name: "repute_call_hedges_total", type: "counter", help: "Hedges by result: won, lost, refused (budget).", labels: ["context", "result"] },
  { name: "repute_call_budget_exhausted_total", type: "counter", help: "Retries refused by the retry budget or the kill switch.", labels: ["reason"] },
  { name: "repute_call_bulkhead_rejections_total", type: "counter", help: "Calls turned away by a full bulkhead." },
  { name: "repute_resources", type: "gauge", help: "Registered resources.", stat: "registered" },
  { name: "repute_leases", type: "gauge", help: "Resources under lease (occupancy).", stat: "leased" },
  { name: "repute_blocked", type: "gauge", help: "Blocklisted resources.", stat: "blocked" },
  { name: "repute_cells", type: "gauge", help: "Reputation cells by stored state.", labels: ["state"], stat: "cellsByState" },
  { name: "repute_engine_events_dropped", type: "gauge", help: "Events dropped by the engine's buffer before a drain.", stat: "eventsDropped" },
  { name: "repute_audit_dropped", type: "gauge", help: "Events the audit log dropped (its queue was full).", stat: "auditDropped" },
  { name: "repute_delivery_dropped", type: "gauge", help: "Events dropped for slow in-process consumers.", stat: "deliveryDropped" },
  { name: "repute_checkpoint_age_seconds", type: "gauge", help: "Seconds since the last checkpoint was written (-1: none yet)." },
  { name: "repute_checkpoint_duration_seconds", type: "gauge", help: "Duration of the last checkpoint write." },
]);
