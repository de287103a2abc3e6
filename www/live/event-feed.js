// The live event feed: `GET /api/events/stream` read with fetch and a stream reader, since
// EventSource cannot send the bearer token (and a token must never go in a URL). Parses
// Server-Sent Events frames, hands each pool event to `onEvent`, and reconnects after a break
// with `Last-Event-ID`, so the server replays what was missed from its audit log — each event
// exactly once, in seq order. A refusal (401, 403) is reported and not retried.

import { ApiError } from "../shared/connection.js";

const RETRY_MS = 1500;

/** The `{id, event, data}` frames of an SSE byte stream (comments and heartbeats skipped). */
export async function* sseFrames(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const frame = {};
        for (const line of block.split("\n")) {
          if (line === "" || line.startsWith(":")) continue;
          const i = line.indexOf(":");
          const field = i < 0 ? line : line.slice(0, i);
          const text = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
          frame[field] = field === "data" && frame.data !== undefined ? `${frame.data}\n${text}` : text;
        }
        if (frame.data !== undefined) yield frame;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

export class EventFeed {
  #connection;
  #onEvent;
  #onStatus;
  #abort = null;
  /** The last seq received: where a reconnect resumes. */
  last = 0;

  /** `onEvent(event)`; `onStatus(text, isError)` for "live", "reconnecting…", refusals. */
  constructor(connection, { onEvent, onStatus }) {
    this.#connection = connection;
    this.#onEvent = onEvent;
    this.#onStatus = onStatus;
  }

  /** Starts reading events after seq `after` (stopping any earlier run). */
  start(after) {
    this.stop();
    this.last = after;
    this.#abort = new AbortController();
    this.#run(this.#abort.signal);
  }

  stop() {
    this.#abort?.abort();
    this.#abort = null;
  }

  async #run(signal) {
    while (!signal.aborted) {
      try {
        const headers = this.#connection.headers({ accept: "text/event-stream", "last-event-id": String(this.last) });
        const res = await fetch(`${this.#connection.url}/api/events/stream`, { headers, signal, cache: "no-store" });
        if (!res.ok) {
          const problem = await res.json().catch(() => null);
          throw new ApiError(problem?.detail ?? `${res.status} ${res.statusText}`, res.status, problem);
        }
        this.#onStatus("live", false);
        for await (const frame of sseFrames(res.body)) {
          const event = JSON.parse(frame.data);
          if (event.seq <= this.last) continue;
          this.last = event.seq;
          this.#onEvent(event);
        }
        if (signal.aborted) return;
        this.#onStatus("stream ended; reconnecting…", true);
      } catch (e) {
        if (signal.aborted) return;
        if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
          this.#onStatus(`event stream refused: ${e.message}`, true);
          return;
        }
        this.#onStatus(`event stream interrupted (${e.message}); reconnecting…`, true);
      }
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, RETRY_MS);
        signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  }
}
