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

test("the README has its two JavaScript examples", () => {
  assert.equal(blocks.length, 2);
  for (const b of blocks) assert.ok(b.includes('from "repute"'));
});

test("the Pool example runs and prints the new cell", () => {
  const { out } = run(blocks[0]);
  assert.match(out, /context: 'checkout-us'/);
  assert.match(out, /state: 'HEALTHY'/);
});

test("the openPool example runs and leaves a snapshot in ./data", () => {
  const { dataWritten } = run(blocks[1]);
  assert.ok(dataWritten, "a snapshot on disk after close()");
});
