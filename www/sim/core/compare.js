// The summary table as rows, for one run or an A/B pair: each row a label, the value of each
// run, how to show it, and — for a pair — which run it favours ("better" is B's verdict against
// A: a higher success rate, fewer rejections, a shorter recovery). Rows about groups (the share
// of each context served by each group) and the cooling cap (held cells, suppressed cooldowns)
// appear when a run has them. Also the winner of a pair, whose policy the console offers to
// export. No DOM: ui/results.js draws the rows.
import { FAILURES } from "./scenario.js";
import { NO_GROUP_LABEL } from "./metrics.js";

/**
 * Rows of the summary table for `runs` (one or two results, each `{ summary }`): `{ key,
 * label, format ("percent" | "count" | "seconds"), values, better ("higher" | "lower" | null),
 * verdict (for a pair: "better", "worse", "same" or null when the row has no better side) }`.
 */
export function summaryRows(runs) {
  const s = runs.map((r) => r.summary);
  const rows = [];
  const row = (key, label, format, better, get) => rows.push({ key, label, format, better, values: s.map(get) });
  row("successRate", "Success rate (successes / acquires)", "percent", "higher", (x) => x.successRate);
  for (const ctx of Object.keys(s[0].perContext)) {
    row(`successRate.${ctx}`, `Success rate in ${ctx}`, "percent", "higher", (x) => x.perContext[ctx]?.successRate ?? null);
  }
  row("rejected", "Acquisitions rejected", "count", "lower", (x) => x.rejected);
  row("rejectedShare", "Share of acquisitions rejected", "percent", "lower", (x) => x.rejectedShare);
  row("failures", "Failures reported", "count", "lower", (x) => FAILURES.reduce((n, f) => n + x.failures[f], 0));
  row("cooldowns", "Cooldowns started", "count", null, (x) => x.cooldowns);
  row("peakCooling", "Cells cooling at the peak (cooldown running, at a chart point)", "count", null, (x) => x.peakCooling);
  if (s.some((x) => x.peakHeld > 0)) row("peakHeld", "Cells held by the cooling cap at the peak", "count", null, (x) => x.peakHeld);
  if (s.some((x) => x.suppressed > 0)) row("suppressed", "Cooldowns suppressed by the cooling cap", "count", null, (x) => x.suppressed);
  row("worstRecoverS", "Time to recover (worst incident)", "seconds", "lower", (x) => (x.incidents.length ? x.worstRecoverS : undefined));
  s[0].incidents.forEach((inc, i) => {
    row(`recoverS.${i}`, `Time to recover: ${inc.type} in ${inc.context} (${inc.startS}–${inc.endS} s)`, "seconds", "lower",
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
  for (const r of rows) r.verdict = runs.length === 2 ? verdict(r) : null;
  return rows;
}

/** B against A for one row. A time to recover of null (never recovered) is the worst. */
function verdict({ values: [a, b], better, format }) {
  if (JSON.stringify(a) === JSON.stringify(b)) return "same";
  if (better === null) return null;
  const worst = better === "lower" ? Infinity : -Infinity;
  const x = a ?? (format === "seconds" ? worst : null);
  const y = b ?? (format === "seconds" ? worst : null);
  if (x === null || y === null || x === y) return null;
  return (better === "higher" ? y > x : y < x) ? "better" : "worse";
}

/** The better of an A/B pair: "A" or "B" by success rate, then fewer rejections; "A" on a tie. */
export function winnerOf([a, b]) {
  const sa = a.summary.successRate ?? 0;
  const sb = b.summary.successRate ?? 0;
  if (sb !== sa) return sb > sa ? "B" : "A";
  return b.summary.rejected < a.summary.rejected ? "B" : "A";
}

/** A row's value as text: percent with one decimal, counts with separators, seconds or a word. */
export function formatValue(format, v) {
  if (v === undefined) return "—";
  if (v === null) return format === "seconds" ? "not recovered" : "—";
  if (format === "percent") return `${(v * 100).toFixed(1)} %`;
  if (format === "seconds") return `${v} s`;
  return v.toLocaleString("en-US");
}
