// The editor of one policy (A or B): a field for every config field the engine reports
// (`fieldsOf(defaults)`, defaults being `pool.config()` of a fresh pool — nothing listed here),
// the ready-made policies, the live pool's config as a starting point, and the engine's own
// verdict on every edit, shown beside the field it names.
import { h, fill, field, select, showProblem } from "./dom.js";
import { fieldsOf, textOf, parseText, withField, fieldValue, checkPolicy, POLICIES } from "../core/policies.js";

/**
 * `ws.policies[key]` edited in place. `Pool`: the engine's class (for checks); `defaults`: its
 * default config; `changed()` after each edit; `liveConfig()` resolves to the live pool's
 * config (or throws an ApiError).
 */
export function policyForm(ws, key, { Pool, defaults, changed, liveConfig }) {
  const fields = new Map();
  const general = h("p", { class: "problem", "aria-live": "polite" });
  const status = h("p", { class: "hint", "aria-live": "polite" });
  const list = h("div", { class: "policy-fields" });
  const presets = select(Object.entries(POLICIES).map(([id, p]) => [id, p.title]), null);
  const element = h("fieldset", { class: "policy" },
    h("legend", {}, `Policy ${key}`),
    h("div", { class: "row" },
      field(`Ready-made policy for ${key}`, { control: presets }).wrap,
      h("button", { type: "button", onclick: () => {
        ws.policies[key] = POLICIES[presets.value].make(defaults);
        render();
        changed();
      } }, `Load policy ${key}`)),
    h("button", { type: "button", onclick: async () => {
      status.textContent = "Reading the live pool's config…";
      try {
        ws.policies[key] = { ...structuredClone(defaults), ...(await liveConfig()) };
        status.textContent = "Loaded the live pool's config.";
        render();
        changed();
      } catch (e) {
        status.textContent = `The live pool's config could not be read: ${e.message}`;
      }
    } }, `Use the live pool's config as ${key}`),
    status, general, list);

  function render() {
    fields.clear();
    const policy = ws.policies[key];
    fill(list, fieldsOf(defaults).map((f) => {
      const value = fieldValue(policy, f.path) ?? f.value;
      const control = f.type === "boolean"
        ? h("input", { type: "checkbox", checked: value === true })
        : h("input", { type: "text", inputmode: f.type === "number" ? "decimal" : null, value: textOf(f, value) });
      const made = field(`${f.path} (${key})`, { control, onchange: (el) => {
        ws.policies[key] = withField(ws.policies[key], f.path, parseText(f.type, f.type === "boolean" ? el.checked : el.value));
        validate();
        changed();
      } });
      fields.set(f.path, made);
      return made.wrap;
    }));
    validate();
  }

  /** The engine's verdict on the policy, shown; returns the problem or null. */
  function validate() {
    const problem = checkPolicy(Pool, ws.policies[key]);
    for (const f of fields.values()) showProblem(f, null);
    general.textContent = "";
    if (problem) {
      const f = problem.path && fields.get(problem.path);
      if (f) showProblem(f, problem.message);
      else general.textContent = problem.message;
    }
    return problem;
  }

  render();
  return { element, render, validate };
}
