// Waiting acquires and finished steps through the package's `Pool` (SPEC §3 "Capacity, waiting
// and finishing a step"), on a virtual clock: the pool's `now` and its `timers` move together,
// only when a check says so, so "woken at 30 000 ms, not before" is exact. Host-neutral (no
// Node API): tests/js/waiting.test.mjs runs these in Node, tests/browser/chromium.test.mjs in
// headless Chromium. Not a test file: each check throws on a failure.

const T0 = 1_700_000_000_000;

/** A clock and timers that move only on `advance`, firing what falls due in order. */
export function virtualTime() {
  let now = T0;
  let next = 1;
  const timers = new Map();
  return {
    now: () => now,
    timers: {
      setTimeout: (fn, ms) => {
        const id = next++;
        timers.set(id, { at: now + Math.max(0, ms), fn });
        return id;
      },
      clearTimeout: (id) => void timers.delete(id),
    },
    get pending() {
      return timers.size;
    },
    /** Moves the clock without firing anything (a timer running late, as on a busy loop). */
    jump(ms) {
      now += ms;
    },
    /** Moves the clock `ms` forward, firing each timer at its instant; lets promises settle. */
    async advance(ms) {
      const end = now + ms;
      for (;;) {
        let due = null;
        for (const [id, t] of timers) if (t.at <= end && (due === null || t.at < due[1].at)) due = [id, t];
        if (due === null) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].fn();
        await settle();
      }
      now = end;
      await settle();
    },
  };
}

/** Lets resolved promises run their continuations. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

function eq(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

function ok(cond, what) {
  if (!cond) throw new Error(what);
}

/** A promise's state now: "pending", or its value / "rejected: <name>". */
function track(p) {
  const t = { state: "pending", value: undefined };
  p.then(
    (v) => Object.assign(t, { state: "resolved", value: v }),
    (e) => Object.assign(t, { state: "rejected", value: e }),
  );
  return t;
}

/** A pool on virtual time with `n` proxies p0…; leases last 30 s. */
function world(Pool, n = 1, options = {}) {
  const time = virtualTime();
  const pool = new Pool({ seed: 7, now: time.now, timers: time.timers, config: { leaseTtlMs: 30_000 }, ...options });
  for (let i = 0; i < n; i++) pool.register("PROXY", `p${i}`);
  pool.drainEvents();
  return { pool, time };
}

const types = (pool) => pool.drainEvents().map((e) => e.type);
const OK = { ok: true, latencyMs: 5 };

