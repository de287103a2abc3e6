// The grid's filter bar: context, state and kind, a search on the value, and the sort order.
// Each control has a visible label; a change calls `onChange(filter)` with
// `{context, state, kind, search, sort}` (empty strings mean "any").

import { h, labelled } from "./dom.js";
import { KINDS, SORTS, STATES } from "./model.js";

const options = (select, entries) =>
  select.replaceChildren(...entries.map(([value, text]) => h("option", { value }, text)));

export class Filters {
  #context = h("select", { name: "context" });
  #state = h("select", { name: "state" });
  #kind = h("select", { name: "kind" });
  #search = h("input", { type: "search", name: "search", placeholder: "part of a value" });
  #sort = h("select", { name: "sort" });
  element;

  constructor({ onChange }) {
    options(this.#state, [["", "any"], ...STATES.map((s) => [s, s])]);
    options(this.#kind, [["", "any"], ...KINDS.map((k) => [k, k])]);
    options(this.#sort, Object.entries(SORTS));
    this.contexts([]);
    for (const control of [this.#context, this.#state, this.#kind, this.#sort]) {
      control.addEventListener("change", () => onChange(this.value()));
    }
    this.#search.addEventListener("input", () => onChange(this.value()));
    this.element = h(
      "div",
      { class: "toolbar filters", role: "group", "aria-label": "Filter resources" },
      labelled("Context", this.#context),
      labelled("State", this.#state),
      labelled("Kind", this.#kind),
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

  value() {
    return {
      context: this.#context.value,
      state: this.#state.value,
      kind: this.#kind.value,
      search: this.#search.value,
      sort: this.#sort.value,
    };
  }
}
