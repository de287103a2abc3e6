// What each chart of a run draws: its title, and its series as `[label, values per bucket]`
// over the run's bucket start times. Pure data, so Node tests check that every chart has
// something to draw; ui/charts.js draws it with uPlot.
import { STATES, successRates } from "./metrics.js";

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
];

/** The largest value any run draws on a chart (so A and B share a y scale). */
export function chartMax(chart, runs) {
  let max = 0;
  for (const r of runs) for (const [, values] of chart.series(r.series)) for (const v of values) if (v !== null && v > max) max = v;
  return max;
}
