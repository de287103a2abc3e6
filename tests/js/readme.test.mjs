// The README's Node example runs as written (extracted from the README, run with node).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";

test("the README's Node example runs and prints the new cell", () => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const code = readme.match(/```js\n([\s\S]*?)```/)?.[1];
  assert.ok(code?.includes('from "repute"'), "a js block importing repute");
  // Run it from inside the package's reach so that `import "repute"` resolves.
  const dir = mkdtempSync(join(new URL(".", import.meta.url).pathname, ".readme-"));
  try {
    writeFileSync(join(dir, "example.mjs"), code);
    const out = execFileSync(process.execPath, [join(dir, "example.mjs")], { encoding: "utf8" });
    assert.match(out, /context: 'checkout-us'/);
    assert.match(out, /state: 'HEALTHY'/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
