// `GET /api/events/stream` (Server-Sent Events, handler.js + sse.js): frames carry id = seq,
// event = type and the event as data, in strictly increasing seq, the same events as
// GET /api/events; a client resumes by Last-Event-ID or ?after= with no gap and no duplicate,
// even while events keep coming; heartbeat comments arrive; a consumer that stops reading is
// cut (its stream ends, repute_stream_cuts_total counts it), and one whose socket takes nothing
// for the write timeout has its connection closed; closing one client does not disturb the
// others; a Last-Event-ID beyond the newest event is a 409; at most maxStreams subscribers are
// served (one more: 503). Each test has its own in-process server on 127.0.0.1:0.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { once } from "node:events";
import { startServer, withServer, call, openStream, resourcePath, assertProblem } from "./_http-support.mjs";


/** Some HTTP operations, each emitting at least one event. */
async function activity(s, tag, rounds = 1) {
  for (let i = 0; i < rounds; i++) {
    const v = `${tag}-${i}`;
    await call(s.url, "POST", "/api/resources", { body: { kind: "PROXY", value: v } });
    const lease = await call(s.url, "POST", "/api/leases", { body: { context: `ctx-${tag}` } });
    if (lease.status === 201) await call(s.url, "DELETE", `/api/leases/${lease.json.leaseId}`);
    await call(s.url, "POST", resourcePath("PROXY", v, "/block?seconds=5"));
    await call(s.url, "DELETE", resourcePath("PROXY", v, "/block"));
  }
}

async function allEvents(s) {
  const out = [];
  let after = 0;
  for (;;) {
    const r = await call(s.url, "GET", `/api/events?after=${after}&limit=1000`);
    assert.equal(r.status, 200);
    out.push(...r.json.events);
    if (r.json.next === null) return out;
    after = r.json.next;
  }
}

const lastSeq = async (s) => (await allEvents(s)).at(-1)?.seq ?? 0;
const seqs = (client) => client.events().map((e) => e.seq);
const cuts = async (s) => Number(/^repute_stream_cuts_total (\d+)$/m.exec(await s.pool.metrics())[1]);

/** Asserts `list` is exactly the consecutive integers from..to. */
function assertRange(list, from, to, what) {
  const want = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  assert.deepEqual(list, want, `${what}: expected ${from}..${to}, got ${list.length} seqs [${list.slice(0, 5)} … ${list.slice(-5)}]`);
}

test("frames: id = seq, event = type, data = the event; strictly increasing; the same as GET /api/events", async () => {
  await withServer({}, async (s) => {
    await activity(s, "before"); // not replayed: no Last-Event-ID
    const first = (await lastSeq(s)) + 1;
    const c = await openStream(s.url);
    try {
      assert.equal(c.res.status, 200);
      assert.equal(c.res.headers.get("content-type"), "text/event-stream");
      assert.equal(c.res.headers.get("cache-control"), "no-store");
      await c.waitFor((x) => x.frames.length > 0, 5000, "the connected comment");
      await activity(s, "live", 3);
      const last = await lastSeq(s);
      await c.waitFor((x) => seqs(x).at(-1) === last, 5000, `seq ${last}`);
      assertRange(seqs(c), first, last, "live events");
      const byLog = new Map((await allEvents(s)).map((e) => [e.seq, e]));
      for (const e of c.events()) {
        const { _id, _event, ...event } = e;
        assert.equal(_id, String(event.seq));
        assert.equal(_event, event.type);
        assert.deepEqual(event, byLog.get(event.seq));
      }
      assert.ok(c.events().some((e) => e.type === "RESOURCE_LEASED"));
      assert.ok(c.events().some((e) => e.type === "RESOURCE_BLOCKLISTED"));
    } finally {
      c.close();
    }
  });
});

test("resume by Last-Event-ID: the missed events, then live ones, each exactly once, in order", async () => {
  await withServer({}, async (s) => {
    await activity(s, "old", 5);
    const total = await lastSeq(s);
    const resumeAt = Math.floor(total / 2);
    // Events keep coming while the stream replays the log.
    const busy = activity(s, "during", 5);
    const c = await openStream(s.url, { headers: { "last-event-id": String(resumeAt) } });
    try {
      await busy;
      await activity(s, "after", 2);
      const last = await lastSeq(s);
      await c.waitFor((x) => seqs(x).at(-1) === last, 5000, `seq ${last}`);
      assertRange(seqs(c), resumeAt + 1, last, "resumed stream");
    } finally {
      c.close();
    }
  });
});

