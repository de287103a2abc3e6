// Crash safety of the pool server (`repute serve`, pkg-scripts/lib/node/open-pool.js): `kill -9`
// at random moments while the server is under load and checkpointing every 20 ms, then a restart
// on the same folder. Each trial runs a few keep-alive worker clients (acquire → report → release
// in a loop, with some failures) and one operator client (registers new resources, blocks and
// unblocks, one action at a time, recording every action whose 2xx it received), kills the
// server with SIGKILL 0.3–1.5 s in, restarts it, and checks:
// - it starts (the snapshot loads: no "damaged" error, no snapshot set aside as damaged);
// - the revision never goes backwards across restarts, and is at least the revision the pool had
//   before any acknowledged operator action (read from GET /api/snapshot before the action);
// - every acknowledged operator action is there: registered resources exist, and each resource's
//   block state is its latest acknowledged one (or that of the one action in flight at the kill,
//   whose response never came: it may or may not have reached the disk);
// - a token issued after the restart is larger than every token seen before the kill;
// - GET /api/events has strictly increasing seqs (no duplicate), and the events of the restarted
//   server are in it (a reused seq would be refused by the audit log and go missing).
// Randomness is seeded (CRASH_SEED=<n> to replay; the seed is printed): the kill delays and the
// choices of each client come from their own seeded streams, so a replay kills at the same
// moments with the same plan (what the server is doing at that moment still depends on timing).
// CRASH_TRIALS sets the number of trials (default 24).
// Two more tests send the same register / unblock twice at once and kill the server the moment
// the second ("nothing to change") answer arrives: that answer acknowledges the state too.
// Only 127.0.0.1. Child processes are real `node` processes.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "undici";
import { mulberry32 } from "../../pkg-scripts/lib/mulberry32.js";

const BIN = fileURLToPath(new URL("../../pkg-scripts/bin/repute.js", import.meta.url));
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
const TRIALS = Number(process.env.CRASH_TRIALS ?? 24);
const WORKERS = 3;
const CONTEXTS = ["shop.example", "news.example", "api.example"];
const INITIAL = 200;
const KIND = "PROXY";

const root = await mkdtemp(path.join(os.tmpdir(), "repute-crash-"));
const children = new Set();
after(async () => {
  for (const c of children) c.kill("SIGKILL");
  await rm(root, { recursive: true, force: true });
});

const killDelays = mulberry32(SEED);
const pick = (xs, r) => xs[Math.floor(r() * xs.length)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts `repute serve` on `dir` (port 0) and resolves once it prints its URL; rejects with its
 * output if it exits first.
 */
function startServer(dir) {
  const child = spawn(process.execPath, [BIN, "serve", "--data", dir, "--port", "0", "--checkpoint-ms", "20"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  const exited = new Promise((resolve) =>
    child.on("exit", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  let out = "";
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const ready = new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      out += d;
      const m = /repute: serving (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]);
    });
    exited.then(({ code, signal }) => reject(new Error(`the server exited (${code ?? signal}) before serving:\n${out}${err}`)));
  });
  return { child, ready, exited, stderr: () => err };
}

