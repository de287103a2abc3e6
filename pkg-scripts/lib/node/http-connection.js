// What node:http does with a connection outside the handler's answers: errors it raises itself
// (a request it cannot parse, one not received in time) answered as problem+json; a timed-out
// request remembered, so the handler still reading its body records a 408; and the staged
// close after an answer that left part of a request body unread; and the Host headers node:http
// lets through or answers itself (none, or two).

import { HttpProblem, problemReply, TITLES } from "../http/problems.js";

const TIMED_OUT = "the request was not received in time";

/** Sockets whose request timed out (the server answered 408 and let them go). */
const timedOut = new WeakSet();

/** Why a request's body could not be read to its end: the client was too slow, or went away. */
export function unreadable(req) {
  return timedOut.has(req.socket)
    ? new HttpProblem(408, "request-timeout", TIMED_OUT)
    : new HttpProblem(400, "incomplete-body", "the client stopped sending the body");
}

/** How long a refused request's client may go on sending its body before its socket is cut. */
const UNREAD_BODY_GRACE_MS = 2000;

/** Sockets closing in stages (see `refuseRestOfBody`). */
const lingering = new WeakSet();

/** True for a socket closing in stages: a request arriving on it is not served. */
export function isLingering(socket) {
  return lingering.has(socket);
}

/**
 * The handler answered without reading the whole body (a 401, 413 or 415, say). Keeping the
 * connection would mean reading on through a body of any size to find the next request, so
 * the answer says `connection: close`. The connection is closed in stages (RFC 9112 §9.6):
 * node:http ends a `connection: close` answer with `socket.destroySoon()`, which would destroy
 * the socket while the client is still sending, and the client's kernel would then answer the
 * rest of its upload with a reset that can discard the answer unread (a 2 MB upload saw EPIPE,
 * never its 413). Here, for this socket only, it sends FIN after the answer and discards what
 * still arrives until the client closes, or cuts the socket after a short grace — so neither
 * a wedged connection nor a slow client holds up `close()`.
 */
export function refuseRestOfBody(req, res, headers) {
  headers.connection = "close";
  const socket = req.socket; // detached from the request once the response is done
  res.once("finish", () => req.resume());
  if (!socket) return;
  socket.destroySoon = function lingeringClose() {
    lingering.add(this);
    this.end();
    const timer = setTimeout(() => this.destroy(), UNREAD_BODY_GRACE_MS);
    timer.unref();
    this.once("close", () => clearTimeout(timer));
  };
}

/**
 * The problem with a request's Host headers, or null: node:http answers an HTTP/1.1 request
 * without Host with an empty 400 of its own (`requireHostHeader`, turned off by the server so
 * that this answers instead), and keeps the first of two Host headers, dropping the other —
 * which the origin guard would then never see. One Host is required of HTTP/1.1 and at most
 * one allowed of any request (RFC 9112 §3.2).
 */
export function hostProblem(req) {
  let hosts = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 4 && raw[i].toLowerCase() === "host") hosts++;
  if (hosts > 1) return new HttpProblem(400, "bad-request", `the request has ${hosts} Host headers: send one`);
  if (hosts === 0 && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
    return new HttpProblem(400, "bad-request", "an HTTP/1.1 request must have a Host header");
  }
  return null;
}

/** Raw bytes of a problem answer that closes the connection (for errors node:http raises). */
function rawProblem(status, name, detail) {
  const { headers, body } = problemReply(new HttpProblem(status, name, detail));
  const head = Object.entries({ ...headers, "content-length": String(Buffer.byteLength(body)), connection: "close" })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  return `HTTP/1.1 ${status} ${TITLES[status]}\r\n${head}\r\n${body}`;
}

/**
 * Errors node:http raises before or instead of the handler — a request line or header it cannot
 * parse, a request not received within `requestTimeout` — answered as problem+json (400, 431,
 * 408) unless an answer has begun on the connection, which then goes. A timed-out socket is
 * remembered so the handler, still reading that body, records a 408, not a 500.
 */
export function answerClientError(error, socket, answering) {
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") timedOut.add(socket);
  const res = answering.get(socket);
  if (socket.writable && (!res || !res.headersSent || res.writableFinished)) {
    if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") socket.write(rawProblem(408, "request-timeout", TIMED_OUT));
    else if (error.code === "HPE_HEADER_OVERFLOW") socket.write(rawProblem(431, "headers-too-large", "the request's headers are too large"));
    else if (error.code?.startsWith("HPE_")) socket.write(rawProblem(400, "bad-request", `the request is not valid HTTP/1.1 (${error.code})`));
  }
  socket.destroy();
}
