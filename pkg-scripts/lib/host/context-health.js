// Per-context (per-site) health for `GET /api/contexts`: what the hosts count as acquires and
// reports pass (a rolling window of BUCKETS buckets of BUCKET_MS each: successes, failures,
// granted and rejected acquires, and the latest reported latencies for a p95), joined with
// what the engine's views say of each context's cells now (states, held, failing and why).
//
// Owns: the rolling counters, in memory (a restart starts them empty: they describe the last
// minutes, not history). Context names are capped as the metrics' labels are
// (metric-families.js): past MAX_CONTEXTS distinct contexts the rest count together as "_other",
// so the memory is bounded whatever workers send. Does not own: the cells (the engine's), the
// HTTP shape around it (handler.js).
//
// A cell is *failing* when its last outcome failed (`consecutiveFailures > 0`) or its score is
// below zero, whatever its state: one BLOCKED leaves a cell HEALTHY at −30, rarely picked again,
// and it would look fine. Its cause is its cooldown's while it cools or recovers, else the
// newest failure in its window (the engine keeps `cooldownCause` after a cooldown ends).

import { FAILURE_TYPES } from "../vocabulary.js";
import { MAX_CONTEXT_LABELS, OTHER_LABEL } from "./metric-families.js";

export const BUCKET_MS = 10_000;
export const BUCKETS = 30;
export const MAX_CONTEXTS = MAX_CONTEXT_LABELS;
/** Latencies kept per context for its p95 (the newest; those older than the window are skipped). */
const LATENCIES = 256;
/** The most failing cells the answer lists one by one (the counts are always whole). */
export const MAX_FAILING_LISTED = 5000;
const OTHER = OTHER_LABEL;

class Series {
  /** Per bucket: its start (ms; -1 unused), successes, failures, granted, rejected. */
  start = new Float64Array(BUCKETS).fill(-1);
  ok = new Uint32Array(BUCKETS);
  failed = new Uint32Array(BUCKETS);
  granted = new Uint32Array(BUCKETS);
  rejected = new Uint32Array(BUCKETS);
  /** A ring of [at, latencyMs] pairs. */
  latency = new Float64Array(2 * LATENCIES);
  latencyCount = 0;

  /** The slot of the bucket holding `now`, emptied if it held an older bucket. */
  slot(now) {
    const start = now - (now % BUCKET_MS);
    const i = Math.floor(start / BUCKET_MS) % BUCKETS;
    if (this.start[i] !== start) {
      this.start[i] = start;
      this.ok[i] = this.failed[i] = this.granted[i] = this.rejected[i] = 0;
    }
    return i;
  }
}

export class ContextHealth {
  #now;
  /** context (or OTHER) → Series */
  #series = new Map();

  /** `now()`: the pool's clock (epoch ms). */
  constructor(now) {
    this.#now = now;
  }

