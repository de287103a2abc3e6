// `client.events()` against a real pool server on 127.0.0.1: the live events as an async
// iterator that survives a dropped connection — cut under it (a relay destroys the sockets),
// ended by the server (streams with a lifetime), or gone silent (no heartbeat within idleMs) —
// and resumes by Last-Event-ID from the last seq it delivered: every event once, in seq order,
// no gap, no duplicate, compared with the audit log. The caller's signal and `break` end it
// and free the server's stream.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { connectPool } from "repute/client";
import { startServer } from "../server/_http-support.mjs";
import { startRelay, within } from "./_support.mjs";

let server;
let relay;
let direct;

before(async () => {
  server = await startServer({ now: Date.now(), serveOptions: { heartbeatMs: 50 } });
  relay = await startRelay(server.server.port);
  direct = connectPool({ url: server.url });
});
after(async () => {
  await direct?.close();
  await relay?.close();
  await server?.close();
});

/** Reads `iterator` in the background into `seen`; `until(n)` waits for n events. */
function reader(iterator) {
  const seen = [];
  const state = { error: null, ended: false };
  const done = (async () => {
    try {
      for await (const e of iterator) seen.push(e);
    } catch (e) {
      state.error = e;
    }
    state.ended = true;
  })();
  const until = (n, what = `${n} events`) =>
    within((async () => {
      while (seen.length < n && !state.ended) await new Promise((r) => setTimeout(r, 5));
      if (seen.length < n) throw state.error ?? new Error("the iterator ended");
    })(), 10_000, what);
  return { seen, state, done, until };
}

/** The audit log from `after` on. */
async function logAfter(after) {
  const out = [];
  for (;;) {
    const page = await direct.readEvents({ after, limit: 1000 });
    out.push(...page.events);
    if (page.next === null) return out;
    after = page.next;
  }
}

const registerMany = async (prefix, n) => {
  for (let i = 1; i <= n; i++) await direct.register("PROXY", `${prefix}-${i}`);
};

test("a cut connection: the iterator resumes from the last seq it delivered, no gap, no duplicate", async () => {
  const start = (await direct.stats()).nextEventSeq - 1;
  const client = connectPool({ url: relay.url });
  const controller = new AbortController();
  const r = reader(client.events({ after: start, signal: controller.signal }));
  try {
    await registerMany("cut", 5);
    await r.until(5);
    const last = r.seen[4].seq;
    relay.cutAll(); // both sides: the client sees its stream drop
    await registerMany("while-cut", 5); // while it is away (or reconnecting)
    await r.until(10);
    await registerMany("after", 3);
    await r.until(13);
    const expected = await logAfter(start);
    assert.deepEqual(r.seen.map((e) => e.seq), expected.map((e) => e.seq), "exactly the audit log, in order");
    assert.deepEqual(r.seen, expected, "the same events");
    // the resumed stream asked for what came after the last delivered seq
    const resumed = relay.sent.filter((t) => t.includes("GET /api/events/stream"));
    assert.ok(resumed.length >= 2, "it reconnected");
    assert.ok(resumed.some((t) => t.toLowerCase().includes(`last-event-id: ${last}\r\n`)), `resumed with Last-Event-ID ${last}`);
  } finally {
    controller.abort();
    await r.done;
    await client.close();
  }
  assert.equal(r.state.error?.code, "ABORTED", "the signal ends it with ABORTED");
});

test("without `after`: from the newest event at the call, and a cut right away loses nothing", async () => {
  await registerMany("before", 2); // not delivered: older than the call
  relay.sent = [];
  const client = connectPool({ url: relay.url });
  const r = reader(client.events());
  try {
    const newest = (await direct.stats()).nextEventSeq - 1;
    // once it asked for the stream (its starting point is fixed by then), cut it before any event
    await within((async () => {
      while (!relay.sent.some((t) => t.includes("GET /api/events/stream"))) await new Promise((res) => setTimeout(res, 5));
    })(), 10_000, "the stream request");
    relay.cutAll();
    await registerMany("new", 3);
    await r.until(3);
    assert.deepEqual(r.seen.map((e) => e.seq), [newest + 1, newest + 2, newest + 3]);
    assert.deepEqual(r.seen.map((e) => e.value), ["new-1", "new-2", "new-3"]);
  } finally {
    await client.close();
    await r.done;
  }
  assert.equal(r.state.error?.code, "CLOSED", "close() ends it with CLOSED");
});

