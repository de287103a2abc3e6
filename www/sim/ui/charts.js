// The charts of a run or of an A/B pair, drawn with uPlot (~50 KB, canvas: hundreds of
// thousands of points stay fluid). One figure per chart; in a comparison A and B share the
// plot, and a colour means a policy in every chart (A blue, B orange) while the line's dash
// tells the series apart; a single run gives each series its own colour, the same series the
// same colour in every chart. Incidents are shaded (a uPlot draw hook), legends show the whole
// run's figure until a point is hovered (the series' `value` for no point), and time ticks fall
// on round units (axis `incrs`). The summary table carries the same findings as text.
import uPlot from "../../vendor/uplot/uPlot.esm.js";
import { h, fill } from "./dom.js";
import { chartsFor, chartMax, summaryOf, TICKS_S } from "../core/chart-data.js";
import { durationText } from "../core/compare.js";

/** Policy A's and B's colour in every chart of a comparison. */
export const POLICY_COLOURS = ["#1565c0", "#e65100"];
const PALETTE = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#4e342e", "#ad1457"];
const DASHES = [[], [7, 4], [2, 3], [10, 3, 2, 3], [14, 5], [4, 2, 4, 6]];
const STATE_VARS = { HEALTHY: "--healthy", RECOVERING: "--recovering", COOLING: "--cooling", BLOCKLISTED: "--blocked" };
const SHADE = "rgba(198, 40, 40, 0.12)";

let plots = [];
let observer = null;

/** A tick or a legend time: "0", "45 s", "5 min", "1 h 30 min". */
const tickText = (s) => (s === 0 ? "0" : durationText(s));

/** A value as the legend shows it. */
const valueText = (v, unit) => (v === null || v === undefined ? "—" : unit === "%" ? `${v.toFixed(1)} %` : Math.round(v).toLocaleString("en-US"));

/** Shades each incident's window on the plot area, under the lines (hook `drawClear`). */
function shadeIncidents(incidents) {
  return (u) => {
    const { ctx } = u;
    const { top, height } = u.bbox;
    ctx.save();
    ctx.fillStyle = SHADE;
    for (const inc of incidents) {
      const x0 = u.valToPos(inc.startS, "x", true);
      const x1 = u.valToPos(inc.endS, "x", true);
      ctx.fillRect(x0, top, Math.max(1, x1 - x0), height);
    }
    ctx.restore();
  };
}

/** The incidents of the runs shown, once each. */
function incidentsOf(runs) {
  const seen = new Map();
  for (const r of runs) for (const inc of r.summary?.incidents ?? []) seen.set(`${inc.startS}/${inc.endS}/${inc.context}/${inc.type}`, inc);
  return [...seen.values()];
}

/** Draws every chart of `runs` (labelled `labels`) into `container`, replacing what was there. */
export function drawCharts(container, runs, labels) {
  for (const p of plots) p.destroy();
  plots = [];
  observer?.disconnect();
  const css = getComputedStyle(document.documentElement);
  const pair = runs.length > 1;
  const incidents = incidentsOf(runs);
  const xs = runs.reduce((a, r) => (r.series.startS.length > a.length ? r.series.startS : a), []);
  const pad = (values) => xs.map((_, i) => values[i] ?? null);
  const shaded = incidents.length
    ? h("p", { class: "hint" }, `Shaded: ${incidents.map((i) => `${i.type} in ${i.context}, ${tickText(i.startS)} to ${tickText(i.endS)}`).join("; ")}.`)
    : null;
  const figures = chartsFor(runs).map((chart) => {
    const max = chartMax(chart, runs);
    const series = [];
    const data = [xs];
    runs.forEach((r, ri) => chart.series(r.series).forEach(([label, values], i) => {
      const { word, value } = summaryOf(chart, r.series, i, values);
      const stroke = pair ? POLICY_COLOURS[ri] : chart.id === "states" ? css.getPropertyValue(STATE_VARS[label]).trim() : PALETTE[i % PALETTE.length];
      series.push({
        label: pair ? `${label} · ${labels[ri]}` : label,
        stroke,
        dash: pair ? DASHES[i % DASHES.length] : [],
        width: pair ? 1.75 : 1.5,
        spanGaps: false,
        value: (u, v, si, idx) => (idx === null || idx === undefined ? `${word} ${valueText(value, chart.unit)}` : valueText(v, chart.unit)),
      });
      data.push(pad(values));
    }));
    const el = h("div", { class: "chart", role: "img", "aria-label": `${chart.title}${pair ? `, ${labels.join(" and ")}` : ""}` });
    const plot = new uPlot({
      width: 400,
      height: 240,
      cursor: { sync: { key: "sim" } },
      legend: { live: true },
      scales: { x: { time: false }, y: { range: [0, max > 0 ? max * 1.05 : 1] } },
      axes: [
        // The ticks drawn are kept on the chart's element too (data-x-ticks), for a reader of the DOM.
        { incrs: TICKS_S, space: 70, values: (u, ticks) => { el.dataset.xTicks = ticks.join(" "); return ticks.map(tickText); } },
        { size: 56, values: (u, ticks) => ticks.map((t) => (chart.unit === "%" ? `${t} %` : t.toLocaleString("en-US"))) },
      ],
      hooks: incidents.length ? { drawClear: [shadeIncidents(incidents)] } : {},
      series: [{ label: "time", value: (u, v, si, idx) => (idx === null || idx === undefined ? "whole run" : tickText(v)) }, ...series],
    }, data, el);
    plot.root.dataset.chart = chart.id;
    plots.push(plot);
    return h("figure", { class: "chart-row", "data-chart": chart.id }, h("figcaption", {}, chart.title), el);
  });
  const key = pair ? h("p", { class: "chart-key" }, labels.map((l, i) => h("span", { class: `policy-key policy-${i}` }, l)),
    " — the colour is the policy in every chart; the dash tells the series apart.") : null;
  fill(container, key, shaded, h("div", { class: "chart-grid" }, figures));
  const resize = () => {
    for (const p of plots) {
      const width = Math.max(200, Math.floor(p.root.closest("figure")?.clientWidth || 400));
      if (width !== p.width) p.setSize({ width, height: 240 });
    }
  };
  resize();
  // On the next frame, not inside the observer's callback (no "ResizeObserver loop" error).
  let frame = 0;
  observer = new ResizeObserver(() => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(resize);
  });
  observer.observe(container);
}
