// A node:http request's body as the handler reads it (handler.js: an async iterable of byte
// chunks), from the request's own events. Node's stream iterator (`req.iterator()`) does the
// same with more machinery per request (an end-of-stream watcher, a promise per chunk, ~2 %
// of the server's time under load, where bodies are a hundred bytes).
//
// Leaving early (a 413 half-way) neither destroys the request nor reads on: it is paused, and
// the rest is left to `refuseRestOfBody` (http-connection.js), which would otherwise find the
// socket cut before the answer is written. A body that does not arrive whole — the client
// went away, or node:http timed the request out — fails as `unreadable` says (400 or 408).

import { unreadable } from "./http-connection.js";

class BodyChunks {
  #req;
  #chunks = [];
  #ended = false;
  #failed = false;
  /** Resolves the `next()` waiting for an event, if any. */
  #wake = null;

  constructor(req) {
    this.#req = req;
    // Destroyed before anyone read it (its client left while a token was checked, say): what
    // it held is gone, and its events have passed.
    if (req.destroyed) {
      this.#failed = true;
      return;
    }
    req.on("data", (chunk) => {
      this.#chunks.push(chunk);
      this.#notify();
    });
    req.on("end", () => {
      this.#ended = true;
      this.#notify();
    });
    // A close before the end: the body was cut (an "error" may come first, or not at all).
    req.on("close", () => {
      if (!this.#ended) this.#fail();
    });
    req.on("error", () => this.#fail());
  }

  #notify() {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  #fail() {
    this.#failed = true;
    this.#notify();
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  async next() {
    for (;;) {
      if (this.#chunks.length > 0) return { value: this.#chunks.shift(), done: false };
      if (this.#failed) throw unreadable(this.#req);
      if (this.#ended) return { value: undefined, done: true };
      await new Promise((resolve) => (this.#wake = resolve));
    }
  }

  /** The reader stopped early: read no more (the socket is paused until the answer is out). */
  async return() {
    this.#req.pause();
    this.#chunks.length = 0;
    return { value: undefined, done: true };
  }
}

/** The body of `req` (a node:http IncomingMessage) as an async iterable of Buffers. */
export function bodyChunks(req) {
  return new BodyChunks(req);
}
