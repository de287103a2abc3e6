// A small element builder for live mode: `h("button", { class: "x", onclick }, "text", child)`.
// Text always goes in as text nodes (never HTML), so values from the server cannot inject
// markup; no inline styles (the CSP forbids them): classes, and the CSSOM where a size moves.

/** Creates `tag` with `attrs` (`on…` keys add listeners; `class`, `aria-*`, others set as
 * attributes; `false`/`null`/`undefined` skipped) and `children` (strings become text). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

/** Replaces every child of `el`. */
export function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

/** Formats an epoch-ms instant as local date and time. */
export const when = (ms) => new Date(ms).toLocaleString();

let ids = 0;

/** A control with its visible `<label for>` (a label that only names it: not wrapping it,
 * which would add the control's own text to its name), in a `.field` box. */
export function labelled(text, control) {
  control.id ||= `live-field-${++ids}`;
  return h("span", { class: "field" }, h("label", { class: "label", for: control.id }, text), control);
}
