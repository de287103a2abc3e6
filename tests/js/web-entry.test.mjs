// The web entry (`browser` / `workerd` / `default` conditions) in Node: `init()` with a
// precompiled `WebAssembly.Module` — the only form edge runtimes allow — then a working `Pool`
// whose snapshot is byte-identical to the Node entry's for the same calls; calling `init` again
// (same module, a new module, bytes, nothing) is harmless. Cases that need a module not yet
// initialised (bytes, a racing second init) run in child processes, since an ES module loads
// once per process. This file is its own process under `node --test`, so nothing here has
// initialised the engine through the Node entry.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { init, Pool } from "../../pkg-scripts/web.js";
import * as web from "../../pkg-scripts/web.js";

const T = 1_700_000_000_000;
const wasmUrl = new URL("../../pkg-scripts/pkg/repute_bg.wasm", import.meta.url);
const webUrl = new URL("../../pkg-scripts/web.js", import.meta.url).href;
const nodeUrl = new URL("../../pkg-scripts/node.js", import.meta.url).href;
const historyUrl = new URL("./history.mjs", import.meta.url).href;
const bytes = readFileSync(wasmUrl);
const module = new WebAssembly.Module(bytes);

/** Runs an ES module snippet in a fresh Node process; returns its stdout parsed as JSON. */
function child(code) {
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", code], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return JSON.parse(out);
}

// Before anything else in this process: init with the precompiled module.
const first = await init(module);

test("the web entry exports init and Pool only", () => {
  assert.deepEqual(Object.keys(web).sort(), ["Pool", "init"]);
  assert.equal(typeof init, "function");
  assert.equal(typeof Pool, "function");
  assert.equal(first, undefined, "init(module) resolves to nothing");
});

test("after init(WebAssembly.Module) a Pool registers, leases, reports, releases and snapshots", () => {
  let now = T;
  const pool = new Pool({ seed: 1, now: () => now });
  assert.equal(pool.register("PROXY", "a"), true);
  assert.equal(pool.register("PROXY", "a"), false);
  const lease = pool.acquire("checkout");
  assert.deepEqual(lease, { kind: "PROXY", value: "a", group: null, context: "checkout", token: 1, leasedAt: T, expiresAt: T + 30_000 });
  pool.report("PROXY", "a", "checkout", { ok: false, failure: "BLOCKED", latencyMs: 20 });
  now += 1_000;
  assert.equal(pool.renew(lease).expiresAt, T + 31_000);
  assert.equal(pool.release(lease), true);
  assert.equal(pool.release(lease), false);
  const cell = pool.resources()[0].cells[0];
  assert.deepEqual(
    { context: cell.context, state: cell.state, score: cell.score, consecutiveFailures: cell.consecutiveFailures },
    { context: "checkout", state: "HEALTHY", score: -30, consecutiveFailures: 1 },
  );
  const snap = JSON.parse(pool.snapshot());
  assert.equal(snap.format, "repute-snapshot");
  assert.equal(snap.takenAt, T + 1_000);
  assert.equal(snap.fencingHighWater, 1);
  assert.deepEqual(snap.registered, [{ kind: "PROXY", value: "a" }]);
  assert.equal(snap.cells.length, 1);
  assert.equal(snap.cells[0].score, -30);
  assert.deepEqual(
    pool.drainEvents().map((e) => e.type),
    ["RESOURCE_REGISTERED", "RESOURCE_LEASED", "LEASE_RELEASED"],
  );
  const restored = Pool.restore(pool.snapshot(), { seed: 2, now: () => now });
  assert.equal(restored.snapshot(), pool.snapshot());
  assert.equal(restored.acquire("checkout").token, 2, "tokens continue after a restore");
});

