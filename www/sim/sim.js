// Simulation mode of the console: the engine in a Web Worker on a virtual clock. Wires the
// workspace (scenario, policies A and B, seed, snapshot, last run; kept in IndexedDB and in
// files) to the editors, runs Run / Compare / Stop through the worker, shows the results, and
// talks to the connected pool (pull a snapshot or a log, apply a policy). The logic it shows
// lives in core/ (no DOM), the widgets in ui/.
import { init, Pool } from "../vendor/repute/web.js";
import { h, fill, field, download, fileText, clockText } from "./ui/dom.js";
import { scenarioForm } from "./ui/scenario-form.js";
import { policyForm } from "./ui/policy-form.js";
import { resultsView } from "./ui/results.js";
import { replayView } from "./ui/replay-view.js";
import { applyDialog, pullSnapshot, pullLog } from "./ui/live-actions.js";
import { loadStored, saveStored } from "./ui/store.js";
import { checkScenario } from "./core/scenario.js";
import { maskSnapshot } from "./core/snapshot.js";
import { pairVerdict } from "./core/compare.js";
import { SEEDS } from "./core/verdict.js";
import { newWorkspace, readWorkspace, workspaceFile } from "./core/workspace.js";
import { POLICIES } from "./core/policies.js";

/** Adds a stylesheet of this mode to the page once (the CSP allows sheets from 'self' only). */
function stylesheet(href) {
  const url = new URL(href, import.meta.url).href;
  if (![...document.styleSheets].some((s) => s.href === url)) document.head.append(h("link", { rel: "stylesheet", href: url }));
}

