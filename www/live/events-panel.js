// Live mode's event list: the latest events from the audit log (`GET /api/events`), then live
// ones from the stream (event-feed.js), newest first; Pause holds new events back (counted)
// until Resume. The type and context filters
// and one resource ("Events of this resource" in the detail) are applied by the server
// (`?type=&context=&resource=`), loading pages back through the log window by window (`after`/`before`) until a page of
// matches is found, so a filter finds what is in the log, not only what is loaded. Lease churn
// (leases, releases, rejected acquires: most of a busy pool's log) is hidden unless "Show lease
// churn" is on. "N of M events match" says how much of the log was searched; a search box
// narrows what is loaded. Tells its owner when an event may have changed the pool (`onChange`).
// How an event reads is event-text.js's.

import { h, fill, labelled, when } from "./dom.js";
import { EventFeed } from "./event-feed.js";
import { describe, searchable } from "./event-text.js";
import { EVENT_TYPES, LEASE_CHURN } from "../vendor/repute/lib/vocabulary.js";

const PAGE = 50;
/** Seqs one request covers when paging back (a window holds at most 1000 events, the most a
 * page returns, so none is cut off). */
const SPAN = 1000;
/** Windows one load reads at most before it stops and says how far it searched. */
const MAX_WINDOWS = 20;
/** Events kept in the list; beyond this the oldest live ones leave it. */
const KEEP = 2000;

export class EventsPanel {
  #connection;
  #onChange;
  #feed;
  /** Newest first. */
  #events = [];
  #pending = [];
  #paused = false;
  #search = "";
  /** The lowest seq searched so far (the log below it is not loaded). */
  #oldest = 1;
  /** The newest seq searched. */
  #newest = 0;
  #list = h("ol", { class: "events", role: "log", "aria-label": "Pool events", "aria-live": "off" });
  #status = h("span", { class: "muted", role: "status" });
  #count = h("p", { class: "muted events-count", "aria-live": "polite" });
  #pause = h("button", { type: "button", "aria-pressed": "false", onclick: () => this.#togglePause() }, "Pause");
  #older = h("button", { type: "button", onclick: () => this.#loadOlder() }, "Load older events");
  #type = h("select", { name: "event-type" });
  #context = h("select", { name: "event-context" });
  #churn = h("input", { type: "checkbox", name: "churn" });
  /** The resource the list is narrowed to (`{id, name}`), or null. */
  #resource = null;
  #resourceChip = h("button", { type: "button", class: "chip", hidden: true, onclick: () => this.showResource(null) });
  element;

