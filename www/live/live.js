// Live mode: watch and steer a pool server. Connect (server URL and token: the token stays in
// sessionStorage, never in a URL), then tiles (stats), the per-site health strip (sites.js,
// `GET /api/contexts`; a site filters the grid), the resource × context grid with its
// filters (group, paced / held among them), one resource in detail with Block / Unblock, live
// events, and Download snapshot.
// What changes the pool arrives as events; the grid and tiles reload shortly after and every
// POLL_MS anyway; cooldown countdowns move every second. A large pool's resource list is tens
// of megabytes of JSON: reloads are spaced to at least LOAD_SHARE times the last one's
// duration, so reloading never takes more than about a tenth of the page's time.

import { h, labelled } from "./dom.js";
import { table, visibleRows } from "./model.js";
import { Tiles } from "./tiles.js";
import { Filters } from "./filters.js";
import { ResourceGrid } from "./grid.js";
import { ResourceDetail } from "./detail.js";
import { EventsPanel } from "./events-panel.js";
import { SiteStrip } from "./sites.js";

const RELOAD_MS = 1000;
/** sessionStorage key of an operator's "Show credentials" choice (off by default). */
const SHOW_KEY = "repute.showCredentials";
const ROLE_TEXT = { operator: "operator: may change the pool", viewer: "viewer: may watch, not change", worker: "worker" };
const POLL_MS = 30000;
const LOAD_SHARE = 10;

class LiveView {
  #connection;
  /** Server clock minus ours, from the last stats (the pool's clock drives cooldowns). */
  #offset = 0;
  #table = { rows: [], contexts: [], groups: [], ungrouped: false };
  #timers = [];
  #loading = null;
  #again = false;
  #reloadTimer = null;
  /** How long the last reload took (ms). */
  #lastLoadMs = 0;
  #status = h("p", { class: "status", role: "status" });
  #main;
  #tiles = new Tiles();
  #sites;
  #filters;
  #grid;
  #detail;
  #events;
  #count = h("p", { class: "muted", "aria-live": "polite" });
  #downloadButton = h("button", { type: "button", onclick: () => this.#download() }, "Download snapshot");
  #show = h("input", { type: "checkbox", name: "show-credentials" });
  #showLabel = h("label", { class: "choice", title: "Values carry proxy passwords: shown only while this is on, in this tab" }, this.#show, "Show credentials");
  #actionStatus = h("span", { class: "status", role: "status" });

  /** The server's clock (ms), as far as the last stats tell. */
  #now = () => Date.now() + this.#offset;

