// Waiting and finished steps through `openPool`'s host (SPEC §3): the host checks of
// tests/js/host-waiting-checks.mjs on a real folder, the host's clock and timers virtual (its
// `timers` option carries the waits' timer too).
import { after, test } from "node:test";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openPool } from "repute";
import { hostWaitingChecks } from "../js/host-waiting-checks.mjs";

const root = await mkdtemp(path.join(os.tmpdir(), "repute-waiting-"));
const opened = [];
after(async () => {
  for (const h of opened) await h.close().catch(() => {});
  await rm(root, { recursive: true, force: true });
});

let dirs = 0;
async function open(time) {
  const timers = {
    monotonicMs: () => time.now(),
    setTimeout: time.timers.setTimeout,
    clearTimeout: time.timers.clearTimeout,
    setInterval: () => 0, // no interval work in these tests (checkpointMs 0; storage retries idle)
    clearInterval: () => {},
  };
  const host = await openPool({ dir: path.join(root, `pool-${++dirs}`), now: time.now, timers, seed: 7, checkpointMs: 0, handleSignals: false });
  opened.push(host);
  return host;
}

for (const [name, check] of hostWaitingChecks) {
  test(`${name} (openPool)`, () => check(open));
}
