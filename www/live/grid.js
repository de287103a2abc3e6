// The resource × context grid: one row per resource (its group in a column of its own), one
// column per context; each cell shows its state as a colour *and* a text label, its score, its
// cooldown countdown, "paced until hh:mm:ss" while pacing keeps it out of acquire, "held"
// while the cooling cap keeps it in rotation, and "failing · CAUSE" while its last outcome
// failed or its score is below zero, whatever its state; a resource nobody has reported on reads
// `contexts: 0`. Rows are virtualised: only the rows in view (plus
// a margin) exist, recycled as the list scrolls, so 10,000 resources stay fluid. A WAI-ARIA
// grid with one tab stop: arrows, Page Up/Down, Home/End and Ctrl+Home/End move between cells,
// Enter or Space opens the row's resource. The focused cell is always scrolled into view, across
// too (the name column is sticky, so a cell is revealed right of it), and its resource and
// context are said in full above the grid (names in the grid keep their start and end and cut
// the middle).

import { h } from "./dom.js";
import { clockTime, countdown, groupText, isFailing, isPaced, scoreText } from "./model.js";

const ROW_HEIGHT = 32;
const OVERSCAN = 8;
/** Column widths in px; live.css gives the cells the same (flex rows of fixed cells lay out
 * faster than a CSS grid per row). On a narrow screen (NARROW) the name column is narrower. */
const COLUMN = { resource: 300, group: 130, count: 110, context: 240 };
const NARROW = "(max-width: 640px)";
const NARROW_RESOURCE = 150;
/** Characters of a name kept whole at its end: the middle is what an ellipsis cuts. */
const TAIL = 12;
/** Columns before the first context's. */
const FIXED = 3;

export class ResourceGrid {
  #rows = [];
  #contexts = [];
  #now;
  #onOpen;
  /** Recycled row elements, each `{el, cells: [...], index, counting}` (`counting`: it shows a
   * cooldown countdown or a pacing end, which the clock changes). */
  #pool = [];
  #active = { row: 0, col: 0 };
  /** The cell that has tabindex 0 (every other has -1). */
  #stop = null;
  #scheduled = false;
  #scroller;
  /** The focused cell's resource and context in full (names in the grid are cut). */
  #focusLine;
  #grid;
  #head;
  #body;
  element;

