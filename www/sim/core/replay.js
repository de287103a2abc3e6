// Replay: a recorded audit log of a live pool (its engine events, and the outcomes workers
// reported, from the host's outcome log) fed through a candidate policy, the candidate's
// decisions compared with what actually happened.
//
// The candidate pool (same engine, candidate config, seeded) sees the same demand: an acquire
// in the same context at the time of each actual RESOURCE_LEASED or ACQUISITION_REJECTED; the
// same operator actions (register, deregister, block, unblock). Where it picks the resource
// that was actually picked, it is told the outcome that was actually reported for that lease.
// Where it picks another, nobody knows what would have happened: it is told the outcome
// recorded for that resource in that context nearest in time (within `horizonMs`), counted as
// estimated, or nothing at all, counted as unknown. It holds each lease as long as the actual
// one was held. Values are compared as the log shows them (credentials masked).

import { Queue } from "./queue.js";

const DEMAND = new Set(["RESOURCE_LEASED", "ACQUISITION_REJECTED"]);
const DECISIONS = ["same", "different", "candidateRejected", "candidateServed", "bothRejected"];

/** A log that cannot be read: not JSON, JSON lines, or records of the two kinds. */
export class LogError extends Error {
  code = "INVALID_LOG";
}

/**
 * Reads a recorded log: `{ events, outcomes }` (what the console exports and pulls), a JSON
 * array of records, or JSON lines (audit files and outcome files, concatenated). A record with
 * an `outcome` field is a reported outcome; one with a `type` is an engine event.
 */
export function parseLog(text) {
  let records;
  const trimmed = text.trim();
  try {
    if (trimmed.startsWith("{") && !trimmed.includes("\n{")) {
      const doc = JSON.parse(trimmed);
      records = Array.isArray(doc.events) || Array.isArray(doc.outcomes) ? [...(doc.events ?? []), ...(doc.outcomes ?? [])] : [doc];
    } else if (trimmed.startsWith("[")) {
      records = JSON.parse(trimmed);
    } else {
      records = trimmed.split(/\r?\n/).filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
    }
  } catch (e) {
    throw new LogError(`the log is neither JSON nor JSON lines: ${e.message}`);
  }
  const events = [];
  const outcomes = [];
  records.forEach((r, i) => {
    if (r && typeof r === "object" && r.outcome && typeof r.outcome === "object") outcomes.push(r);
    else if (r && typeof r.type === "string" && Number.isSafeInteger(r.seq)) events.push(r);
    else throw new LogError(`record ${i + 1} is neither an engine event (seq, type) nor a reported outcome (outcome)`);
  });
  for (const o of outcomes) {
    if (!Number.isFinite(o.at) || typeof o.kind !== "string" || typeof o.value !== "string" || typeof o.context !== "string") {
      throw new LogError("a reported outcome needs at, kind, value, context and outcome");
    }
  }
  events.sort((a, b) => a.seq - b.seq);
  outcomes.sort((a, b) => a.at - b.at || (a.seq ?? 0) - (b.seq ?? 0));
  return { events: events.map(named), outcomes: outcomes.map(named) };
}

/** A record names its resource by its masked value, which two resources may share (every
 * SESSION value shows as `***`); where the record carries the resource's opaque `id` (a pool
 * server's records do), the value the replay uses is the masked value with the id, unique. */
function named(r) {
  if (typeof r.id !== "string" || typeof r.value !== "string" || r.value.endsWith(` [${r.id}]`)) return r;
  return { ...r, value: `${r.value} [${r.id}]` };
}

const keyOf = (kind, value) => `${kind} ${value}`;

