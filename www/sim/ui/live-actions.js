// Simulation mode's calls to the connected pool server (shared/connection.js): pull its snapshot
// or its recorded log (audit events and reported outcomes, page by page), and apply a policy
// with `PUT /api/config` after a confirmation dialog that lists what changes. The server's
// problem+json message is shown when it refuses (a viewer token, a limit below what the pool
// holds).
import { h, fill } from "./dom.js";
import { diffConfigs } from "../core/policies.js";

/** Pages at most this many times through each log (1000 records a page). */
const MAX_PAGES = 200;

/** The live pool's snapshot, as JSON text. */
export async function pullSnapshot(connection) {
  const body = await connection.request("GET", "/api/snapshot");
  return typeof body === "string" ? body : JSON.stringify(body);
}

/** Every page of `path` (`{ [key]: [...], next }`), from the start. */
async function pages(connection, path, key) {
  const out = [];
  let after = 0;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await connection.request("GET", `${path}?after=${after}&limit=1000`);
    out.push(...page[key]);
    if (page.next === null) return { records: out, complete: true };
    after = page.next;
  }
  return { records: out, complete: false };
}

/** The live pool's audit log and outcome log: `{ events, outcomes, complete }`. */
export async function pullLog(connection) {
  const events = await pages(connection, "/api/events", "events");
  const outcomes = await pages(connection, "/api/outcomes", "outcomes");
  return { events: events.records, outcomes: outcomes.records, complete: events.complete && outcomes.complete };
}

/**
 * The confirmation dialog of Apply: `ask(label, config)` shows what would change in the live
 * pool's config and, when the operator confirms, sends it. `report(text, ok)` tells the page.
 */
export function applyDialog(connection, report) {
  const title = h("h3", { id: "sim-apply-h" });
  const changes = h("div", { class: "changes" });
  const problem = h("p", { class: "problem", role: "alert" });
  const confirm = h("button", { type: "button", class: "primary" }, "Apply policy");
  const cancel = h("button", { type: "button" }, "Cancel");
  const dialog = h("dialog", { "aria-labelledby": "sim-apply-h", class: "apply" }, title, changes, problem, h("div", { class: "row" }, confirm, cancel));
  let pending = null;
  cancel.addEventListener("click", () => dialog.close());
  confirm.addEventListener("click", async () => {
    if (!pending) return;
    confirm.disabled = true;
    cancel.disabled = true;
    confirm.textContent = "Applying…";
    try {
      await connection.request("PUT", "/api/config", { body: pending.config });
      report(`Applied policy ${pending.label} to the live pool at ${connection.url}.`, true);
      dialog.close();
    } catch (e) {
      problem.textContent = `The pool refused: ${e.message}${e.status ? ` (HTTP ${e.status})` : ""}`;
    } finally {
      confirm.disabled = false;
      cancel.disabled = false;
      confirm.textContent = `Apply policy ${pending.label}`;
    }
  });

  async function ask(label, config) {
    let live;
    try {
      live = await connection.request("GET", "/api/config");
    } catch (e) {
      report(`The live pool's config could not be read: ${e.message}`, false);
      return;
    }
    const diff = diffConfigs(live, config);
    pending = { label, config };
    title.textContent = `Apply policy ${label} to the live pool at ${connection.url}?`;
    problem.textContent = "";
    confirm.textContent = `Apply policy ${label}`;
    fill(changes, diff.length === 0
      ? h("p", {}, "The live pool already runs this policy: nothing would change.")
      : [h("p", {}, `${diff.length} field${diff.length === 1 ? "" : "s"} would change:`),
        h("ul", {}, diff.map((d) => h("li", {}, h("code", {}, d.path), `: ${JSON.stringify(d.a)} → ${JSON.stringify(d.b)}`)))]);
    dialog.showModal();
    cancel.focus();
  }

  return { dialog, ask };
}
