// The simulated world's answer to one request: what happens when request number `n` goes out
// through a resource of a set, in a context, at a time — from that set × context's profile
// (scenario.js). Each request uses four counter-based draws of its own (draws.js), so the same
// request meets the same luck whichever resource a policy picked for it.
import { draw } from "./draws.js";
import { FAILURES, INCIDENTS } from "./scenario.js";

/** How long a request that times out holds its resource: the worker waits for its deadline. */
export const TIMEOUT_MS = 10_000;
/** z of the 95th percentile of a standard normal distribution. */
const Z95 = 1.6448536269514722;

/**
 * The outcome of request `n` (an integer < 2^30) through a resource whose profile is
 * `profile`, `atS` seconds into the run: `{ ok: true, latencyMs }` or `{ ok: false, failure,
 * latencyMs }`, latency a whole number of ms ≥ 1 (log-normal from the profile's median and
 * p95; TIMEOUT_MS for a timeout). An incident in force (startS ≤ atS < endS) fails every
 * request: an outage with TIMEOUT, a ban with BLOCKED.
 */
export function outcomeOf(profile, atS, seed, n) {
  const base = n * 4;
  let failure = null;
  for (const inc of profile.incidents) {
    if (atS >= inc.startS && atS < inc.endS) {
      failure = INCIDENTS[inc.type];
      break;
    }
  }
  if (failure === null) {
    const u = draw(seed, base);
    let acc = 0;
    for (const f of FAILURES) {
      acc += profile.failures[f];
      if (u < acc) {
        failure = f;
        break;
      }
    }
  }
  const latencyMs = failure === "TIMEOUT" ? TIMEOUT_MS : latency(profile.latency, seed, base);
  return failure === null ? { ok: true, latencyMs } : { ok: false, failure, latencyMs };
}

/** A log-normal latency with the profile's median and p95 (Box–Muller on two draws). */
function latency({ medianMs, p95Ms }, seed, base) {
  const sigma = Math.log(p95Ms / medianMs) / Z95;
  const u1 = 1 - draw(seed, base + 1); // (0, 1]: log is finite
  const u2 = draw(seed, base + 2);
  const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  return Math.max(1, Math.round(medianMs * Math.exp(sigma * z)));
}