test("resume by ?after=; Last-Event-ID wins over ?after=; Last-Event-ID 0 replays everything", async () => {
  await withServer({}, async (s) => {
    await activity(s, "x", 3);
    const last = await lastSeq(s);
    const a = await openStream(s.url, { query: "?after=4" });
    const b = await openStream(s.url, { query: "?after=1", headers: { "last-event-id": "6" } });
    const z = await openStream(s.url, { headers: { "last-event-id": "0" } });
    try {
      await a.waitFor((x) => seqs(x).at(-1) === last, 5000, "a");
      await b.waitFor((x) => seqs(x).at(-1) === last, 5000, "b");
      await z.waitFor((x) => seqs(x).at(-1) === last, 5000, "z");
      assertRange(seqs(a), 5, last, "?after=4");
      assertRange(seqs(b), 7, last, "Last-Event-ID 6 with ?after=1");
      assertRange(seqs(z), 1, last, "Last-Event-ID 0");
      // Then live.
      await activity(s, "y");
      const now = await lastSeq(s);
      await a.waitFor((x) => seqs(x).at(-1) === now, 5000, "a live");
      assertRange(seqs(a), 5, now, "?after=4 then live");
    } finally {
      a.close();
      b.close();
      z.close();
    }
  });
});

test("resume past a reconnect: the concatenation of two streams has no gap and no duplicate", async () => {
  await withServer({}, async (s) => {
    const first = await openStream(s.url, { headers: { "last-event-id": "0" } });
    await activity(s, "one", 2);
    const mid = await lastSeq(s);
    await first.waitFor((x) => seqs(x).at(-1) === mid, 5000, "first stream");
    first.close();
    const got = seqs(first);
    await activity(s, "gap", 2); // happens while disconnected
    const second = await openStream(s.url, { headers: { "last-event-id": String(got.at(-1)) } });
    try {
      await activity(s, "two", 1);
      const last = await lastSeq(s);
      await second.waitFor((x) => seqs(x).at(-1) === last, 5000, "second stream");
      assertRange([...got, ...seqs(second)], 1, last, "first + second");
    } finally {
      second.close();
    }
  });
});

test("heartbeat comments arrive every heartbeatMs on an idle stream", async () => {
  await withServer({ serveOptions: { heartbeatMs: 50 } }, async (s) => {
    const c = await openStream(s.url);
    try {
      const heartbeats = () => c.frames.filter((f) => f.comments.includes("heartbeat")).length;
      await c.waitFor(() => heartbeats() >= 3, 3000, "3 heartbeats");
      assert.equal(c.events().length, 0, "an idle stream carries no events");
      assert.ok(c.frames[0].comments.includes("connected"));
    } finally {
      c.close();
    }
  });
});

test("a consumer that stops reading is cut: its stream ends and repute_stream_cuts_total counts it", async () => {
  await withServer({ serveOptions: { streamQueue: 5, heartbeatMs: 60000 }, poolOptions: { burst: 1e9 } }, async (s) => {
    assert.equal(await cuts(s), 0);
    const req = http.get(`${s.url}/api/events/stream`, { agent: false });
    req.on("error", () => {});
    try {
      const [res] = await once(req, "response");
      assert.equal(res.statusCode, 200);
      res.pause(); // read nothing: the socket buffers fill, then the server-side queue
      // One event per macrotask (a consumer that keeps up is never more than a frame behind),
      // large frames (a 200-character context), until the server gives up on this subscriber.
      const context = "c".repeat(200);
      const started = Date.now();
      let generated = 0;
      while ((await cuts(s)) === 0) {
        assert.ok(Date.now() - started < 12000 && generated < 300000, `not cut after ${generated} events`);
        for (let i = 0; i < 200; i++) {
          s.pool.acquire(context); // no resource: ACQUISITION_REJECTED
          await new Promise((r) => setImmediate(r));
        }
        generated += 200;
      }
      assert.equal(await cuts(s), 1);
      // Reading again: what was queued arrives, then the stream ends (it does not hang).
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      const ended = once(res, "end");
      res.resume();
      let timer;
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("the cut stream did not end")), 5000);
      });
      await Promise.race([ended, timeout]).finally(() => clearTimeout(timer));
      const got = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      assert.ok(got.length > 0);
      assertRange(got, got[0], got.at(-1), "what the cut consumer received");
      assert.ok(got.at(-1) < (await lastSeq(s)), "the consumer was cut before the end");
    } finally {
      req.destroy();
    }
    // The pool and other streams are fine.
    const other = await openStream(s.url);
    try {
      await call(s.url, "POST", "/api/resources", { body: { kind: "PROXY", value: "after-cut" } });
      const last = await lastSeq(s);
      await other.waitFor((x) => seqs(x).at(-1) === last, 5000, "a new stream after the cut");
    } finally {
      other.close();
    }
  });
});

