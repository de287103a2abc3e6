// The host's Prometheus metrics without `prom-client` (which needs Node): the same families,
// names, labels and histogram buckets as metrics.js, written as text by hand, for the hosts
// that run anywhere (memory-host.js, the edge worker's durable-host.js). Counters are bumped as
// things happen; gauges are read from the host's `stats()` when scraped. Context labels are
// capped like metrics.js's: past 1000 distinct contexts the rest count as "_other", past 100
// distinct groups likewise.

const MAX_CONTEXT_LABELS = 1000;
const MAX_GROUP_LABELS = 100;
const BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];

/** A label value as the text format spells it. */
const esc = (v) => String(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const labels = (o) => `{${Object.entries(o).map(([k, v]) => `${k}="${esc(v)}"`).join(",")}}`;

export class TextMetrics {
  #host;
  #contexts = new Set();
  /** "context\0result" → count */
  #acquisitions = new Map();
  #groups = new Set();
  /** group label → granted acquires */
  #groupAcquisitions = new Map();
  /** context label → COOLDOWN_SUPPRESSED events */
  #suppressed = new Map();
  #events = new Map();
  #checkpoints = 0;
  #checkpointFailures = 0;
  #streamCuts = 0;
  #lastCheckpoint = null;
  #lastDurationMs = 0;
  /** "route\0method\0status" → {buckets: number[], sum, count} */
  #requests = new Map();

  constructor(host) {
    this.#host = host;
  }

  #context(context) {
    const c = this.#contexts.has(context) || this.#contexts.size < MAX_CONTEXT_LABELS ? context : "_other";
    this.#contexts.add(c);
    return c;
  }

  /** An acquire: `lease` granted, or null. */
  acquired(context, lease) {
    const k = `${this.#context(context)}\0${lease ? "granted" : "rejected"}`;
    this.#acquisitions.set(k, (this.#acquisitions.get(k) ?? 0) + 1);
    if (lease) {
      const group = lease.group ?? "";
      const g = this.#groups.has(group) || this.#groups.size < MAX_GROUP_LABELS ? group : "_other";
      this.#groups.add(g);
      this.#groupAcquisitions.set(g, (this.#groupAcquisitions.get(g) ?? 0) + 1);
    }
  }

  events(list) {
    for (const e of list) {
      this.#events.set(e.type, (this.#events.get(e.type) ?? 0) + 1);
      if (e.type === "COOLDOWN_SUPPRESSED") {
        const c = this.#context(e.context);
        this.#suppressed.set(c, (this.#suppressed.get(c) ?? 0) + 1);
      }
    }
  }

  checkpointed(ms) {
    this.#checkpoints++;
    this.#lastCheckpoint = performance.now();
    this.#lastDurationMs = ms;
  }

  checkpointFailed() {
    this.#checkpointFailures++;
  }

  streamCut() {
    this.#streamCuts++;
  }

  request(route, method, status, seconds) {
    const k = `${route}\0${method}\0${status}`;
    let h = this.#requests.get(k);
    if (!h) this.#requests.set(k, (h = { buckets: BUCKETS.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]) h.buckets[i]++;
    h.sum += seconds;
    h.count++;
  }

  checkpointStats() {
    return { checkpointAgeMs: this.#lastCheckpoint === null ? null : Math.round(performance.now() - this.#lastCheckpoint) };
  }

  /** The text exposition. */
  text() {
    const s = this.#host.stats();
    const out = [];
    const family = (name, type, help, samples) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [l, v] of samples) out.push(`${name}${l} ${v}`);
    };
    family("repute_acquisitions_total", "counter", "Acquire calls by context and result (granted or rejected).",
      [...this.#acquisitions].map(([k, v]) => {
        const [context, result] = k.split("\0");
        return [labels({ context, result }), v];
      }));
    family("repute_acquisitions_by_group_total", "counter", 'Granted acquires by the group of the resource leased (group="": none).',
      [...this.#groupAcquisitions].map(([group, v]) => [labels({ group }), v]));
    family("repute_cooldowns_suppressed_total", "counter", "Cooldowns the cooling cap suppressed (COOLDOWN_SUPPRESSED events), by context.",
      [...this.#suppressed].map(([context, v]) => [labels({ context }), v]));
    family("repute_events_total", "counter", "Pool events by type.", [...this.#events].map(([type, v]) => [labels({ type }), v]));
    family("repute_checkpoints_total", "counter", "Checkpoints written.", [["", this.#checkpoints]]);
    family("repute_checkpoint_failures_total", "counter", "Checkpoint writes that failed or were refused.", [["", this.#checkpointFailures]]);
    family("repute_stream_cuts_total", "counter", "Event-stream subscribers cut for not keeping up.", [["", this.#streamCuts]]);
    const hist = [];
    for (const [k, h] of this.#requests) {
      const [route, method, status] = k.split("\0");
      BUCKETS.forEach((le, i) => hist.push([labels({ le, route, method, status }), h.buckets[i]]));
      hist.push([labels({ le: "+Inf", route, method, status }), h.count]);
    }
    out.push("# HELP repute_http_request_duration_seconds HTTP request durations by route, method and status.");
    out.push("# TYPE repute_http_request_duration_seconds histogram");
    for (const [l, v] of hist) out.push(`repute_http_request_duration_seconds_bucket${l} ${v}`);
    for (const [k, h] of this.#requests) {
      const [route, method, status] = k.split("\0");
      out.push(`repute_http_request_duration_seconds_sum${labels({ route, method, status })} ${h.sum}`);
      out.push(`repute_http_request_duration_seconds_count${labels({ route, method, status })} ${h.count}`);
    }
    family("repute_resources", "gauge", "Registered resources.", [["", s.registered]]);
    family("repute_leases", "gauge", "Resources under lease (occupancy).", [["", s.leased]]);
    family("repute_blocked", "gauge", "Blocklisted resources.", [["", s.blocked]]);
    family("repute_cells", "gauge", "Reputation cells by stored state.", Object.entries(s.cellsByState).map(([state, n]) => [labels({ state }), n]));
    family("repute_engine_events_dropped", "gauge", "Events dropped by the engine's buffer before a drain.", [["", s.eventsDropped]]);
    family("repute_audit_dropped", "gauge", "Events the audit log dropped.", [["", s.auditDropped ?? 0]]);
    family("repute_delivery_dropped", "gauge", "Events dropped for slow in-process consumers.", [["", s.deliveryDropped ?? 0]]);
    const age = this.#lastCheckpoint === null ? -1 : (performance.now() - this.#lastCheckpoint) / 1000;
    family("repute_checkpoint_age_seconds", "gauge", "Seconds since the last checkpoint was written.", [["", age]]);
    family("repute_checkpoint_duration_seconds", "gauge", "Duration of the last checkpoint write.", [["", this.#lastDurationMs / 1000]]);
    return `${out.join("\n")}\n`;
  }
}