export const waitingChecks = [
  ["acquireWait answers at once when acquire would grant, like acquire", async (Pool) => {
    const { pool } = world(Pool, 1);
    const lease = await pool.acquireWait("shop", { waitMs: 1000 });
    eq([lease.value, lease.token], ["p0", 1], "granted at once");
    eq(types(pool), ["RESOURCE_LEASED"], "one lease event");
    eq(pool.waiting, 0, "nobody waits");
  }],

  ["a wait is woken by a release, not before; waiters are served first come, first served", async (Pool) => {
    const { pool, time } = world(Pool, 1);
    const held = pool.acquire("shop");
    const first = track(pool.acquireWait("shop", { waitMs: 10_000 }));
    const second = track(pool.acquireWait("shop", { waitMs: 10_000 }));
    await time.advance(1000);
    eq([first.state, second.state, pool.waiting], ["pending", "pending", 2], "both wait");
    eq(types(pool), ["RESOURCE_LEASED"], "waiting retries emit no rejection");
    pool.release(held);
    await time.advance(0);
    eq([first.state, second.state], ["resolved", "pending"], "the first waiter is served by the release");
    eq(first.value.token, 2, "a new token");
    pool.release(first.value);
    await time.advance(0);
    eq(second.state, "resolved", "then the second");
    eq(types(pool), ["LEASE_RELEASED", "RESOURCE_LEASED", "LEASE_RELEASED", "RESOURCE_LEASED"], "each grant follows its release");
  }],

  ["a new wait does not jump the queue of its context", async (Pool) => {
    const { pool, time } = world(Pool, 1);
    const held = pool.acquire("shop");
    const first = track(pool.acquireWait("shop", { waitMs: 10_000 }));
    pool.release(held); // served at once: first gets it
    const late = track(pool.acquireWait("shop", { waitMs: 10_000 }));
    await time.advance(0);
    eq([first.state, late.state], ["resolved", "pending"], "the earlier waiter holds it; the later one waits");
    // The lease expires while the timer that would serve the queue runs late: a new wait
    // serves the queue before itself.
    const queued = track(pool.acquireWait("other", { waitMs: 90_000 })); // nothing yet: first holds p0
    time.jump(31_000); // first's lease has lapsed; no timer has run
    const newcomer = track(pool.acquireWait("other", { waitMs: 90_000 }));
    await time.advance(0);
    eq([queued.state, newcomer.state], ["resolved", "pending"], "the queued waiter, not the newcomer");
  }],

  ["a wait is woken when a lease expires (nextChangeAt), at that instant and never by polling", async (Pool) => {
    const { pool, time } = world(Pool, 1);
    pool.acquire("shop"); // never released: ends at T0 + 30 000
    const w = track(pool.acquireWait("shop", { waitMs: 60_000 }));
    await time.advance(29_999);
    eq(w.state, "pending", "still leased at 29 999 ms");
    eq(time.pending, 1, "one timer, no polling");
    await time.advance(1);
    eq(w.state, "resolved", "granted the instant the lease expired");
    eq(w.value.leasedAt, time.now(), "leased at 30 000 ms");
    eq(types(pool), ["RESOURCE_LEASED", "LEASE_EXPIRED", "RESOURCE_LEASED"], "expiry, then the grant");
  }],

  ["a wait is woken by an unblock, a block's end, a registration, a maxLeases raise and a config change", async (Pool) => {
    const { pool, time } = world(Pool, 1);
    pool.block("PROXY", "p0", { permanent: true });
    let w = track(pool.acquireWait("shop", { waitMs: 60_000 }));
    await time.advance(5);
    pool.unblock("PROXY", "p0");
    await time.advance(0);
    eq(w.state, "resolved", "unblock");
    pool.release(w.value);
    pool.block("PROXY", "p0", { seconds: 2 });
    w = track(pool.acquireWait("shop", { waitMs: 60_000 }));
    await time.advance(1999);
    eq(w.state, "pending", "block in force");
    await time.advance(1);
    eq(w.state, "resolved", "the block's end");
    const held = w.value;
    w = track(pool.acquireWait("shop", { waitMs: 60_000 }));
    pool.register("PROXY", "p1");
    await time.advance(0);
    eq([w.state, w.value?.value], ["resolved", "p1"], "a registration");
    w = track(pool.acquireWait("shop", { waitMs: 60_000 }));
    await time.advance(0);
    eq(w.state, "pending", "both leased");
    pool.register("PROXY", "p0", { maxLeases: 2 });
    await time.advance(0);
    eq([w.state, w.value?.value, held.value], ["resolved", "p0", "p0"], "a maxLeases raise: p0 holds two leases");
    const paced = world(Pool, 1, { config: { leaseTtlMs: 30_000, minGapMs: 10_000 } });
    const l = paced.pool.acquire("shop");
    paced.pool.report("PROXY", "p0", "shop", OK);
    paced.pool.release(l);
    w = track(paced.pool.acquireWait("shop", { waitMs: 60_000 }));
    await paced.time.advance(1000);
    eq(w.state, "pending", "paced for 10 s");
    paced.pool.setConfig({ minGapMs: 0 });
    await paced.time.advance(0);
    eq(w.state, "resolved", "a config change ends the pacing");
  }],

  ["a wait is woken when a half-open cooldown ends", async (Pool) => {
    const { pool, time } = world(Pool, 1);
    const l = pool.acquire("shop");
    pool.report("PROXY", "p0", "shop", { ok: false, failure: "TIMEOUT" });
    pool.report("PROXY", "p0", "shop", { ok: false, failure: "TIMEOUT" }); // cools for 120 s (2^1 × 60 s)
    pool.release(l);
    const w = track(pool.acquireWait("shop", { waitMs: 300_000 }));
    await time.advance(119_999);
    eq(w.state, "pending", "cooling");
    await time.advance(1);
    eq(w.state, "resolved", "the half-open trial, the instant the cooldown ended");
  }],

  ["a wait that ends empty answers null and emits one ACQUISITION_REJECTED", async (Pool) => {
    const { pool, time } = world(Pool, 1);
    pool.acquire("shop");
    types(pool);
    const w = track(pool.acquireWait("shop", { waitMs: 5000 }));
    await time.advance(4999);
    eq(w.state, "pending", "within waitMs");
    await time.advance(1);
    eq([w.state, w.value], ["resolved", null], "null at waitMs");
    eq(types(pool), ["ACQUISITION_REJECTED"], "one rejection for the whole wait");
    eq(time.pending, 0, "no timer left");
  }],

  ["each wait ends at its own deadline, whatever its place in the queue", async (Pool) => {
    const { pool, time } = world(Pool, 1);
    pool.acquire("shop");
    const long = track(pool.acquireWait("shop", { waitMs: 20_000 }));
    const short = track(pool.acquireWait("shop", { waitMs: 5_000 }));
    const middle = track(pool.acquireWait("shop", { waitMs: 10_000 }));
    await time.advance(5_000);
    eq([long.state, short.state, short.value, middle.state], ["pending", "resolved", null, "pending"], "the second ends first");
    await time.advance(5_000);
    eq([long.state, middle.state, middle.value], ["pending", "resolved", null], "then the third");
    await time.advance(10_000);
    eq([long.state, long.value], ["resolved", null], "then the first");
    eq(time.pending, 0, "no timer left");
  }],

  ["waitMs 0 is acquire; past maxWaiters a wait answers as if waitMs were 0", async (Pool) => {
    const { pool, time } = world(Pool, 1, { maxWaiters: 2 });
    pool.acquire("shop");
    types(pool);
    eq(await pool.acquireWait("shop", { waitMs: 0 }), null, "waitMs 0");
    eq(types(pool), ["ACQUISITION_REJECTED"], "as acquire");
    const a = track(pool.acquireWait("shop", { waitMs: 9000 }));
    const b = track(pool.acquireWait("shop", { waitMs: 9000 }));
    const c = track(pool.acquireWait("shop", { waitMs: 9000 }));
    await time.advance(0);
    eq([a.state, b.state, c.state, c.value], ["pending", "pending", "resolved", null], "the third is past the bound");
    eq(pool.waiting, 2, "two wait");
  }],

  ["an aborted signal ends the wait with an AbortError and leaks no lease", async (Pool) => {
    const { pool, time } = world(Pool, 1);
    const held = pool.acquire("shop");
    const ctl = new AbortController();
    const w = track(pool.acquireWait("shop", { waitMs: 60_000, signal: ctl.signal }));
    await time.advance(10);
    ctl.abort();
    await time.advance(0);
    eq([w.state, w.value?.name], ["rejected", "AbortError"], "AbortError");
    eq(pool.waiting, 0, "gone from the queue");
    pool.release(held);
    eq(pool.stats().leased, 0, "the release served nobody: no lease leaked");
    const pre = new AbortController();
    pre.abort();
    const early = track(pool.acquireWait("shop", { waitMs: 60_000, signal: pre.signal }));
    await time.advance(0);
    eq([early.state, pool.stats().leased], ["rejected", 0], "an aborted signal takes nothing, even with a candidate free");
  }],

  ["a waiter that goes away when its lease is granted leaks nothing: abort right after the release", async (Pool) => {
    const { pool, time } = world(Pool, 1);
    const held = pool.acquire("shop");
    const ctl = new AbortController();
    const w = track(pool.acquireWait("shop", { waitMs: 60_000, signal: ctl.signal }));
    pool.release(held); // granted to the waiter, synchronously
    ctl.abort(); // it goes away before it ran: the promise has its lease
    await time.advance(0);
    eq(w.state, "resolved", "the grant stands (it happened before the abort)");
    eq(pool.stats().leased, 1, "one lease, held by the waiter's promise");
    ok(pool.release(w.value), "and its holder can release it");
  }],

  ["waits are per context and group list: a release serves the context it can", async (Pool) => {
    const { pool, time } = world(Pool, 0);
    pool.register("PROXY", "dc-1", { group: "dc" });
    pool.register("PROXY", "res-1", { group: "res" });
    const dc = pool.acquire("shop", { groups: ["dc"] });
    const res = pool.acquire("shop", { groups: ["res"] });
    const onDc = track(pool.acquireWait("shop", { groups: ["dc"], waitMs: 9000 }));
    const onRes = track(pool.acquireWait("shop", { groups: ["res"], waitMs: 9000 }));
    pool.release(res);
    await time.advance(0);
    eq([onDc.state, onRes.state, onRes.value?.value], ["pending", "resolved", "res-1"], "the res waiter");
    pool.release(dc);
    await time.advance(0);
    eq([onDc.state, onDc.value?.value], ["resolved", "dc-1"], "then the dc one");
  }],

  ["bad wait arguments reject before anything waits", async (Pool) => {
    const { pool } = world(Pool, 1);
    for (const [options, what] of [
      [{}, "no waitMs"],
      [{ waitMs: -1 }, "negative"],
      [{ waitMs: Infinity }, "infinite"],
      [{ waitMs: "5" }, "a string"],
      [{ waitMs: 5, signal: {} }, "not a signal"],
      [{ waitMs: 5, other: 1 }, "an unknown option"],
      [{ waitMs: 5, groups: "dc" }, "groups not a list"],
      [null, "no options"],
    ]) {
      let code;
      await pool.acquireWait("shop", options).then(() => (code = "resolved"), (e) => (code = e.code));
      eq(code, "INVALID_ARGUMENT", what);
    }
    let code;
    await pool.acquireWait(" ", { waitMs: 5 }).then(() => (code = "resolved"), (e) => (code = e.code));
    eq(code, "INVALID_ARGUMENT", "a blank context");
    eq([pool.waiting, pool.stats().leased], [0, 0], "nothing waits, nothing leased");
  }],

  ["maxLeases lets one resource serve several waits at once (a gateway)", async (Pool) => {
    const { pool } = world(Pool, 0);
    pool.register("PROXY", "gateway", { maxLeases: 3 });
    const leases = [];
    for (let i = 0; i < 3; i++) leases.push(await pool.acquireWait(`site-${i}`, { waitMs: 1000 }));
    eq(leases.map((l) => [l.value, l.token]), [["gateway", 1], ["gateway", 2], ["gateway", 3]], "three leases");
    eq(pool.acquire("site-3"), null, "the fourth is refused");
    const view = pool.resources()[0];
    eq([view.maxLeases, view.leases.map((l) => l.token), view.lease.token], [3, [1, 2, 3], 1], "the view");
    eq(pool.stats().leased, 3, "stats count live leases");
  }],

  ["finish: report, release and the next lease in one call; a second finish is LEASE_FINISHED", async (Pool) => {
    const { pool } = world(Pool, 2);
    const first = pool.acquire("shop");
    types(pool);
    const next = pool.finish(first, { ok: false, failure: "BLOCKED" }, { next: {} });
    eq([next.context, next.token], ["shop", 2], "the next lease, same context");
    eq(types(pool), ["LEASE_RELEASED", "RESOURCE_LEASED"], "released, then leased");
    const cell = pool.resources().find((r) => r.value === first.value).cells[0];
    eq([cell.context, cell.score], ["shop", -30], "the outcome was reported");
    const revision = pool.stats().revision;
    let code;
    try {
      pool.finish(first, { ok: true });
    } catch (e) {
      code = e.code;
    }
    eq(code, "LEASE_FINISHED", "a retried finish");
    eq(pool.stats().revision, revision, "and it changed nothing");
    const other = pool.finish(next, OK, { next: { context: "news" } });
    eq(other.context, "news", "next in another context");
    eq(pool.finish(other, OK), null, "no next: null");
    eq(pool.stats().leased, 0, "everything released");
  }],

  ["finish with next.waitMs waits for the next lease and serves earlier waiters first", async (Pool) => {
    const { pool, time } = world(Pool, 1);
    const held = pool.acquire("shop");
    const waiter = track(pool.acquireWait("shop", { waitMs: 60_000 }));
    const mine = track(pool.finish(held, OK, { next: { waitMs: 60_000 } }));
    await time.advance(0);
    eq([waiter.state, mine.state], ["resolved", "pending"], "the earlier waiter gets the released proxy");
    pool.finish(waiter.value, OK);
    await time.advance(0);
    eq(mine.state, "resolved", "then the finisher's next");
    const lone = pool.finish(mine.value, OK, { next: { waitMs: 0 } });
    ok(lone instanceof Promise, "with waitMs given, a promise");
    eq((await lone).token, 4, "granted at once");
  }],

  ["finish of a lapsed lease still reports; of a deregistered resource still answers next", async (Pool) => {
    const { pool, time } = world(Pool, 2);
    const l = pool.acquire("shop");
    await time.advance(31_000); // lapsed
    const next = pool.finish(l, { ok: false, failure: "TIMEOUT" }, { next: {} });
    ok(next !== null, "a next lease");
    eq(pool.resources().find((r) => r.value === l.value).cells[0].consecutiveFailures, 1, "reported although lapsed");
    pool.deregister("PROXY", next.value);
    const after = pool.finish(next, OK, { next: {} });
    eq(after?.value, l.value, "its outcome has no cell to go to; the step goes on");
  }],
];
