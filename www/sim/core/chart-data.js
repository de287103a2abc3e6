// What each chart of a run draws: its title, and its series as `[label, values per bucket]`
// over the run's bucket start times. Pure data, so Node tests check that every chart has
// something to draw; ui/charts.js draws it with uPlot. A chart with `applies(series)` is drawn
// only when it applies to one of the runs shown (groups in play; the cooling cap or pacing at
// work), so a run that uses neither shows the charts it always did. Each chart also says what
// its legend shows while no point is hovered (`summaryOf`: the whole run's rate, a total, the
// peak or the last value), and which x ticks read well (`TICKS_S`).
import { STATES, successRates } from "./metrics.js";

const anyAbove0 = (values) => (values ?? []).some((v) => v > 0);
const sum = (values) => values.reduce((a, v) => a + (v ?? 0), 0);
const total = { word: "total", of: (sr, values) => sum(values) };
const peak = { word: "peak", of: (sr, values) => Math.max(0, ...values.filter((v) => v !== null)) };

/** Time ticks (seconds) a reader counts in: 1, 5, 10, 30 s, 1, 5, 10, 15, 30 min, 1, 2, 6, 12 h, days. */
export const TICKS_S = [1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];

export const CHARTS = [
  {
    id: "success",
    title: "Success rate per context (%)",
    unit: "%",
    series: (sr) => sr.contexts.map((c) => [c.name, successRates(c).map((v) => (v === null ? null : v * 100))]),
    summary: { word: "whole run", of: (sr, values, i) => {
      const c = sr.contexts[i];
      const attempts = sum(c.attempts);
      return attempts > 0 ? (sum(c.successes) / attempts) * 100 : null;
    } },
  },
  { id: "rejected", title: "Acquisitions rejected", unit: "", summary: total, series: (sr) => sr.contexts.map((c) => [c.name, c.rejected]) },
  {
    id: "states",
    title: "Cells by state",
    unit: "",
    summary: { word: "at the end", of: (sr, values) => values.findLast((v) => v !== null) ?? null },
    series: (sr) => STATES.map((s) => [s, sr.states[s]]),
  },
  { id: "cooldowns", title: "Cooldowns started", unit: "", summary: total, series: (sr) => sr.contexts.map((c) => [c.name, c.cooldowns]) },
  { id: "traffic", title: "Traffic per resource set (leases)", unit: "", summary: total, series: (sr) => sr.sets.map((s) => [s.name, s.leases]) },
  {
    id: "groups",
    title: "Leases by group, per context (tiered escalation)",
    unit: "",
    summary: total,
    applies: (sr) => sr.grouped === true,
    series: (sr) => sr.contexts.flatMap((c) => Object.entries(c.byGroup ?? {}).map(([g, v]) => [`${c.name} · ${g}`, v])),
  },
  {
    id: "held",
    title: "Cells cooling (cooldown running) and held by the cooling cap; cells paced; cooldowns suppressed",
    unit: "",
    summary: peak,
    applies: (sr) => anyAbove0(sr.held) || anyAbove0(sr.paced) || sr.contexts.some((c) => anyAbove0(c.suppressed)),
    series: (sr) => [
      ["cooling cells", sr.cooling ?? sr.startS.map(() => 0)],
      ["held cells", sr.held ?? sr.startS.map(() => 0)],
      ["paced cells", sr.paced ?? sr.startS.map(() => 0)],
      ...sr.contexts.map((c) => [`${c.name} cooldowns suppressed`, c.suppressed ?? sr.startS.map(() => 0)]),
    ],
  },
];

/** The charts to draw for `runs` (each `{ series }`): those that apply to one of them. */
export function chartsFor(runs) {
  return CHARTS.filter((chart) => !chart.applies || runs.some((r) => chart.applies(r.series)));
}

/** What a series' legend shows while no point is hovered: `{ word, value }` (value may be null). */
export function summaryOf(chart, sr, index, values) {
  return { word: chart.summary.word, value: chart.summary.of(sr, values, index) };
}

/** The largest value any run draws on a chart (so A and B share a y scale). */
export function chartMax(chart, runs) {
  let max = 0;
  for (const r of runs) for (const [, values] of chart.series(r.series)) for (const v of values) if (v !== null && v > max) max = v;
  return max;
}
