// Results as CSV (RFC 4180): the per-bucket series of one run or an A/B pair (with leases by
// group, suppressed cooldowns, held and paced cells), and the summary table. Text cells that a spreadsheet would take for a formula (=, +, -, @) are prefixed with
// an apostrophe; numbers are written as they are.
import { FAILURES } from "./scenario.js";
import { STATES, successRates } from "./metrics.js";
import { formatValue } from "./compare.js";

function cell(v) {
  if (v === null || v === undefined) return "";
  if (typeof v === "number") return String(v);
  let s = String(v);
  if (/^[=+\-@]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

const lines = (rows) => rows.map((r) => r.map(cell).join(",")).join("\r\n") + "\r\n";

/** Per-bucket series: one line per run (`labels[i]`) and bucket, a column per measure. */
export function seriesCsv(runs, labels) {
  const { series } = runs[0];
  // Per context, the groups any run leased from (a run without one of them has 0 there).
  const groups = series.contexts.map((c, ci) => [...new Set(runs.flatMap((r) => Object.keys(r.series.contexts[ci].byGroup ?? {})))]);
  const head = ["run", "bucket_start_s"];
  series.contexts.forEach((c, ci) => {
    head.push(`${c.name} acquires`, `${c.name} rejected`, `${c.name} successes`, `${c.name} success_rate`,
      ...FAILURES.map((f) => `${c.name} ${f}`), `${c.name} cooldowns_started`, `${c.name} cooldowns_suppressed`,
      ...groups[ci].map((g) => `${c.name} leases group ${g}`));
  });
  for (const s of series.sets) head.push(`${s.name} leases`);
  for (const st of STATES) head.push(`cells ${st}`);
  head.push("cells cooling (cooldown running)", "cells held", "cells paced");
  const rows = [head];
  runs.forEach(({ series: sr }, i) => {
    const rates = sr.contexts.map(successRates);
    sr.startS.forEach((start, b) => {
      const row = [labels[i], start];
      sr.contexts.forEach((c, ci) => {
        row.push(c.attempts[b], c.rejected[b], c.successes[b], rates[ci][b], ...FAILURES.map((f) => c.failures[f][b]), c.cooldowns[b],
          c.suppressed?.[b] ?? 0, ...groups[ci].map((g) => c.byGroup?.[g]?.[b] ?? 0));
      });
      for (const s of sr.sets) row.push(s.leases[b]);
      for (const st of STATES) row.push(sr.states[st][b]);
      row.push(sr.cooling?.[b] ?? 0, sr.held?.[b] ?? 0, sr.paced?.[b] ?? 0);
      rows.push(row);
    });
  });
  return lines(rows);
}

/** The summary table (rows of compare.js `summaryRows`): raw values and as shown. */
export function summaryCsv(rows, labels) {
  const head = ["measure", ...labels, ...labels.map((l) => `${l} (shown)`)];
  if (labels.length === 2) head.push("B against A");
  return lines([
    head,
    ...rows.map((r) => [
      r.label,
      ...r.values.map((v) => v ?? null),
      ...r.values.map((v) => formatValue(r.format, v)),
      ...(labels.length === 2 ? [r.verdict ?? ""] : []),
    ]),
  ]);
}