async function call(client, method, pathname, body) {
  const res = await client.request({
    method,
    path: pathname,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : null };
}

const resourcePath = (value) => `/api/resources/${KIND}/${encodeURIComponent(value)}`;

/** The block state as the test records it: "none", "permanent" or "timed". */
function blockState(view) {
  if (view.blocked === null) return "none";
  return view.blocked.permanent === true ? "permanent" : "timed";
}

/** Every event of the audit log, by keyset pages. */
async function allEvents(client) {
  const events = [];
  let after = 0;
  for (;;) {
    const { status, json } = await call(client, "GET", `/api/events?after=${after}&limit=1000`);
    assert.equal(status, 200);
    events.push(...json.events);
    if (json.next === null) return events;
    after = json.next;
  }
}

/**
 * Load until `state.stop`: acquire → report → release in a loop on one keep-alive connection.
 * Ends at the first transport error (the server was killed).
 */
async function worker(url, state, r) {
  const client = new Client(url, { pipelining: 1 });
  try {
    while (!state.stop) {
      const context = pick(CONTEXTS, r);
      const a = await call(client, "POST", "/api/leases", { context });
      if (a.status === 409) {
        await sleep(2); // real time: a worker's back-off against the real child's full pool
        continue;
      }
      assert.equal(a.status, 201, JSON.stringify(a.json));
      state.maxToken = Math.max(state.maxToken, a.json.token);
      state.cycles++;
      const x = r();
      const outcome = x < 0.9 ? { ok: true, latencyMs: Math.floor(x * 300) } : { ok: false, failure: x < 0.97 ? "TIMEOUT" : "SLOW" };
      const rep = await call(client, "POST", "/api/outcomes", { kind: a.json.kind, value: a.json.value, context, outcome });
      assert.equal(rep.status, 204, JSON.stringify(rep.json));
      const rel = await call(client, "DELETE", `/api/leases/${a.json.leaseId}`);
      assert.equal(rel.status, 204, JSON.stringify(rel.json));
    }
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    // the server is gone
  } finally {
    client.destroy().catch(() => {});
  }
}

/**
 * Operator actions until `state.stop`, one at a time. `known` maps each resource the test knows
 * to { state: last acknowledged block state }; `inflight` is the action sent but not answered.
 */
async function operator(url, state, known, trial) {
  const client = new Client(url, { pipelining: 1 });
  const rand = mulberry32(SEED + trial * 7919);
  let n = 0;
  try {
    while (!state.stop) {
      // The revision before the action: once the action is acknowledged, the snapshot on disk is
      // at least this, plus one when the action changed something.
      let before = null;
      if (n % 4 === 0) {
        const s = await call(client, "GET", "/api/snapshot");
        assert.equal(s.status, 200);
        before = s.json.revision;
      }
      const x = rand();
      let action;
      if (x < 0.3) {
        const value = `http://op-${trial}-${n}.example:8080`;
        action = { type: "register", value, next: "none", changes: true };
        state.inflight = action;
        const res = await call(client, "POST", "/api/resources", { kind: KIND, value });
        assert.equal(res.status, 201, JSON.stringify(res.json));
        known.set(value, { state: "none" });
      } else {
        const value = pick([...known.keys()], rand);
        const current = known.get(value).state;
        const y = rand();
        if (current !== "none" && y < 0.5) {
          action = { type: "unblock", value, next: "none", changes: true };
          state.inflight = action;
          const res = await call(client, "DELETE", `${resourcePath(value)}/block`);
          assert.equal(res.status, 200, JSON.stringify(res.json));
          assert.equal(res.json.unblocked, true);
        } else {
          const permanent = y < 0.75;
          // A block of a resource that is not blocked is a change; another block may not be.
          action = { type: "block", value, next: permanent ? "permanent" : "timed", changes: current === "none" };
          state.inflight = action;
          const query = permanent ? "permanent=true" : "seconds=3600";
          const res = await call(client, "POST", `${resourcePath(value)}/block?${query}`);
          assert.equal(res.status, 204, JSON.stringify(res.json));
        }
        known.get(value).state = action.next;
      }
      // Acknowledged.
      state.inflight = null;
      state.acked++;
      if (before !== null) state.revisionFloor = Math.max(state.revisionFloor, before + (action.changes ? 1 : 0));
      n++;
    }
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
  } finally {
    client.destroy().catch(() => {});
  }
}

test(`kill -9 under load and checkpointing, then restart: nothing acknowledged is lost (seed ${SEED})`, async (t) => {
  t.diagnostic(`seed ${SEED} (CRASH_SEED=${SEED} replays it), ${TRIALS} trials`);
  console.log(`crash.test: seed ${SEED}, ${TRIALS} trials`);
  const started = performance.now();
  const dir = path.join(root, "pool");

  // The initial resources, registered (and acknowledged) before the first trial.
  let server = startServer(dir);
  let url = await server.ready;
  const known = new Map();
  {
    const c = new Client(url);
    for (let i = 0; i < INITIAL; i++) {
      const value = `http://user:pw@proxy-${i}.example:8080`;
      const res = await call(c, "POST", "/api/resources", { kind: KIND, value });
      assert.equal(res.status, 201);
      known.set(value, { state: "none" });
    }
    await c.close();
  }

  let maxToken = 0;
  let lastRevision = 0;
  let revisionFloor = 0;
  const totals = { cycles: 0, acked: 0, events: 0, inflightLanded: 0, inflightLost: 0, midSnapshot: 0, midOperator: 0 };

  for (let trial = 1; trial <= TRIALS; trial++) {
    const where = `trial ${trial} (seed ${SEED})`;
    const state = { stop: false, maxToken, cycles: 0, acked: 0, inflight: null, revisionFloor };
    const loops = [];
    for (let w = 0; w < WORKERS; w++) loops.push(worker(url, state, mulberry32(SEED + trial * 101 + w)));
    loops.push(operator(url, state, known, trial));

    await sleep(300 + Math.floor(killDelays() * 1200)); // real time: the kill lands at a random point of a real child's load
    server.child.kill("SIGKILL");
    const { signal } = await server.exited;
    assert.equal(signal, "SIGKILL", `${where}: the server died of the kill, not before it`);
    state.stop = true;
    await Promise.all(loops);
    maxToken = Math.max(maxToken, state.maxToken);
    revisionFloor = Math.max(revisionFloor, state.revisionFloor);
    totals.cycles += state.cycles;
    totals.acked += state.acked;
    // What the kill interrupted (for the summary: evidence that kills land inside writes).
    const left = readdirSync(dir);
    if (left.some((f) => /^snapshot(\.prev)?\.json\.tmp-/.test(f))) totals.midSnapshot++;
    if (state.inflight) totals.midOperator++;

    // Restart on the same folder.
    server = startServer(dir);
    try {
      url = await server.ready;
    } catch (e) {
      assert.fail(`${where}: the server did not restart after kill -9: ${e.message}`);
    }
    assert.doesNotMatch(server.stderr(), /damaged/i, `${where}: restart reported a damaged snapshot`);
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.includes("damaged")),
      [],
      `${where}: a snapshot was set aside as damaged`,
    );

    const c = new Client(url, { pipelining: 1 });
    try {
      // Revision: never backwards, and covers every acknowledged operator action.
      const snap = await call(c, "GET", "/api/snapshot");
      assert.equal(snap.status, 200);
      const revision = snap.json.revision;
      assert.ok(revision >= lastRevision, `${where}: revision went back from ${lastRevision} to ${revision}`);
      assert.ok(
        revision >= revisionFloor,
        `${where}: revision ${revision} is below ${revisionFloor}, the revision an acknowledged operator action had reached`,
      );
      lastRevision = revision;

      // Every acknowledged operator action is there.
      const list = await call(c, "GET", "/api/resources");
      assert.equal(list.status, 200);
      const views = new Map(list.json.resources.filter((v) => v.kind === KIND).map((v) => [v.value, v]));
      const inflight = state.inflight;
      for (const [value, rec] of known) {
        const view = views.get(value);
        if (inflight?.type === "register" && inflight.value === value) continue;
        assert.ok(view, `${where}: the acknowledged registration of ${value} is lost`);
        const now = blockState(view);
        const allowed = [rec.state];
        if (inflight && inflight.value === value) allowed.push(inflight.next);
        assert.ok(
          allowed.includes(now),
          `${where}: ${value} is ${now} after restart; acknowledged: ${rec.state}` +
            (inflight?.value === value ? `, in flight at the kill: ${inflight.type} → ${inflight.next}` : ""),
        );
        if (now === "timed") assert.ok(view.blocked.until > Date.now(), `${where}: ${value}'s 1 h block lost its end`);
        if (inflight && inflight.value === value) {
          if (now === inflight.next && now !== rec.state) totals.inflightLanded++;
          else if (now !== inflight.next) totals.inflightLost++;
        }
        rec.state = now; // what is true now is the baseline of the next trial
      }
      if (inflight?.type === "register") {
        // Sent, not acknowledged: it may or may not be there; keep it if it is.
        const view = views.get(inflight.value);
        if (view) {
          known.set(inflight.value, { state: blockState(view) });
          totals.inflightLanded++;
        } else {
          totals.inflightLost++;
        }
      }
      for (const value of views.keys()) assert.ok(known.has(value), `${where}: ${value} appeared from nowhere`);

      // Tokens: the first one after the restart is above every one handed out before the kill.
      const probe = await call(c, "POST", "/api/leases", { context: `after-restart-${trial}` });
      assert.equal(probe.status, 201, `${where}: ${JSON.stringify(probe.json)}`);
      assert.ok(
        probe.json.token > maxToken,
        `${where}: token ${probe.json.token} after the restart is not above ${maxToken}, seen before the kill`,
      );
      maxToken = probe.json.token;
      const rel = await call(c, "DELETE", `/api/leases/${probe.json.leaseId}`);
      assert.equal(rel.status, 204);

      // Events: strictly increasing seqs, and the restarted server's events are recorded.
      const events = await allEvents(c);
      for (let i = 1; i < events.length; i++) {
        assert.ok(events[i].seq > events[i - 1].seq, `${where}: event seq ${events[i].seq} follows ${events[i - 1].seq}`);
      }
      const leased = events.find((e) => e.type === "RESOURCE_LEASED" && e.token === probe.json.token);
      assert.ok(leased, `${where}: the lease event of token ${probe.json.token} is not in the audit log (seq reused?)`);
      assert.ok(
        events.some((e) => e.type === "LEASE_RELEASED" && e.token === probe.json.token && e.seq > leased.seq),
        `${where}: the release event of token ${probe.json.token} is not in the audit log`,
      );
      totals.events = events.length;
    } finally {
      await c.close();
    }
  }

  server.child.kill("SIGTERM");
  const end = await server.exited;
  assert.equal(end.code, 0, `clean stop: ${server.stderr()}`);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const summary =
    `${TRIALS} kills in ${seconds} s: ${totals.cycles} worker cycles, ${totals.acked} acknowledged operator actions, ` +
    `${totals.midSnapshot} kills left a snapshot temp file, ${totals.midOperator} an operator action unanswered ` +
    `(found applied ${totals.inflightLanded}, not applied ${totals.inflightLost}), ` +
    `${known.size} resources, ${totals.events} events, last revision ${lastRevision}, last token ${maxToken}`;
  t.diagnostic(summary);
  console.log(`crash.test: ${summary}`);
});