test("without `after`, the starting point is fixed by the events() call, not by the first next(): nothing in between is lost", async () => {
  // How many GET /api/stats the server has answered (its request metrics).
  const statsServed = async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    return Number(/^repute_http_request_duration_seconds_count\{route="stats",method="GET",status="200"\} (\d+)/m.exec(text)?.[1] ?? 0);
  };
  const before = await statsServed();
  const client = connectPool({ url: server.url });
  const controller = new AbortController();
  const iterator = client.events({ signal: controller.signal });
  try {
    // Once the starting point is answered (a consumer doing other work first), an event is made.
    await within((async () => {
      while ((await statsServed()) === before) await new Promise((r) => setTimeout(r, 5));
    })(), 5000, "the starting point asked for by events()");
    await direct.register("PROXY", "between-call-and-next");
    const first = await within(iterator.next(), 5000, "the event made between events() and next()");
    assert.equal(first.value.value, "between-call-and-next");
  } finally {
    controller.abort();
    await iterator.return();
    await client.close();
  }
});

test("streams the server ends (a lifetime of 150 ms): every reconnection resumes, nothing lost or repeated", async () => {
  const s = await startServer({ now: Date.now(), serveOptions: { streamMaxMs: 150, heartbeatMs: 50 } });
  const client = connectPool({ url: s.url });
  const controller = new AbortController();
  const r = reader(client.events({ after: 0, signal: controller.signal }));
  try {
    for (let i = 1; i <= 12; i++) {
      await client.register("SESSION", `s-${i}`);
      // real time: the server ends each stream after a real 150 ms; the events are spread
      // over several of those lifetimes.
      await new Promise((res) => setTimeout(res, 40));
    }
    await r.until(12);
    const log = (await client.readEvents({ after: 0, limit: 1000 })).events;
    assert.deepEqual(r.seen, log);
  } finally {
    controller.abort();
    await r.done;
    await client.close();
    await s.close();
  }
});

test("a stream gone silent (no heartbeat within idleMs) counts as dropped and is reopened", async () => {
  relay.sent = [];
  const start = (await direct.stats()).nextEventSeq - 1;
  const client = connectPool({ url: relay.url });
  const controller = new AbortController();
  const r = reader(client.events({ after: start, idleMs: 300, signal: controller.signal }));
  try {
    await registerMany("idle", 1);
    await r.until(1);
    relay.freezeAll(); // the connection stays open; nothing more arrives on it
    await registerMany("idle-later", 2);
    await r.until(3, "the events after the silence");
    assert.deepEqual(r.seen, await logAfter(start));
    assert.ok(relay.sent.filter((t) => t.includes("GET /api/events/stream")).length >= 2, "a second stream");
  } finally {
    controller.abort();
    await r.done;
    await client.close();
  }
});

test("break ends the stream: the server's only stream slot frees again, round after round", async () => {
  const s = await startServer({ now: Date.now(), serveOptions: { maxStreams: 1 } });
  const client = connectPool({ url: s.url });
  try {
    await client.register("PROXY", "one");
    // The server frees a slot once it sees the connection close, a moment after `break`.
    const firstEvent = async () => {
      for (const end = Date.now() + 5000; ;) {
        try {
          for await (const e of client.events({ after: 0, reconnectForMs: 0 })) return e;
        } catch (e) {
          if (e.code !== "TOO_MANY_STREAMS" || Date.now() > end) throw e;
          await new Promise((res) => setTimeout(res, 10));
        }
      }
    };
    for (let round = 0; round < 3; round++) assert.equal((await within(firstEvent(), 10_000, `round ${round}`)).seq, 1);
  } finally {
    await client.close();
    await s.close();
  }
});