/** Actual leases by token, each with its end and the outcome reported for it (or null). */
function joinLeases(events, outcomes) {
  const leases = new Map();
  const byCell = new Map(); // `key|context` → leases in time order
  for (const e of events) {
    if (e.type === "RESOURCE_LEASED") {
      const lease = { key: keyOf(e.kind, e.value), context: e.context, at: e.at, end: null, outcome: null };
      leases.set(e.token, lease);
      const cell = `${lease.key}|${e.context}`;
      byCell.set(cell, [...(byCell.get(cell) ?? []), lease]);
    } else if ((e.type === "LEASE_RELEASED" || e.type === "LEASE_EXPIRED") && leases.has(e.token)) {
      leases.get(e.token).end ??= e.at;
    }
  }
  let unmatched = 0;
  for (const o of outcomes) {
    const list = byCell.get(`${keyOf(o.kind, o.value)}|${o.context}`) ?? [];
    let lease = null;
    for (let i = list.length - 1; i >= 0; i--) {
      const l = list[i];
      if (l.at > o.at) continue;
      if (l.outcome === null && (l.end === null || o.at <= l.end)) lease = l;
      break;
    }
    if (lease) lease.outcome = o;
    else unmatched++;
  }
  return { leases, unmatched };
}

/** Recorded outcomes per `key|context`, in time order, for estimates. */
function outcomesByCell(outcomes) {
  const m = new Map();
  for (const o of outcomes) {
    const cell = `${keyOf(o.kind, o.value)}|${o.context}`;
    if (!m.has(cell)) m.set(cell, []);
    m.get(cell).push(o);
  }
  return m;
}

/** The recorded outcome of `cell` nearest to `t` within `horizonMs`, or null. */
function nearest(list, t, horizonMs) {
  if (!list) return null;
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid].at < t) lo = mid + 1;
    else hi = mid;
  }
  let best = null;
  for (const i of [lo - 1, lo]) {
    const o = list[i];
    if (o && Math.abs(o.at - t) <= horizonMs && (best === null || Math.abs(o.at - t) < Math.abs(best.at - t))) best = o;
  }
  return best;
}

/** A tally of served / rejected / successes / failures / unknown. */
const tally = () => ({ acquires: 0, served: 0, rejected: 0, successes: 0, failures: 0, unknown: 0, estimated: 0, cooldowns: 0 });

function rate(t) {
  const known = t.rejected + t.successes + t.failures;
  return known > 0 ? t.successes / known : null;
}

/**
 * Replays `log` (`parseLog`'s result) through `config`. `Pool`: the engine's class; `seed`
 * for its PRNG; `horizonMs`: how far in time an estimate may look (default 10 min); at most
 * `maxDifferences` differing decisions are listed. Returns `{ actual, candidate, decisions,
 * differences, perContext, unmatchedOutcomes, resources, fromAt, toAt }`.
 */