// --- a second, concurrent request for an operator action that is still being written ----------
//
// When two requests ask for the same register / unblock at once, the one the server handles
// second changes nothing in memory and answers 200 ("already registered" / {unblocked: false}).
// That answer acknowledges a state that the first request may still be writing: it must wait for
// the same write (open-pool.js did not — `if (added) await this.#durable()` — before 2fe1179; a
// kill -9 right after the 200 lost the registration or the unblock in about half the rounds).
// Each round sends the same action twice at once on two connections and kills the server as soon
// as the no-change answer arrives, then restarts it and checks that the acknowledged state holds.

/**
 * `rounds` rounds of `twice(a, b, round, kill)` (resolves to { killed, check(client) }); after
 * each round that killed the server: restart, and collect what `check` finds missing.
 */
async function raceRounds(dir, setup, twice, rounds = 5) {
  let server = startServer(dir);
  let url = await server.ready;
  const lost = [];
  let killed = 0;
  try {
    for (let round = 0; round < rounds; round++) {
      const setupClient = new Client(url);
      await setup(setupClient, round);
      await setupClient.close();
      const a = new Client(url);
      const b = new Client(url);
      const outcome = await twice(a, b, round, () => server.child.kill("SIGKILL"));
      a.destroy().catch(() => {});
      b.destroy().catch(() => {});
      if (!outcome.killed) continue;
      killed++;
      await server.exited;
      server = startServer(dir);
      url = await server.ready;
      const c = new Client(url);
      const problem = await outcome.check(c);
      await c.close();
      if (problem) lost.push(`round ${round}: ${problem}`);
    }
  } finally {
    server.child.kill("SIGKILL");
    await server.exited;
  }
  return { lost, killed };
}