  #of(context) {
    let s = this.#series.get(context);
    if (s) return s;
    // Past the cap a new context counts as OTHER (which is made once, beyond the cap).
    const name = this.#series.size >= MAX_CONTEXTS ? OTHER : context;
    s = this.#series.get(name);
    if (!s) {
      s = new Series();
      this.#series.set(name, s);
    }
    return s;
  }

  /** An acquire in `context`: granted (`lease` not null) or rejected. */
  acquired(context, lease) {
    const s = this.#of(context);
    const i = s.slot(this.#now());
    if (lease) s.granted[i]++;
    else s.rejected[i]++;
  }

  /** A reported outcome in `context` (SPEC §9 `Outcome`, already accepted by the engine). */
  reported(context, outcome) {
    const now = this.#now();
    const s = this.#of(context);
    const i = s.slot(now);
    if (outcome.ok) s.ok[i]++;
    else s.failed[i]++;
    if (typeof outcome.latencyMs === "number") {
      const at = (s.latencyCount++ % LATENCIES) * 2;
      s.latency[at] = now;
      s.latency[at + 1] = outcome.latencyMs;
    }
  }

  /**
   * The answer of `GET /api/contexts`: `views` are the engine's ResourceViews (all of them),
   * `windowOf(kind, value, context)` the cell's window (WindowEntry[]) for the cause of a
   * failing cell that is not cooling, `idOf(kind, value)` the resource's opaque id.
   */
  view(views, { windowOf, idOf }) {
    const now = this.#now();
    const from = now - (now % BUCKET_MS) - (BUCKETS - 1) * BUCKET_MS;
    const byContext = new Map();
    const entry = (context) => {
      let e = byContext.get(context);
      if (!e) {
        e = { context, cells: 0, states: { HEALTHY: 0, COOLING: 0, RECOVERING: 0, BLOCKLISTED: 0 }, held: 0, failing: 0, causes: {} };
        byContext.set(context, e);
      }
      return e;
    };
    const failingCells = [];
    let failingTotal = 0;
    for (const r of views) {
      for (const c of r.cells) {
        const e = entry(c.context);
        e.cells++;
        e.states[c.state] = (e.states[c.state] ?? 0) + 1;
        if (c.held) e.held++;
        if (!(c.consecutiveFailures > 0 || c.score < 0)) continue;
        e.failing++;
        // A cooldown's cause stays on the cell after it ends: it is the cause only while cooling.
        const cooling = c.state === "COOLING" || c.state === "RECOVERING";
        const cause = (cooling ? c.cooldownCause : lastFailure(windowOf(r.kind, r.value, c.context)) ?? c.cooldownCause) ?? "UNKNOWN";
        e.causes[cause] = (e.causes[cause] ?? 0) + 1;
        failingTotal++;
        if (failingCells.length < MAX_FAILING_LISTED) failingCells.push({ id: idOf(r.kind, r.value), context: c.context, cause });
      }
    }
    for (const name of this.#series.keys()) entry(name);
    const contexts = [...byContext.values()].sort((a, b) => (a.context < b.context ? -1 : a.context > b.context ? 1 : 0));
    for (const e of contexts) Object.assign(e, { cause: dominant(e.causes) }, this.#window(e.context, from, now));
    return { now, windowMs: BUCKETS * BUCKET_MS, bucketMs: BUCKET_MS, contexts, failingCells, failingCellsTruncated: failingTotal > failingCells.length };
  }

  /** The rolling counters of `context` from `from` (a bucket start) to `now`. */
  #window(context, from, now) {
    const s = this.#series.get(context);
    const series = [];
    let succeeded = 0;
    let failed = 0;
    let granted = 0;
    let rejected = 0;
    for (let start = from; start <= now; start += BUCKET_MS) {
      const i = Math.floor(start / BUCKET_MS) % BUCKETS;
      const b = s && s.start[i] === start ? { ok: s.ok[i], failed: s.failed[i], granted: s.granted[i], rejected: s.rejected[i] } : { ok: 0, failed: 0, granted: 0, rejected: 0 };
      succeeded += b.ok;
      failed += b.failed;
      granted += b.granted;
      rejected += b.rejected;
      series.push({ at: start, succeeded: b.ok, failed: b.failed, granted: b.granted, rejected: b.rejected });
    }
    const reported = succeeded + failed;
    return {
      succeeded,
      failed,
      successRate: reported === 0 ? null : succeeded / reported,
      granted,
      rejected,
      p95LatencyMs: s ? p95(s, from) : null,
      series,
    };
  }
}

/** The p95 of the latencies kept for `s` reported at or after `from` (nearest rank); null if none. */
function p95(s, from) {
  const n = Math.min(s.latencyCount, LATENCIES);
  const xs = [];
  for (let k = 0; k < n; k++) if (s.latency[2 * k] >= from) xs.push(s.latency[2 * k + 1]);
  if (xs.length === 0) return null;
  xs.sort((a, b) => a - b);
  return xs[Math.ceil(0.95 * xs.length) - 1];
}

/** The newest failure type in a window (oldest first), or null. */
function lastFailure(window) {
  if (!window) return null;
  for (let i = window.length - 1; i >= 0; i--) if (window[i][0] !== "OK") return window[i][0];
  return null;
}

/** The most frequent cause (ties: the failure-type table's order, then UNKNOWN), or null. */
function dominant(causes) {
  let best = null;
  for (const c of [...FAILURE_TYPES, "UNKNOWN"]) if ((causes[c] ?? 0) > (causes[best] ?? 0)) best = c;
  return best;
}

/** `GET /api/contexts` for `host` (the host contract's `resources`, `resource`, `resourceId`)
 * and its `health`: a resource's detail is read once, and only for a failing cell that is not
 * cooling or recovering (its cause is in its window). */
export function contextsOf(host, health) {
  const details = new Map();
  const windowOf = (kind, value, context) => {
    const key = `${kind}\0${value}`;
    if (!details.has(key)) details.set(key, host.resource(kind, value));
    return details.get(key).cells.find((c) => c.context === context)?.window ?? null;
  };
  return health.view(host.resources(), { windowOf, idOf: (kind, value) => host.resourceId(kind, value) });
}
