// The golden scenarios of tests/scenarios/ in Node, through the `repute` package's Node entry:
// the same results, events and byte-identical final snapshots as the native run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { Pool } from "repute";
import { runScenario } from "./scenario-runner.mjs";

const dir = new URL("../scenarios/", import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();

test("there are golden scenarios to run", () => {
  assert.ok(files.length >= 8, `found ${files.length}`);
});

for (const file of files) {
  test(`scenario ${file}`, () => {
    const failures = runScenario(Pool, JSON.parse(readFileSync(new URL(file, dir), "utf8")));
    assert.deepEqual(failures, []);
  });
}