/** Sends the same request on `a` and `b` at once; calls `kill()` the moment an answer for which
 * `isNoChange(answer)` holds arrives. Resolves to whether it did. */
async function sameRequestTwice(a, b, method, pathname, body, isNoChange, kill) {
  let killed = false;
  const send = (client) =>
    call(client, method, pathname, body).then(
      (r) => {
        if (!killed && isNoChange(r)) {
          killed = true;
          kill();
        }
      },
      () => {}, // the other request, cut by the kill
    );
  await Promise.all([send(a), send(b)]);
  return killed;
}

/** 300 more resources: a bigger snapshot, a slightly longer write for the race to fall into. */
async function filler(c) {
  for (let i = 0; i < 300; i++) await call(c, "POST", "/api/resources", { kind: KIND, value: `filler-${i}` });
}

test("a registration answered 200 (already registered) while the creating request is being written survives kill -9", async () => {
  const { lost, killed } = await raceRounds(
    path.join(root, "race-register"),
    async (c, round) => {
      if (round === 0) await filler(c);
    },
    async (a, b, round, kill) => {
      const value = `dup-${round}`;
      const killed = await sameRequestTwice(a, b, "POST", "/api/resources", { kind: KIND, value },
        (r) => r.status === 200 && r.json?.created === false, kill);
      return {
        killed,
        async check(c) {
          const list = await call(c, "GET", "/api/resources");
          return list.json.resources.some((v) => v.value === value) ? null : `${value} was acknowledged (200, created: false) and is gone`;
        },
      };
    },
  );
  assert.ok(killed > 0, "no round got a 200 for the duplicate registration");
  assert.deepEqual(lost, [], `after kill -9 on a 200 "already registered": ${lost.join("; ")}`);
});

