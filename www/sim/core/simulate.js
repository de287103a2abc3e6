// One simulation run: the engine (a `Pool` class passed in, so Node tests and the Web Worker
// share this code) on a virtual clock, driven by the scenario's workload through the simulated
// world. Deterministic from its seed: the engine's seeded PRNG, a seeded arrival stream per
// context and counter-based draws per request (draws.js); time moves only when the run says so.
//
// Requests arrive per context as a Poisson process at the context's rate. Each one acquires
// (`now` = its arrival; with the context's `groups` preference when it has one), and a leased
// one reports its outcome and releases when the world's latency has passed; the lease is held
// meanwhile, as a worker would hold it. Resources are registered in their set's group. At each chart
// bucket's end the cells are counted by state. `advance()` runs a slice of simulated time, so a
// caller can show progress and stop between slices.
import { stream } from "./draws.js";
import { checkScenario, profileOf, defaultProfile, groupsOf } from "./scenario.js";
import { outcomeOf } from "./world.js";
import { Recorder, summarize } from "./metrics.js";
import { Queue } from "./queue.js";

/** Where a run's clock starts when it does not start from a snapshot (2023-11-14T22:13:20Z). */
export const START_AT = 1_700_000_000_000;
/** Drain the engine's events at least this often (operations), so a small buffer loses none. */
const DRAIN_EVERY = 2048;

/** A scenario that cannot run: `problems` lists each `{ path, message }`. */
export class ScenarioError extends Error {
  constructor(problems) {
    super(problems.map((p) => p.message).join("; "));
    this.code = "INVALID_SCENARIO";
    this.problems = problems;
  }
}

/**
 * Resources of a snapshot, split over the scenario's sets of their kind in proportion to the
 * sets' counts (in canonical order, contiguous runs); a kind without a set gets a set of its
 * own, `snapshot <KIND>`, with the default profile. Returns `[resource, set name][]` and the
 * extra sets.
 */
function assignSnapshot(resources, sets) {
  const extra = [];
  const out = [];
  const byKind = new Map();
  for (const r of resources) byKind.set(r.kind, [...(byKind.get(r.kind) ?? []), r]);
  for (const [kind, list] of byKind) {
    let targets = sets.filter((s) => s.kind === kind);
    if (targets.length === 0) {
      targets = [{ name: `snapshot ${kind}`, kind, count: list.length }];
      extra.push(targets[0]);
    }
    const total = targets.reduce((n, s) => n + s.count, 0);
    list.forEach((r, j) => {
      const x = ((j + 0.5) / list.length) * total;
      let acc = 0;
      const set = targets.find((s) => (acc += s.count) > x) ?? targets[targets.length - 1];
      out.push([r, set.name]);
    });
  }
  return { assigned: out, extra };
}

/**
 * Prepares a run. `Pool`: the engine's class (web or Node entry, initialised); `config`: the
 * policy (a full or partial engine config); `seed`: a non-negative safe integer; `snapshot`:
 * optional snapshot JSON to start from (its resources, reputation and time). Throws
 * `ScenarioError` for a bad scenario and the engine's error (`code` INVALID_CONFIG, …) for a
 * bad policy or snapshot.
 */
export function createRun({ Pool, scenario, config, seed, snapshot = null }) {
  const problems = checkScenario(scenario);
  if (problems.length > 0) throw new ScenarioError(problems);
  return new Run(Pool, scenario, config, seed, snapshot);
}

class Run {
  #pool;
  #now;
  #t0;
  #scenario;
  #seed;
  #queue = new Queue();
  #rec;
  /** Per resource key (`kind value`): its set's index. */
  #setOf = new Map();
  /** Per set index, per context index: the profile. */
  #profiles;
  #arrivals;
  #durationMs;
  #bucketMs;
  #nextBoundary;
  #requests = 0;
  #ops = 0;
  #setNames;
  /** Per context index: the `acquire` options (`{ groups }`), or null for a plain acquire. */
  #acquireOptions;

