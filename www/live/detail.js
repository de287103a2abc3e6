// One resource in detail (`GET /api/resources/{id}`, or `{kind}/{value}` before ids): its
// group, block and lease, and every cell with its score, streaks, cooldown, pacing end, whether
// the cooling cap holds it, p50/p95 latency and recent outcomes (the cell's window, oldest
// first). Block (1 h, a chosen time, permanently)
// and Unblock, each confirmed in a dialog (confirm.js); `onChanged()` after either succeeds.

import { h, fill, labelled, when } from "./dom.js";
import { blockText, clockTime, countdown, isPaced, nameOf, resourcePath, scoreText } from "./model.js";
import { confirmAction } from "./confirm.js";

const UNITS = { minutes: 60, hours: 3600, days: 86400 };

/** A latency as shown. */
const ms = (v) => (v === null ? "–" : `${Number.isInteger(v) ? v : v.toFixed(1)} ms`);

function blockFields() {
  const radio = (value, text, checked = false) =>
    h("label", { class: "choice" }, h("input", { type: "radio", name: "how", value, checked }), text);
  const amount = h("input", { type: "number", name: "amount", min: "1", step: "1", value: "30", "aria-label": "How long" });
  const unit = h("select", { name: "unit", "aria-label": "Unit" }, ...Object.keys(UNITS).map((u) => h("option", { value: u }, u)));
  // Typing a duration chooses "a chosen time".
  const pick = () => (amount.form.elements.how.value = "chosen");
  amount.addEventListener("input", pick);
  unit.addEventListener("change", pick);
  return h(
    "fieldset",
    {},
    h("legend", {}, "Block for"),
    radio("hour", "1 hour", true),
    h("span", { class: "choice" }, radio("chosen", "a chosen time:"), amount, unit),
    radio("permanent", "permanently"),
  );
}

/** An optional reason, kept with the event in the audit log (at most 500 characters). */
function reasonField() {
  const input = h("input", { type: "text", name: "reason", maxlength: "500", placeholder: "optional: why (kept in the audit log)" });
  return labelled("Reason", input);
}

/** The request options that send the form's reason, if one was given. */
function reasonBody(form) {
  const reason = form.elements.reason?.value.trim();
  return reason ? { body: { reason } } : {};
}

/** The block query for the form's choice: `?seconds=N` or `?permanent=true`. */
function blockQuery(form) {
  const how = form.elements.how.value;
  if (how === "permanent") return "?permanent=true";
  if (how === "hour") return "?seconds=3600";
  const amount = Number(form.elements.amount.value);
  if (!Number.isInteger(amount) || amount < 1) throw new Error("give a whole number of at least 1");
  return `?seconds=${amount * UNITS[form.elements.unit.value]}`;
}

export class ResourceDetail {
  #connection;
  #now;
  #onChanged;
  #onClose;
  #masked;
  #onEvents;
  #resource = null;
  #title = h("h2", { id: "detail-title", tabindex: "-1" });
  #body = h("div", { class: "detail-body" });
  element;