export async function mount(element, { connection }) {
  stylesheet("../vendor/uplot/uPlot.min.css");
  stylesheet("./sim.css");
  fill(element, h("p", {}, "Loading the engine…"));
  await init();
  const probe = new Pool({ seed: 0 });
  const defaults = probe.config();
  probe.free();

  const saved = h("p", { class: "hint", "aria-live": "polite" });
  let ws;
  try {
    const stored = await loadStored();
    ws = stored ? readWorkspace(stored, defaults) : newWorkspace(defaults);
  } catch (e) {
    ws = newWorkspace(defaults);
    saved.textContent = `The stored workspace could not be read (${e.message}); starting a new one.`;
  }

  // --- persistence ---------------------------------------------------------------------------
  let timer = 0;
  const persist = () => {
    clearTimeout(timer);
    saved.textContent = "Saving the workspace in this browser…";
    timer = setTimeout(async () => {
      try {
        await saveStored(workspaceFile(ws));
        saved.textContent = `Workspace saved in this browser at ${new Date().toLocaleTimeString("en-GB")}.`;
      } catch (e) {
        saved.textContent = `The workspace could not be saved in this browser: ${e.message}`;
      }
    }, 250);
  };
  const changed = () => {
    scenario.showProblems(scenarioProblems());
    persist();
  };
  const scenarioProblems = () => {
    const problems = checkScenario(ws.scenario);
    if (!Number.isSafeInteger(ws.seed) || ws.seed < 0) problems.push({ path: "seed", message: "seed must be a non-negative integer" });
    return problems;
  };

  // --- editors -------------------------------------------------------------------------------
  const liveConfig = () => connection.request("GET", "/api/config");
  /** A ready-made scenario meant as an A/B pair sets both policies (ids of POLICIES). */
  const loadPolicies = (ids) => {
    for (const [i, key] of ["A", "B"].entries()) {
      ws.policies[key] = POLICIES[ids[key]].make(defaults);
      policies[i].render();
    }
  };
  const scenario = scenarioForm(ws, changed, { loadPolicies });
  const policies = ["A", "B"].map((key) => policyForm(ws, key, { Pool, defaults, changed, liveConfig }));
  const status = h("p", { class: "status", role: "status" });
  const alert = h("p", { class: "problem", role: "alert" });
  const report = (text, ok) => {
    status.textContent = ok ? text : "";
    alert.textContent = ok ? "" : text;
  };
  // Apply's outcome is told beside the Apply button (in the results), not beside Run.
  const results = resultsView({ apply: (label, config) => apply.ask(label, config) });
  const apply = applyDialog(connection, results.reportApply);

  // --- snapshot --------------------------------------------------------------------------------
  const snapStatus = h("p", { class: "hint", "aria-live": "polite" });
  const showSnapshot = () => {
    const s = ws.snapshot;
    snapStatus.textContent = s
      ? `Runs start from a snapshot of ${s.resources} resources and ${s.cells} cells, taken ${new Date(s.takenAt).toISOString()} ` +
        "(credentials masked). Its resources are split over the sets of their kind, in proportion to the sets' sizes."
      : "Runs start from fresh resources, as the scenario's sets describe them.";
  };
  const useSnapshot = (text) => {
    const { json, takenAt, resources, cells, contexts } = maskSnapshot(text, (kind, value) => Pool.maskValue(kind, value));
    ws.snapshot = { json, takenAt, resources, cells, contexts };
    showSnapshot();
    persist();
  };
  const snapFile = h("input", { type: "file", accept: ".json,application/json" });
  snapFile.addEventListener("change", async () => {
    try {
      const text = await fileText(snapFile);
      if (text !== null) useSnapshot(text);
    } catch (e) {
      snapStatus.textContent = `That snapshot cannot be used: ${e.message}`;
    }
  });
  const snapshotPanel = h("section", { class: "panel", "aria-labelledby": "sim-snapshot-h" },
    h("h2", { id: "sim-snapshot-h" }, "Start from a snapshot"),
    h("div", { class: "row" },
      field("Snapshot file (JSON)", { control: snapFile }).wrap,
      h("button", { type: "button", onclick: async () => {
        snapStatus.textContent = "Reading the live pool's snapshot…";
        try {
          useSnapshot(await pullSnapshot(connection));
        } catch (e) {
          snapStatus.textContent = `The live pool's snapshot could not be read: ${e.message}`;
        }
      } }, "Pull the snapshot from the live pool"),
      h("button", { type: "button", onclick: () => {
        ws.snapshot = null;
        showSnapshot();
        persist();
      } }, "Start from fresh resources")),
    snapStatus);
  showSnapshot();

  // --- runs ----------------------------------------------------------------------------------
  const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  const waiting = new Map(); // id → { resolve, reject, progress }
  let nextId = 1;
  worker.onmessage = ({ data }) => {
    const w = waiting.get(data.id);
    if (data.type === "error" && data.id === null) report(data.message, false);
    if (!w) return;
    if (data.type === "progress") w.progress?.(data.done, data.total);
    else {
      waiting.delete(data.id);
      if (data.type === "error") w.reject(Object.assign(new Error(data.message), { problems: data.problems }));
      else w.resolve(data);
    }
  };
  const ask = (message, progress) => {
    const id = nextId++;
    worker.postMessage({ ...message, id });
    return { id, done: new Promise((resolve, reject) => waiting.set(id, { resolve, reject, progress })) };
  };

  const progress = h("progress", { max: 1, value: 0, "aria-label": "Simulation progress" });
  const progressText = h("span", { class: "hint" });
  const runButton = h("button", { type: "button", class: "primary" }, "Run");
  const compareButton = h("button", { type: "button" }, "Compare");
  const stopButton = h("button", { type: "button", disabled: true }, "Stop");
  let current = null;

  async function start(labels) {
    const problems = scenarioProblems();
    const policyProblems = labels.map((l) => policies[l === "A" ? 0 : 1].validate()).filter(Boolean);
    if (problems.length > 0 || policyProblems.length > 0) {
      scenario.showProblems(problems);
      report(`Fix the marked problems first: ${[...problems, ...policyProblems].map((p) => p.message).join("; ")}`, false);
      return;
    }
    report("", true);
    const jobs = labels.map((l) => ({ scenario: ws.scenario, config: ws.policies[l], seed: ws.seed, snapshot: ws.snapshot?.json ?? null, seeds: SEEDS }));
    runButton.disabled = compareButton.disabled = true;
    stopButton.disabled = false;
    progress.value = 0;
    const started = performance.now();
    current = ask({ type: "run", jobs }, (done, total) => {
      progress.value = done / total;
      progressText.textContent = `${clockText(done / 1000)} of ${clockText(total / 1000)} simulated (${labels.length === 2 ? "A and B, " : ""}${SEEDS} seeds each)`;
    });
    try {
      const { runs, stopped } = await current.done;
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const verdict = labels.length === 2 && !stopped ? pairVerdict(runs) : null;
      ws.lastRun = { labels, runs, stopped, winner: verdict?.winner ?? null, verdict: verdict?.text ?? null, scenario: ws.scenario.name };
      results.show(ws.lastRun);
      persist();
      report(stopped ? "Stopped: the results cover what ran." : `Done in ${seconds} s.`, true);
    } catch (e) {
      report(`The run failed: ${e.message}`, false);
    } finally {
      current = null;
      runButton.disabled = compareButton.disabled = false;
      stopButton.disabled = true;
    }
  }
  runButton.addEventListener("click", () => start(["A"]));
  compareButton.addEventListener("click", () => start(["A", "B"]));
  stopButton.addEventListener("click", () => {
    if (!current) return;
    worker.postMessage({ type: "stop", id: current.id });
    stopButton.disabled = true;
    report("Stopping…", true);
  });
  const runPanel = h("section", { class: "panel", "aria-labelledby": "sim-run-h" },
    h("h2", { id: "sim-run-h" }, "Run"),
    h("p", { class: "hint" }, `Run simulates policy A; Compare simulates A and B on the same workload. Each runs on ${SEEDS} seeds (the seed given and the ${SEEDS - 1} after it), so a difference that holds on every seed can be told from luck; the charts show the first seed. The same seed gives the same results.`),
    h("div", { class: "row" }, runButton, compareButton, stopButton, progress, progressText), status, alert);

  // --- replay ----------------------------------------------------------------------------------
  const replay = replayView({
    run: async (log, label) => (await ask({ type: "replay", log, config: ws.policies[label], seed: ws.seed }).done).result,
    pull: () => pullLog(connection),
  });

  // --- workspace file --------------------------------------------------------------------------
  const wsFile = h("input", { type: "file", accept: ".json,application/json" });
  wsFile.addEventListener("change", async () => {
    try {
      const text = await fileText(wsFile);
      if (text === null) return;
      ws = readWorkspace(text, defaults);
      remount();
      persist();
      saved.textContent = "Workspace loaded from the file.";
    } catch (e) {
      saved.textContent = `That workspace cannot be loaded: ${e.message}`;
    }
  });
  const workspacePanel = h("section", { class: "panel workspace", "aria-labelledby": "sim-workspace-h" },
    h("h2", { id: "sim-workspace-h" }, "Workspace"),
    h("div", { class: "row" },
      h("button", { type: "button", onclick: () => download("repute-workspace.json", workspaceFile(ws)) }, "Save workspace to file"),
      field("Load workspace from file", { control: wsFile }).wrap),
    saved);

  /** Rebuilds the editors on a workspace loaded from a file. */
  function remount() {
    Object.assign(scenario, scenarioForm(ws, changed, { loadPolicies }));
    policies.forEach((p, i) => Object.assign(p, policyForm(ws, i === 0 ? "A" : "B", { Pool, defaults, changed, liveConfig })));
    draw();
  }

  function draw() {
    fill(element,
      h("div", { class: "sim" }, workspacePanel, scenario.element,
        h("section", { class: "panel", "aria-labelledby": "sim-policies-h" }, h("h2", { id: "sim-policies-h" }, "Policies"),
          h("p", { class: "hint" }, "Every field the engine reports, checked by the engine as you type."),
          h("div", { class: "policies" }, policies.map((p) => p.element))),
        snapshotPanel, runPanel, results.element, replay.element, apply.dialog));
    showSnapshot();
    scenario.showProblems(scenarioProblems());
    if (ws.lastRun) results.show(ws.lastRun);
  }
  draw();
}
