// The pool client's live events (`client.events()`): `GET /api/events/stream` (Server-Sent
// Events, lib/http/sse.js) as an async iterator of PoolEvents that survives a dropped
// connection. Every (re)connection sends `Last-Event-ID` with the last seq delivered, so the
// server replays what was missed from its audit log, then goes live; the iterator also drops
// any seq it has delivered already, so a consumer sees each event once, in seq order, without
// gaps. Without `after`, it starts from the pool's newest event at the time of the call (the
// `nextEventSeq` of `GET /api/stats`, asked for by `client.events()` itself, not at the first
// `next()`), so even the first reconnection loses nothing. A stream
// silent for `idleMs` (the server sends a heartbeat every 15 s) counts as dropped. Reconnects
// back off from 100 ms to 5 s and give up (throwing the last error) once they have failed for
// `reconnectForMs`; an answer that reconnecting cannot change (401, 403, 409 event-id-ahead)
// ends the iterator at once with its error.

import { PoolClientError, invalidArgument } from "./errors.js";

/** Errors after which a reconnection may succeed. */
const PASSING = new Set(["CONNECTION_FAILED", "REQUEST_TIMEOUT", "NOT_READY", "TOO_MANY_STREAMS", "SERVER_ERROR", "STORAGE_UNAVAILABLE"]);

/** Splits SSE text into frames; gives the events (data parsed) and whether anything came. */
class FrameReader {
  #buffer = "";
  #decoder = new TextDecoder();

  /** The PoolEvents in `chunk` (frames completed by it). */
  push(chunk) {
    this.#buffer += this.#decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, "\n");
    const out = [];
    let end;
    while ((end = this.#buffer.indexOf("\n\n")) >= 0) {
      const block = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 2);
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length === 0) continue; // a comment (connected, heartbeat)
      try {
        const event = JSON.parse(data.join("\n"));
        if (event && typeof event.seq === "number") out.push(event);
      } catch {
        // not an event of ours: skipped
      }
    }
    return out;
  }
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });

/**
 * The iterator. `transport`: the client's (transport.js); `latestSeq(signal)`: the pool's
 * newest seq now. Options: `after` (a seq: start after it, replaying from the audit log),
 * `signal` (ends the iterator with ABORTED), `idleMs` (45 s), `reconnectForMs` (30 s).
 */
export async function* eventStream(transport, latestSeq, { after, signal, idleMs = 45_000, reconnectForMs = 30_000 } = {}) {
  if (after !== undefined && !(Number.isSafeInteger(after) && after >= 0)) throw invalidArgument("after must be a non-negative integer (a seq)");
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalidArgument("signal must be an AbortSignal");
  if (!(typeof idleMs === "number" && idleMs > 0)) throw invalidArgument("idleMs must be a number > 0");
  if (!(typeof reconnectForMs === "number" && reconnectForMs >= 0)) throw invalidArgument("reconnectForMs must be a number >= 0");
  const aborted = () => new PoolClientError("ABORTED", "events: aborted by the caller's signal");
  let last = after ?? (await latestSeq(signal));
  let failingSince = null;
  let delay = 100;
  for (;;) {
    if (signal?.aborted) throw aborted();
    const connection = new AbortController();
    const onAbort = () => connection.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    let body = null;
    try {
      let answer;
      try {
        answer = await transport.request("events", {
          path: "/api/events/stream",
          headers: { accept: "text/event-stream", "last-event-id": String(last) },
          signal: connection.signal,
          stream: true,
        });
      } catch (e) {
        if (signal?.aborted) throw aborted();
        if (!(e instanceof PoolClientError) || !PASSING.has(e.code)) throw e;
        failingSince ??= performance.now();
        if (performance.now() - failingSince >= reconnectForMs) throw e;
        await sleep(Math.max(delay, e.retryAfterMs ?? 0), signal);
        delay = Math.min(delay * 2, 5000);
        continue;
      }
      body = answer.body;
      failingSince = null;
      const opened = performance.now();
      const frames = new FrameReader();
      let idle = setTimeout(() => connection.abort(), idleMs);
      try {
        for await (const chunk of body) {
          clearTimeout(idle);
          idle = setTimeout(() => connection.abort(), idleMs);
          for (const event of frames.push(chunk)) {
            if (signal?.aborted) break;
            if (event.seq <= last) continue; // delivered already (a replay overlapping the live feed)
            last = event.seq;
            yield event;
          }
        }
      } catch {
        // dropped (a reset, the idle limit, the caller's signal): see below
      } finally {
        clearTimeout(idle);
      }
      if (signal?.aborted) throw aborted();
      // The stream ended or dropped: reconnect from `last` — at once after a stream that lasted,
      // after a growing pause when streams keep ending as soon as they open.
      if (performance.now() - opened < 1000) {
        await sleep(delay, signal);
        delay = Math.min(delay * 2, 5000);
      } else delay = 100;
    } finally {
      signal?.removeEventListener("abort", onAbort);
      if (body !== null && !body.destroyed) body.destroy();
    }
  }
}
