// Writes a streaming reply (an event stream, a web ReadableStream of bytes) to a node:http
// response, at the pace the socket takes it, with a write timeout: a subscriber whose socket
// has taken nothing for `writeTimeoutMs` (it stopped reading, or its network went away
// without a FIN) is cut — its stream cancelled with `CUT` (counted like a queue cut), its
// socket destroyed. Without that, a stream cut for falling behind kept its socket, and the
// bytes queued for it, for as long as its reader never came back.

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
