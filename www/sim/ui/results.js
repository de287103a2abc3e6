// The results of the last run or A/B comparison: what ran, the summary table (with B's
// differences from A marked in words and colour), the charts, and the exports — the results
// as JSON and CSV, and the policy of either run (by default the winner's) as the config file
// `repute serve --config` reads — and Apply, which offers that policy to the live pool and tells
// its outcome beside its button.
import { h, fill, field, select, download, clockText } from "./dom.js";
import { drawCharts } from "./charts.js";
import { summaryRows, formatValue, spreadText, pairVerdict } from "../core/compare.js";
import { seriesCsv, summaryCsv } from "../core/csv.js";
import { policyFile } from "../core/policies.js";

/** `apply(label, config)` opens the Apply dialog; its outcome goes to `reportApply(text, ok)`. */
export function resultsView({ apply }) {
  const body = h("div");
  const applied = h("p", { class: "status", role: "status" });
  const reportApply = (text, ok) => {
    applied.textContent = text;
    applied.className = ok ? "status" : "problem";
  };
  const element = h("section", { class: "panel", "aria-labelledby": "sim-results-h" }, h("h2", { id: "sim-results-h" }, "Results"), body);
  fill(body, h("p", {}, "No run yet: choose a scenario and policies, then Run (policy A) or Compare (A and B)."));

  /** Shows `last` (the workspace's lastRun: `{ labels, runs, stopped, winner }`). */
  function show(last) {
    const { labels, runs } = last;
    const rows = summaryRows(runs);
    const charts = h("div", { class: "charts" });
    const which = select(labels.map((l) => [l, `Policy ${l}`]), last.winner ?? labels[0]);
    // A run stored before verdicts over seeds has no text: work it out again.
    const verdict = labels.length === 2 && !last.stopped ? (last.verdict ?? pairVerdict(runs).text) : null;
    reportApply("", true);
    fill(body,
      h("p", { class: "run-facts" }, runs.map((r, i) => h("span", {}, `Policy ${labels[i]}: ${facts(r)}. `))),
      verdict ? h("p", { class: last.winner ? "winner" : "winner none" }, verdict) : null,
      h("div", { class: "table-scroll" }, summaryTable(rows, labels)),
      h("div", { class: "row exports" },
        h("button", { type: "button", onclick: () => download("repute-simulation.json", `${JSON.stringify(last, null, 2)}\n`) }, "Export results (JSON)"),
        h("button", { type: "button", onclick: () => download("repute-simulation-series.csv", seriesCsv(runs, labels), "text/csv") }, "Export series (CSV)"),
        h("button", { type: "button", onclick: () => download("repute-simulation-summary.csv", summaryCsv(rows, labels), "text/csv") }, "Export summary (CSV)")),
      h("div", { class: "row exports" },
        field("Policy to export or apply", { control: which }).wrap,
        h("button", { type: "button", onclick: () => download(`repute-policy-${which.value}.json`, policyFile(configOf(which.value))) }, "Export policy as config"),
        h("button", { type: "button", onclick: () => apply(which.value, configOf(which.value)) }, "Apply to live pool…")),
      applied,
      charts);
    const configOf = (label) => runs[labels.indexOf(label)].config;
    drawCharts(charts, runs, labels.map((l) => `Policy ${l}`));
  }

  return { element, show, reportApply };
}

function facts(r) {
  const m = r.meta;
  const ran = m.stoppedAtS === null ? `${clockText(m.durationS)} simulated` : `stopped at ${clockText(m.stoppedAtS)} of ${clockText(m.durationS)}`;
  const dropped = m.eventsDropped > 0 ? `, ${m.eventsDropped} engine events dropped (eventBufferSize)` : "";
  const seeds = r.seeds ? `, seeds ${r.seeds[0].seed}–${r.seeds[r.seeds.length - 1].seed} (charts: seed ${m.seed})` : `, seed ${m.seed}`;
  return `${ran}, ${m.requests.toLocaleString("en-US")} acquires over ${m.resources} resources${seeds}${dropped}`;
}

const VERDICT_WORDS = { better: "better", worse: "worse", same: "same", unclear: "no clear difference", differs: "differs" };

function summaryTable(rows, labels) {
  const pair = labels.length === 2;
  return h("table", { class: "summary" },
    h("caption", {}, pair ? "Summary: B against A (differences marked; better or worse only when it holds on every seed)" : "Summary"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Measure"), labels.map((l) => h("th", { scope: "col" }, `Policy ${l}`)),
      pair ? h("th", { scope: "col" }, "B against A") : null)),
    h("tbody", {}, rows.map((r) => h("tr", { class: pair && r.verdict !== "same" ? `differs ${r.verdict ?? ""}`.trim() : null, "data-key": r.key },
      h("th", { scope: "row" }, r.label),
      r.values.map((v, i) => h("td", {}, formatValue(r.format, v),
        r.spreads[i] ? h("span", { class: "spread" }, spreadText(r.format, r.spreads[i])) : null)),
      pair ? h("td", { class: "verdict" }, VERDICT_WORDS[r.verdict ?? "differs"]) : null))));
}
