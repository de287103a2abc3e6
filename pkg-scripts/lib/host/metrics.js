// The host's Prometheus metrics, exposed in the text format by `prom-client` (a registry per
// host, so several pools in one process do not mix). Counters are bumped as things happen;
// gauges are read from the pool when scraped. Context labels are capped: past 1000 distinct
// contexts the rest are counted as "_other" (Prometheus labels must stay bounded). Group labels
// (operator-defined names of at most 64 bytes) are capped the same way at 100; `group=""` is a
// resource with no group (a group name is never blank). Groups get a counter of their own,
// granted acquires by group, rather than a label on repute_acquisitions_total: a label there
// would multiply its 1000 contexts by the groups.

import client from "prom-client";
import { CallMetrics } from "../call/metrics.js";

const MAX_CONTEXT_LABELS = 1000;
const MAX_GROUP_LABELS = 100;

export class HostMetrics {
  #host;
  #monotonicMs;
  #registry = new client.Registry();
  #contexts = new Set();
  #groups = new Set();
  #acquisitions;
  #groupAcquisitions;
  #suppressed;
  #events;
  #checkpoints;
  #checkpointFailures;
  #lastCheckpoint = null;
  #lastDurationMs = 0;
  #requests;
  #streamCuts;

  constructor(host, monotonicMs = () => performance.now()) {
    this.#host = host;
    this.#monotonicMs = monotonicMs;
    const registers = [this.#registry];
    this.#acquisitions = new client.Counter({
      name: "repute_acquisitions_total",
      help: "Acquire calls by context and result (granted or rejected).",
      labelNames: ["context", "result"],
      registers,
    });
    this.#groupAcquisitions = new client.Counter({
      name: "repute_acquisitions_by_group_total",
      help: 'Granted acquires by the group of the resource leased (group="": none).',
      labelNames: ["group"],
      registers,
    });
    this.#suppressed = new client.Counter({
      name: "repute_cooldowns_suppressed_total",
      help: "Cooldowns the cooling cap suppressed (COOLDOWN_SUPPRESSED events), by context.",
      labelNames: ["context"],
      registers,
    });
    this.#events = new client.Counter({ name: "repute_events_total", help: "Pool events by type.", labelNames: ["type"], registers });
    this.#checkpoints = new client.Counter({ name: "repute_checkpoints_total", help: "Snapshots written.", registers });
    this.#checkpointFailures = new client.Counter({
      name: "repute_checkpoint_failures_total",
      help: "Snapshot writes that failed or were refused.",
      registers,
    });
    this.#streamCuts = new client.Counter({
      name: "repute_stream_cuts_total",
      help: "Event-stream subscribers cut for not keeping up.",
      registers,
    });
    this.#requests = new client.Histogram({
      name: "repute_http_request_duration_seconds",
      help: "HTTP request durations by route, method and status.",
      labelNames: ["route", "method", "status"],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
      registers,
    });
    /** The resilient calls' metrics (lib/call/metrics.js), for `host.call`. */
    this.calls = new CallMetrics(registers, (context) => this.#context(context));
    const gauge = (name, help, collect, labelNames = []) =>
      new client.Gauge({ name, help, labelNames, registers, collect() { collect(this); } });
    let stats = null;
    const fresh = () => (stats = this.#host.stats());
    gauge("repute_resources", "Registered resources.", (g) => g.set(fresh().registered));
    gauge("repute_leases", "Resources under lease (occupancy).", (g) => g.set((stats ?? fresh()).leased));
    gauge("repute_blocked", "Blocklisted resources.", (g) => g.set((stats ?? fresh()).blocked));
    gauge("repute_cells", "Reputation cells by stored state.", (g) => {
      for (const [state, n] of Object.entries((stats ?? fresh()).cellsByState)) g.set({ state }, n);
    }, ["state"]);
    gauge("repute_engine_events_dropped", "Events dropped by the engine's buffer before a drain.", (g) =>
      g.set((stats ?? fresh()).eventsDropped));
    gauge("repute_audit_dropped", "Events the audit log dropped (its queue was full).", (g) => g.set((stats ?? fresh()).auditDropped));
    gauge("repute_delivery_dropped", "Events dropped for slow in-process consumers.", (g) =>
      g.set((stats ?? fresh()).deliveryDropped));
    gauge("repute_checkpoint_age_seconds", "Seconds since the last snapshot was written.", (g) =>
      g.set(this.#lastCheckpoint === null ? -1 : (this.#monotonicMs() - this.#lastCheckpoint) / 1000));
    gauge("repute_checkpoint_duration_seconds", "Duration of the last snapshot write.", (g) => g.set(this.#lastDurationMs / 1000));
  }

  #context(context) {
    if (this.#contexts.has(context)) return context;
    if (this.#contexts.size >= MAX_CONTEXT_LABELS) return "_other";
    this.#contexts.add(context);
    return context;
  }

  /** The label of a lease's group ("" for none), capped like contexts. */
  #group(group) {
    const g = group ?? "";
    if (this.#groups.has(g)) return g;
    if (this.#groups.size >= MAX_GROUP_LABELS) return "_other";
    this.#groups.add(g);
    return g;
  }

  /** An acquire: `lease` granted, or null. */
  acquired(context, lease) {
    this.#acquisitions.inc({ context: this.#context(context), result: lease ? "granted" : "rejected" });
    if (lease) this.#groupAcquisitions.inc({ group: this.#group(lease.group) });
  }

  events(list) {
    for (const e of list) {
      this.#events.inc({ type: e.type });
      if (e.type === "COOLDOWN_SUPPRESSED") this.#suppressed.inc({ context: this.#context(e.context) });
    }
  }

  checkpointed(ms) {
    this.#checkpoints.inc();
    this.#lastCheckpoint = this.#monotonicMs();
    this.#lastDurationMs = ms;
  }

  checkpointFailed() {
    this.#checkpointFailures.inc();
  }

  streamCut() {
    this.#streamCuts.inc();
  }

  request(route, method, status, seconds) {
    this.#requests.observe({ route, method, status: String(status) }, seconds);
  }

  checkpointStats() {
    return {
      checkpointAgeMs: this.#lastCheckpoint === null ? null : Math.round(this.#monotonicMs() - this.#lastCheckpoint),
    };
  }

  /** The text exposition (a promise). */
  text() {
    return this.#registry.metrics();
  }
}
