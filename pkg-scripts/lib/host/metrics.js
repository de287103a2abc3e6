// The host's Prometheus metrics, on every host (host-core.js: Node, the edge, memory): the
// families of metric-families.js, counted as things happen and written in the text format by
// hand (no library: the same code runs in Node and in workerd). Gauges are read from the host's
// `stats()` when scraped. Context and group labels are capped (metric-families.js). One
// registry per host, so several pools in one process do not mix.

import { FAMILIES, MAX_CONTEXT_LABELS, MAX_GROUP_LABELS, OTHER_LABEL } from "./metric-families.js";
import { CallMetrics } from "../call/metrics.js";

const BY_NAME = new Map(FAMILIES.map((f) => [f.name, f]));

/** A label value as the text format spells it. */
const esc = (v) => String(v).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const labelText = (names, values) => (names.length === 0 ? "" : `{${names.map((n, i) => `${n}="${esc(values[i])}"`).join(",")}}`);

/** A label set's values in the family's label order, and its key. */
function seriesOf(family, labels) {
  const values = (family.labels ?? []).map((n) => String(labels?.[n] ?? ""));
  return [values, values.join("\0")];
}

/** `name` of a label capped at `max` distinct values: past it, "_other". */
function capped(seen, max, value) {
  if (seen.has(value)) return value;
  if (seen.size >= max) return OTHER_LABEL;
  seen.add(value);
  return value;
}

export class HostMetrics {
  #host;
  #monotonicMs;
  /** family name → (series key → {values, value} or {values, buckets, sum, count}) */
  #series = new Map(FAMILIES.map((f) => [f.name, new Map()]));
  #contexts = new Set();
  #groups = new Set();
  #lastCheckpoint = null;
  #lastDurationMs = 0;

  constructor(host, monotonicMs = () => performance.now()) {
    this.#host = host;
    this.#monotonicMs = monotonicMs;
    /** The resilient calls' metrics (lib/call/metrics.js), for `host.call`. */
    this.calls = new CallMetrics(this, (context) => this.#context(context));
  }

  /** Adds `n` to a counter's series. */
  inc(name, labels, n = 1) {
    const family = BY_NAME.get(name);
    const [values, key] = seriesOf(family, labels);
    const series = this.#series.get(name);
    const s = series.get(key);
    if (s) s.value += n;
    else series.set(key, { values, value: n });
  }

  /** Observes `v` in a histogram's series. */
  observe(name, labels, v) {
    const family = BY_NAME.get(name);
    const [values, key] = seriesOf(family, labels);
    const series = this.#series.get(name);
    let h = series.get(key);
    if (!h) series.set(key, (h = { values, buckets: family.buckets.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < family.buckets.length; i++) if (v <= family.buckets[i]) h.buckets[i]++;
    h.sum += v;
    h.count++;
  }

  #context(context) {
    return capped(this.#contexts, MAX_CONTEXT_LABELS, context);
  }

  /** An acquire: `lease` granted, or null. */
  acquired(context, lease) {
    this.inc("repute_acquisitions_total", { context: this.#context(context), result: lease ? "granted" : "rejected" });
    if (lease) this.inc("repute_acquisitions_by_group_total", { group: capped(this.#groups, MAX_GROUP_LABELS, lease.group ?? "") });
  }

  events(list) {
    for (const e of list) {
      this.inc("repute_events_total", { type: e.type });
      if (e.type === "COOLDOWN_SUPPRESSED") this.inc("repute_cooldowns_suppressed_total", { context: this.#context(e.context) });
    }
  }

  checkpointed(ms) {
    this.inc("repute_checkpoints_total");
    this.#lastCheckpoint = this.#monotonicMs();
    this.#lastDurationMs = ms;
  }

  checkpointFailed() {
    this.inc("repute_checkpoint_failures_total");
  }

  streamCut() {
    this.inc("repute_stream_cuts_total");
  }

  request(route, method, status, seconds) {
    this.observe("repute_http_request_duration_seconds", { route, method, status: String(status) }, seconds);
  }

  checkpointStats() {
    return { checkpointAgeMs: this.#lastCheckpoint === null ? null : Math.round(this.#monotonicMs() - this.#lastCheckpoint) };
  }

  /** A gauge's series when scraped: [[label values, value]]. */
  #gauge(family, stats) {
    if (family.name === "repute_checkpoint_age_seconds") return [[[], this.#lastCheckpoint === null ? -1 : (this.#monotonicMs() - this.#lastCheckpoint) / 1000]];
    if (family.name === "repute_checkpoint_duration_seconds") return [[[], this.#lastDurationMs / 1000]];
    const v = stats[family.stat];
    if (family.labels) return Object.entries(v).map(([label, n]) => [[label], n]);
    return [[[], v ?? 0]];
  }

  /** The text exposition. */
  text() {
    const stats = this.#host.stats();
    const out = [];
    for (const f of FAMILIES) {
      const names = f.labels ?? [];
      out.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`);
      const series = this.#series.get(f.name);
      if (f.type === "gauge") {
        for (const [values, v] of this.#gauge(f, stats)) out.push(`${f.name}${labelText(names, values)} ${v}`);
      } else if (f.type === "counter") {
        if (names.length === 0 && series.size === 0) out.push(`${f.name} 0`);
        for (const s of series.values()) out.push(`${f.name}${labelText(names, s.values)} ${s.value}`);
      } else {
        const withLe = ["le", ...names];
        for (const h of series.values()) {
          f.buckets.forEach((le, i) => out.push(`${f.name}_bucket${labelText(withLe, [le, ...h.values])} ${h.buckets[i]}`));
          out.push(`${f.name}_bucket${labelText(withLe, ["+Inf", ...h.values])} ${h.count}`);
          out.push(`${f.name}_sum${labelText(names, h.values)} ${h.sum}`);
          out.push(`${f.name}_count${labelText(names, h.values)} ${h.count}`);
        }
      }
    }
    return `${out.join("\n")}\n`;
  }
}
