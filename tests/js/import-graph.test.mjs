// The package's JavaScript modules form no import cycle (a loop means a concept has no home:
// STYLE.md), and the HTTP handler depends on no host: it serves the contract of host.d.ts, so
// neither the Node host (lib/node/open-pool.js, the file system) nor the edge worker's is among
// the modules it imports, directly or not. Static `import`/`export … from` and dynamic
// `import("…")` with a relative specifier are followed; a control graph shows the cycle check
// finds a loop. Then the layers of docs/architecture.md, each a rule with a control that breaks
// it: the host core (lib/host/) imports no shell and reaches no Node API, the Node and edge
// shells do not import each other, the handler reaches no shell, nothing imports upwards. The
// folders too import each other without a loop (an import from a folder to one that imports it
// back is an import upwards), in pkg-scripts/ and in the console (www/), whose layers have
// rules of their own: sim/core/ (the simulation's logic) imports no widget, and live/ and sim/
// do not import each other.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const PKG = fileURLToPath(new URL("../../pkg-scripts/", import.meta.url));
const WWW = fileURLToPath(new URL("../../www/", import.meta.url));
/** Not read: installed packages and what the build copies in (the engine's glue, uPlot). */
const SKIP = new Set(["node_modules", "pkg", "vendor"]);

function files(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name) || name.startsWith(".")) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (/\.(m?js)$/.test(name)) out.push(p);
  }
  return out;
}

const IMPORT = /(?:^|[;\s])(?:import|export)\s[^"'`;]*?from\s*["']([^"']+)["']|(?:^|[;\s])import\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** file → the files of `root` it imports (relative specifiers only; generated files left out). */
function graph(root = PKG) {
  const g = new Map();
  for (const f of files(root)) {
    const text = readFileSync(f, "utf8").replace(/^\s*\/\/.*$/gm, "");
    const deps = new Set();
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (!spec.startsWith(".")) continue;
      const target = resolve(dirname(f), spec);
      if (target.includes(`${PKG}pkg/`) || target.includes(`${WWW}vendor/`)) continue;
      deps.add(target);
    }
    g.set(f, deps);
  }
  return g;
}

/** The cycles of `g` (each a list of nodes), by depth-first search. */
export function cycles(g) {
  const found = [];
  const state = new Map(); // undefined unvisited, 1 on the stack, 2 done
  const stack = [];
  const visit = (n) => {
    state.set(n, 1);
    stack.push(n);
    for (const d of g.get(n) ?? []) {
      if (state.get(d) === 1) found.push(stack.slice(stack.indexOf(d)).concat(d));
      else if (state.get(d) === undefined) visit(d);
    }
    stack.pop();
    state.set(n, 2);
  };
  for (const n of g.keys()) if (state.get(n) === undefined) visit(n);
  return found;
}

const rel = (f) => relative(PKG, f);

test("the cycle check finds a loop in a control graph", () => {
  const g = new Map([["a", new Set(["b"])], ["b", new Set(["c"])], ["c", new Set(["a"])], ["d", new Set(["a"])]]);
  assert.deepEqual(cycles(g), [["a", "b", "c", "a"]]);
  assert.deepEqual(cycles(new Map([["a", new Set(["b"])], ["b", new Set()]])), []);
});

test("no import cycle among the package's JavaScript modules", () => {
  const g = graph();
  assert.ok(g.size > 30, `read the package's modules (${g.size})`);
  assert.ok([...g.get(join(PKG, "node.js"))].some((d) => d.endsWith("lib/engine/node-engine.js")), "imports are followed");
  const found = cycles(g).map((c) => c.map(rel).join(" → "));
  assert.deepEqual(found, []);
});

test("the HTTP handler imports no host: neither the Node host nor the edge worker's", () => {
  const g = graph();
  const seen = new Set();
  const walk = (n) => {
    if (seen.has(n)) return;
    seen.add(n);
    for (const d of g.get(n) ?? []) walk(d);
  };
  walk(join(PKG, "lib/http/handler.js"));
  const reached = [...seen].map(rel);
  for (const host of ["lib/node/open-pool.js", "lib/host/memory-host.js", "lib/engine/node-engine.js", "node.js"]) {
    assert.ok(!reached.includes(host), `handler.js reaches ${host}: ${reached.join(", ")}`);
  }
  assert.deepEqual(reached.filter((f) => f.startsWith("lib/edge/") || f.startsWith("lib/node/")), []);
});

// --- the layers (docs/architecture.md) ------------------------------------------------------
// Each rule is a function from the graph to its violations; each is checked on the package and
// on a control graph that breaks it, so a rule that could not fail would show.

/** file → the bare specifiers (`node:…`, packages) it imports statically. A dynamic
 * `import("node:…")` is a capability probed at run time (resource-id.js asks for node:crypto,
 * which workerd gives under nodejs_compat) and is not counted. */