test("an unblock answered 200 {unblocked: false} while the unblocking request is being written survives kill -9", async () => {
  const { lost, killed } = await raceRounds(
    path.join(root, "race-unblock"),
    async (c, round) => {
      if (round === 0) await filler(c);
      const value = `blocked-${round}`;
      assert.equal((await call(c, "POST", "/api/resources", { kind: KIND, value })).status, 201);
      assert.equal((await call(c, "POST", `${resourcePath(value)}/block?permanent=true`)).status, 204);
    },
    async (a, b, round, kill) => {
      const value = `blocked-${round}`;
      const killed = await sameRequestTwice(a, b, "DELETE", `${resourcePath(value)}/block`, undefined,
        (r) => r.status === 200 && r.json?.unblocked === false, kill);
      return {
        killed,
        async check(c) {
          const list = await call(c, "GET", "/api/resources");
          const view = list.json.resources.find((v) => v.value === value);
          return view.blocked === null ? null : `${value} was acknowledged unblocked (200) and is blocked again: ${JSON.stringify(view.blocked)}`;
        },
      };
    },
  );
  assert.ok(killed > 0, "no round got a 200 {unblocked: false} for the duplicate unblock");
  assert.deepEqual(lost, [], `after kill -9 on a 200 {unblocked: false}: ${lost.join("; ")}`);
});
