// Live mode's event list: the latest events from the audit log (`GET /api/events`), then live
// ones from the stream (event-feed.js), newest first; Pause holds new events back (counted)
// until Resume; a filter on type, resource and context; "Load older events" pages back through
// the audit log. Tells its owner when an event may have changed the pool (`onChange`). How an
// event reads is event-text.js's.

import { h, fill, labelled, when } from "./dom.js";
import { EventFeed } from "./event-feed.js";
import { describe, searchable } from "./event-text.js";

const PAGE = 50;
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
  #filter = "";
  #oldest = null;
  #list = h("ol", { class: "events", role: "log", "aria-label": "Pool events", "aria-live": "off" });
  #status = h("span", { class: "muted", role: "status" });
  #pause = h("button", { type: "button", "aria-pressed": "false", onclick: () => this.#togglePause() }, "Pause");
  #older = h("button", { type: "button", onclick: () => this.#loadOlder() }, "Load older events");
  element;

  constructor(connection, { onChange }) {
    this.#connection = connection;
    this.#onChange = onChange;
    this.#feed = new EventFeed(connection, {
      onEvent: (e) => this.#live(e),
      onStatus: (text, error) => this.#say(text, error),
    });
    const filter = h("input", { type: "search", placeholder: "type, resource, context or group" });
    filter.addEventListener("input", () => {
      this.#filter = filter.value.trim().toLowerCase();
      this.#render();
    });
    this.element = h(
      "section",
      { class: "panel events-panel", "aria-labelledby": "events-title" },
      h("h2", { id: "events-title" }, "Events"),
      h("div", { class: "toolbar" }, this.#pause, labelled("Filter events", filter), this.#status),
      this.#list,
      h("div", { class: "toolbar" }, this.#older),
    );
  }

  /** Loads the latest page of the audit log (the last seq is `lastSeq`), then follows the stream. */
  async open(lastSeq) {
    this.#events = [];
    this.#pending = [];
    const after = Math.max(0, lastSeq - PAGE);
    const page = await this.#connection.request("GET", `/api/events?after=${after}&limit=${PAGE}`);
    this.#events = page.events.filter((e) => e.seq <= lastSeq).reverse();
    this.#oldest = this.#events.at(-1)?.seq ?? lastSeq + 1;
    this.#older.disabled = this.#oldest <= 1;
    this.#render();
    this.#feed.start(Math.max(lastSeq, this.#events[0]?.seq ?? 0));
  }

  close() {
    this.#feed.stop();
  }

  #say(text, error = false) {
    this.#status.textContent = text;
    this.#status.classList.toggle("error", error);
  }

  #live(e) {
    this.#onChange(e);
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
    this.#older.disabled = true;
    try {
      const after = Math.max(0, this.#oldest - 1 - PAGE);
      const page = await this.#connection.request("GET", `/api/events?after=${after}&limit=${PAGE}`);
      const older = page.events.filter((e) => e.seq < this.#oldest).reverse();
      this.#events.push(...older);
      this.#oldest = older.at(-1)?.seq ?? after + 1;
      this.#render();
    } catch (e) {
      this.#say(e.message, true);
    } finally {
      this.#older.disabled = this.#oldest <= 1;
    }
  }

  #passes(e) {
    return !this.#filter || searchable(e).includes(this.#filter);
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
  }
}
