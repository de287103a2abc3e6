// Waiting and finished steps through the memory host (the edge worker's base): the host checks
// of host-waiting-checks.mjs on a `MemoryHost` on virtual time.
import { test } from "node:test";
import { Pool } from "../../pkg-scripts/node.js";
import { MemoryHost } from "../../pkg-scripts/lib/host/memory-host.js";
import { hostWaitingChecks } from "./host-waiting-checks.mjs";

const open = (time) => MemoryHost.create({ Pool, now: time.now, timers: time.timers, seed: 7 });

for (const [name, check] of hostWaitingChecks) {
  test(`${name} (memory host)`, () => check(open));
}
