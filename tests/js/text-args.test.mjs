// The package's `Pool` passes a call's strings through the engine's buffer when they are ASCII
// and fit (lib/pool.js, src/wasm/facade/text_args.rs), and as strings otherwise. Whichever way they
// go, a call answers the same: these tests run the same calls with ASCII names, names past
// ASCII and names too long for the buffer, interleaved so that calls go by name (not by the
// last grant's id), and across the module's memory growth, which detaches the buffer's view.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "../../pkg-scripts/node.js";

const T0 = 1_700_000_000_000;

function pool() {
  let t = T0;
  const p = new Pool({ seed: 3, now: () => t, config: { leaseTtlMs: 60_000 } });
  return { p, tick: () => (t += 1) };
}

/** Runs a worker's calls on `values` in `context` with two leases held at once, so that the
 * reports, renewals and releases of the first lease go by name; returns what they answered
 * and the pool's snapshot and events. */
function session(values, context) {
  const { p, tick } = pool();
  for (const v of values) p.register("PROXY", v);
  const out = [];
  for (let round = 0; round < 3; round++) {
    tick();
    const a = p.acquire(context);
    const b = p.acquire(context);
    out.push([a.value, b.value]);
    p.report(a.kind, a.value, a.context, { ok: false, failure: "TIMEOUT", latencyMs: 900 }); // not the last grant
    out.push(p.renew(a)?.expiresAt, p.release(a));
    p.report(b.kind, b.value, b.context, { ok: true, latencyMs: 80 }); // the last grant
    out.push(p.release(b), p.release(b));
  }
  return { out, snapshot: p.snapshot(), events: p.drainEvents().map((e) => e.type) };
}

test("names past ASCII answer as ASCII names do, by name and by the last grant", () => {
  const ascii = session(["proxy-a", "proxy-b", "proxy-c"], "shop.example");
  // Names in the same order as the ASCII ones (the pool's canonical order sorts them).
  const wide = session(["proxy-aä", "proxy-b", "proxy-c"], "bücher.example");
  const emoji = session(["proxy-a", "proxy-b", "proxy-c😀"], "shop.example");
  const swap = (x) => x.replaceAll("proxy-aä", "proxy-a").replaceAll("proxy-c😀", "proxy-c").replaceAll("bücher.example", "shop.example");
  for (const other of [wide, emoji]) {
    assert.deepEqual(JSON.parse(swap(JSON.stringify(other.out))), ascii.out, "the same answers");
    assert.deepEqual(other.events, ascii.events, "the same events");
    assert.ok(ascii.out.some((x) => x === true), "releases by name released");
  }
  // The snapshots differ only by the names: the same pool.
  assert.equal(JSON.parse(swap(wide.snapshot)).registered.length, 3);
  assert.deepEqual(JSON.parse(swap(wide.snapshot)).cells, JSON.parse(ascii.snapshot).cells);
});

test("a value too long for the engine is refused with its length, whether or not it fits the buffer", () => {
  const { p } = pool();
  p.register("PROXY", "proxy-a");
  for (const n of [1_025, 2_000, 5_000]) {
    const long = "x".repeat(n);
    assert.throws(
      () => p.report("PROXY", long, "shop.example", { ok: true }),
      (e) => e.code === "INVALID_ARGUMENT" && e.message.includes(`(got ${n})`),
      `a ${n}-byte value`,
    );
    assert.throws(() => p.acquire("c".repeat(n)), (e) => e.code === "INVALID_ARGUMENT" && e.message.includes(`(got ${n})`));
  }
  // Past ASCII and too long: the string path, the same refusal (UTF-8 bytes counted).
  assert.throws(() => p.report("PROXY", "é".repeat(600), "shop.example", { ok: true }), (e) => e.message.includes("(got 1200)"));
  assert.equal(p.stats().cells, 0, "nothing changed");
  assert.throws(() => p.acquire(42), (e) => e.code === "INVALID_ARGUMENT" && /context must be a string/.test(e.message));
  assert.throws(() => p.acquire("a\ud800b"), (e) => e.code === "INVALID_ARGUMENT" && /well-formed/.test(e.message));
});

test("calls through the buffer stay right across the module's memory growth", () => {
  const { p, tick } = pool();
  p.register("PROXY", "first");
  const a = p.acquire("shop.example");
  // Registering many resources grows the module's memory, detaching the buffer's view.
  for (let i = 0; i < 40_000; i++) p.register("PROXY", `grown-${i}-${"y".repeat(40)}`);
  tick();
  const b = p.acquire("other.example");
  assert.equal(b.context, "other.example");
  p.report(a.kind, a.value, "shop.example", { ok: false, failure: "BLOCKED" });
  assert.equal(p.resource("PROXY", "first").cells[0].context, "shop.example");
  assert.equal(p.release(a), true, "by name, written through a fresh view");
  assert.equal(p.release(a), false);
});
