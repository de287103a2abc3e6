// Shared by the resilient-call tests (not a test file): a pool with a manual epoch clock, the
// virtual timers of the Node runtime's tests (time moves only on `advance`), and `drive`, which
// runs a call while stepping virtual time so its backoffs and timeouts fire in order.
import { Pool } from "repute";
import { VirtualTimers } from "../server/_manual-timers.mjs";
import { RetryBudget } from "../../pkg-scripts/lib/call/budget.js";

export const T0 = 1_700_000_000_000;

/** A Pool whose clock follows `timers` (epoch T0 + virtual ms), with `n` PROXY resources p1..pn. */
export function setup({ n = 3, config = {}, seed = 7 } = {}) {
  const timers = new VirtualTimers();
  const pool = new Pool({ seed, now: () => T0 + timers.monotonicMs(), config });
  for (let i = 1; i <= n; i++) pool.register("PROXY", `p${i}`);
  pool.drainEvents();
  // A budget of its own: the process-wide one would carry what earlier tests spent.
  const options = { now: timers.monotonicMs, wallNow: () => T0 + timers.monotonicMs(), timers, random: () => 0.5, budget: new RetryBudget() };
  return { pool, timers, options };
}

/** Lets promise chains and I/O callbacks run. */
export const settle = async (turns = 5) => {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
};

/** Awaits `promise` (a call) while moving virtual time `stepMs` at a time, at most `maxMs`. */
export async function drive(timers, promise, { stepMs = 10, maxMs = 120_000 } = {}) {
  let done = false;
  const watched = promise.then(
    (value) => ((done = true), { value }),
    (error) => ((done = true), { error }),
  );
  for (let t = 0; !done && t <= maxMs; t += stepMs) {
    await settle();
    if (!done) await timers.advance(stepMs);
  }
  const r = await watched;
  if (r.error) throw r.error;
  return r.value;
}

/** The outcomes reported and leases released, from the pool's events since the last drain. */
export function ledger(pool) {
  const events = pool.drainEvents();
  return {
    leased: events.filter((e) => e.type === "RESOURCE_LEASED").map((e) => e.value),
    released: events.filter((e) => e.type === "LEASE_RELEASED").length,
    events,
  };
}

/** A fake HTTP answer for the unit tests (the socket tests use real ones). */
export const answer = (status, headers = {}) => ({ status, headers: new Headers(headers) });

/** `pool` as a call's host, recording what the call reported and released (the pool does the work). */
export function recorded(pool, now = () => T0) {
  const reports = [];
  const releases = [];
  return {
    reports,
    releases,
    acquire: (context) => pool.acquire(context),
    report(kind, value, context, outcome) {
      reports.push({ value, context, ...outcome });
      pool.report(kind, value, context, outcome);
    },
    release(lease) {
      releases.push(lease.value);
      return pool.release(lease);
    },
    nextChangeAt: (context) => pool.nextChangeAt(context),
    now,
    maskValue: (kind, value) => Pool.maskValue(kind, value),
  };
}
