// The per-site health strip above the grid (`GET /api/contexts`): one tile per context, worst
// first — its success rate over the server's window with a sparkline of it, failing cells (a
// failed last outcome or a score below zero, whatever the state) with the dominant cause,
// cooling and held cells, p95 latency and rejected acquires. A tile is a toggle button: pressed,
// it filters the grid to its context (`onPick(context)`; "" clears). Every number is in an
// element of its own with a `data-field` naming the API field it shows. Below, a live chart of
// success rate and rejected acquires per site over the window (site-chart.js).

import { h } from "./dom.js";
import { SiteChart } from "./site-chart.js";

const SVG = "http://www.w3.org/2000/svg";
const SPARK = { width: 120, height: 24 };

/** Worst first: more failing cells, then more rejected acquires, then more cooling, then by name. */
export function bySeverity(a, b) {
  return b.failing - a.failing || b.rejected - a.rejected || b.states.COOLING - a.states.COOLING || (a.context < b.context ? -1 : a.context > b.context ? 1 : 0);
}

const percent = (rate) => (rate === null ? "–" : `${(rate * 100).toFixed(rate === 1 ? 0 : 1)} %`);

/** An SVG polyline of the success rate per bucket (buckets with no report are left out). */
function sparkline(series) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${SPARK.width} ${SPARK.height}`);
  svg.setAttribute("class", "spark");
  svg.setAttribute("aria-hidden", "true");
  const step = series.length > 1 ? SPARK.width / (series.length - 1) : 0;
  const points = [];
  series.forEach((b, i) => {
    const n = b.succeeded + b.failed;
    if (n > 0) points.push(`${(i * step).toFixed(1)},${(1 + (1 - b.succeeded / n) * (SPARK.height - 2)).toFixed(1)}`);
  });
  const line = document.createElementNS(SVG, "polyline");
  line.setAttribute("points", points.join(" "));
  const rejected = series.map((b, i) => (b.rejected > 0 ? i : -1)).filter((i) => i >= 0);
  for (const i of rejected) {
    const tick = document.createElementNS(SVG, "rect");
    tick.setAttribute("x", (i * step - 1).toFixed(1));
    tick.setAttribute("y", String(SPARK.height - 4));
    tick.setAttribute("width", "2");
    tick.setAttribute("height", "4");
    tick.setAttribute("class", "rejected");
    svg.append(tick);
  }
  svg.append(line);
  // The newest point as a dot: a lone bucket draws no line.
  const last = points.at(-1);
  if (last) {
    const [cx, cy] = last.split(",");
    const dot = document.createElementNS(SVG, "circle");
    dot.setAttribute("cx", cx);
    dot.setAttribute("cy", cy);
    dot.setAttribute("r", "2");
    svg.append(dot);
  }
  return svg;
}

export class SiteStrip {
  #list = h("ul", { class: "site-list" });
  #note = h("p", { class: "muted" });
  #onPick;
  #chart = new SiteChart();
  #chosen = "";
  element;

  /** `onPick(context)`: filter the grid to `context` ("" for all). */
  constructor({ onPick }) {
    this.#onPick = onPick;
    this.element = h(
      "section",
      { class: "panel sites", "aria-labelledby": "sites-title" },
      h("h2", { id: "sites-title" }, "Sites"),
      this.#note,
      this.#list,
      this.#chart.element,
    );
  }

  /** The context the grid is filtered to ("" for none), as the filter bar says it. */
  choose(context) {
    this.#chosen = context;
    for (const b of this.#list.querySelectorAll("button.site")) b.setAttribute("aria-pressed", String(b.dataset.context === context));
  }

  /** Shows `GET /api/contexts`'s answer. */
  show(answer) {
    const minutes = Math.round(answer.windowMs / 60000);
    this.#note.textContent = answer.contexts.length === 0
      ? "No site yet: contexts appear once workers acquire or report in them."
      : `Last ${minutes} min, worst first. Failing: the last outcome failed or the score is below zero. Select a site to filter the grid.`;
    const sorted = [...answer.contexts].sort(bySeverity);
    this.#list.replaceChildren(...sorted.map((c) => h("li", {}, this.#tile(c))));
    this.#chart.show(sorted);
  }

  #tile(c) {
    const field = (name, text, cls = "") => h("span", { "data-field": name, class: cls }, text);
    const pressed = c.context === this.#chosen;
    const button = h(
      "button",
      {
        type: "button",
        class: `site${c.failing > 0 ? " has-failing" : ""}`,
        "aria-pressed": String(pressed),
        "data-context": c.context,
        title: c.context,
        onclick: () => {
          this.choose(this.#chosen === c.context ? "" : c.context);
          this.#onPick(this.#chosen);
        },
      },
      h("span", { class: "site-name" }, c.context),
      h("span", { class: "site-rate" }, field("successRate", percent(c.successRate)), " ok"),
      sparkline(c.series),
      h("span", { class: "site-line" },
        field("failing", String(c.failing), c.failing > 0 ? "bad" : ""), " failing",
        c.cause ? h("span", {}, " · ", field("cause", c.cause)) : null),
      h("span", { class: "site-line" },
        field("cooling", String(c.states.COOLING)), " cooling · ", field("held", String(c.held)), " held"),
      h("span", { class: "site-line" },
        "p95 ", field("p95LatencyMs", c.p95LatencyMs === null ? "–" : `${Math.round(c.p95LatencyMs)} ms`),
        " · ", field("rejected", String(c.rejected), c.rejected > 0 ? "bad" : ""), " rejected"),
    );
    return button;
  }
}