  /** `now()`: the server's clock; `onChanged()` after a block or unblock; `onClose()`;
   * `masked()`: whether values are shown masked. */
  constructor(connection, { now, onChanged, onClose, masked = () => false, onEvents = null }) {
    this.#connection = connection;
    this.#onEvents = onEvents;
    this.#masked = masked;
    this.#now = now;
    this.#onChanged = onChanged;
    this.#onClose = onClose;
    this.element = h(
      "aside",
      { class: "panel detail", "aria-labelledby": "detail-title", hidden: true },
      h("div", { class: "detail-head" }, this.#title, h("button", { type: "button", onclick: () => this.close() }, "Close")),
      this.#body,
    );
    this.element.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && !document.querySelector("dialog[open]")) this.close();
    });
  }

  get open() {
    return !this.element.hidden;
  }

  /** Shows `resource` (a ResourceView), loading its cells' windows; moves focus to it. */
  async show(resource) {
    this.#resource = resource;
    this.element.hidden = false;
    this.#title.textContent = nameOf(resource);
    fill(this.#body, h("p", { class: "muted" }, "loading…"));
    this.#title.focus();
    await this.refresh();
  }

  close() {
    if (this.element.hidden) return;
    this.element.hidden = true;
    this.#resource = null;
    this.#onClose();
  }

  async refresh() {
    const r = this.#resource;
    if (!r) return;
    let d;
    try {
      d = await this.#connection.request("GET", resourcePath(r) + (this.#masked() ? "?masked=true" : ""));
    } catch (e) {
      if (this.#resource === r) fill(this.#body, h("p", { class: "error", role: "alert" }, e.message));
      return;
    }
    if (this.#resource !== r) return;
    this.#resource = { ...r, ...d };
    this.#render(this.#resource);
  }

  #render(d) {
    const now = this.#now();
    const lease = leaseText(d);
    // Only an operator may block: other roles are not offered what the server would refuse.
    const actions = this.#connection.operator
      ? h(
          "div",
          { class: "buttons" },
          h("button", { type: "button", onclick: () => this.#block(d) }, "Block"),
          d.blocked ? h("button", { type: "button", onclick: () => this.#unblock(d) }, "Unblock") : null,
        )
      : null;
    const events = this.#onEvents && d.id
      ? h("button", { type: "button", onclick: () => this.#onEvents({ id: d.id, name: nameOf(d) }) }, "Events of this resource")
      : null;
    const cells = d.cells.length === 0
      ? h("p", {}, "contexts: 0 — nobody has reported on this resource yet (it counts as fresh everywhere).")
      : h(
          "table",
          { class: "cells" },
          h("caption", {}, `contexts: ${d.cells.length}`),
          h("thead", {}, h("tr", {}, ...["Context", "State", "Score", "Failures / successes in a row", "Cooldown", "Paced until", "Held", "p50", "p95", "Recent outcomes (oldest first)"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, ...d.cells.map((c) => h(
            "tr",
            {},
            h("th", { scope: "row" }, c.context),
            h("td", { class: `s-${c.state.toLowerCase()}` }, c.state),
            h("td", {}, scoreText(c.score)),
            h("td", {}, `${c.consecutiveFailures} / ${c.consecutiveSuccesses}`),
            h("td", {}, c.cooldownUntil === null ? "–" : `${c.cooldownCause}, ${countdown(c.cooldownUntil, now) || "over"} (${when(c.cooldownUntil)})`),
            h("td", {}, isPaced(c, now) ? `${clockTime(c.pacedUntil)} (${countdown(c.pacedUntil, now)} more)` : "–"),
            h("td", {}, c.held ? h("span", { class: "flag held", title: "the cooling cap suppressed its cooldown: it stays in rotation" }, "held") : "no"),
            h("td", {}, ms(c.p50LatencyMs)),
            h("td", {}, ms(c.p95LatencyMs)),
            h("td", {}, h("ol", { class: "window" }, ...(c.window ?? []).map(([o, lat]) =>
              h("li", { class: o === "OK" ? "ok" : "fail" }, lat === null ? o : `${o} ${ms(lat)}`)))),
          ))),
        );
    const group = typeof d.group === "string" ? `group: ${d.group}` : "group: none";
    fill(this.#body, h("p", { class: "group" }, group), h("p", {}, blockText(d.blocked, now)), h("p", {}, lease), actions, events, cells);
  }

  #block(r) {
    confirmAction({
      title: `Block ${nameOf(r)}?`,
      fields: [h("p", {}, "A block takes the resource out of rotation in every context."), blockFields(), reasonField()],
      confirm: "Block",
      pending: "Blocking…",
      run: (form) => this.#connection.request("POST", resourcePath(r, `/block${blockQuery(form)}`), reasonBody(form)),
      done: () => this.#changed(),
    });
  }

  #unblock(r) {
    confirmAction({
      title: `Unblock ${nameOf(r)}?`,
      fields: [h("p", {}, "The resource goes back into rotation; its cells keep their states."), reasonField()],
      confirm: "Unblock",
      pending: "Unblocking…",
      run: (form) => this.#connection.request("DELETE", resourcePath(r, "/block"), reasonBody(form)),
      done: () => this.#changed(),
    });
  }

  async #changed() {
    await this.refresh();
    this.#onChanged();
  }
}

/** A resource's leases as the panel says them: "not leased", one lease, or "3 of 8 leases: …"
 * (its capacity, `maxLeases`, when it may hold more than one). */
export function leaseText(d) {
  const leases = d.leases ?? (d.lease ? [d.lease] : []);
  const max = d.maxLeases ?? 1;
  const one = (l) => `${l.context}, token ${l.token}, until ${when(l.expiresAt)}`;
  if (leases.length === 0) return max > 1 ? `not leased (may hold ${max} leases at once)` : "not leased";
  if (max === 1 && leases.length === 1) return `leased in ${one(leases[0])}`;
  return `${leases.length} of ${max} leases: ${leases.map(one).join("; ")}`;
}
