// The charts of a run (or of an A/B pair, side by side on shared y scales, cursors in sync),
// drawn with uPlot (~50 KB, canvas: hundreds of thousands of points stay fluid). Each chart is a
// figure with a caption; the summary table carries the same findings as text.
import uPlot from "../../vendor/uplot/uPlot.esm.js";
import { h, fill, clockText } from "./dom.js";
import { chartsFor, chartMax } from "../core/chart-data.js";

const PALETTE = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#4e342e", "#ad1457"];
const STATE_VARS = { HEALTHY: "--healthy", RECOVERING: "--recovering", COOLING: "--cooling", BLOCKLISTED: "--blocked" };

let plots = [];
let observer = null;

/** Draws every chart of `runs` (labelled `labels`) into `container`, replacing what was there. */
export function drawCharts(container, runs, labels) {
  for (const p of plots) p.destroy();
  plots = [];
  observer?.disconnect();
  const css = getComputedStyle(document.documentElement);
  const colour = (chart, label, i) => (chart.id === "states" ? css.getPropertyValue(STATE_VARS[label]).trim() : PALETTE[i % PALETTE.length]);
  const figures = chartsFor(runs).map((chart) => {
    const max = chartMax(chart, runs);
    const cells = runs.map((r, ri) => {
      const el = h("div", { class: "chart", role: "img", "aria-label": `${chart.title}, ${labels[ri]}` });
      const series = chart.series(r.series);
      const opts = {
        width: 400,
        height: 220,
        cursor: { sync: { key: "sim" } },
        scales: { x: { time: false }, y: { range: [0, max > 0 ? max * 1.05 : 1] } },
        axes: [{ values: (u, ticks) => ticks.map((t) => clockText(t)) }, { size: 50 }],
        series: [{ label: "time", value: (u, v) => (v === null ? "—" : clockText(v)) },
          ...series.map(([label], i) => ({ label, stroke: colour(chart, label, i), width: 1.5, spanGaps: false }))],
      };
      const plot = new uPlot(opts, [r.series.startS, ...series.map(([, v]) => v)], el);
      plot.root.dataset.chart = chart.id;
      plots.push(plot);
      return h("div", { class: "chart-cell" }, h("h4", {}, labels[ri]), el);
    });
    return h("figure", { class: "chart-row", "data-chart": chart.id }, h("figcaption", {}, chart.title),
      h("div", { class: `chart-grid cols-${runs.length}` }, cells));
  });
  fill(container, figures);
  const resize = () => {
    const width = Math.max(280, Math.floor((container.clientWidth || 800) / runs.length) - 24);
    for (const p of plots) p.setSize({ width, height: 220 });
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