export function replay({ Pool, log, config, seed = 1, horizonMs = 600_000, maxDifferences = 200 }) {
  const { events, outcomes } = log;
  if (!events.some((e) => DEMAND.has(e.type))) throw new LogError("the log holds no acquisitions (RESOURCE_LEASED or ACQUISITION_REJECTED) to replay");
  const { leases, unmatched } = joinLeases(events, outcomes);
  const recorded = outcomesByCell(outcomes);
  const fromAt = Math.min(events[0].at, outcomes[0]?.at ?? Infinity);
  let now = fromAt;
  const pool = new Pool({ config, seed, now: () => now });

  // Resources: registered at the start, unless the log shows their registration.
  const firstSeen = new Map();
  const resources = new Map(); // key → [kind, value]
  for (const r of [...events, ...outcomes]) {
    if (!r.kind) continue;
    const key = keyOf(r.kind, r.value);
    if (!firstSeen.has(key)) firstSeen.set(key, r.type ?? "OUTCOME");
    resources.set(key, [r.kind, r.value]);
  }
  for (const [key, first] of firstSeen) if (first !== "RESOURCE_REGISTERED") pool.register(...resources.get(key));
  pool.drainEvents();

  const actual = tally();
  const candidate = tally();
  const perContext = {};
  const ctxTally = (c) => (perContext[c] ??= { actual: tally(), candidate: tally() });
  const decisions = Object.fromEntries(DECISIONS.map((d) => [d, 0]));
  const avoided = { failuresAvoided: 0, failuresAdded: 0 };
  const differences = [];
  // The candidate's pending report + release, in time order.
  const pending = new Queue();
  const settle = (until) => {
    while (pending.peek() && pending.peek().t <= until) {
      const p = pending.pop();
      now = Math.max(now, p.t);
      if (p.outcome) pool.report(p.lease.kind, p.lease.value, p.lease.context, p.outcome);
      pool.release(p.lease);
    }
  };
  const count = (t, c, served, outcome, estimated) => {
    for (const x of [t, c]) {
      x.acquires++;
      if (!served) x.rejected++;
      else {
        x.served++;
        if (outcome === null) x.unknown++;
        else if (outcome.ok) x.successes++;
        else x.failures++;
        if (estimated && outcome) x.estimated++;
      }
    }
  };

  for (const e of events) {
    settle(e.at);
    now = Math.max(now, e.at);
    if (e.type === "RESOURCE_COOLED") {
      actual.cooldowns++;
      ctxTally(e.context).actual.cooldowns++;
      continue;
    }
    if (e.type === "RESOURCE_REGISTERED") pool.register(e.kind, e.value);
    else if (e.type === "RESOURCE_DEREGISTERED") pool.deregister(e.kind, e.value);
    else if (e.type === "RESOURCE_BLOCKLISTED") {
      pool.block(e.kind, e.value, e.permanent ? { permanent: true } : { seconds: Math.max(0.001, (e.until - e.at) / 1000) });
    } else if (e.type === "RESOURCE_UNBLOCKED") pool.unblock(e.kind, e.value);
    if (!DEMAND.has(e.type)) continue;

    const real = e.type === "RESOURCE_LEASED" ? leases.get(e.token) : null;
    const pick = pool.acquire(e.context);
    const c = ctxTally(e.context);
    count(actual, c.actual, real !== null, real?.outcome?.outcome ?? null, false);
    let outcome = null;
    let estimated = false;
    if (pick) {
      const key = keyOf(pick.kind, pick.value);
      if (real && key === real.key && real.outcome) outcome = real.outcome.outcome;
      else if (!(real && key === real.key)) {
        outcome = nearest(recorded.get(`${key}|${e.context}`), e.at, horizonMs)?.outcome ?? null;
        estimated = outcome !== null;
      }
      const hold = real ? (real.end ?? real.outcome?.at ?? real.at) - real.at : 0;
      const reportAt = real?.outcome && key === real.key ? real.outcome.at : e.at + hold;
      pending.push({ t: Math.max(e.at, reportAt), lease: pick, outcome });
    }
    count(candidate, c.candidate, pick !== null, outcome, estimated);

    const decision = real === null
      ? (pick === null ? "bothRejected" : "candidateServed")
      : (pick === null ? "candidateRejected" : keyOf(pick.kind, pick.value) === real.key ? "same" : "different");
    decisions[decision]++;
    const realOk = real?.outcome?.outcome.ok;
    if (decision === "different" && realOk === false && outcome?.ok === true) avoided.failuresAvoided++;
    if (decision === "different" && realOk === true && outcome?.ok === false) avoided.failuresAdded++;
    if (decision !== "same" && decision !== "bothRejected" && differences.length < maxDifferences) {
      differences.push({
        at: e.at,
        context: e.context,
        decision,
        actual: real ? { resource: real.key, outcome: real.outcome?.outcome ?? null } : null,
        candidate: pick ? { resource: keyOf(pick.kind, pick.value), outcome, estimated } : null,
      });
    }
    for (const ev of pool.drainEvents()) if (ev.type === "RESOURCE_COOLED") {
      candidate.cooldowns++;
      ctxTally(ev.context).candidate.cooldowns++;
    }
  }
  settle(Infinity);
  for (const ev of pool.drainEvents()) if (ev.type === "RESOURCE_COOLED") {
    candidate.cooldowns++;
    ctxTally(ev.context).candidate.cooldowns++;
  }
  pool.free();
  const toAt = Math.max(events[events.length - 1].at, outcomes[outcomes.length - 1]?.at ?? -Infinity);
  for (const t of [actual, candidate, ...Object.values(perContext).flatMap((c) => [c.actual, c.candidate])]) t.successRate = rate(t);
  return { actual, candidate, perContext, decisions, ...avoided, differences, unmatchedOutcomes: unmatched, resources: resources.size, fromAt, toAt };
}
