// The console's shell: the two mode tabs and the connection to a pool server they share. Live
// mode (live/) and simulation mode (sim/) each export `mount(element, context)`; `context` is
// `{ connection }` (shared/connection.js). Each mode is mounted once, on first view.
import { Connection } from "./shared/connection.js";

const connection = new Connection();
const modes = {
  live: () => import("./live/live.js"),
  sim: () => import("./sim/sim.js"),
};
const mounted = new Set();

async function show(name) {
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    const selected = tab.getAttribute("aria-controls") === name;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    document.getElementById(tab.getAttribute("aria-controls")).hidden = !selected;
  }
  if (!mounted.has(name)) {
    mounted.add(name);
    const mode = await modes[name]();
    await mode.mount(document.getElementById(name), { connection });
  }
}

const tabs = [...document.querySelectorAll('[role="tab"]')];
for (const tab of tabs) {
  tab.addEventListener("click", () => show(tab.getAttribute("aria-controls")));
  tab.addEventListener("keydown", (e) => {
    if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
    const next = tabs[(tabs.indexOf(tab) + (e.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
    next.focus();
    show(next.getAttribute("aria-controls"));
  });
}
show(location.hash === "#sim" ? "sim" : "live");
