// `GET /api/events/stream`: pool events as Server-Sent Events. A subscriber that reconnects with
// `Last-Event-ID` (or `?after=`) first gets what it missed from the audit log, then live events,
// each exactly once, in seq order. Heartbeat comments keep idle connections alive. Each
// subscriber has a bounded queue: one that does not keep up is cut (its stream ends; it may
// resume by Last-Event-ID) and counted, so a slow reader never holds the pool back.

const encoder = new TextEncoder();

function frame(e) {
  return encoder.encode(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
}

/**
 * A streaming Response. `host.subscribe(listener)` delivers live events synchronously and
 * returns an unsubscribe function; `host.readEvents({after, limit})` pages the audit log.
 */
export function eventStream(host, { after, heartbeatMs, maxQueue, onCut, signal }) {
  let controller;
  let unsubscribe = () => {};
  let heartbeat;
  let lastSent = after ?? 0;
  let replaying = after !== null;
  const live = [];
  let done = false;

  const finish = (cut) => {
    if (done) return;
    done = true;
    unsubscribe();
    clearInterval(heartbeat);
    if (cut) onCut();
    try {
      controller.close();
    } catch {
      // already closed by the client
    }
  };

  const send = (e) => {
    if (e.seq <= lastSent) return;
    lastSent = e.seq;
    controller.enqueue(frame(e));
    if (controller.desiredSize !== null && controller.desiredSize < -maxQueue) finish(true);
  };

  const stream = new ReadableStream(
    {
      async start(c) {
        controller = c;
        // Subscribe first, so nothing falls between the replay and the live feed.
        unsubscribe = host.subscribe((e) => {
          if (done) return;
          if (replaying) {
            live.push(e);
            if (live.length > maxQueue) finish(true);
          } else {
            send(e);
          }
        });
        controller.enqueue(encoder.encode(": connected\n\n"));
        heartbeat = setInterval(() => {
          if (!done) controller.enqueue(encoder.encode(": heartbeat\n\n"));
        }, heartbeatMs);
        signal?.addEventListener("abort", () => finish(false), { once: true });
        if (replaying) {
          try {
            for (;;) {
              const page = await host.readEvents({ after: lastSent, limit: 1000 });
              for (const e of page.events) send(e);
              if (page.next === null || done) break;
            }
          } catch {
            finish(false);
            return;
          }
          replaying = false;
          for (const e of live.splice(0)) send(e);
        }
      },
      cancel() {
        finish(false);
      },
    },
    // Counted in frames: more than `maxQueue` unread means the subscriber is too slow.
    { highWaterMark: 1, size: () => 1 },
  );
  return new Response(stream, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" },
  });
}
