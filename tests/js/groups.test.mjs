// SPEC version 2 (groups, pacing, the cooling cap) through the `repute` package's Node entry:
// runs the host-neutral checks of groups-checks.mjs, which headless Chromium runs too
// (tests/browser/chromium.test.mjs).
import { test } from "node:test";
import { Pool } from "repute";
import { groupChecks } from "./groups-checks.mjs";

for (const [name, check] of groupChecks) {
  test(name, () => check(Pool));
}