function externals() {
  const STATIC = /(?:^|[;\s])(?:import|export)\s[^"'`;]*?from\s*["']([^"']+)["']|(?:^|[;\s])import\s*["']([^"']+)["']/g;
  const ext = new Map();
  for (const f of files(PKG)) {
    const text = readFileSync(f, "utf8").replace(/^\s*\/\/.*$/gm, "");
    const out = new Set();
    for (const m of text.matchAll(STATIC)) {
      const spec = m[1] ?? m[2];
      if (!spec.startsWith(".")) out.add(spec);
    }
    ext.set(f, out);
  }
  return ext;
}

/** Every module `from` reaches through `g` (itself included). */
function reach(g, from) {
  const seen = new Set();
  const walk = (n) => {
    if (seen.has(n)) return;
    seen.add(n);
    for (const d of g.get(n) ?? []) walk(d);
  };
  walk(from);
  return seen;
}

const under = (dir) => (f) => rel(f).startsWith(dir);
const isEntry = (f) => ["node.js", "web.js"].includes(rel(f)) || rel(f).startsWith("bin/");

/** Direct imports from modules `from` matches to modules `to` matches: ["a → b"]. */
function edges(g, from, to) {
  const out = [];
  for (const [f, deps] of g) if (from(f)) for (const d of deps) if (to(d)) out.push(`${rel(f)} → ${rel(d)}`);
  return out;
}

/** Modules `from` matches that reach (directly or not) a module `to` matches. */
function reaching(g, from, to) {
  const out = [];
  for (const f of g.keys()) {
    if (!from(f)) continue;
    for (const r of reach(g, f)) if (r !== f && to(r)) out.push(`${rel(f)} ⇝ ${rel(r)}`);
  }
  return out;
}

const NODE_ONLY = (spec) => spec.startsWith("node:") || ["undici", "prom-client", "autocannon"].includes(spec);

const RULES = {
  /** The host core imports no shell, no engine loader, no HTTP module and no package entry. */
  "the host core (lib/host/) imports no shell, no engine loader, no HTTP module, no entry": (g) =>
    edges(g, under("lib/host/"), (d) => under("lib/node/")(d) || under("lib/edge/")(d) || under("lib/engine/")(d) || under("lib/http/")(d) || isEntry(d)),
  /** …and what it reaches imports nothing that needs Node. */
  "the host core reaches no node: builtin and no Node-only package": (g, ext) => {
    const out = [];
    for (const f of g.keys()) {
      if (!under("lib/host/")(f)) continue;
      for (const r of reach(g, f)) for (const spec of ext.get(r) ?? []) if (NODE_ONLY(spec)) out.push(`${rel(f)} ⇝ ${rel(r)} imports ${spec}`);
    }
    return out;
  },
  "the edge shell reaches nothing of the Node shell or the Node engine loader": (g) =>
    reaching(g, under("lib/edge/"), (d) => under("lib/node/")(d) || under("lib/engine/")(d) || rel(d) === "node.js"),
  "the Node shell imports nothing of the edge shell": (g) => reaching(g, under("lib/node/"), under("lib/edge/")),
  "the HTTP handler reaches no shell, no host and no engine loader": (g) =>
    reaching(g, (f) => rel(f) === "lib/http/handler.js", (d) =>
      under("lib/node/")(d) || under("lib/edge/")(d) || under("lib/engine/")(d) || isEntry(d) || ["lib/host/host-core.js", "lib/host/memory-host.js"].includes(rel(d))),
  "the engine loaders import no host, shell or HTTP module": (g) =>
    edges(g, under("lib/engine/"), (d) => ["lib/host/", "lib/node/", "lib/edge/", "lib/http/"].some((p) => under(p)(d))),
  "calls, outcomes, the client and Crawlee import no host and no shell": (g) =>
    edges(g, (f) => ["lib/call/", "lib/outcome/", "lib/client/", "lib/crawlee/"].some((p) => under(p)(f)), (d) =>
      ["lib/host/", "lib/node/", "lib/edge/"].some((p) => under(p)(d))),
  "no module of lib/ imports a package entry (the edge shell takes the web engine from web.js)": (g) =>
    edges(g, (f) => under("lib/")(f) && !under("lib/edge/")(f), isEntry).concat(edges(g, under("lib/edge/"), (d) => isEntry(d) && rel(d) !== "web.js")),
};

/** A control graph that breaks `rule`: one module of the package given an import it must not
 * have (or, for the builtin rule, a core module importing node:fs). */
const BREAKS = {
  "the host core (lib/host/) imports no shell, no engine loader, no HTTP module, no entry": ["lib/host/host-core.js", "lib/node/open-pool.js"],
  "the host core reaches no node: builtin and no Node-only package": ["lib/host/metrics.js", "node:fs"],
  "the edge shell reaches nothing of the Node shell or the Node engine loader": ["lib/edge/sql-store.js", "lib/node/fsync.js"],
  "the Node shell imports nothing of the edge shell": ["lib/node/lock.js", "lib/edge/regions.js"],
  "the HTTP handler reaches no shell, no host and no engine loader": ["lib/http/problems.js", "lib/host/memory-host.js"],
  "the engine loaders import no host, shell or HTTP module": ["lib/engine/engine-load.js", "lib/http/problems.js"],
  "calls, outcomes, the client and Crawlee import no host and no shell": ["lib/outcome/redact.js", "lib/node/http-probe.js"],
  "no module of lib/ imports a package entry (the edge shell takes the web engine from web.js)": ["lib/waiters.js", "node.js"],
};

