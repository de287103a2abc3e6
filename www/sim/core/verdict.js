// How sure a comparison is: the seeds every Run and Compare simulates (the simulation is
// deterministic per seed, so several seeds are several independent days of the same
// workload), the spread of a measure over them, and the verdict on an A/B pair. The verdict
// scores each run by what its acquires earned — a success +1, a request wasted on a refusal
// (a failure the worker reported) −1, a rejected acquire 0 (no traffic spent, nothing gained)
// — per acquire, and calls a policy better only when it scores higher by at least
// MIN_DIFFERENCE on every seed; anything else is "no clear difference". No DOM, no engine.
import { FAILURES } from "./scenario.js";

/** Seeds simulated per policy: the workspace's seed and the ones after it. */
export const SEEDS = 5;
/** A score difference (per acquire) below this on any seed is no difference. */
export const MIN_DIFFERENCE = 0.005;

/** The seeds of a run whose workspace seed is `seed`. */
export const seedsFrom = (seed, n = SEEDS) => Array.from({ length: n }, (_, i) => seed + i);

/** Requests wasted on refusals: every failure reported (BLOCKED, TIMEOUT, …). */
export const wastedOf = (summary) => FAILURES.reduce((n, f) => n + summary.failures[f], 0);

/** A run's score per acquire: (successes − wasted requests) / acquires; null without acquires. */
export function scoreOf(summary) {
  return summary.attempts > 0 ? (summary.successes - wastedOf(summary)) / summary.attempts : null;
}

/**
 * The spread of a measure over seeds: `{ n, mean, sd, min, max, missing }` over the values that
 * are numbers (`missing`: how many seeds had none — e.g. never recovered); null when none is.
 */
export function spreadOf(values) {
  const xs = values.filter((v) => typeof v === "number" && Number.isFinite(v));
  if (xs.length === 0) return null;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
  return { n: xs.length, mean, sd, min: Math.min(...xs), max: Math.max(...xs), missing: values.length - xs.length };
}

/**
 * The verdict on B against A from their summaries on the same seeds (`a[i]` and `b[i]` ran seed
 * i): `{ winner: "A" | "B" | null, differences, text }`; `differences` are B's score minus A's
 * per seed. A winner only when every seed agrees by at least MIN_DIFFERENCE.
 */
export function verdictOf(a, b) {
  if (a.length !== b.length || a.length === 0) throw new Error("a verdict needs the same seeds for both policies");
  const differences = a.map((x, i) => (scoreOf(b[i]) ?? 0) - (scoreOf(x) ?? 0));
  const n = differences.length;
  const seeds = n === 1 ? "on the one seed simulated" : `on all ${n} seeds`;
  let winner = null;
  if (differences.every((d) => d >= MIN_DIFFERENCE)) winner = "B";
  else if (differences.every((d) => d <= -MIN_DIFFERENCE)) winner = "A";
  const points = (d) => `${(Math.abs(d) * 100).toFixed(1)}`;
  const lo = Math.min(...differences.map(Math.abs));
  const hi = Math.max(...differences.map(Math.abs));
  const range = lo.toFixed(3) === hi.toFixed(3) ? points(lo) : `${points(lo)} to ${points(hi)}`;
  const text = winner
    ? `Policy ${winner} did better ${seeds}: ${range} more useful requests per 100 acquires (successes minus requests wasted on refusals; rejections earn nothing).`
    : `No clear difference: the seeds disagree or the difference is under ${(MIN_DIFFERENCE * 100).toFixed(1)} useful requests per 100 acquires on some seed (B minus A per seed: ${differences.map((d) => `${d >= 0 ? "+" : "−"}${points(d)}`).join(", ")}).`;
  return { winner, differences, text };
}

/**
 * B against A on one measure over seeds (`pairs`: the per-seed verdicts "better", "worse",
 * "same" or null): the shared verdict when every seed agrees, else "unclear".
 */
export function agreeingVerdict(pairs) {
  if (pairs.length === 0) return null;
  if (pairs.every((p) => p === "same")) return "same";
  if (pairs.every((p) => p === null || p === "same")) return null;
  for (const v of ["better", "worse"]) if (pairs.every((p) => p === v)) return v;
  return "unclear";
}
