// What a route of the HTTP handler (handler.js) returns, and how a platform sends it: a reply
// is `{ status, headers, body }` — headers a plain object with lower-case names, body a string,
// `Pieces` (a large answer built as it is sent), a ReadableStream of bytes (event streams) or
// null. The Node server writes a reply as it is (node-server.js); a web platform makes a
// `Response` of it (`toResponse`), `Pieces` becoming a ReadableStream read at the client's pace.

import { JSON_TYPE } from "./request-body.js";

/** A JSON reply of `body` (none: `undefined`, a reply without a body). */
export function json(status, body, headers = {}) {
  return body === undefined
    ? { status, headers, body: null }
    : { status, headers: { "content-type": JSON_TYPE, ...headers }, body: JSON.stringify(body) };
}

/**
 * A body sent in pieces as they are built (`pieces`: an async iterable of strings, read one
 * piece at a time, only once the one before has been taken): a large answer (the dashboard of a
 * large pool) never waits whole in memory, and a client that stops reading stops its building.
 * The pieces joined are the body; a body in pieces has no known length (chunked, on HTTP/1.1).
 */
export class Pieces {
  #pieces;

  constructor(pieces) {
    this.#pieces = pieces;
  }

  [Symbol.asyncIterator]() {
    return this.#pieces[Symbol.asyncIterator]();
  }

  /** The pieces as a ReadableStream of UTF-8 bytes that builds the next piece only when its
   * reader asks for it; cancelling it ends the building (the iterator's `return`). */
  stream() {
    const it = this[Symbol.asyncIterator]();
    const utf8 = new TextEncoder();
    return new ReadableStream(
      {
        async pull(controller) {
          const { value, done } = await it.next();
          if (done) controller.close();
          else controller.enqueue(utf8.encode(value));
        },
        async cancel() {
          await it.return?.();
        },
      },
      { highWaterMark: 0 },
    );
  }
}

/** A reply's body as a web `Response` takes it. */
export const webBody = (body) => (body instanceof Pieces ? body.stream() : body);

/** The reply as a web `Response`. */
export const toResponse = ({ status, headers, body }) => new Response(webBody(body), { status, headers });