for (const [name, rule] of Object.entries(RULES)) {
  test(`layers: ${name}`, () => {
    const g = graph();
    const ext = externals();
    assert.deepEqual(rule(g, ext), []);
    // The control: the same rule over the package with one forbidden import added finds it.
    const [from, to] = BREAKS[name];
    const broken = new Map([...g].map(([f, d]) => [f, new Set(d)]));
    const brokenExt = new Map([...ext].map(([f, d]) => [f, new Set(d)]));
    assert.ok(g.has(join(PKG, from)), `${from} exists`);
    if (to.startsWith("node:")) brokenExt.get(join(PKG, from)).add(to);
    else {
      assert.ok(g.has(join(PKG, to)), `${to} exists`);
      broken.get(join(PKG, from)).add(join(PKG, to));
    }
    assert.notDeepEqual(rule(broken, brokenExt), [], "the rule finds the forbidden import");
  });
}

// --- folders, and the console (www/) ---------------------------------------------------------

/** The graph of `g`'s folders (relative to `root`): an edge for each import between two. */
function folders(g, root) {
  const out = new Map();
  const dirOf = (f) => dirname(relative(root, f)) + "/";
  for (const [f, deps] of g) {
    const from = dirOf(f);
    if (!out.has(from)) out.set(from, new Set());
    for (const d of deps) if (dirOf(d) !== from) out.get(from).add(dirOf(d));
  }
  return out;
}

for (const [name, root] of [["pkg-scripts/", PKG], ["www/", WWW]]) {
  test(`no import cycle among the folders of ${name} (no folder imports one above it)`, () => {
    const g = folders(graph(root), root);
    assert.ok(g.size >= 4, `read the folders (${[...g.keys()].join(", ")})`);
    assert.deepEqual(cycles(g).map((c) => c.join(" → ")), []);
  });
}

test("the folder check finds a loop: lib/host/ importing lib/http/, which imports lib/host/", () => {
  const g = graph();
  const broken = new Map([...g].map(([f, d]) => [f, new Set(d)]));
  const imports = (from, dir) => [...broken.get(join(PKG, from))].some((d) => rel(d).startsWith(dir));
  assert.ok(imports("lib/http/routes-operator.js", "lib/host/"), "the control rests on lib/http/ importing lib/host/");
  broken.get(join(PKG, "lib/host/host-core.js")).add(join(PKG, "lib/http/lease-id.js"));
  assert.notDeepEqual(cycles(folders(broken, PKG)), []);
});

test("no import cycle among the console's modules (www/)", () => {
  const g = graph(WWW);
  assert.ok(g.size > 30, `read the console's modules (${g.size})`);
  assert.ok([...g.get(join(WWW, "app.js"))].some((d) => d.endsWith("live/live.js")), "imports are followed");
  assert.deepEqual(cycles(g).map((c) => c.map((f) => relative(WWW, f)).join(" → ")), []);
});

const WWW_RULES = [
  ["sim/core/ (the simulation's logic, also run in Node) imports no widget, no live view, no shell", "sim/core/", ["sim/ui/", "live/", "app.js", "sim/sim.js", "sim/worker.js"], ["sim/core/compare.js", "sim/ui/dom.js"]],
  ["shared/ imports neither mode", "shared/", ["live/", "sim/", "app.js"], ["shared/connection.js", "live/model.js"]],
  ["live/ imports nothing of sim/", "live/", ["sim/", "app.js"], ["live/grid.js", "sim/core/scenario.js"]],
  ["sim/ imports nothing of live/", "sim/", ["live/", "app.js"], ["sim/ui/results.js", "live/dom.js"]],
];
for (const [name, from, banned, [breakFrom, breakTo]] of WWW_RULES) {
  test(`console layers: ${name}`, () => {
    const g = graph(WWW);
    const found = (graphOf) => {
      const out = [];
      for (const [f, deps] of graphOf) {
        if (!relative(WWW, f).startsWith(from)) continue;
        for (const d of deps) if (banned.some((b) => relative(WWW, d).startsWith(b))) out.push(`${relative(WWW, f)} → ${relative(WWW, d)}`);
      }
      return out;
    };
    assert.deepEqual(found(g), []);
    const broken = new Map([...g].map(([f, d]) => [f, new Set(d)]));
    assert.ok(g.has(join(WWW, breakFrom)) && g.has(join(WWW, breakTo)), `${breakFrom} and ${breakTo} exist`);
    broken.get(join(WWW, breakFrom)).add(join(WWW, breakTo));
    assert.notDeepEqual(found(broken), [], "the rule finds the forbidden import");
  });
}
