// The package's vocabulary (pkg-scripts/lib/vocabulary.js) is the engine's: every kind and
// failure type it names reaches the engine as itself through the facade's codes, and it is
// the only place a JavaScript file of the package or the console spells those lists.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Pool } from "repute";
import { KINDS, FAILURE_TYPES, VIEW_STATES, KIND_CODE, FAILURE_CODE } from "../../pkg-scripts/lib/vocabulary.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

test("every kind registers as itself", () => {
  const pool = new Pool({ seed: 1, now: () => 1_700_000_000_000 });
  for (const kind of KINDS) pool.register(kind, `${kind.toLowerCase()}-1`);
  assert.deepEqual(pool.resources().map((r) => r.kind).sort(), [...KINDS].sort());
  assert.deepEqual([...KIND_CODE.values()], [0, 1, 2]);
  pool.free();
});

test("every failure type is recorded by the engine under its own name", () => {
  const pool = new Pool({ seed: 1, now: () => 1_700_000_000_000, config: { windowSize: FAILURE_TYPES.length } });
  pool.register("PROXY", "p");
  for (const failure of FAILURE_TYPES) pool.report("PROXY", "p", "c", { ok: false, failure });
  const [cell] = pool.resource("PROXY", "p").cells;
  assert.deepEqual(cell.window.map(([outcome]) => outcome), [...FAILURE_TYPES]);
  assert.deepEqual([...FAILURE_CODE.values()], [1, 2, 3, 4, 5]);
  pool.free();
});

test("the package's types spell the same words in the same order", () => {
  const types = readFileSync(join(ROOT, "pkg-scripts/types/pool.d.ts"), "utf8");
  const union = (name) => [...new RegExp(`export type ${name} = ([^;]+);`).exec(types)[1].matchAll(/"([A-Z_]+)"/g)].map((m) => m[1]);
  assert.deepEqual(union("Kind"), [...KINDS]);
  assert.deepEqual(union("FailureType"), [...FAILURE_TYPES]);
  assert.deepEqual(union("State"), [...VIEW_STATES]);
});

/** Every .js/.mjs file of the package and the console, without dependencies or build output. */
function sources(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (["node_modules", "pkg", "vendor"].includes(name)) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.m?js$/.test(name)) out.push(p);
  }
  return out;
}

test("no other file spells the kinds, the failure types or the view states as a list", () => {
  // The words in order, a few characters apart on one line: an array, a Set, a Map's entries,
  // a type union.
  const lists = [KINDS, FAILURE_TYPES, VIEW_STATES].map((words) => new RegExp(words.map((w) => `["']${w}["']`).join("[^\\n]{0,12}")));
  const files = [...sources(join(ROOT, "pkg-scripts")), ...sources(join(ROOT, "www"))];
  assert.ok(files.length > 40, `found the sources (${files.length})`);
  const spelled = [];
  for (const f of files) {
    if (f.endsWith("vocabulary.js")) continue;
    const text = readFileSync(f, "utf8");
    for (const re of lists) if (re.test(text)) spelled.push(`${relative(ROOT, f)}: ${re.source.slice(0, 30)}…`);
  }
  assert.deepEqual(spelled, [], "import the list from pkg-scripts/lib/vocabulary.js instead");
});