test("errors from the web entry are Errors with codes too", () => {
  const pool = new Pool({ seed: 1, now: () => T });
  assert.throws(() => pool.register("FOO", "a"), (e) => e instanceof Error && e.code === "INVALID_ARGUMENT");
  assert.throws(() => pool.register("PROXY", " "), (e) => e instanceof Error && e.code === "INVALID_ARGUMENT");
  assert.throws(() => pool.unblock("PROXY", "zz"), (e) => e instanceof Error && e.code === "UNKNOWN_RESOURCE");
  assert.throws(() => new Pool({ seed: 1, config: { coolAfter: 0 } }), (e) => e instanceof Error && e.code === "INVALID_CONFIG");
  assert.throws(() => Pool.restore("{"), (e) => e instanceof Error && e.code === "INVALID_SNAPSHOT");
});

test("the web entry and the Node entry produce byte-identical snapshots for the same calls", async () => {
  const { history } = await import(historyUrl);
  const mine = history(Pool, T).snapshot();
  const theirs = child(`
    import { Pool } from ${JSON.stringify(nodeUrl)};
    import { history } from ${JSON.stringify(historyUrl)};
    process.stdout.write(JSON.stringify(history(Pool, ${T}).snapshot()));
  `);
  assert.equal(mine, theirs);
  assert.ok(mine.includes("http://u:pw@c:1"));
});

test("calling init again is harmless: same module, a new module, bytes, nothing", async () => {
  const pool = new Pool({ seed: 3, now: () => T });
  pool.register("SESSION", "s1");
  pool.register("SESSION", "s2");
  const lease = pool.acquire("ctx");
  const before = pool.snapshot();

  await init(module);
  await init(new WebAssembly.Module(bytes));
  await init(bytes);
  await init();
  await Promise.all([init(module), init(bytes), init()]);

  // The pool made before is intact and still works.
  assert.equal(pool.snapshot(), before);
  assert.equal(pool.renew(lease)?.token, lease.token);
  const other = pool.acquire("ctx");
  assert.ok(other);
  assert.notEqual(other.value, lease.value);
  assert.equal(pool.release(lease), true);
  assert.equal(pool.release(other), true);
  // And new pools work alongside it.
  const fresh = new Pool({ seed: 3, now: () => T });
  fresh.register("SESSION", "s1");
  fresh.register("SESSION", "s2");
  assert.equal(fresh.acquire("ctx").value, lease.value, "same seed, same pick");
});

test("init with the module's bytes works too (fresh process)", () => {
  const result = child(`
    import { readFileSync } from "node:fs";
    import { init, Pool } from ${JSON.stringify(webUrl)};
    await init(readFileSync(new URL(${JSON.stringify(wasmUrl.href)})));
    await init(readFileSync(new URL(${JSON.stringify(wasmUrl.href)})));
    const pool = new Pool({ seed: 1, now: () => ${T} });
    pool.register("ACCOUNT", "x");
    const lease = pool.acquire("c");
    process.stdout.write(JSON.stringify({ lease, released: pool.release(lease) }));
  `);
  assert.deepEqual(result, {
    lease: { kind: "ACCOUNT", value: "x", group: null, context: "c", token: 1, leasedAt: T, expiresAt: T + 30_000 },
    released: true,
  });
});

test(
  "a precompiled module given while an init from bytes is still loading leaves pools usable (fresh process)",
  () => {
    const result = child(`
      import { readFileSync } from "node:fs";
      import { init, Pool } from ${JSON.stringify(webUrl)};
      const bytes = readFileSync(new URL(${JSON.stringify(wasmUrl.href)}));
      const pending = init(bytes);
      await init(new WebAssembly.Module(bytes));
      const pool = new Pool({ seed: 1, now: () => ${T} });
      pool.register("PROXY", "a");
      await pending;
      let out;
      try {
        out = { value: pool.acquire("c")?.value ?? null, registered: pool.stats().registered };
      } catch (e) {
        out = { error: String(e) };
      }
      process.stdout.write(JSON.stringify(out));
    `);
    assert.deepEqual(result, { value: "a", registered: 1 });
  },
);
