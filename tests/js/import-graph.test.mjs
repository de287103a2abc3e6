// The package's JavaScript modules form no import cycle (a loop means a concept has no home:
// STYLE.md), and the HTTP handler depends on no host: it serves the contract of host.d.ts, so
// neither the Node host (lib/node/open-pool.js, the file system) nor the edge worker's is among
// the modules it imports, directly or not. Static `import`/`export … from` and dynamic
// `import("…")` with a relative specifier are followed; a control graph shows the cycle check
// finds a loop.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const PKG = fileURLToPath(new URL("../../pkg-scripts/", import.meta.url));
const SKIP = new Set(["node_modules", "pkg"]);

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

/** file → the package files it imports (relative specifiers only; pkg/ is generated). */
function graph() {
  const g = new Map();
  for (const f of files(PKG)) {
    const text = readFileSync(f, "utf8").replace(/^\s*\/\/.*$/gm, "");
    const deps = new Set();
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (!spec.startsWith(".")) continue;
      const target = resolve(dirname(f), spec);
      if (target.includes(`${PKG}pkg/`)) continue;
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
