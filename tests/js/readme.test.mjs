// The README's JavaScript examples run as written (each extracted and run with node, in a
// temporary folder of its own, so that `./data` lands there).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, mkdtempSync, rmSync, existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

/** Runs `code` from a fresh folder inside the package's reach (so `import "repute"` works). */
function run(code) {
  const dir = mkdtempSync(join(new URL(".", import.meta.url).pathname, ".readme-"));
  try {
    writeFileSync(join(dir, "example.mjs"), code);
    const out = execFileSync(process.execPath, [join(dir, "example.mjs")], { encoding: "utf8", cwd: dir });
    return { out, dataWritten: existsSync(join(dir, "data", "snapshot.json")) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the README has its five JavaScript examples", () => {
  assert.equal(blocks.length, 5);
  for (const b of blocks) assert.ok(b.includes('from "repute"'));
});

test("the Pool example runs and prints the new cell", () => {
  const { out } = run(blocks[0]);
  assert.match(out, /context: 'checkout-us'/);
  assert.match(out, /state: 'HEALTHY'/);
});

test("the tiers example escalates on the banned site only, and the cap holds one resource", () => {
  const { out } = run(blocks[1]);
  assert.equal(out, "residential dc COOLING, HEALTHY (held)\n");
});

test("the openPool example runs and leaves a snapshot in ./data", () => {
  const { dataWritten } = run(blocks[2]);
  assert.ok(dataWritten, "a snapshot on disk after close()");
});

test("the concurrency example: 10 workers over 6 places fetch 50 pages, none refused, every lease released", () => {
  const { out } = run(blocks[3]);
  assert.equal(out, "50 0 0\n");
});

test("the resilient-call example gets its page through the working proxy", () => {
  const { out } = run(blocks[4]);
  assert.equal(out, "200 200 for http://shop.example/item/7\n");
});

// ----- the layout table (CONTRIBUTING.md) ------------------------------------------------------

const contributing = readFileSync(new URL("../../CONTRIBUTING.md", import.meta.url), "utf8");

const repo = new URL("../../", import.meta.url).pathname;
const tracked = execFileSync("git", ["ls-files"], { cwd: repo, encoding: "utf8" }).split("\n").filter(Boolean);
/** Every tracked folder, as "a/b/". */
const folders = new Set(tracked.flatMap((f) => f.split("/").slice(0, -1).map((_, i, parts) => `${parts.slice(0, i + 1).join("/")}/`)));

/** The table's rows: the paths of the first column, and the names in backticks of the second. */
function layoutRows() {
  const section = contributing.slice(contributing.indexOf("## Layout"));
  const rows = [...section.matchAll(/^\| (.+?) \| (.+) \|$/gm)].slice(1); // the header (the rule has no spaces)
  const ticks = (cell) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  return rows.map(([, paths, text]) => ({ paths: ticks(paths), names: ticks(text) }));
}

/** A tracked file or folder at `path` (a `*` in the last part matches any run of characters). */
function exists(path) {
  if (!path.includes("*")) return tracked.includes(path) || folders.has(path.endsWith("/") ? path : `${path}/`);
  const re = new RegExp(`^${path.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*")}$`);
  return tracked.some((f) => re.test(f));
}

test("CONTRIBUTING.md's layout table names only paths that exist", () => {
  const rows = layoutRows();
  assert.ok(rows.length >= 5, "the table has its rows");
  for (const { paths, names } of rows) {
    for (const p of paths) assert.ok(exists(p), `${p} (first column) is in the tree`);
    // Names that look like paths (a folder, or a file with an extension), relative to the row's
    // path or to the top; words like `start` or `cargo bench` are not checked.
    for (const n of names.filter((n) => /^[\w*-][\w.*/-]*$/.test(n) && (n.includes("/") || /\.\w+$/.test(n)))) {
      assert.ok([...paths, ""].some((p) => exists(p + n)), `${n} (described under ${paths.join(", ")}) is in the tree`);
    }
  }
});

test("CONTRIBUTING.md's layout table names every folder at the top and under src/, tests/, pkg-scripts/", () => {
  const rows = layoutRows();
  const named = new Set();
  const name = (path) => {
    // a path names its folder and every folder above it (`lib/host/` names `lib/` too)
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) named.add(`${parts.slice(0, i).join("/")}/`);
  };
  for (const { paths, names } of rows) {
    for (const p of paths) name(p);
    for (const n of names) for (const p of paths) name(p + n);
  }
  const wanted = [...folders].filter((f) => {
    const parts = f.split("/").filter(Boolean);
    return !f.startsWith(".") && (parts.length === 1 || (parts.length === 2 && ["src", "tests", "pkg-scripts"].includes(parts[0])));
  });
  const missing = wanted.filter((f) => !named.has(f));
  assert.deepEqual(missing, [], "every folder has a place in the table");
});