  /** `now()`: the server's clock (ms); `onOpen(row)`: open a row's resource. */
  constructor({ now, onOpen }) {
    this.#now = now;
    this.#onOpen = onOpen;
    this.#head = h("div", { role: "row", "aria-rowindex": "1", class: "grid-row grid-head" });
    this.#body = h("div", { role: "rowgroup", class: "grid-body" });
    this.#grid = h(
      "div",
      { role: "grid", "aria-label": "Resources by context", class: "grid" },
      h("div", { role: "rowgroup", class: "grid-headgroup" }, this.#head),
      this.#body,
    );
    this.#scroller = h("div", { class: "grid-scroll" }, this.#grid);
    this.#focusLine = h("p", { class: "grid-focus muted", "aria-hidden": "true" });
    this.#scroller.addEventListener("scroll", () => this.#schedule());
    this.#grid.addEventListener("keydown", (e) => this.#key(e));
    this.#grid.addEventListener("focusin", (e) => {
      const at = this.#cellAt(e.target);
      if (at) {
        this.#active = at;
        this.#showFocused();
      }
    });
    this.#grid.addEventListener("click", (e) => {
      const at = this.#cellAt(e.target);
      if (!at) return;
      this.#active = at;
      this.#roving();
      this.#onOpen(this.#rows[at.row]);
    });
    new ResizeObserver(() => this.#render(true)).observe(this.#scroller);
    matchMedia(NARROW).addEventListener("change", () => {
      this.#columns();
      this.#render(true);
    });
    this.element = h("div", { class: "grid-box" }, this.#focusLine, this.#scroller);
  }

  /** Shows `rows` (from model.visibleRows) with a column per context of `contexts`. */
  show(rows, contexts) {
    const columnsChanged = contexts.length !== this.#contexts.length || contexts.some((c, i) => c !== this.#contexts[i]);
    this.#rows = rows;
    this.#contexts = contexts;
    if (columnsChanged) this.#columns();
    this.#grid.setAttribute("aria-rowcount", String(rows.length + 1));
    this.#body.style.height = `${rows.length * ROW_HEIGHT}px`;
    this.#active.row = Math.max(0, Math.min(this.#active.row, rows.length - 1));
    this.#render(true);
  }

  /** Moves focus to the grid's tab stop (the active cell). */
  focus() {
    this.#grid.querySelector('.grid-body [tabindex="0"]')?.focus({ preventScroll: true });
  }

  /** Redraws the rows in view that show a cooldown countdown or pacing (they move with the clock). */
  tick() {
    const now = this.#now();
    for (const slot of this.#pool) if (slot.counting && slot.index >= 0) this.#bind(slot, slot.index, now);
  }

  #columns() {
    const n = this.#contexts.length;
    this.#grid.style.width = `${this.#resourceWidth() + COLUMN.group + COLUMN.count + n * COLUMN.context}px`;
    this.#grid.setAttribute("aria-colcount", String(n + FIXED));
    const header = (text, i, cls = "") => h("div", { role: "columnheader", "aria-colindex": i + 1, class: `grid-cell ${cls}`.trim() }, text);
    this.#head.replaceChildren(header("Resource", 0, "res"), header("Group", 1, "grp"), header("Contexts", 2, "count"),
      ...this.#contexts.map((c, i) => header(c, i + FIXED, "ctx")));
    for (const r of this.#pool) r.el.remove();
    this.#pool = [];
    this.#stop = null;
    this.#active.col = Math.min(this.#active.col, n + FIXED - 1);
  }

  #newRow() {
    const cells = [];
    const el = h("div", { role: "row", class: "grid-row", hidden: true });
    const resource = h("div", { role: "gridcell", "aria-colindex": "1", class: "grid-cell res", tabindex: "-1" },
      h("span", { class: "kind" }), h("span", { class: "value" }, h("span", { class: "head" }), h("span", { class: "tail" })), h("span", { class: "badges" }));
    const group = h("div", { role: "gridcell", "aria-colindex": "2", class: "grid-cell grp", tabindex: "-1" });
    const count = h("div", { role: "gridcell", "aria-colindex": "3", class: "grid-cell count", tabindex: "-1" });
    cells.push(resource, group, count);
    for (let i = 0; i < this.#contexts.length; i++) {
      cells.push(h("div", { role: "gridcell", "aria-colindex": i + FIXED + 1, class: "grid-cell ctx", tabindex: "-1" },
        h("span", { class: "state" }), h("span", { class: "score" })));
    }
    el.append(...cells);
    this.#body.append(el);
    return { el, cells, index: -1, counting: false };
  }

  #schedule() {
    if (this.#scheduled) return;
    this.#scheduled = true;
    requestAnimationFrame(() => {
      this.#scheduled = false;
      this.#render(false);
    });
  }

  /** Binds the rows in view; `all` rebinds those already bound too. */
  #render(all) {
    const height = this.#scroller.clientHeight || 600;
    const need = Math.ceil(height / ROW_HEIGHT) + 2 * OVERSCAN;
    while (this.#pool.length < need) this.#pool.push(this.#newRow());
    const first = Math.max(0, Math.floor(this.#scroller.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(this.#rows.length, first + this.#pool.length);
    const now = this.#now();
    for (let i = 0; i < this.#pool.length; i++) {
      const index = first + i;
      const slot = this.#pool[index % this.#pool.length];
      if (index >= last) {
        if (slot.index !== -1) this.#unbind(slot);
        continue;
      }
      if (all || slot.index !== index) this.#bind(slot, index, now);
    }
    this.#roving();
  }

  #unbind(slot) {
    slot.index = -1;
    slot.el.hidden = true;
  }

  #bind(slot, index, now) {
    const row = this.#rows[index];
    const r = row.resource;
    slot.index = index;
    slot.el.hidden = false;
    slot.el.style.transform = `translateY(${index * ROW_HEIGHT}px)`;
    slot.el.setAttribute("aria-rowindex", String(index + 2));
    const [res, group, count, ...ctx] = slot.cells;
    res.children[0].textContent = r.kind;
    const cut = Math.max(0, r.value.length - TAIL);
    res.children[1].firstChild.textContent = r.value.slice(0, cut);
    res.children[1].lastChild.textContent = r.value.slice(cut);
    res.children[1].title = r.value;
    res.children[2].textContent = [r.blocked ? "blocked" : "", leasedText(r)].filter(Boolean).join(" ");
    group.textContent = groupText(r.group);
    group.classList.toggle("none", typeof r.group !== "string");
    count.textContent = `contexts: ${row.cells.size}`;
    slot.counting = false;
    for (let i = 0; i < ctx.length; i++) {
      const cell = row.cells.get(this.#contexts[i]);
      const el = ctx[i];
      const state = el.firstElementChild;
      const score = el.lastElementChild;
      if (!cell) {
        el.className = "grid-cell ctx s-none";
        state.textContent = "no cell";
        this.#flags(el, null);
        score.textContent = "";
        continue;
      }
      el.className = `grid-cell ctx s-${cell.state.toLowerCase()}`;
      state.textContent = cell.state;
      const paced = isPaced(cell, now);
      if (paced) slot.counting = true;
      const failing = isFailing(cell);
      const cause = row.causes?.get(this.#contexts[i]) ?? null;
      this.#flags(el, cell.held === true || paced || failing ? [
        // The cause is what shows; "failing" is said to screen readers (and in the title).
        failing ? h("span", { class: "flag failing", title: `failing: ${cause ? `last failure ${cause}` : "the last outcome failed"}, score ${scoreText(cell.score)}` },
          cause ? [h("span", { class: "sr-only" }, "failing · "), cause] : "failing") : null,
        cell.held === true ? h("span", { class: "flag held", title: "held: the cooling cap keeps it in rotation" }, "held") : null,
        paced ? h("span", { class: "flag paced", title: `paced until ${new Date(cell.pacedUntil).toLocaleString()}` }, `paced until ${clockTime(cell.pacedUntil)}`) : null,
      ] : null);
      // The score, and while cooling the time left (one text: fewer boxes to lay out).
      const left = cell.state === "COOLING" ? countdown(cell.cooldownUntil, now) : "";
      if (left) slot.counting = true;
      score.textContent = left ? `${scoreText(cell.score)} · ${left}` : scoreText(cell.score);
    }
  }

  /** Shows `badges` (nodes; null: none) between a context cell's state and score. The box
   * that holds them exists only while there are some: most cells have none, and every box in a
   * scrolled row costs layout. */
  #flags(el, badges) {
    const box = el.children.length === 3 ? el.children[1] : null;
    if (!badges) {
      box?.remove();
      return;
    }
    const shown = badges.filter(Boolean);
    if (box) box.replaceChildren(...shown);
    else el.lastElementChild.before(h("span", { class: "flags" }, ...shown));
  }

  /** One tab stop: the active cell if it is in view, else the same column of the first row in view. */
  #roving() {
    const hadFocus = this.#grid.contains(document.activeElement);
    let target = null;
    let fallback = null;
    for (const slot of this.#pool) {
      if (slot.index < 0) continue;
      if (slot.index === this.#active.row) target = slot.cells[this.#active.col];
      if (!fallback || slot.index < fallback.index) fallback = slot;
    }
    const stop = target ?? fallback?.cells[this.#active.col] ?? null;
    if (stop !== this.#stop) {
      if (this.#stop) this.#stop.tabIndex = -1;
      if (stop) stop.tabIndex = 0;
      this.#stop = stop;
    }
    if (hadFocus && target && document.activeElement !== target) target.focus({ preventScroll: true });
  }

  #cellAt(node) {
    const cell = node.closest?.(".grid-body [role=gridcell]");
    if (!cell) return null;
    const slot = this.#pool.find((s) => s.cells.includes(cell));
    if (!slot || slot.index < 0) return null;
    return { row: slot.index, col: slot.cells.indexOf(cell) };
  }

  #key(e) {
    const rows = this.#rows.length;
    if (rows === 0) return;
    const cols = this.#contexts.length + FIXED;
    const page = Math.max(1, Math.floor(this.#scroller.clientHeight / ROW_HEIGHT) - 1);
    let { row, col } = this.#active;
    switch (e.key) {
      case "ArrowDown": row += 1; break;
      case "ArrowUp": row -= 1; break;
      case "ArrowRight": col += 1; break;
      case "ArrowLeft": col -= 1; break;
      case "PageDown": row += page; break;
      case "PageUp": row -= page; break;
      case "Home": if (e.ctrlKey) row = 0; col = 0; break;
      case "End": if (e.ctrlKey) row = rows - 1; col = cols - 1; break;
      case "Enter":
      case " ":
        e.preventDefault();
        this.#onOpen(this.#rows[row]);
        return;
      default:
        return;
    }
    e.preventDefault();
    this.#active = { row: Math.max(0, Math.min(rows - 1, row)), col: Math.max(0, Math.min(cols - 1, col)) };
    this.#reveal(this.#active.row);
    this.#revealColumn(this.#active.col);
    this.#render(false);
    this.#roving();
    this.#pool.find((s) => s.index === this.#active.row)?.cells[this.#active.col].focus({ preventScroll: true });
  }

  #resourceWidth() {
    return matchMedia(NARROW).matches ? NARROW_RESOURCE : COLUMN.resource;
  }

  /** Says the focused cell's resource (and context) in full above the grid. */
  #showFocused() {
    const row = this.#rows[this.#active.row];
    if (!row) return;
    const col = this.#active.col;
    const context = col >= FIXED ? this.#contexts[col - FIXED] : null;
    const cell = context ? row.cells.get(context) : null;
    const where = context ? ` · ${context}: ${cell ? `${cell.state}, score ${scoreText(cell.score)}` : "no cell"}` : "";
    this.#focusLine.textContent = `${row.resource.kind} ${row.resource.value}${where}`;
  }

  /** Scrolls so that column `col` is in view right of the sticky name column. */
  #revealColumn(col) {
    const widths = [this.#resourceWidth(), COLUMN.group, COLUMN.count];
    const width = (i) => (i < FIXED ? widths[i] : COLUMN.context);
    if (col === 0) return; // the name column is always in view
    let left = 0;
    for (let i = 0; i < col; i++) left += width(i);
    const right = left + width(col);
    const sticky = widths[0];
    const view = this.#scroller.clientWidth;
    if (left - sticky < this.#scroller.scrollLeft) this.#scroller.scrollLeft = left - sticky;
    else if (right > this.#scroller.scrollLeft + view) this.#scroller.scrollLeft = right - view;
  }

  /** Scrolls so that row `index` is in view below the sticky header. */
  #reveal(index) {
    const top = index * ROW_HEIGHT;
    const view = this.#scroller.clientHeight - ROW_HEIGHT; // the header row stays on top
    if (top < this.#scroller.scrollTop) this.#scroller.scrollTop = top;
    else if (top + ROW_HEIGHT > this.#scroller.scrollTop + view) this.#scroller.scrollTop = top + ROW_HEIGHT - view;
  }
}

/** A row's lease flag: "leased", or with a capacity above one "leased 3/8" (live leases of
 * `maxLeases`; "0/8" is left out, as "leased" is when none is held). */
function leasedText(r) {
  const held = r.leases?.length ?? (r.lease ? 1 : 0);
  const max = r.maxLeases ?? 1;
  if (held === 0) return "";
  return max > 1 ? `leased ${held}/${max}` : "leased";
}