  constructor(connection, { onChange }) {
    this.#connection = connection;
    this.#onChange = onChange;
    this.#feed = new EventFeed(connection, {
      onEvent: (e) => this.#live(e),
      onStatus: (text, error) => this.#say(text, error),
    });
    this.#type.replaceChildren(h("option", { value: "" }, "any"), ...EVENT_TYPES.map((t) => h("option", { value: t }, t)));
    this.contexts([]);
    for (const control of [this.#type, this.#context, this.#churn]) control.addEventListener("change", () => this.#reopen());
    const search = h("input", { type: "search", placeholder: "resource, context, actor…" });
    search.addEventListener("input", () => {
      this.#search = search.value.trim().toLowerCase();
      this.#render();
    });
    this.element = h(
      "section",
      { class: "panel events-panel", "aria-labelledby": "events-title" },
      h("h2", { id: "events-title" }, "Events"),
      h("div", { class: "toolbar" },
        this.#pause,
        labelled("Event type", this.#type),
        labelled("Event context", this.#context),
        h("label", { class: "choice" }, this.#churn, "Show lease churn"),
        this.#resourceChip,
        labelled("Filter events", search),
        this.#status),
      this.#count,
      this.#list,
      h("div", { class: "toolbar" }, this.#older),
    );
  }

  /** Offers these contexts in the context filter (keeping the one chosen). */
  contexts(list) {
    const chosen = this.#context.value;
    this.#context.replaceChildren(h("option", { value: "" }, "any"), ...list.map((c) => h("option", { value: c }, c)));
    this.#context.value = list.includes(chosen) ? chosen : "";
  }

  /** Narrows the list to one resource (`{id, name}`; null: every resource), filtered by the server. */
  showResource(resource) {
    this.#resource = resource?.id ? resource : null;
    this.#resourceChip.hidden = !this.#resource;
    this.#resourceChip.textContent = this.#resource ? `Resource: ${this.#resource.name} ✕` : "";
    this.#resourceChip.setAttribute("aria-label", this.#resource ? `Show the events of every resource (now ${this.#resource.name})` : "");
    this.#reopen();
  }

  /** The server-side filter as a query string (without `after`/`limit`). */
  #query() {
    const q = new URLSearchParams();
    if (this.#type.value) q.set("type", this.#type.value);
    else if (!this.#churn.checked) q.set("type", EVENT_TYPES.filter((t) => !LEASE_CHURN.includes(t)).join(","));
    if (this.#context.value) q.set("context", this.#context.value);
    if (this.#resource) q.set("resource", this.#resource.id);
    return q;
  }

  /** Whether a live event passes the server-side filter (the same rule, applied here). */
  #matches(e) {
    if (this.#type.value ? e.type !== this.#type.value : !this.#churn.checked && LEASE_CHURN.includes(e.type)) return false;
    if (this.#resource && e.id !== this.#resource.id) return false;
    return !this.#context.value || e.context === this.#context.value;
  }

  /** Loads the latest matches up to seq `lastSeq`, then follows the stream. */
  async open(lastSeq) {
    this.#feed.stop();
    this.#events = [];
    this.#pending = [];
    this.#oldest = lastSeq + 1;
    this.#newest = lastSeq;
    await this.#pageBack();
    this.#feed.start(lastSeq);
  }

  /** Filters changed: reloads from the newest seq seen. */
  #reopen() {
    const last = Math.max(this.#newest, this.#events[0]?.seq ?? 0);
    this.open(last).catch((e) => this.#say(e.message, true));
  }

  close() {
    this.#feed.stop();
  }

  #say(text, error = false) {
    this.#status.textContent = text;
    this.#status.classList.toggle("error", error);
  }

  /** Reads back from `#oldest`, window by window, until PAGE more matches (or the log's start,
   * or MAX_WINDOWS windows). */
  async #pageBack() {
    this.#older.disabled = true;
    const query = this.#query();
    let found = 0;
    try {
      for (let i = 0; i < MAX_WINDOWS && found < PAGE && this.#oldest > 1; i++) {
        const after = Math.max(0, this.#oldest - 1 - SPAN);
        query.set("after", String(after));
        query.set("before", String(this.#oldest));
        query.set("limit", "1000");
        const page = await this.#connection.request("GET", `/api/events?${query}`);
        let older = page.events.reverse();
        if (found + older.length > PAGE) {
          // The newest of them make the page; the search stops at the oldest one kept.
          older = older.slice(0, PAGE - found);
          this.#oldest = older.at(-1).seq;
        } else {
          this.#oldest = after + 1;
        }
        this.#events.push(...older);
        found += older.length;
      }
    } finally {
      this.#older.disabled = this.#oldest <= 1;
      this.#render();
    }
  }

  #live(e) {
    this.#onChange(e);
    this.#newest = Math.max(this.#newest, e.seq);
    if (!this.#matches(e)) {
      this.#counted();
      return;
    }
    if (this.#paused) {
      this.#pending.push(e);
      this.#say(`paused: ${this.#pending.length} new`);
      return;
    }
    this.#events.unshift(e);
    if (this.#events.length > KEEP) this.#events.length = KEEP;
    if (this.#passes(e)) {
      this.#list.prepend(this.#item(e));
      while (this.#list.childElementCount > KEEP) this.#list.lastElementChild.remove();
    }
    this.#counted();
  }

  #togglePause() {
    this.#paused = !this.#paused;
    this.#pause.setAttribute("aria-pressed", String(this.#paused));
    this.#pause.textContent = this.#paused ? "Resume" : "Pause";
    if (this.#paused) {
      this.#say("paused");
      return;
    }
    this.#events.unshift(...this.#pending.reverse());
    this.#pending = [];
    if (this.#events.length > KEEP) this.#events.length = KEEP;
    this.#say("live");
    this.#render();
  }

  async #loadOlder() {
    try {
      await this.#pageBack();
    } catch (e) {
      this.#say(e.message, true);
    }
  }

  #passes(e) {
    return !this.#search || searchable(e).includes(this.#search);
  }

  /** "N of M events match", M the events searched (seqs `#oldest`..`#newest`). */
  #counted() {
    const searched = Math.max(0, this.#newest - this.#oldest + 1);
    const shown = this.#list.childElementCount;
    const range = searched > 0 ? ` (#${this.#oldest}–#${this.#newest})` : "";
    this.#count.textContent = `${shown} of ${searched} events match${range}${this.#oldest > 1 ? "; older ones not searched yet" : ""}`;
  }

  #item(e) {
    return h(
      "li",
      { class: `event t-${e.type.toLowerCase()}`, "data-seq": e.seq },
      h("span", { class: "seq" }, `#${e.seq}`),
      h("time", { datetime: new Date(e.at).toISOString() }, when(e.at)),
      h("span", { class: "type" }, e.type),
      h("span", { class: "what" }, describe(e)),
    );
  }

  #render() {
    fill(this.#list, this.#events.filter((e) => this.#passes(e)).map((e) => this.#item(e)));
    this.#counted();
  }
}
