// Config changes the Node host writes ahead (pkg-scripts/lib/node/write-ahead.js): a smaller
// window, a smaller event buffer, larger limits — stored from the live pool's parts taken in
// steps under a scratch head, each part's windows cut in turn for a smaller window, and only
// then applied. What is stored is, byte for byte, what the live pool holds once they are
// applied (its resources, blocks and cells), for a pool of many resources with groups,
// capacities, blocks, cooldowns and long windows; several changes sharing one write (a smaller
// window, then a larger one: windows cut to the smaller) too; a limit lowered in the same
// change is refused against the live pool (the scratch holds no resource), and changes nothing.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openPool } from "repute";

const T0 = 1_700_000_000_000;
const root = await mkdtemp(path.join(os.tmpdir(), "repute-ahead-"));
after(() => rm(root, { recursive: true, force: true }));
let dirs = 0;

/** A host on a fresh folder holding 300 resources in three contexts with ten outcomes each. */
async function busy() {
  const clock = { t: T0 };
  const dir = path.join(root, `pool-${++dirs}`);
  const host = await openPool({ dir, now: () => clock.t, seed: 9, checkpointMs: 0, handleSignals: false, onError: () => {}, config: { coolAfter: 3 } });
  for (let i = 0; i < 300; i++) {
    await host.register(i % 2 ? "PROXY" : "ACCOUNT", `r${i}.example:${8000 + i}`, { ...(i % 3 ? { group: `g${i % 4}` } : {}), ...(i % 7 ? {} : { maxLeases: 3 }) });
  }
  for (let round = 0; round < 10; round++) {
    clock.t += 1000;
    for (let i = 0; i < 300; i++) {
      const ok = (i + round) % 5 !== 0;
      host.report(i % 2 ? "PROXY" : "ACCOUNT", `r${i}.example:${8000 + i}`, ["a", "b", "c"][(i + round) % 3], ok ? { ok, latencyMs: i % 90 } : { ok, failure: "TIMEOUT" });
    }
  }
  await host.block("PROXY", "r1.example:8001", { permanent: true });
  await host.block("PROXY", "r3.example:8003", { seconds: 3600 });
  await host.checkpoint();
  return { host, dir, clock };
}

const stored = (dir) => readFileSync(path.join(dir, "snapshot.json"), "utf8");
const body = (json) => json.slice(json.indexOf(',"registered":'));
const windows = (json) => JSON.parse(json).cells.map((c) => c.window.length);

test("a smaller window written ahead: what is stored is what the live pool holds once it is applied", async () => {
  const { host, dir } = await busy();
  assert.ok(Math.max(...windows(stored(dir))) >= 4, "windows longer than the new size");
  const pending = host.setConfig({ windowSize: 2 });
  assert.equal(host.config().windowSize, 10, "not in force before it is stored");
  assert.equal((await pending).windowSize, 2);
  assert.ok(Math.max(...windows(stored(dir))) <= 2);
  assert.equal(body(stored(dir)), body(host.snapshot()));
  assert.equal(JSON.parse(stored(dir)).config.windowSize, 2);
  await host.close();
});

test("changes sharing one write: a smaller window then a larger one leave windows cut to the smaller; a limit lowered with them is refused against the live pool", async () => {
  const { host, dir } = await busy();
  const before = host.config();
  const results = await Promise.allSettled([
    host.setConfig({ windowSize: 3 }),
    host.setConfig({ windowSize: 6, maxCells: 20_000_000 }),
    host.setConfig({ eventBufferSize: 500, maxResources: 10 }),
    host.setConfig({ maxCells: 5_000_000 }),
  ]);
  assert.deepEqual(results.map((r) => r.status), ["fulfilled", "fulfilled", "rejected", "fulfilled"]);
  assert.equal(results[2].reason.code, "CAPACITY_EXCEEDED");
  assert.match(results[2].reason.message, /maxResources = 10 is below the 300 resources/);
  const config = host.config();
  assert.deepEqual([config.windowSize, config.maxCells, config.eventBufferSize, config.maxResources], [6, 5_000_000, before.eventBufferSize, before.maxResources]);
  assert.ok(Math.max(...windows(host.snapshot())) <= 3, "cut to 3 by the first");
  assert.equal(body(stored(dir)), body(host.snapshot()));
  assert.deepEqual(JSON.parse(stored(dir)).config, config);
  await host.close();
});