test(
  "a fast client resuming more than streamQueue events behind gets them all without being cut",
  async () => {
    await withServer({ serveOptions: { streamQueue: 50 }, poolOptions: { burst: 1e9 } }, async (s) => {
      for (let i = 0; i < 500; i++) {
        s.pool.acquire("nothing-here");
        await new Promise((r) => setImmediate(r));
      }
      const last = await lastSeq(s);
      const c = await openStream(s.url, { headers: { "last-event-id": "0" } });
      try {
        await c.waitFor((x) => x.ended || seqs(x).at(-1) === last, 5000, "the replay");
        assert.equal(await cuts(s), 0, `cut after ${seqs(c).length} of ${last} events`);
        assertRange(seqs(c), 1, last, "replay");
      } finally {
        c.close();
      }
    });
  },
);

test("closing one stream client does not disturb the others", async () => {
  await withServer({}, async (s) => {
    const start = (await lastSeq(s)) + 1;
    const [a, b, c] = await Promise.all([openStream(s.url), openStream(s.url), openStream(s.url)]);
    try {
      await Promise.all([a, b, c].map((x) => x.waitFor((y) => y.frames.length > 0, 5000, "connected")));
      await activity(s, "first");
      const mid = await lastSeq(s);
      await Promise.all([a, b, c].map((x) => x.waitFor((y) => seqs(y).at(-1) === mid, 5000, "first batch")));
      b.close();
      await b.waitFor((y) => y.ended, 5000, "b to end");
      await activity(s, "second", 3);
      const last = await lastSeq(s);
      for (const x of [a, c]) {
        await x.waitFor((y) => seqs(y).at(-1) === last, 5000, "second batch");
        assertRange(seqs(x), start, last, "a remaining client");
      }
      assertRange(seqs(b), start, mid, "the closed client");
      assert.equal(await cuts(s), 0, "closing is not a cut");
      // A newcomer is served too.
      const d = await openStream(s.url);
      try {
        await d.waitFor((y) => y.frames.length > 0, 5000, "d connected");
        await activity(s, "third");
        const end = await lastSeq(s);
        await d.waitFor((y) => seqs(y).at(-1) === end, 5000, "d");
        await a.waitFor((y) => seqs(y).at(-1) === end, 5000, "a");
      } finally {
        d.close();
      }
    } finally {
      a.close();
      c.close();
    }
  });
});

test("stopping the server ends open streams (the final chunk is sent)", async () => {
  const s = await startServer({});
  // agent: false sends Connection: close, so the connection goes with the response.
  const req = http.get(`${s.url}/api/events/stream`, { agent: false });
  req.on("error", () => {});
  try {
    const [res] = await once(req, "response");
    res.setEncoding("utf8");
    let text = "";
    res.on("data", (d) => (text += d));
    assert.ok(await within(once(res, "data"), 5000), "the stream's first bytes"); // the server holds the stream
    const ended = once(res, "end");
    await s.close();
    await ended;
    assert.match(text, /^: connected\n\n/);
  } finally {
    req.destroy();
    await s.close();
  }
});

