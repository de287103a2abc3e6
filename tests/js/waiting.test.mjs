// Waiting acquires, capacity and finished steps (SPEC §3 "Capacity, waiting and finishing a
// step") through the `repute` package's Node entry, on a virtual clock: runs the host-neutral
// checks of waiting-checks.mjs, which headless Chromium runs too (tests/browser/chromium.test.mjs).
import { test } from "node:test";
import { Pool } from "repute";
import { waitingChecks } from "./waiting-checks.mjs";

for (const [name, check] of waitingChecks) {
  test(name, () => check(Pool));
}
