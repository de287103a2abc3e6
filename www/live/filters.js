// The grid's filter bar: context, state, kind, group (or "no group") and paced / held / failing cells, a
// search on the value, and the sort order. Each control has a visible label; a change calls
// `onChange(filter)` with `{context, state, kind, group, flag, search, sort}` (empty strings
// mean "any").

import { h, labelled } from "./dom.js";
import { FLAGS, KINDS, NO_GROUP, SORTS, STATES } from "./model.js";

const options = (select, entries) =>
  select.replaceChildren(...entries.map(([value, text]) => h("option", { value }, text)));

export class Filters {
  #context = h("select", { name: "context" });
  #state = h("select", { name: "state" });
  #kind = h("select", { name: "kind" });
  #group = h("select", { name: "group" });
  #flag = h("select", { name: "flag" });
  #search = h("input", { type: "search", name: "search", placeholder: "part of a value" });
  #sort = h("select", { name: "sort" });
  element;

  #onChange;

  constructor({ onChange }) {
    this.#onChange = onChange;
    options(this.#state, [["", "any"], ...STATES.map((s) => [s, s])]);
    options(this.#kind, [["", "any"], ...KINDS.map((k) => [k, k])]);
    options(this.#flag, [["", "any"], ...Object.entries(FLAGS).map(([value, text]) => [value, `${text} cells`])]);
    options(this.#sort, Object.entries(SORTS));
    this.contexts([]);
    this.groups([], false);
    for (const control of [this.#context, this.#state, this.#kind, this.#group, this.#flag, this.#sort]) {
      control.addEventListener("change", () => onChange(this.value()));
    }
    this.#search.addEventListener("input", () => onChange(this.value()));
    this.element = h(
      "div",
      { class: "toolbar filters", role: "group", "aria-label": "Filter resources" },
      labelled("Context", this.#context),
      labelled("State", this.#state),
      labelled("Kind", this.#kind),
      labelled("Group", this.#group),
      labelled("Paced / held / failing", this.#flag),
      labelled("Search", this.#search),
      labelled("Sort by", this.#sort),
    );
  }

  /** Offers these contexts (keeping the one chosen, if still there). */
  contexts(list) {
    const chosen = this.#context.value;
    options(this.#context, [["", "all"], ...list.map((c) => [c, c])]);
    this.#context.value = list.includes(chosen) ? chosen : "";
  }

  /** Chooses `context` ("" for all), as if picked in its select, and tells `onChange`. */
  setContext(context) {
    if (context && ![...this.#context.options].some((o) => o.value === context)) {
      this.#context.append(h("option", { value: context }, context)); // a site with no cell yet
    }
    this.#context.value = context;
    this.#onChange(this.value());
  }

  /** Offers these groups, and "no group" when `ungrouped` (keeping the one chosen, if still there). */
  groups(list, ungrouped) {
    const chosen = this.#group.value;
    const entries = [["", "any"], ...(ungrouped ? [[NO_GROUP, "no group"]] : []), ...list.map((g) => [g, g])];
    options(this.#group, entries);
    this.#group.value = entries.some(([value]) => value === chosen) ? chosen : "";
  }

  value() {
    return {
      context: this.#context.value,
      state: this.#state.value,
      kind: this.#kind.value,
      group: this.#group.value,
      flag: this.#flag.value,
      search: this.#search.value,
      sort: this.#sort.value,
    };
  }
}
