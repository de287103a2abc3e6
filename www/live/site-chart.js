// The live chart of the per-site strip: success rate and rejected acquires per context over the
// server's window (`GET /api/contexts`'s 10 s buckets), drawn with uPlot (vendored, as the
// simulation's charts). The worst MAX_SERIES contexts (the strip's order) are drawn; a bucket
// with no report has no success rate (a gap, not a zero). Each chart is a figure with a caption,
// and its data is on the element (`.plot`) for tests.

import uPlot from "../vendor/uplot/uPlot.esm.js";
import { h } from "./dom.js";

const MAX_SERIES = 8;
const PALETTE = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#4e342e", "#ad1457"];
const HEIGHT = 160;
const clock = (s) => new Date(s * 1000).toLocaleTimeString("en-GB", { hour12: false });

/** The two charts' data for `contexts` (already in the order to draw): x in seconds. */
export function chartData(contexts) {
  const x = (contexts[0]?.series ?? []).map((b) => b.at / 1000);
  const rate = contexts.map((c) => c.series.map((b) => (b.succeeded + b.failed === 0 ? null : (100 * b.succeeded) / (b.succeeded + b.failed))));
  const rejected = contexts.map((c) => c.series.map((b) => b.rejected));
  return { x, rate, rejected };
}

export class SiteChart {
  #plots = [];
  #names = "";
  #box = h("div", { class: "site-charts" });
  element;

  constructor() {
    this.element = this.#box;
    new ResizeObserver(() => requestAnimationFrame(() => this.#resize())).observe(this.#box);
  }

  /** Draws `contexts` (the strip's order, worst first). */
  show(contexts) {
    const drawn = contexts.slice(0, MAX_SERIES);
    const { x, rate, rejected } = chartData(drawn);
    const names = drawn.map((c) => c.context).join("\n");
    if (names !== this.#names || this.#plots.length === 0) {
      this.#names = names;
      this.#build(drawn.map((c) => c.context), x, rate, rejected);
      return;
    }
    this.#plots[0].setData([x, ...rate]);
    this.#plots[1].setData([x, ...rejected]);
  }

  #build(names, x, rate, rejected) {
    for (const p of this.#plots) p.destroy();
    this.#plots = [];
    const figure = (id, title, yLabel, data, range) => {
      const el = h("div", { class: "chart", role: "img", "aria-label": `${title}, per site: ${names.join(", ")}` });
      const plot = new uPlot({
        width: this.#width(),
        height: HEIGHT,
        scales: { x: { time: false }, y: range ? { range } : { range: (u, min, max) => [0, Math.max(1, max)] } },
        axes: [{ values: (u, ticks) => ticks.map(clock) }, { size: 44, label: yLabel }],
        series: [{ label: "time", value: (u, v) => (v === null ? "—" : clock(v)) },
          ...names.map((name, i) => ({ label: name, stroke: PALETTE[i % PALETTE.length], width: 1.5, spanGaps: false }))],
      }, [x, ...data], el);
      el.plot = plot;
      el.dataset.chart = id;
      this.#plots.push(plot);
      return h("figure", { class: "site-chart" }, h("figcaption", {}, title), el);
    };
    this.#box.replaceChildren(
      figure("success", "Success rate (%) per 10 s", "%", rate, [0, 100]),
      figure("rejected", "Rejected acquires per 10 s", "rejected", rejected),
    );
  }

  #width() {
    const w = this.#box.clientWidth || 600;
    return Math.max(260, w >= 900 ? Math.floor(w / 2) - 16 : w - 8);
  }

  #resize() {
    for (const p of this.#plots) p.setSize({ width: this.#width(), height: HEIGHT });
  }
}
