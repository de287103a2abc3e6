// The editor of one policy (A or B): a field for every config field the engine reports
// (`fieldsOf(defaults)`, defaults being `pool.config()` of a fresh pool — nothing listed here),
// the ready-made policies, the live pool's config as a starting point, and the engine's own
// verdict on every edit, shown beside the field it names — in words (core/policy-words.js):
// labels, durations in s / min / h, errors. Its status messages show beside its own buttons.
import { h, fill, field, select, showProblem } from "./dom.js";
import { fieldsOf, textOf, parseText, withField, fieldValue, checkPolicy, POLICIES } from "../core/policies.js";
import { isDuration, parseDuration, durationMsText, labelOf, errorInWords } from "../core/policy-words.js";

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
      const duration = f.type === "number" && isDuration(f.path);
      const control = f.type === "boolean"
        ? h("input", { type: "checkbox", checked: value === true })
        : h("input", { type: "text", inputmode: f.type === "number" && !duration ? "decimal" : null, value: duration ? durationMsText(value) : textOf(f, value) });
      const made = field(`${labelOf(f.path)} (${key})`, { control, onchange: (el) => {
        if (duration) {
          const ms = parseDuration(el.value);
          if (ms === null) {
            made.unreadable = `${labelOf(f.path).replace(/ \(e\.g\. .*\)$/, "")}: write a duration such as 90 s, 5 min, 1 h 30 min or 250 ms`;
            validate();
            return;
          }
          made.unreadable = null;
          ws.policies[key] = withField(ws.policies[key], f.path, ms);
        } else {
          ws.policies[key] = withField(ws.policies[key], f.path, parseText(f.type, f.type === "boolean" ? el.checked : el.value));
        }
        validate();
        changed();
      } });
      made.wrap.title = duration ? `${f.path} (the config's key; stored in milliseconds)` : `${f.path} (the config's key)`;
      fields.set(f.path, made);
      return made.wrap;
    }));
    validate();
  }

  /** The engine's verdict on the policy, shown; returns the problem or null. */
  function validate() {
    for (const f of fields.values()) showProblem(f, f.unreadable ?? null);
    const unreadable = [...fields.values()].find((f) => f.unreadable);
    if (unreadable) return { message: unreadable.unreadable, path: null };
    const found = checkPolicy(Pool, ws.policies[key]);
    const problem = found && { ...found, message: errorInWords(found.message, found.path) };
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
