// Small DOM helpers of simulation mode: element building (no innerHTML, so no markup from data),
// labelled inputs whose problems show beside them, file download and upload.

let nextId = 0;
/** A document-unique id with a readable prefix. */
export const uid = (prefix) => `${prefix}-${++nextId}`;

/**
 * `h("button", { type: "button", onclick }, "Run")`: an element with attributes (a function is
 * an event listener, `class` the class, `hidden`/`disabled` booleans) and children (strings,
 * nodes, arrays; null and false are skipped).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v);
    else if (k === "class") el.className = v;
    else if (v === true) el.setAttribute(k, "");
    else if (k === "value") el.value = v;
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/**
 * A labelled field: `{ wrap, input, error }`. `error` (a live region beside the input) is where
 * a problem naming this field is shown (`showProblem`). `input` is an <input> (or the `control`
 * given), described by its error.
 */
export function field(label, { control, type = "text", value = "", attrs = {}, onchange } = {}) {
  const id = uid("f");
  const input = control ?? h("input", { type, value, ...attrs });
  input.id = id;
  const error = h("span", { class: "problem", id: `${id}-problem`, "aria-live": "polite" });
  input.setAttribute("aria-describedby", error.id);
  if (onchange) input.addEventListener(input.tagName === "SELECT" || type === "checkbox" ? "change" : "input", () => onchange(input));
  const wrap = h("div", { class: "field" }, h("label", { for: id }, label), input, error);
  return { wrap, input, error };
}

/** Shows `message` (or clears it, when null) beside a field made by `field`. */
export function showProblem(f, message) {
  f.error.textContent = message ?? "";
  if (f.input === f.error) return;
  if (message) f.input.setAttribute("aria-invalid", "true");
  else f.input.removeAttribute("aria-invalid");
}

/** A <select> of `[value, text]` options with `selected` chosen. */
export function select(options, selected) {
  return h("select", {}, options.map(([v, t]) => h("option", { value: v, selected: v === selected }, t)));
}

/** Offers `text` as a file download named `name`. */
export function download(name, text, type = "application/json") {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h("a", { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A file input's first file as text (null when none was chosen). */
export async function fileText(input) {
  const file = input.files?.[0];
  if (!file) return null;
  const text = await file.text();
  input.value = "";
  return text;
}

/** Seconds as m:ss or h:mm:ss. */
export function clockText(seconds) {
  const s = Math.floor(seconds);
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return hh > 0 ? `${hh}:${String(mm).padStart(2, "0")}:${ss}` : `${mm}:${ss}`;
}
