// Runs a golden scenario (tests/scenarios/*.json, format in tests/scenarios/README.md) against
// the JS API of the `repute` package. Host-neutral: Node's test (scenarios.test.mjs) and the
// headless-Chromium page (tests/browser/) both import it, so every host runs the same checks as
// the Rust runner (tests/scenarios.rs). It only translates; it never interprets the rules.

/** Deep equality of parsed JSON values (numbers numerically, key order ignored). */
export function same(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
}

const show = (v) => (v === undefined ? "nothing" : JSON.stringify(v));

/** Calls `call` on `pool` with the step's JSON arguments, as they are (so `register`'s
 * `{group, maxLeases}`, `acquire`'s and `nextChangeAt`'s `{groups}`, `finish`'s `{next}` and
 * `resources`' `{group}` reach the API unchanged); returns the JSON-shaped result. */
function invoke(pool, call, args) {
  switch (call) {
    case "register":
    case "deregister":
    case "unblock":
    case "acquire":
    case "acquireResource":
    case "renew":
    case "release":
    case "dueForRecoveryProbe":
    case "nextChangeAt":
    case "stats":
    case "finish": // [lease, outcome, {next?}]: the next Lease or null (no waitMs: never a promise)
      return pool[call](...args);
    case "report":
    case "block":
      return pool[call](...args) ?? null;
    case "resources":
      return pool.resources(...args);
    default:
      throw new Error(`unknown call ${call}`);
  }
}

/**
 * Runs `scenario` (parsed JSON) with the `Pool` class given; returns the list of failures
 * (empty when every result, event and the final snapshot match).
 */
export function runScenario(Pool, scenario) {
  let reading = 0;
  const now = () => reading;
  const seeded = scenario.seed !== undefined;
  if (seeded === (scenario.draws !== undefined)) return ["give exactly one of `seed` and `draws`"];
  const draws = seeded ? [] : [...scenario.draws];
  let ranOut = false;
  const random = () => {
    if (draws.length === 0) {
      ranOut = true;
      return NaN; // fails the call; reported as "ran out of draws"
    }
    return draws.shift();
  };
  const options = () => ({
    ...(scenario.config === undefined ? {} : { config: scenario.config }),
    now,
    ...(seeded ? { seed: scenario.seed } : { random }),
  });
  // With `from`, the pool starts as a restore of that stored snapshot (of any version), the
  // clock reading the first step's `at`.
  let pool;
  if (scenario.from === undefined) {
    pool = new Pool(options());
  } else {
    reading = scenario.steps[0]?.at ?? 0;
    try {
      pool = Pool.restore(scenario.from, options());
    } catch (e) {
      return [`\`from\` does not restore: ${e.code}: ${e.message}`];
    }
  }
  for (const [i, step] of scenario.steps.entries()) {
    const where = `steps[${i}] (${step.call} at ${step.at})`;
    reading = step.at;
    let result;
    let error;
    let events;
    try {
      if (step.call === "restore") {
        const snapshot = pool.snapshot();
        events = pool.drainEvents();
        pool.free();
        pool = Pool.restore(snapshot, options());
      } else {
        result = invoke(pool, step.call, step.args ?? []);
      }
    } catch (e) {
      if (e.code === undefined) return [`${where}: threw ${e.stack ?? e}`];
      error = e;
    }
    if (ranOut) return [`${where}: ran out of draws`];
    events ??= pool.drainEvents();
    if (step.error !== undefined || error !== undefined) {
      if (error === undefined) return [`${where}: expected error ${step.error}, but it succeeded`];
      if (error.code !== step.error) return [`${where}: expected error ${step.error}, got ${error.code}: ${error.message}`];
    } else if (step.call !== "restore" && !same(result, step.result)) {
      return [`${where}: result differs:\n  want ${show(step.result)}\n  got  ${show(result)}`];
    }
    const wantEvents = step.events ?? (step.error !== undefined ? [] : undefined);
    if (wantEvents === undefined) return [`${where}: \`events\` missing`];
    if (!same(events, wantEvents)) {
      return [`${where}: events differ:\n  want ${show(wantEvents)}\n  got  ${show(events)}`];
    }
  }
  if (draws.length > 0) return [`${draws.length} draw(s) left unused`];
  const snapshot = pool.snapshot();
  pool.free();
  if (snapshot !== scenario.snapshot) {
    return [`final snapshot differs:\n  want ${scenario.snapshot}\n  got  ${snapshot}`];
  }
  return [];
}
