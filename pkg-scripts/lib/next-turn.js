// Turns of the event loop, for work done in steps (a large dashboard, a scan for an id) so
// that requests waiting meanwhile — their I/O included — are served between steps. Node has
// setImmediate; elsewhere (workerd without it) a zero timeout does the same.
//
// `stepLater` shares the turns among all such work: however many dashboards are being built at
// once, one turn of the loop runs their queued steps, first come first served, for about
// STEP_BUDGET_MS at most, then lets the loop serve I/O. With a turn of its own for each step,
// four viewers' steps held the loop four steps long between two reads of a worker's socket.

const later = typeof setImmediate === "function" ? setImmediate : (f) => setTimeout(f, 0);

/** Milliseconds of queued steps one turn runs before it lets I/O in (at least one step): one
 * dashboard step (dashboard.js `STEP`), so that a worker's request waits behind one at most. */
export const STEP_BUDGET_MS = 1;
const queue = [];
let scheduled = false;

/** Runs `step()` in a later turn of the loop, shared with every other stepped work (see the
 * header); resolves to what it returns (rejects with what it throws). */
export function stepLater(step) {
  return new Promise((resolve, reject) => {
    queue.push({ step, resolve, reject });
    if (!scheduled) {
      scheduled = true;
      later(runSteps);
    }
  });
}

/** One turn's steps: those queued before it began, until the budget is spent. */
function runSteps() {
  scheduled = false;
  const until = performance.now() + STEP_BUDGET_MS;
  for (let n = queue.length; n > 0; n--) {
    const { step, resolve, reject } = queue.shift();
    try {
      resolve(step());
    } catch (e) {
      reject(e);
    }
    if (performance.now() >= until) break;
  }
  if (queue.length > 0 && !scheduled) {
    scheduled = true;
    later(runSteps);
  }
}
