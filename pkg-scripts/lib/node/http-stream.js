// Writes a streaming reply (an event stream, a web ReadableStream of bytes) to a node:http
// response, at the pace the socket takes it, with a write timeout: a subscriber whose socket
// has taken nothing for `writeTimeoutMs` (it stopped reading, or its network went away
// without a FIN) is cut — its stream cancelled with `CUT` (counted like a queue cut), its
// socket destroyed. Without that, a stream cut for falling behind kept its socket, and the
// bytes queued for it, for as long as its reader never came back. A finite answer sent in
// pieces (`writePieces`: a dashboard as it is built, a large string in slices) is written the
// same way, at the socket's pace, and cut by the same timeout.

import { CUT } from "../http/sse.js";

/**
 * Starts writing `body` to `res` (whose head is already written). Returns `{ stop() }`:
 * `stop()` ends the stream properly (its last chunk, then FIN), for a server that is closing.
 */
export function writeStream(body, res, { writeTimeoutMs }) {
  const reader = body.getReader();
  const socket = res.socket; // detached from the response once it has finished
  let stopped = false;
  const cancel = (reason) => reader.cancel(reason).catch(() => {});
  // Not once the response has closed (the client left) or stop() began: that is no cut.
  const cut = () => {
    if (stopped) return;
    cancel(CUT);
    res.destroy();
  };
  const leave = () => {
    stopped = true;
    cancel();
  };
  // A client that left while the handler was answering gets no "close" any more.
  if (res.destroyed) leave();
  else res.on("close", leave);
  (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || stopped) break;
        if (!res.write(value) && !(await taken(res, "drain", writeTimeoutMs))) return cut();
      }
    } catch {
      return res.destroy();
    }
    if (stopped) return;
    // The stream ended by itself (cut for falling behind): its last bytes must be taken too.
    res.end();
    if (!res.writableFinished && !(await taken(res, "finish", writeTimeoutMs))) cut();
  })();
  return {
    stop() {
      stopped = true;
      cancel();
      res.end(() => socket?.end());
    },
  };
}

/**
 * Writes `pieces` (an iterable or async iterable of strings) to `res` (whose head is already
 * written), asking for the next piece only once the socket has taken what was written before
 * (`res.write()` false: its "drain"); hands the last piece to `last(piece)`, which ends the
 * response. A client that goes away ends the pieces (their iterator's `return`); one whose
 * socket takes nothing for `writeTimeoutMs`, or pieces that fail, cut the response.
 */
export async function writePieces(pieces, res, { writeTimeoutMs, last }) {
  const it = pieces[Symbol.asyncIterator]?.() ?? pieces[Symbol.iterator]();
  let held = null; // written once the next is known: the last one goes to `last`
  try {
    for (;;) {
      const { value, done } = await it.next();
      if (done) break;
      if (res.destroyed) return;
      if (held !== null && !res.write(held) && !(await taken(res, "drain", writeTimeoutMs))) return res.destroy();
      held = value;
    }
  } catch {
    return res.destroy();
  } finally {
    await it.return?.();
  }
  last(held ?? "");
}

/** `text` in slices of about `size` UTF-16 units, never splitting a surrogate pair. */
export function* slices(text, size) {
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + size);
    const unit = text.charCodeAt(end - 1);
    // A slice ending in a pair's first half ends before it (or, one unit long, after the pair).
    if (end < text.length && unit >= 0xd800 && unit <= 0xdbff) end += end - 1 > at ? -1 : 1;
    yield text.slice(at, end);
    at = end;
  }
}

/** True once `res` emits `event` ("drain": the socket took what was written; "finish": all of
 * it); false after `ms`, or when the response closes first. */
function taken(res, event, ms) {
  return new Promise((resolve) => {
    const settle = (ok) => {
      clearTimeout(timer);
      res.off(event, onEvent);
      res.off("close", onClose);
      resolve(ok);
    };
    const onEvent = () => settle(true);
    const onClose = () => settle(false);
    const timer = setTimeout(onClose, ms);
    res.on(event, onEvent);
    res.on("close", onClose);
  });
}