/** A raw keep-alive connection holding an open stream; on each stream's end it may reconnect. */
async function rawStreamClient(port, { reconnect }) {
  const sock = net.connect(port, "127.0.0.1");
  await once(sock, "connect");
  sock.on("error", () => {});
  let buf = "";
  const state = { streams: 1, ends: 0 };
  sock.setEncoding("utf8");
  sock.on("data", (d) => {
    buf += d;
    if (buf.endsWith("\r\n0\r\n\r\n")) {
      buf = "";
      state.ends++;
      if (reconnect) {
        state.streams++;
        sock.write("GET /api/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      }
    }
  });
  sock.write("GET /api/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  return { sock, state };
}

/** Resolves true when `promise` settles within `ms`, else false. */
async function within(promise, ms) {
  let timer;
  const late = new Promise((r) => (timer = setTimeout(() => r(false), ms)));
  return Promise.race([promise.then(() => true), late]).finally(() => clearTimeout(timer));
}

for (const reconnect of [false, true]) {
  test(
    `close() completes promptly while a stream client keeps its connection${reconnect ? " and reconnects (like EventSource)" : ""}`,
    async () => {
      const s = await startServer({});
      const c = await rawStreamClient(s.server.port, { reconnect });
      try {
        assert.ok(await within(once(c.sock, "data"), 5000), "the stream's head"); // the server holds the stream
        const closing = s.server.close();
        const done = await within(closing, 2000);
        await within(once(c.sock, "close"), 2000);
        assert.ok(c.state.ends >= 1, "the stream was ended");
        assert.ok(done, `close() still pending after 2 s (${c.state.streams} stream requests on the connection)`);
      } finally {
        c.sock.destroy();
        await s.close();
      }
    },
  );
}

/** Opens a stream and reads it only if it is refused: `{status, headers, text, json}` (a 200
 * stream is closed at once, its body unread). */
async function tryStream(base, query = "", headers = {}) {
  const ac = new AbortController();
  const res = await fetch(`${base}/api/events/stream${query}`, { headers, signal: ac.signal });
  if (res.status === 200) {
    ac.abort();
    return { status: 200, headers: res.headers, text: "", json: undefined };
  }
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: JSON.parse(text) };
}

test("Last-Event-ID or ?after= beyond the newest event is a 409 problem, not a silent stream", async () => {
  await withServer({}, async (s) => {
    await activity(s, "x");
    const newest = await lastSeq(s);
    for (const [query, headers] of [
      ["", { "last-event-id": String(newest + 1) }],
      [`?after=${newest + 1000}`, {}],
      ["?after=0", { "last-event-id": "9999999999" }],
    ]) {
      const res = await tryStream(s.url, query, headers);
      assertProblem(res, 409, "event-id-ahead", `${query} ${JSON.stringify(headers)}`);
      assert.match(res.json.detail, new RegExp(`newest event \\(${newest}\\)`));
    }
    // At the newest event exactly: nothing to replay, then live.
    const c = await openStream(s.url, { headers: { "last-event-id": String(newest) } });
    try {
      assert.equal(c.res.status, 200);
      await activity(s, "y");
      const last = await lastSeq(s);
      await c.waitFor((x) => seqs(x).at(-1) === last, 5000, "live events");
      assertRange(seqs(c), newest + 1, last, "from the newest");
    } finally {
      c.close();
    }
  });
});

test("concurrent subscribers are limited (maxStreams): one more is a 503 problem with Retry-After; a freed slot is reusable", async () => {
  await withServer({ serveOptions: { maxStreams: 3 } }, async (s) => {
    const open = await Promise.all([1, 2, 3].map(() => openStream(s.url)));
    try {
      for (const c of open) assert.equal(c.res.status, 200);
      const refused = await tryStream(s.url);
      assertProblem(refused, 503, "too-many-streams");
      assert.equal(refused.headers.get("retry-after"), "5");
      // The refusal is no error of the server's: counted as a 503 of the stream route.
      assert.match(await s.pool.metrics(), /repute_http_request_duration_seconds_count\{route="stream",method="GET",status="503"\} 1/);
      open.shift().close();
      // The slot frees when the server sees the client go (asynchronously).
      let again;
      for (let i = 0; i < 200 && again?.res.status !== 200; i++) {
        again?.close();
        await new Promise((r) => setTimeout(r, 10));
        again = await openStream(s.url);
      }
      open.push(again);
      assert.equal(again.res.status, 200, "a freed slot is given to a newcomer");
      assertProblem(await tryStream(s.url), 503, "too-many-streams");
    } finally {
      for (const c of open) c.close();
    }
  });
});

test("a subscriber whose socket stops taking writes has its socket closed by the write timeout", async () => {
  const opts = { serveOptions: { streamQueue: 5, heartbeatMs: 60000, streamWriteTimeoutMs: 100 }, poolOptions: { burst: 1e9 } };
  await withServer(opts, async (s) => {
    const connections = () => new Promise((ok, fail) => s.server.server.getConnections((e, n) => (e ? fail(e) : ok(n))));
    const sock = net.connect(s.server.port, "127.0.0.1");
    await once(sock, "connect");
    sock.on("error", () => {});
    sock.write("GET /api/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await once(sock, "data");
    sock.pause(); // reads nothing more: the kernel's buffers fill, then the server's
    try {
      assert.equal(await connections(), 1);
      // Large frames, one per macrotask, until the server gives up on the subscriber.
      const context = "c".repeat(200);
      const started = Date.now();
      while ((await cuts(s)) === 0) {
        assert.ok(Date.now() - started < 20000, "the subscriber was never cut");
        for (let i = 0; i < 200; i++) {
          s.pool.acquire(context);
          await new Promise((r) => setImmediate(r));
        }
      }
      // Cut, and its connection goes too (it is not left holding the socket and its queue).
      const deadline = Date.now() + 5000;
      while ((await connections()) > 0) {
        assert.ok(Date.now() < deadline, "the cut subscriber's socket is still open");
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(await cuts(s), 1, "counted once");
      // The client finds its stream broken off (no final chunk), not ended.
      let text = "";
      sock.setEncoding("utf8");
      sock.on("data", (d) => (text += d));
      const closed = once(sock, "close");
      sock.resume();
      await closed;
      assert.match(text, /^id: \d+$/m);
      assert.ok(!text.endsWith("\r\n0\r\n\r\n"), "the stream was destroyed, not ended");
    } finally {
      sock.destroy();
    }
  });
});
