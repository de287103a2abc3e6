// Waiting and finished steps through a *host* (SPEC §3; the handler's host contract,
// pkg-scripts/host.d.ts): what a host adds around the pool's rules — a wait's grant goes
// through the host's own acquire (tokens tracked, events delivered, metrics counted once per
// grant, quiet retries never counted as rejections), its operator actions and releases wake
// waits, `finish` serves earlier waits first, and closing the host ends every wait. Run on the
// memory host (tests/js/memory-host-waiting.test.mjs) and on `openPool`'s host
// (tests/server/waiting.test.mjs): `open(time)` makes one on the given virtual time. Not a test
// file: each check throws on a failure.
import assert from "node:assert/strict";
import { virtualTime } from "./waiting-checks.mjs";

/** A promise's state now. */
function track(p) {
  const t = { state: "pending", value: undefined };
  p.then(
    (v) => Object.assign(t, { state: "resolved", value: v }),
    (e) => Object.assign(t, { state: "rejected", value: e }),
  );
  return t;
}

const OK = { ok: true, latencyMs: 5 };

/** `name{labels} value` lines of a Prometheus text, as a map. */
async function metricLines(host) {
  const text = await host.metrics();
  return new Map(text.split("\n").filter((l) => l && !l.startsWith("#")).map((l) => [l.slice(0, l.lastIndexOf(" ")), Number(l.slice(l.lastIndexOf(" ") + 1))]));
}

export const hostWaitingChecks = [
  ["a wait through the host is woken by the host's release; the grant is the host's (events, metrics)", async (open) => {
    const time = virtualTime();
    const host = await open(time);
    await host.register("PROXY", "p0");
    const seen = [];
    const stop = host.subscribe((e) => seen.push(e.type));
    const held = host.acquire("shop");
    const w = track(host.acquireWait("shop", { waitMs: 60_000 }));
    await time.advance(1000);
    assert.equal(w.state, "pending");
    assert.equal(host.waiting, 1);
    assert.ok(host.release(held));
    await time.advance(0);
    assert.equal(w.state, "resolved");
    assert.equal(w.value.token, held.token + 1);
    if (host.stats) assert.equal(host.stats().fencingHighWater, w.value.token);
    await host.readEvents({ after: 0, limit: 100 }); // delivers what is pending
    assert.deepEqual(seen.filter((t) => t !== "RESOURCE_REGISTERED"), ["RESOURCE_LEASED", "LEASE_RELEASED", "RESOURCE_LEASED"]);
    const m = await metricLines(host);
    assert.equal(m.get('repute_acquisitions_total{context="shop",result="granted"}'), 2, "two grants");
    assert.equal(m.get('repute_acquisitions_total{context="shop",result="rejected"}') ?? 0, 0, "the wait's retries are not rejections");
    stop();
  }],

  ["a host wait that ends empty counts one rejection and emits one ACQUISITION_REJECTED", async (open) => {
    const time = virtualTime();
    const host = await open(time);
    await host.register("PROXY", "p0");
    host.acquire("shop");
    const w = track(host.acquireWait("shop", { waitMs: 5000 }));
    await time.advance(5000);
    assert.deepEqual([w.state, w.value], ["resolved", null]);
    const { events } = await host.readEvents({ after: 0, limit: 100 });
    assert.equal(events.filter((e) => e.type === "ACQUISITION_REJECTED").length, 1);
    const m = await metricLines(host);
    assert.equal(m.get('repute_acquisitions_total{context="shop",result="rejected"}'), 1);
  }],

  ["the host's operator actions wake waits: register, a maxLeases raise, unblock, config", async (open) => {
    const time = virtualTime();
    const host = await open(time);
    await host.register("PROXY", "p0");
    const first = host.acquire("shop");
    let w = track(host.acquireWait("shop", { waitMs: 60_000 }));
    await host.register("PROXY", "p0", { maxLeases: 2 });
    await time.advance(0);
    assert.deepEqual([w.state, w.value?.value, w.value?.token], ["resolved", "p0", first.token + 1], "a raised maxLeases");
    const view = host.resources()[0];
    assert.deepEqual([view.maxLeases, view.leases.length], [2, 2]);
    w = track(host.acquireWait("shop", { waitMs: 60_000 }));
    await host.register("PROXY", "p1");
    await time.advance(0);
    assert.equal(w.value?.value, "p1", "a registration");
    await host.block("PROXY", "p1", { permanent: true });
    host.release(w.value);
    w = track(host.acquireWait("shop", { waitMs: 60_000 }));
    await time.advance(0);
    assert.equal(w.state, "pending", "p0 full, p1 blocked");
    await host.unblock("PROXY", "p1");
    await time.advance(0);
    assert.equal(w.value?.value, "p1", "an unblock");
    host.release(w.value);
    await host.setConfig({ minGapMs: 60_000 });
    host.report("PROXY", "p1", "shop", OK); // paced for a minute
    w = track(host.acquireWait("shop", { waitMs: 120_000 }));
    await time.advance(1000);
    assert.equal(w.state, "pending", "paced");
    await host.setConfig({ minGapMs: 0 });
    await time.advance(0);
    assert.equal(w.value?.value, "p1", "a config change");
  }],

  ["host finish: serves earlier waits first, waits for its next, LEASE_FINISHED on a repeat", async (open) => {
    const time = virtualTime();
    const host = await open(time);
    await host.register("PROXY", "p0");
    const held = host.acquire("shop");
    const waiter = track(host.acquireWait("shop", { waitMs: 60_000 }));
    const mine = track(Promise.resolve(host.finish(held, OK, { next: { waitMs: 60_000 } })));
    await time.advance(0);
    assert.deepEqual([waiter.state, mine.state], ["resolved", "pending"]);
    assert.throws(() => host.finish(held, OK), (e) => e.code === "LEASE_FINISHED");
    await host.finish(waiter.value, { ok: false, failure: "SLOW" });
    await time.advance(0);
    assert.equal(mine.state, "resolved");
    const cell = host.resources()[0].cells[0];
    assert.equal(cell.consecutiveFailures, 1, "the second finish's outcome; the repeat reported nothing");
    assert.equal(cell.score, 5 - 2, "one success (+5), one SLOW (−2)");
    assert.throws(() => host.finish(mine.value, OK, { next: { waitMs: -1 } }), (e) => e.code === "INVALID_ARGUMENT");
    assert.equal(host.resources()[0].leases.length, 1, "a bad next leaves the lease as it was");
    assert.equal(host.finish(mine.value, OK), null);
    assert.equal(host.resources()[0].leases.length, 0);
  }],

  ["a host wait's signal: aborting ends it and leaks nothing; closing the host ends every wait", async (open) => {
    const time = virtualTime();
    const host = await open(time);
    await host.register("PROXY", "p0");
    const held = host.acquire("shop");
    const ctl = new AbortController();
    const w = track(Promise.resolve(host.finish(held, OK, { next: { context: "news", waitMs: 60_000, signal: ctl.signal } })));
    await time.advance(0);
    // The finish released p0 and its next took it at once (nobody else waits).
    assert.equal(w.state, "resolved");
    const other = track(host.acquireWait("shop", { waitMs: 60_000, signal: ctl.signal }));
    ctl.abort();
    await time.advance(0);
    assert.deepEqual([other.state, other.value?.name], ["rejected", "AbortError"]);
    assert.equal(host.waiting, 0);
    const last = track(host.acquireWait("shop", { waitMs: 60_000 }));
    await time.advance(0);
    await host.close();
    await time.advance(0);
    assert.deepEqual([last.state, last.value?.code], ["rejected", "POOL_CLOSED"]);
  }],
];
