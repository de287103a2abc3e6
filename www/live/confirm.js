// A modal confirmation for an operator action (block, unblock): a `<dialog>` (focus kept
// inside, Escape cancels) with the action's own fields, a confirm button named for the action,
// a pending state while the server works, and the server's problem+json `detail` shown when it
// refuses (the dialog stays open so the operator can read it, change the choice or cancel).

import { h } from "./dom.js";

/**
 * Opens the dialog. `title`; `fields` (nodes inside the form); `confirm` (the button's name,
 * e.g. "Block"); `pending` (what the status says while waiting); `run(form)` does the call
 * and may throw an ApiError; `done(result)` runs after success, once the dialog has closed.
 */
export function confirmAction({ title, fields = [], confirm, pending, run, done }) {
  const opener = document.activeElement;
  const status = h("p", { class: "status", role: "status" });
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const ok = h("button", { type: "submit", class: "primary" }, confirm);
  const cancel = h("button", { type: "button", onclick: () => dialog.close() }, "Cancel");
  const heading = h("h2", { id: `dialog-title-${Date.now()}` }, title);
  const form = h("form", { novalidate: true }, ...fields, status, error, h("div", { class: "buttons" }, ok, cancel));
  const dialog = h("dialog", { class: "confirm", "aria-labelledby": heading.id }, heading, form);
  let busy = false;
  let result;
  let succeeded = false;

  // The CSP's form-action 'none' would refuse a real submission: the form only ever calls `run`.
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (busy) return;
    busy = true;
    dialog.setAttribute("aria-busy", "true");
    ok.disabled = cancel.disabled = true;
    error.hidden = true;
    status.textContent = pending;
    try {
      result = await run(form);
      succeeded = true;
      dialog.close();
    } catch (err) {
      status.textContent = "";
      // An ApiError carries the server's problem+json detail; anything else is our own check.
      error.textContent = err.status ? `Refused (${err.status}): ${err.problem?.detail ?? err.message}` : err.message;
      error.hidden = false;
    } finally {
      busy = false;
      dialog.removeAttribute("aria-busy");
      ok.disabled = cancel.disabled = false;
    }
  });
  dialog.addEventListener("cancel", (e) => {
    if (busy) e.preventDefault();
  });
  dialog.addEventListener("close", () => {
    dialog.remove();
    if (opener?.isConnected) opener.focus();
    if (succeeded) done?.(result);
  });
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}
