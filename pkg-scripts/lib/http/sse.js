// `GET /api/events/stream`: pool events as Server-Sent Events. A subscriber that reconnects with
// `Last-Event-ID` (or `?after=`) first gets what it missed from the audit log, then live events,
// each exactly once, in seq order. Heartbeat comments keep idle connections alive. Each
// subscriber has a bounded queue: one that does not keep up is cut (its stream ends; it may
// resume by Last-Event-ID) and counted, so a slow reader never holds the pool back. A replay
// is paced by the reader instead (it comes from the log, which waits), so a fast reader may
// resume from any distance. A server that finds a subscriber's socket has stopped taking
// writes cancels its stream with `CUT`, which counts it like a queue cut.

const encoder = new TextEncoder();

/** The reason a server cancels a stream whose reader stopped taking writes (counted as a cut). */
export const CUT = "cut: the subscriber stopped taking writes";

// Every subscriber gets the same event object: it is encoded once, not once per subscriber.
const frames = new WeakMap();

function frame(e) {
  let bytes = frames.get(e);
  if (!bytes) {
    bytes = encoder.encode(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    frames.set(e, bytes);
  }
  return bytes;
}

/**
 * A streaming reply (`{ status, headers, body }`, body a ReadableStream of bytes). `host.subscribe(listener)` delivers live events synchronously and
 * returns an unsubscribe function; `host.readEvents({after, limit})` pages the audit log.
 */
export function eventStream(host, { after, heartbeatMs, maxQueue, onCut, onEnd = () => {}, signal, maxMs = Infinity }) {
  let controller;
  let unsubscribe = () => {};
  let heartbeat;
  let lifetime;
  let lastSent = after ?? 0;
  let replaying = after !== null;
  let live = []; // live events held back while replaying
  let overflowed = false; // some were let go: the replay must read on (the log has them)
  let wake = null; // resolves when the reader has taken what was queued
  let done = false;

  const finish = (cut) => {
    if (done) return;
    done = true;
    unsubscribe();
    clearInterval(heartbeat);
    clearTimeout(lifetime);
    wake?.();
    onEnd();
    if (cut) onCut();
    try {
      controller.close();
    } catch {
      // already closed by the client
    }
  };

  /** Queues `e` unless already sent. Returns false when the reader is behind. */
  const enqueue = (e) => {
    if (e.seq > lastSent) {
      lastSent = e.seq;
      controller.enqueue(frame(e));
    }
    return controller.desiredSize === null || controller.desiredSize > 0;
  };

  // Live: the pool never waits for a reader, so one that falls `maxQueue` behind is cut.
  const send = (e) => {
    enqueue(e);
    if (controller.desiredSize !== null && controller.desiredSize < -maxQueue) finish(true);
  };

  // Replay: the log is read at the reader's pace, however far behind it starts.
  const replay = async () => {
    try {
      for (;;) {
        overflowed = false;
        const page = await host.readEvents({ after: lastSent, limit: 1000 });
        for (const e of page.events) {
          if (done) return;
          if (!enqueue(e)) await new Promise((r) => (wake = r));
        }
        if (done) return;
        if (page.next === null && !overflowed) break;
      }
    } catch {
      finish(false);
      return;
    }
    replaying = false;
    for (const e of live.splice(0)) send(e);
  };

  const stream = new ReadableStream(
    {
      start(c) {
        controller = c;
        // Subscribe first, so nothing falls between the replay and the live feed.
        unsubscribe = host.subscribe((e) => {
          if (done) return;
          if (!replaying) return send(e);
          live.push(e);
          if (live.length > maxQueue) {
            // Appended to the log before subscribers hear of them: the replay reads them there.
            live = [];
            overflowed = true;
          }
        });
        controller.enqueue(encoder.encode(": connected\n\n"));
        heartbeat = setInterval(() => {
          if (!done) controller.enqueue(encoder.encode(": heartbeat\n\n"));
        }, heartbeatMs);
        signal?.addEventListener("abort", () => finish(false), { once: true });
        // A host whose platform does not tell it that a subscriber left (a Durable Object) ends
        // every stream after `maxMs`; the subscriber resumes by Last-Event-ID.
        if (Number.isFinite(maxMs)) lifetime = setTimeout(() => finish(false), maxMs);
        // Not awaited: pull() (which paces the replay) is only called once start() returns.
        if (replaying) replay();
      },
      pull() {
        wake?.();
        wake = null;
      },
      cancel(reason) {
        finish(reason === CUT);
      },
    },
    // Counted in frames: more than `maxQueue` unread means the subscriber is too slow.
    { highWaterMark: 1, size: () => 1 },
  );
  return {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" },
    body: stream,
  };
}
