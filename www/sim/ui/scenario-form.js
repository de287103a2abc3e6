// The scenario editor of simulation mode: the ready-made scenarios (one that is meant as an A/B
// pair loads its two policies too, through `loadPolicies`), the run's length, chart resolution
// and seed, the resource sets with their group, the contexts with their workload and group
// preference, and the failure profile of one set × context at a time (probabilities, latency,
// incidents). Edits change the workspace's scenario in place and call `changed()`;
// `showProblems` puts each problem of `checkScenario` beside the field it names (the rest in a
// list at the top).
import { h, fill, field, select, showProblem } from "./dom.js";
import { SCENARIOS, KINDS, FAILURES, INCIDENTS, NO_GROUP_TOKEN, defaultProfile, clone, groupsText, parseGroupsText } from "../core/scenario.js";

const num = (input) => (input.value.trim() === "" ? NaN : Number(input.value));

/** `loadPolicies({ A, B })` (ids of ready-made policies) for a scenario meant as an A/B pair. */
export function scenarioForm(ws, changed, { loadPolicies = () => {} } = {}) {
  const fields = new Map(); // path → field
  const general = h("ul", { class: "problems", "aria-live": "polite" });
  const body = h("div");
  const element = h("section", { class: "panel", "aria-labelledby": "sim-scenario-h" },
    h("h2", { id: "sim-scenario-h" }, "Scenario"), general, body);
  let chosen = { set: null, context: null };

  /** A field bound to a path of the scenario (`get`/`set` read and write its value). */
  const bound = (path, label, { type = "number", get, set, attrs = {}, event } = {}) => {
    const f = field(label, { type, value: get(), attrs: { step: "any", ...attrs } });
    f.input.addEventListener(event ?? (type === "text" ? "change" : "input"), () => {
      set(type === "number" ? num(f.input) : f.input.value);
      changed();
    });
    fields.set(path, f);
    return f.wrap;
  };

  function render() {
    fields.clear();
    const s = ws.scenario;
    const presets = select(Object.entries(SCENARIOS).map(([id, p]) => [id, p.title]), null);
    const note = h("p", { class: "hint", "aria-live": "polite" });
    const describe = () => {
      const p = SCENARIOS[presets.value];
      note.textContent = p.policies ? `${p.description} (Loading it sets policies A and B.)` : p.description;
    };
    const presetField = field("Ready-made scenario", { control: presets, onchange: describe });
    describe();
    fill(body,
      h("div", { class: "row" }, presetField.wrap,
        h("button", { type: "button", onclick: () => {
          const p = SCENARIOS[presets.value];
          ws.scenario = p.make();
          chosen = { set: null, context: null };
          render();
          if (p.policies) loadPolicies(p.policies);
          changed();
        } }, "Load scenario")),
      note,
      h("div", { class: "row" },
        bound("durationS", "Simulated duration (s)", { get: () => s.durationS, set: (v) => (s.durationS = v), attrs: { min: 1, step: 1 } }),
        bound("bucketS", "Chart resolution (s per point)", { get: () => s.bucketS, set: (v) => (s.bucketS = v), attrs: { min: 1, step: 1 } }),
        bound("seed", "Seed", { get: () => ws.seed, set: (v) => (ws.seed = v), attrs: { min: 0, step: 1 } })),
      setsTable(s), contextsTable(s), profileEditor(s));
  }

  function setsTable(s) {
    return h("fieldset", {}, h("legend", {}, "Resource sets"),
      s.sets.map((set, i) => h("div", { class: "row" },
        bound(`sets[${i}].name`, `Set ${i + 1} name`, { type: "text", get: () => set.name, set: (v) => rename(s.profiles, set.name, v, () => (set.name = v)) }),
        kindField(set, i),
        bound(`sets[${i}].count`, `Set ${i + 1} resources`, { get: () => set.count, set: (v) => (set.count = v), attrs: { min: 1, step: 1 } }),
        bound(`sets[${i}].group`, `Set ${i + 1} group`, { type: "text", get: () => set.group ?? "", attrs: { placeholder: "no group" }, set: (v) => {
          if (v === "") delete set.group;
          else set.group = v;
        } }),
        h("button", { type: "button", "aria-label": `Remove set ${set.name}`, onclick: () => {
          s.sets.splice(i, 1);
          delete s.profiles[set.name];
          render();
          changed();
        } }, "Remove"))),
      h("button", { type: "button", onclick: () => {
        s.sets.push({ name: freeName(s.sets, "set"), kind: "PROXY", count: 10 });
        render();
        changed();
      } }, "Add set"));
  }

  function kindField(set, i) {
    const f = field(`Set ${i + 1} kind`, { control: select(KINDS.map((k) => [k, k]), set.kind), onchange: (el) => {
      set.kind = el.value;
      changed();
    } });
    fields.set(`sets[${i}].kind`, f);
    return f.wrap;
  }

  function contextsTable(s) {
    return h("fieldset", {}, h("legend", {}, "Contexts and workload"),
      h("p", { class: "hint" }, `Groups preferred: tried in order by each acquire (e.g. "datacenter, residential"; ${NO_GROUP_TOKEN} for the resources without a group); empty: the whole pool.`),
      s.contexts.map((c, i) => h("div", { class: "row" },
        bound(`contexts[${i}].name`, `Context ${i + 1}`, { type: "text", get: () => c.name, set: (v) => {
          for (const byContext of Object.values(s.profiles)) rename(byContext, c.name, v, () => {});
          c.name = v;
        } }),
        bound(`contexts[${i}].rate`, `Acquires per second in context ${i + 1}`, { get: () => c.rate, set: (v) => (c.rate = v), attrs: { min: 0 } }),
        bound(`contexts[${i}].groups`, `Groups preferred in context ${i + 1}`, { type: "text", get: () => groupsText(c.groups), attrs: { placeholder: "any (whole pool)" }, set: (v) => {
          const groups = parseGroupsText(v);
          if (groups === undefined) delete c.groups;
          else c.groups = groups;
        } }),
        h("button", { type: "button", "aria-label": `Remove context ${c.name}`, onclick: () => {
          s.contexts.splice(i, 1);
          for (const byContext of Object.values(s.profiles)) delete byContext[c.name];
          render();
          changed();
        } }, "Remove"))),
      h("button", { type: "button", onclick: () => {
        s.contexts.push({ name: freeName(s.contexts, "context"), rate: 1 });
        render();
        changed();
      } }, "Add context"));
  }

  function profileEditor(s) {
    if (s.sets.length === 0 || s.contexts.length === 0) return h("p", {}, "Add a set and a context to edit failure profiles.");
    if (!s.sets.some((x) => x.name === chosen.set)) chosen.set = s.sets[0].name;
    if (!s.contexts.some((x) => x.name === chosen.context)) chosen.context = s.contexts[0].name;
    const { set, context } = chosen;
    s.profiles[set] ??= {};
    const p = (s.profiles[set][context] ??= defaultProfile());
    const at = `profiles.${set}.${context}`;
    const pick = (label, options, value, key) => field(label, { control: select(options.map((o) => [o.name, o.name]), value), onchange: (el) => {
      chosen[key] = el.value;
      render();
    } }).wrap;
    return h("fieldset", {}, h("legend", {}, "Failure profile of a set in a context"),
      h("div", { class: "row" }, pick("Profile of set", s.sets, set, "set"), pick("in context", s.contexts, context, "context")),
      h("div", { class: "row" }, FAILURES.map((f) =>
        bound(`${at}.failures.${f}`, `P(${f})`, { get: () => p.failures[f], set: (v) => (p.failures[f] = v), attrs: { min: 0, max: 1, step: 0.01 } }))),
      fieldsProblem(`${at}.failures`),
      h("div", { class: "row" },
        bound(`${at}.latency.medianMs`, "Median latency (ms)", { get: () => p.latency.medianMs, set: (v) => (p.latency.medianMs = v), attrs: { min: 1 } }),
        bound(`${at}.latency.p95Ms`, "95th percentile latency (ms)", { get: () => p.latency.p95Ms, set: (v) => (p.latency.p95Ms = v), attrs: { min: 1 } })),
      h("p", { class: "hint" }, "Incidents fail every request of this set in this context while they last: an outage with TIMEOUT (the worker waits 10 s), a ban with BLOCKED."),
      p.incidents.map((inc, i) => h("div", { class: "row" },
        incidentType(inc, `${at}.incidents[${i}]`, i),
        bound(`${at}.incidents[${i}].startS`, `Incident ${i + 1} starts at (s)`, { get: () => inc.startS, set: (v) => (inc.startS = v), attrs: { min: 0 } }),
        bound(`${at}.incidents[${i}].endS`, `Incident ${i + 1} ends at (s)`, { get: () => inc.endS, set: (v) => (inc.endS = v), attrs: { min: 0 } }),
        h("button", { type: "button", "aria-label": `Remove incident ${i + 1}`, onclick: () => {
          p.incidents.splice(i, 1);
          render();
          changed();
        } }, "Remove"))),
      h("div", { class: "row" },
        h("button", { type: "button", onclick: () => {
          p.incidents.push({ type: "outage", startS: 600, endS: 1200 });
          render();
          changed();
        } }, "Add incident"),
        h("button", { type: "button", onclick: () => {
          for (const c of s.contexts) s.profiles[set][c.name] = clone(p);
          changed();
        } }, `Copy this profile to every context of ${set}`)));
  }

  function incidentType(inc, path, i) {
    const f = field(`Incident ${i + 1}`, { control: select(Object.keys(INCIDENTS).map((t) => [t, t]), inc.type), onchange: (el) => {
      inc.type = el.value;
      changed();
    } });
    fields.set(`${path}.type`, f);
    return f.wrap;
  }

  /** A problem slot for a path that has no input of its own (the sum of probabilities). */
  function fieldsProblem(path) {
    const error = h("p", { class: "problem", "aria-live": "polite" });
    fields.set(path, { error, input: error, wrap: error });
    return error;
  }

  function showProblems(problems) {
    for (const f of fields.values()) showProblem(f, null);
    const rest = [];
    for (const p of problems) {
      const f = fields.get(p.path);
      if (f) showProblem(f, p.message);
      else rest.push(p.message);
    }
    fill(general, rest.map((m) => h("li", {}, m)));
  }

  render();
  return { element, render, showProblems };
}

/** Moves `map[from]` to `map[to]` (a renamed set or context keeps its profiles), then `then()`. */
function rename(map, from, to, then) {
  if (from !== to && map[from] !== undefined && map[to] === undefined) {
    map[to] = map[from];
    delete map[from];
  }
  then();
}

function freeName(list, prefix) {
  for (let n = list.length + 1; ; n++) if (!list.some((x) => x.name === `${prefix}-${n}`)) return `${prefix}-${n}`;
}
