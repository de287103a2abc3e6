// Work in steps shares the event loop's turns (pkg-scripts/lib/next-turn.js `stepLater`): however
// many stepped jobs run at once (four viewers' dashboards), one turn runs their steps for about
// STEP_BUDGET_MS, then lets the loop serve I/O — here an observer's chain of immediates stands
// for a worker's socket. Steps are made longer than the budget, so that a turn runs one step.
import { test } from "node:test";
import assert from "node:assert/strict";
import { STEP_BUDGET_MS, stepLater } from "../../pkg-scripts/lib/next-turn.js";

/** Busy for `ms` (a step of real work). */
const busy = (ms) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

test("four jobs in steps longer than the budget: the loop turns between every two steps", async () => {
  const ran = []; // per observer turn, how many steps ran since the one before
  let steps = 0;
  let stop = false;
  const observe = () => {
    ran.push(steps);
    steps = 0;
    if (!stop) setImmediate(observe);
  };
  setImmediate(observe);
  const job = async (name, n) => {
    const out = [];
    for (let i = 0; i < n; i++) {
      out.push(
        await stepLater(() => {
          busy(STEP_BUDGET_MS + 1);
          steps++;
          return `${name}${i}`;
        }),
      );
    }
    return out;
  };
  const results = await Promise.all(["a", "b", "c", "d"].map((name) => job(name, 5)));
  stop = true;
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(results, ["a", "b", "c", "d"].map((name) => [0, 1, 2, 3, 4].map((i) => `${name}${i}`)), "each job's steps ran in order, each once");
  assert.equal(ran.reduce((a, b) => a + b, 0) + steps, 20);
  assert.ok(Math.max(...ran) <= 1, `steps run in one turn of the loop: ${ran.join(" ")}`);
});

test("a step that throws rejects its own promise; the others go on", async () => {
  const bad = stepLater(() => {
    throw new Error("step failed");
  });
  const good = stepLater(() => 42);
  await assert.rejects(bad, /step failed/);
  assert.equal(await good, 42);
});
