// Replay in the console: load a recorded log (a file, or pulled from the live pool's audit log
// and outcome log), pick the candidate policy, replay it in the worker, and show the candidate's
// decisions beside what actually happened: the totals, the decisions that differ, and the first
// of them one by one. The log stays in memory only (it may be large); the workspace keeps none.
import { h, fill, field, select, fileText, clockText } from "./dom.js";
import { parseLog } from "../core/replay.js";
import { formatValue } from "../core/compare.js";

/**
 * `run(log, label)` replays in the worker and resolves to the result; `pull()` resolves to a
 * log from the live pool (`{ events, outcomes, complete }`).
 */
export function replayView({ run, pull }) {
  let log = null;
  const status = h("p", { class: "hint", "aria-live": "polite" }, "No log loaded.");
  const out = h("div", { class: "replay-result" });
  const upload = h("input", { type: "file", accept: ".json,.jsonl,application/json" });
  const candidate = select([["A", "Policy A"], ["B", "Policy B"]], "B");
  const button = h("button", { type: "button", disabled: true }, "Replay");
  const loaded = (l, from) => {
    log = l;
    status.textContent = `${l.events.length} events and ${l.outcomes.length} reported outcomes loaded from ${from}.`;
    button.disabled = false;
  };
  upload.addEventListener("change", async () => {
    try {
      const text = await fileText(upload);
      if (text !== null) loaded(parseLog(text), "the file");
    } catch (e) {
      status.textContent = `That log cannot be replayed: ${e.message}`;
    }
  });
  const pullButton = h("button", { type: "button", onclick: async () => {
    status.textContent = "Reading the live pool's audit log and outcomes…";
    try {
      const l = await pull();
      loaded(parseLog(JSON.stringify(l)), `the live pool${l.complete ? "" : " (the first 200,000 of each)"}`);
    } catch (e) {
      status.textContent = `The live pool's log could not be read: ${e.message}`;
    }
  } }, "Pull the log from the live pool");
  button.addEventListener("click", async () => {
    button.disabled = true;
    status.textContent = "Replaying…";
    try {
      const result = await run(log, candidate.value);
      status.textContent = `Replayed ${clockText((result.toAt - result.fromAt) / 1000)} of recorded traffic through policy ${candidate.value}.`;
      show(result, candidate.value);
    } catch (e) {
      status.textContent = `The replay failed: ${e.message}`;
    } finally {
      button.disabled = false;
    }
  });

  const element = h("section", { class: "panel", "aria-labelledby": "sim-replay-h" },
    h("h2", { id: "sim-replay-h" }, "Replay a recorded log"),
    h("p", { class: "hint" },
      "Feeds the live pool's recorded traffic (its audit log and the outcomes workers reported; the server records those with --record-outcomes) " +
      "through a candidate policy. Where the candidate picks the resource that was picked, it gets the outcome that was reported; " +
      "where it picks another, the outcome recorded for that resource in that context nearest in time (within 10 minutes) — an estimate — or none."),
    h("div", { class: "row" }, field("Recorded log (JSON or JSON lines)", { control: upload }).wrap, pullButton),
    h("div", { class: "row" }, field("Candidate policy", { control: candidate }).wrap, button),
    status, out);

  function show(r, label) {
    const rows = [
      ["Acquires", "count", (t) => t.acquires],
      ["Served", "count", (t) => t.served],
      ["Rejected", "count", (t) => t.rejected],
      ["Success rate (over known results)", "percent", (t) => t.successRate],
      ["Outcomes unknown", "count", (t) => t.unknown],
      ["Outcomes estimated", "count", (t) => t.estimated],
      ["Cooldowns started", "count", (t) => t.cooldowns],
    ];
    const d = r.decisions;
    fill(out,
      h("table", { class: "summary" }, h("caption", {}, `What happened, and what policy ${label} would have done`),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Measure"), h("th", { scope: "col" }, "Actual"), h("th", { scope: "col" }, `Policy ${label}`))),
        h("tbody", {}, rows.map(([name, format, get]) => h("tr", { class: get(r.actual) !== get(r.candidate) ? "differs" : null },
          h("th", { scope: "row" }, name), h("td", {}, formatValue(format, get(r.actual))), h("td", {}, formatValue(format, get(r.candidate))))))),
      h("table", { class: "summary" }, h("caption", {}, "Decisions"),
        h("tbody", {}, [
          ["Same resource", d.same], ["Another resource", d.different], [`Rejected by policy ${label} only`, d.candidateRejected],
          [`Served by policy ${label} only`, d.candidateServed], ["Rejected by both", d.bothRejected],
          ["Failures avoided (another resource, which succeeded around then)", r.failuresAvoided],
          ["Failures added (another resource, which failed around then)", r.failuresAdded],
          ["Outcomes that match no lease in the log", r.unmatchedOutcomes],
        ].map(([name, v]) => h("tr", {}, h("th", { scope: "row" }, name), h("td", {}, formatValue("count", v)))))),
      r.differences.length === 0 ? null : h("div", { class: "scroll", tabindex: 0, role: "region", "aria-label": "Decisions that differ" },
        h("table", { class: "summary differences" },
        h("caption", {}, `The first ${r.differences.length} of ${(d.different + d.candidateRejected + d.candidateServed).toLocaleString("en-US")} decisions that differ`),
        h("thead", {}, h("tr", {}, ["At", "Context", "Actual", `Policy ${label}`].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, r.differences.map((x) => h("tr", {},
          h("td", {}, clockText((x.at - r.fromAt) / 1000)), h("td", {}, x.context),
          h("td", {}, pickText(x.actual, false)), h("td", {}, pickText(x.candidate, x.candidate?.estimated))))))));
  }

  return { element };
}

function pickText(p, estimated) {
  if (!p) return "rejected";
  const o = p.outcome === null ? "outcome unknown" : p.outcome.ok ? "success" : p.outcome.failure;
  return `${p.resource}: ${o}${estimated ? " (estimated)" : ""}`;
}
