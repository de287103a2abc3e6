// The summary table as rows, for one run or an A/B pair: each row a label, the value of each
// run, its spread over the seeds simulated, how to show it, and — for a pair — which run it
// favours ("better" is B's verdict against A: a higher success rate, fewer rejections, a shorter
// recovery; it must hold on every seed, else "unclear"). Rows about groups (the share
// of each context served by each group) and the cooling cap (held cells, suppressed cooldowns)
// appear when a run has them. Also the winner of a pair, whose policy the console offers to
// export. No DOM: ui/results.js draws the rows.
import { NO_GROUP_LABEL } from "./metrics.js";
import { agreeingVerdict, spreadOf, verdictOf, wastedOf } from "./verdict.js";

/**
 * Rows of the summary table for `runs` (one or two results, each `{ summary, seeds? }`, `seeds`
 * being `[{ seed, summary }]` of every seed simulated, the charted one first): `{ key, label,
 * format ("percent" | "count" | "seconds"), values (on the charted seed), spreads (per run, over
 * its seeds: `spreadOf`, or null), better ("higher" | "lower" | null), verdict (for a pair:
 * "better", "worse", "same", "unclear" when the seeds disagree, or null when the row has no
 * better side) }`.
 */
export function summaryRows(runs) {
  const s = runs.map((r) => r.summary);
  const bySeed = runs.map((r) => (r.seeds ?? [{ summary: r.summary }]).map((x) => x.summary));
  const rows = [];
  const row = (key, label, format, better, get) => rows.push({
    key, label, format, better, values: s.map(get),
    perSeed: bySeed.map((list) => list.map((x) => { const v = get(x); return v === undefined ? null : v; })),
    spreads: runs.map((r, i) => (r.seeds ? spreadOf(bySeed[i].map(get)) : null)),
  });
  row("successRate", "Success rate (successes / acquires)", "percent", "higher", (x) => x.successRate);
  for (const ctx of Object.keys(s[0].perContext)) {
    row(`successRate.${ctx}`, `Success rate in ${ctx}`, "percent", "higher", (x) => x.perContext[ctx]?.successRate ?? null);
  }
  row("rejected", "Acquisitions rejected", "count", "lower", (x) => x.rejected);
  row("rejectedShare", "Share of acquisitions rejected", "percent", "lower", (x) => x.rejectedShare);
  row("failures", "Requests wasted on refusals (failures reported)", "count", "lower", wastedOf);
  row("cooldowns", "Cooldowns started", "count", null, (x) => x.cooldowns);
  row("peakCooling", "Cells cooling at the peak (cooldown running, at a chart point)", "count", null, (x) => x.peakCooling);
  if (s.some((x) => x.peakHeld > 0)) row("peakHeld", "Cells held by the cooling cap at the peak", "count", null, (x) => x.peakHeld);
  if (s.some((x) => x.suppressed > 0)) row("suppressed", "Cooldowns suppressed by the cooling cap", "count", null, (x) => x.suppressed);
  row("worstRecoverS", "Time to recover (worst incident, from its start)", "seconds", "lower", (x) => (x.incidents.length ? x.worstRecoverS : undefined));
  s[0].incidents.forEach((inc, i) => {
    row(`recoverS.${i}`, `Time to recover from the start of ${inc.type} in ${inc.context} (${durationText(inc.startS)} to ${durationText(inc.endS)} into the run)`, "seconds", "lower",
      (x) => x.incidents[i]?.recoverS ?? null);
  });
  for (const set of Object.keys(s[0].setShare)) {
    row(`share.${set}`, `Share served by ${set}`, "percent", null, (x) => x.setShare[set] ?? null);
  }
  for (const ctx of Object.keys(s[0].perContext)) {
    const groups = [...new Set(s.flatMap((x) => Object.keys(x.perContext[ctx]?.groupShare ?? {})))];
    for (const g of groups) {
      row(`groupShare.${ctx}.${g}`, `Share of ${ctx} served by ${g === NO_GROUP_LABEL ? "resources without a group" : `group ${g}`}`, "percent", null, (x) => x.perContext[ctx]?.groupShare?.[g] ?? null);
    }
  }
  row("attempts", "Acquires", "count", null, (x) => x.attempts);
  for (const r of rows) {
    r.verdict = runs.length === 2 ? agreeingVerdict(r.perSeed[0].map((a, i) => verdict({ ...r, values: [a, r.perSeed[1][i]] }))) : null;
    delete r.perSeed;
  }
  return rows;
}

/** B against A for one row on one seed. A time to recover of null (never recovered) is the worst. */
function verdict({ values: [a, b], better, format }) {
  if (JSON.stringify(a) === JSON.stringify(b)) return "same";
  if (better === null) return null;
  const worst = better === "lower" ? Infinity : -Infinity;
  const x = a ?? (format === "seconds" ? worst : null);
  const y = b ?? (format === "seconds" ? worst : null);
  if (x === null || y === null || x === y) return null;
  return (better === "higher" ? y > x : y < x) ? "better" : "worse";
}

/** The verdict on an A/B pair of runs (`verdictOf` over their seeds). */
export function pairVerdict([a, b]) {
  const seeds = (r) => (r.seeds ?? [{ summary: r.summary }]).map((x) => x.summary);
  return verdictOf(seeds(a), seeds(b));
}

/** Seconds in an operator's words: "45 s", "10 min", "1 h 30 min". */
export function durationText(seconds) {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${s % 60} s`;
  const h = Math.floor(s / 3600);
  const m = Math.round((s % 3600) / 60);
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}

/** A row's value as text: percent with one decimal, counts with separators, a duration or a word. */
export function formatValue(format, v) {
  if (v === undefined) return "—";
  if (v === null) return format === "seconds" ? "not recovered" : "—";
  if (format === "percent") return `${(v * 100).toFixed(1)} %`;
  if (format === "seconds") return durationText(v);
  return Math.round(v).toLocaleString("en-US");
}

/** A row's spread over seeds as text: "mean 78.2 % (77.9 % – 78.6 %) over 5 seeds", "" without one. */
export function spreadText(format, spread) {
  if (!spread) return "";
  const missing = spread.missing > 0 ? `; not recovered on ${spread.missing} seed${spread.missing > 1 ? "s" : ""}` : "";
  const n = spread.n + spread.missing;
  if (spread.min === spread.max) return `the same on all ${n} seeds${missing}`;
  return `mean ${formatValue(format, spread.mean)}, ${formatValue(format, spread.min)} – ${formatValue(format, spread.max)} over ${n} seeds${missing}`;
}