  constructor(element, connection) {
    this.#connection = connection;
    const now = this.#now;
    this.#filters = new Filters({ onChange: () => this.#apply() });
    this.#sites = new SiteStrip({ onPick: (context) => this.#filters.setContext(context) });
    this.#grid = new ResourceGrid({ now, onOpen: (row) => row && this.#detail.show(row.resource) });
    this.#detail = new ResourceDetail(connection, { now, onChanged: () => this.#reload(), onClose: () => this.#grid.focus(), masked: () => this.#masked(),
      onEvents: (resource) => {
        this.#events.showResource(resource);
        this.#events.element.scrollIntoView({ block: "nearest" });
      } });
    this.#show.checked = sessionStorage.getItem(SHOW_KEY) === "true";
    this.#show.addEventListener("change", () => {
      sessionStorage.setItem(SHOW_KEY, String(this.#show.checked));
      this.#reload();
    });
    this.#events = new EventsPanel(connection, { onChange: () => this.#soon() });
    this.#main = h(
      "div",
      { class: "live-main", hidden: true },
      h("div", { class: "toolbar" },
        this.#downloadButton,
        h("button", { type: "button", onclick: () => this.#reload() }, "Refresh"),
        this.#showLabel,
        this.#actionStatus),
      this.#tiles.element,
      this.#sites.element,
      h("section", { class: "panel resources", "aria-labelledby": "resources-title" },
        h("h2", { id: "resources-title" }, "Resources"),
        this.#filters.element,
        this.#count,
        h("div", { class: "resources-body" }, this.#grid.element, this.#detail.element)),
      this.#events.element,
    );
    element.replaceChildren(this.#connectForm(), this.#status, this.#main);
    connection.addEventListener("change", () => (connection.connected ? this.#start() : this.#stop()));
  }

  #connectForm() {
    const c = this.#connection;
    // Served by a pool (http or https), the page may talk only to that pool (the CSP's
    // connect-src 'self'): no Server field to get wrong, the pool is named instead.
    const served = location.protocol === "http:" || location.protocol === "https:";
    const url = served
      ? { value: location.origin }
      : h("input", { type: "url", name: "url", required: true, value: c.url, autocomplete: "url" });
    const token = h("input", { type: "password", name: "token", value: c.token, autocomplete: "off", spellcheck: "false" });
    const form = h(
      "form",
      { class: "toolbar connect", "aria-label": "Pool server" },
      served
        ? h("span", { class: "field" }, h("span", { class: "label" }, "Server"), h("span", { class: "pool-origin", title: "This page talks only to the pool that served it" }, `Pool: ${location.origin}`))
        : labelled("Server", url),
      labelled("Token", token),
      h("button", { type: "submit", class: "primary" }, "Connect"),
      h("button", { type: "button", onclick: () => c.disconnect() }, "Disconnect"),
    );
    // Never submitted for real (the CSP's form-action 'none' would refuse it anyway): the
    // token goes to sessionStorage and into Authorization headers, not into a URL.
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      this.#say(`connecting to ${url.value}…`);
      try {
        await c.connect(url.value, token.value);
      } catch (err) {
        this.#say(`Could not connect: ${err.message}`, true);
      }
    });
    return form;
  }

  /** A toolbar action's outcome, next to its button. */
  #sayAction(text, error = false) {
    this.#actionStatus.textContent = text;
    this.#actionStatus.classList.toggle("error", error);
  }

  #say(text, error = false) {
    this.#status.textContent = text;
    this.#status.classList.toggle("error", error);
  }

  /** Whether values are fetched masked: unless an operator turned "Show credentials" on. */
  #masked() {
    return !(this.#connection.operator && this.#show.checked);
  }

  async #start() {
    this.#stop();
    const c = this.#connection;
    const who = c.role ? ` as ${c.name} (${ROLE_TEXT[c.role] ?? c.role})` : "";
    this.#say(`Connected to ${c.url}${who}.`);
    // Offer only what the role may do.
    this.#downloadButton.hidden = !c.operator;
    this.#showLabel.hidden = !c.operator;
    this.#main.hidden = false;
    const stats = await this.#reload();
    if (!stats) return;
    try {
      await this.#events.open(stats.nextEventSeq - 1);
    } catch (err) {
      this.#say(`Could not load the events: ${err.message}`, true);
    }
    this.#timers.push(setInterval(() => this.#grid.tick(), 1000), setInterval(() => this.#soon(), POLL_MS));
  }

  #stop() {
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    clearTimeout(this.#reloadTimer);
    this.#reloadTimer = null;
    this.#events.close();
    this.#main.hidden = true;
    if (!this.#connection.connected) this.#say("Not connected.");
  }

  /** An event arrived: reload soon (one reload for a burst of events). */
  #soon() {
    this.#reloadTimer ??= setTimeout(() => {
      this.#reloadTimer = null;
      this.#reload();
    }, Math.max(RELOAD_MS, LOAD_SHARE * this.#lastLoadMs));
  }

  /** Reloads stats and resources (one load at a time; a call during one runs once after it).
   * Resolves to the stats, or null when the server could not be read (said in the status). */
  async #reload() {
    if (this.#loading) {
      this.#again = true;
      return this.#loading;
    }
    this.#loading = (async () => {
      try {
        const sent = Date.now();
        const [stats, list, sites] = await Promise.all([
          this.#connection.request("GET", "/api/stats"),
          this.#connection.request("GET", this.#masked() ? "/api/resources?masked=true" : "/api/resources"),
          this.#connection.request("GET", "/api/contexts"),
        ]);
        this.#offset = stats.now - (sent + Date.now()) / 2;
        this.#tiles.show(stats);
        this.#sites.show(sites);
        const before = this.#table;
        this.#table = table(list.resources, sites.failingCells);
        if (before.contexts.join("\n") !== this.#table.contexts.join("\n")) {
          this.#filters.contexts(this.#table.contexts);
          this.#events.contexts(this.#table.contexts);
        }
        if (before.groups.join("\n") !== this.#table.groups.join("\n") || before.ungrouped !== this.#table.ungrouped) {
          this.#filters.groups(this.#table.groups, this.#table.ungrouped);
        }
        this.#apply();
        this.#lastLoadMs = Date.now() - sent;
        if (this.#detail.open) await this.#detail.refresh();
        return stats;
      } catch (err) {
        this.#say(`Could not refresh: ${err.message}`, true);
        return null;
      } finally {
        this.#loading = null;
        if (this.#again) {
          this.#again = false;
          this.#reload();
        }
      }
    })();
    return this.#loading;
  }

  #apply() {
    const filter = this.#filters.value();
    this.#sites.choose(filter.context);
    const rows = visibleRows(this.#table.rows, filter, this.#now());
    this.#grid.show(rows, filter.context ? [filter.context] : this.#table.contexts);
    this.#count.textContent = `${rows.length} of ${this.#table.rows.length} resources`;
  }

  async #download() {
    try {
      const text = await this.#connection.request("GET", "/api/snapshot", { text: true });
      const revision = /"revision":(\d+)/.exec(text)?.[1] ?? "unknown";
      const href = URL.createObjectURL(new Blob([text], { type: "application/json" }));
      const a = h("a", { href, download: `repute-snapshot-revision-${revision}.json`, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(href), 60000);
      this.#sayAction(`Snapshot downloaded (revision ${revision}).`);
    } catch (err) {
      this.#sayAction(`Download refused: ${err.message}`, true);
    }
  }
}

/** Mounts live mode into `element` (see app.js). */
export function mount(element, { connection }) {
  document.head.append(h("link", { rel: "stylesheet", href: new URL("../vendor/uplot/uPlot.min.css", import.meta.url).href }));
  document.head.append(h("link", { rel: "stylesheet", href: new URL("./live.css", import.meta.url).href }));
  new LiveView(element, connection);
}
