// What each chart of a run draws: its title, and its series as `[label, values per bucket]`
// over the run's bucket start times. Pure data, so Node tests check that every chart has
// something to draw; ui/charts.js draws it with uPlot. A chart with `applies(series)` is drawn
// only when it applies to one of the runs shown (groups in play; the cooling cap or pacing at
// work), so a run that uses neither shows the charts it always did.
import { STATES, successRates } from "./metrics.js";

const anyAbove0 = (values) => (values ?? []).some((v) => v > 0);

export const CHARTS = [
  {
    id: "success",
    title: "Success rate per context (%)",
    unit: "%",
    series: (sr) => sr.contexts.map((c) => [c.name, successRates(c).map((v) => (v === null ? null : v * 100))]),
  },
  { id: "rejected", title: "Acquisitions rejected", unit: "", series: (sr) => sr.contexts.map((c) => [c.name, c.rejected]) },
  { id: "states", title: "Cells by state", unit: "", series: (sr) => STATES.map((s) => [s, sr.states[s]]) },
  { id: "cooldowns", title: "Cooldowns started", unit: "", series: (sr) => sr.contexts.map((c) => [c.name, c.cooldowns]) },
  { id: "traffic", title: "Traffic per resource set (leases)", unit: "", series: (sr) => sr.sets.map((s) => [s.name, s.leases]) },
  {
    id: "groups",
    title: "Leases by group, per context (tiered escalation)",
    unit: "",
    applies: (sr) => sr.grouped === true,
    series: (sr) => sr.contexts.flatMap((c) => Object.entries(c.byGroup ?? {}).map(([g, v]) => [`${c.name} · ${g}`, v])),
  },
  {
    id: "held",
    title: "Cells cooling (cooldown running) and held by the cooling cap; cells paced; cooldowns suppressed",
    unit: "",
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

/** The largest value any run draws on a chart (so A and B share a y scale). */
export function chartMax(chart, runs) {
  let max = 0;
  for (const r of runs) for (const [, values] of chart.series(r.series)) for (const v of values) if (v !== null && v > max) max = v;
  return max;
}
