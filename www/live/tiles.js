// The tiles of live mode: registered, leased, blocklisted, cooling, recovering, cells and
// events dropped, read from `GET /api/stats` (the pool's stats plus the host's drop counters).

import { h } from "./dom.js";

const TILES = [
  ["registered", "Registered", (s) => s.registered],
  ["leased", "Leased", (s) => s.leased],
  ["blocked", "Blocklisted", (s) => s.blocked],
  ["cooling", "Cooling", (s) => s.cellsByState.COOLING],
  ["recovering", "Recovering", (s) => s.cellsByState.RECOVERING],
  ["cells", "Cells", (s) => s.cells],
  ["dropped", "Events dropped", (s) => s.eventsDropped + (s.auditDropped ?? 0) + (s.deliveryDropped ?? 0)],
];

export class Tiles {
  #values = new Map();
  element;

  constructor() {
    this.element = h(
      "dl",
      { class: "tiles", "aria-label": "Pool" },
      ...TILES.map(([key, label]) => {
        const value = h("dd", { class: "tile-value" }, "–");
        this.#values.set(key, value);
        return h("div", { class: `tile tile-${key}` }, h("dt", {}, label), value);
      }),
    );
  }

  show(stats) {
    for (const [key, , read] of TILES) this.#values.get(key).textContent = String(read(stats));
    const dropped = this.#values.get("dropped");
    dropped.title = `engine buffer ${stats.eventsDropped}, audit log ${stats.auditDropped ?? 0}, slow consumers ${stats.deliveryDropped ?? 0}`;
  }
}