  constructor(Pool, scenario, config, seed, snapshot) {
    this.#scenario = scenario;
    this.#seed = seed;
    // A restored pool's time starts at the snapshot's `takenAt`, so the run's clock does too.
    this.#t0 = snapshot !== null ? JSON.parse(snapshot).takenAt : START_AT;
    this.#now = this.#t0;
    const options = { config, seed, now: () => this.#now };
    const pool = snapshot !== null ? Pool.restore(snapshot, options) : new Pool(options);
    this.#pool = pool;
    const contexts = scenario.contexts.map((c) => c.name);
    let sets = scenario.sets;
    if (snapshot !== null) {
      const { assigned, extra } = assignSnapshot(pool.resources(), sets);
      sets = [...sets, ...extra];
      for (const [r, set] of assigned) this.#setOf.set(`${r.kind} ${r.value}`, sets.findIndex((s) => s.name === set));
    } else {
      sets.forEach((set, i) => {
        const width = String(set.count).length;
        for (let k = 1; k <= set.count; k++) {
          const value = `${set.name}-${String(k).padStart(width, "0")}`;
          if (typeof set.group === "string") pool.register(set.kind, value, { group: set.group });
          else pool.register(set.kind, value);
          this.#setOf.set(`${set.kind} ${value}`, i);
        }
      });
    }
    this.#setNames = sets.map((s) => s.name);
    this.#profiles = sets.map((s) =>
      contexts.map((c) => (scenario.sets.includes(s) ? profileOf(scenario, s.name, c) : defaultProfile())));
    this.#durationMs = scenario.durationS * 1000;
    this.#bucketMs = scenario.bucketS * 1000;
    this.#nextBoundary = Math.min(this.#bucketMs, this.#durationMs);
    this.#acquireOptions = scenario.contexts.map((c) => (groupsOf(c) ? { groups: groupsOf(c) } : null));
    // Leases are counted by group when groups are in play: a resource has one, or an acquire prefers some.
    const grouped = this.#acquireOptions.some(Boolean) || pool.resources().some((r) => typeof r.group === "string");
    this.#rec = new Recorder({
      contexts,
      sets: this.#setNames,
      bucketMs: this.#bucketMs,
      buckets: Math.ceil(this.#durationMs / this.#bucketMs),
      grouped,
    });
    this.#rec.events(pool.drainEvents(), this.#t0);
    this.#arrivals = scenario.contexts.map((c, i) => ({ rng: stream(seed, i), rate: c.rate }));
    this.#arrivals.forEach((a, i) => this.#scheduleArrival(i, 0));
  }

  /** Simulated milliseconds of the run, and how many have passed. */
  get totalMs() {
    return this.#durationMs;
  }
  get doneMs() {
    return Math.min(this.#durationMs, this.#now - this.#t0);
  }
  get done() {
    return this.#queue.items.length === 0 && this.#nextBoundary > this.#durationMs;
  }

  #scheduleArrival(c, afterMs) {
    const a = this.#arrivals[c];
    if (!(a.rate > 0)) return;
    const t = afterMs + (-Math.log(1 - a.rng()) / a.rate) * 1000;
    if (t < this.#durationMs) this.#queue.push({ t, type: 0, c });
  }

  /** Runs the simulation up to `untilMs` after its start (or to its end); returns `done`. */
  advance(untilMs = Infinity) {
    const q = this.#queue;
    for (;;) {
      const next = q.peek();
      const t = next ? next.t : Infinity;
      if (this.#nextBoundary <= this.#durationMs && this.#nextBoundary <= t) {
        if (this.#nextBoundary > untilMs) return false;
        this.#boundary();
        continue;
      }
      if (!next) break;
      if (t > untilMs) return false;
      q.pop();
      this.#now = this.#t0 + Math.floor(t);
      if (next.type === 0) this.#arrive(next);
      else this.#complete(next);
      if (++this.#ops % DRAIN_EVERY === 0) this.#rec.events(this.#pool.drainEvents(), this.#t0);
    }
    this.#rec.events(this.#pool.drainEvents(), this.#t0);
    return true;
  }

  /** A chart bucket ends: count the cells by state. */
  #boundary() {
    const end = this.#nextBoundary;
    this.#now = this.#t0 + end;
    const b = this.#rec.bucketOf(end - 1);
    this.#rec.sampleStates(b, this.#pool.resources(), this.#now);
    this.#rec.events(this.#pool.drainEvents(), this.#t0);
    this.#nextBoundary = end === this.#durationMs ? Infinity : Math.min(end + this.#bucketMs, this.#durationMs);
  }

  #arrive({ t, c }) {
    this.#scheduleArrival(c, t);
    const n = this.#requests++;
    const b = this.#rec.bucketOf(t);
    const ctx = this.#scenario.contexts[c].name;
    const options = this.#acquireOptions[c];
    const lease = options ? this.#pool.acquire(ctx, options) : this.#pool.acquire(ctx);
    if (lease === null) {
      this.#rec.acquired(c, b, -1);
      return;
    }
    const s = this.#setOf.get(`${lease.kind} ${lease.value}`);
    this.#rec.acquired(c, b, s, lease.group ?? null);
    const outcome = outcomeOf(this.#profiles[s][c], t / 1000, this.#seed, n);
    this.#queue.push({ t: Math.floor(t) + outcome.latencyMs, type: 1, c, b, lease, outcome });
  }

  #complete({ c, b, lease, outcome }) {
    this.#pool.report(lease.kind, lease.value, lease.context, outcome);
    this.#pool.release(lease);
    this.#rec.completed(c, b, outcome);
  }

  /**
   * The run's result: its series (to the last bucket reached when stopped early), summary and
   * facts (`stoppedAtS` when stopped before its end; requests still in flight then are not
   * counted). Frees the engine: call once.
   */
  finish() {
    const series = this.#rec.series();
    const reached = this.done ? series.startS.length : Math.ceil(this.doneMs / this.#bucketMs);
    if (reached < series.startS.length) truncate(series, reached);
    const stats = this.#pool.stats();
    const config = this.#pool.config();
    this.#pool.free();
    return {
      meta: {
        seed: this.#seed,
        startAt: this.#t0,
        durationS: this.#scenario.durationS,
        simulatedS: this.doneMs / 1000,
        stoppedAtS: this.done ? null : this.doneMs / 1000,
        requests: this.#requests,
        resources: this.#setOf.size,
        eventsDropped: stats.eventsDropped,
      },
      config,
      series,
      summary: summarize(series, this.#scenario),
    };
  }
}

/** Cuts every per-bucket array of `series` to its first `n` buckets. */
function truncate(series, n) {
  const cut = (o) => {
    for (const [k, v] of Object.entries(o)) {
      if (Array.isArray(v) && typeof v[0] === "number") o[k] = v.slice(0, n);
      else if (Array.isArray(v)) v.forEach(cut);
      else if (v && typeof v === "object") cut(v);
    }
  };
  cut(series);
}
