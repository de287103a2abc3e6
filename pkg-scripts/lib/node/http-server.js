// The pool server on Node's `http`: adapts node:http to the web-standard handler (handler.js)
// and owns what only a process has — listening, keep-alive, graceful shutdown. It adds no
// route, no validation and no authentication of its own. It takes the handler's replies as
// they are (`handle.reply`), without making web Request/Response objects of each call. With
// `www`, it also serves the operator console's files (static-files.js) outside the API.

import { createServer } from "node:http";
import { isIP } from "node:net";
import { createHandler } from "../http/handler.js";
import { slices, writePieces, writeStream } from "./http-stream.js";
import { Pieces } from "../http/replies.js";
import { answerClientError, hostProblem, isLingering, refuseRestOfBody } from "./http-connection.js";
import { bodyChunks } from "./http-body.js";
import { isApiTarget, staticFiles } from "../http/static-files.js";
import { originGuard } from "../http/origin-guard.js";
import { problemOf, problemReply } from "../http/problems.js";

/**
 * What the handler reads of a request (method, url, the raw target, headers.get, body as an
 * async iterable of bytes, text(), signal), straight from node:http. Building a full web
 * `Request` per call was a third of the server's time under load; the handler accepts anything
 * of this shape. The target is passed as sent: the handler routes on it alone (never on Host).
 */
class NodeRequest {
  #req;
  #res;
  #controller = null;

  constructor(req, res) {
    this.#req = req;
    this.#res = res;
    this.method = req.method;
    this.target = req.url;
    this.headers = new NodeHeaders(req.headers);
  }

  get url() {
    return `http://localhost${this.target.startsWith("/") ? this.target : "/"}`;
  }

  get body() {
    return this.method === "GET" || this.method === "HEAD" ? null : bodyChunks(this.#req);
  }

  async text() {
    const chunks = [];
    for await (const c of bodyChunks(this.#req)) chunks.push(c);
    return Buffer.concat(chunks).toString("utf8");
  }

  /**
   * Aborted when the client goes away: its connection closed before the answer was written
   * (made on first use: only streams and waits need it). A socket that closed before the first
   * use (while a token was checked, say) fired its "close" already: that aborts at once. The
   * socket's own "close" is watched as well as the response's: a response queued behind a
   * pipelined one is not told when the socket closes. It also aborts once the response is done
   * (nothing waits any more by then).
   */
  get signal() {
    if (!this.#controller) {
      const controller = new AbortController();
      this.#controller = controller;
      const socket = this.#req.socket;
      if (socket.destroyed) controller.abort();
      else {
        const abort = () => controller.abort();
        // The client's end of the connection closing ("end": it sends nothing more, and the
        // server closes its side then) is the client going away, as its "close" is.
        socket.once("end", abort);
        socket.once("close", abort);
        this.#res.once("close", () => {
          socket.off("end", abort); // a kept-alive socket serves many requests
          socket.off("close", abort);
          abort();
        });
      }
    }
    return this.#controller.signal;
  }
}

/** `headers.get(name)` over node:http's parsed headers (lower-case names; repeats joined). */
class NodeHeaders {
  #raw;

  constructor(raw) {
    this.#raw = raw;
  }

  get(name) {
    const v = this.#raw[name.toLowerCase()];
    return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
  }
}

/** A string body longer than this (UTF-16 units) is written in slices of it, each once the
 * socket has taken the one before: no copy of a whole 30 MB answer at once. */
const PIECE = 64 * 1024;

/** The host while the pool is being opened: not ready, counts nothing. */
const STARTING = Object.freeze({ ready: false, now: () => Date.now(), observeRequest() {}, streamCut() {} });

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host) {
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1";
}

/**
 * Starts serving `pool` (a PoolHost, or a promise of one: the server listens at once and
 * answers 503 not-ready until it resolves, so `/readyz` tells a load balancer when the restore
 * is done). Options: `host` (default 127.0.0.1), `port` (0 picks one), `tokens` (parsed token
 * list; without any, only a loopback address is allowed, and only loopback Host and Origin
 * values are served: see origin-guard.js), `www` (a folder served at `/`: the operator
 * console, behind the same Host/Origin guard; default none), handler options (`bodyLimit`,
 * `heartbeatMs`, `streamQueue`, `maxStreams`, `maxWaitMs`, `maxWaiting`), `streamWriteTimeoutMs` (a subscriber whose
 * socket takes nothing for that long is cut; default 30 s), `requestTimeoutMs` (to receive a
 * whole request; default 30 s; then 408), `closeGraceMs` (default 10 s). Resolves once
 * listening (and, given an open pool, once its handler is in place: no request of a caller
 * that waited for `serve` is answered not-ready) to
 * `{ url, port, ready, close() }`: `ready` resolves when the pool is in place (or rejects as the
 * pool's promise did); `close()` stops accepting, ends event streams and waits, waits up to
 * `closeGraceMs` for requests in flight, cuts what is left, and resolves — the caller then
 * closes the pool (final checkpoint).
 */
export async function serve(
  pool,
  {
    host = "127.0.0.1",
    port = 8787,
    tokens = [],
    closeGraceMs = 10000,
    streamWriteTimeoutMs = 30000,
    requestTimeoutMs = 30000,
    www,
    ...handlerOptions
  } = {},
) {
  if (tokens.length === 0 && !isLoopback(host)) {
    throw Object.assign(new Error(`refusing to listen on ${host} without tokens: configure tokens, or listen on 127.0.0.1`), {
      code: "INSECURE_BIND",
    });
  }
  // Until the pool is open (`pool` may be a promise of it), a host that is not ready answers:
  // /healthz 200, /readyz and the API 503 with Retry-After.
  const options = { tokens, loopbackOnly: tokens.length === 0, ...handlerOptions };
  let handle = await createHandler(STARTING, options);
  const files = www === undefined ? null : await staticFiles(www);
  // The console's files pass the API's Host/Origin guard too (a rebound name reads nothing).
  const guard = originGuard({ loopbackOnly: options.loopbackOnly });
  const fileReply = async (req, res) => {
    const reply = await files(req.method, req.url);
    if (reply === null || reply === undefined) return null;
    try {
      guard(new NodeRequest(req, res));
    } catch (e) {
      return problemReply(problemOf(e));
    }
    return reply;
  };
  const ready = Promise.resolve(pool).then(async (p) => {
    handle = await createHandler(p, options);
  });
  ready.catch(() => {}); // the caller sees it through `ready`
  // A pool that is open already is served from the first request: no 503 while the handler's
  // keys are derived (that takes a trip through the crypto thread pool, long under load).
  if (typeof pool?.then !== "function") await ready;
  const streams = new Set();
  const answering = new WeakMap(); // socket → its latest response (see answerClientError)
  let closing = false;
  const timeouts = { requestTimeout: requestTimeoutMs, connectionsCheckingInterval: Math.min(30000, Math.max(10, requestTimeoutMs / 4)) };
  const server = createServer({ keepAliveTimeout: 65000, requireHostHeader: false, ...timeouts }, async (req, res) => {
    answering.set(req.socket, res);
    if (isLingering(req.socket)) {
      // Sent after the body of a refused request, on a connection that is closing.
      req.resume();
      res.destroy();
      return;
    }
    if (closing) {
      // A request on a connection that was open when close() began: answered, and let go.
      res.writeHead(503, { connection: "close", "retry-after": "1", "content-length": "0" });
      res.end();
      return;
    }
    let reply;
    const badHost = hostProblem(req);
    try {
      if (badHost) reply = problemReply(badHost);
      // An API request is never a file: no lookup (about 2 % of the server's time under load).
      else reply = (files && !isApiTarget(req.url) && (await fileReply(req, res))) || (await handle.reply(new NodeRequest(req, res)));
    } catch {
      reply = { status: 500, headers: {}, body: null };
    }
    const { status, headers, body } = reply;
    if (body instanceof ReadableStream) {
      res.writeHead(status, headers);
      const stream = writeStream(body, res, { writeTimeoutMs: streamWriteTimeoutMs });
      if (!res.destroyed) {
        streams.add(stream);
        res.on("close", () => streams.delete(stream));
      }
      return;
    }
    // Else a string (or a file's bytes), with its length, or pieces (chunked); a large string
    // in slices.
    if (body !== null && !(body instanceof Pieces)) headers["content-length"] = String(Buffer.byteLength(body));
    // A wait ended by close() is answered on a connection that is not kept.
    if (closing) headers.connection = "close";
    if (!req.complete) refuseRestOfBody(req, res, headers);
    res.writeHead(status, headers);
    if (body === null) res.end();
    else if (body instanceof Pieces || (typeof body === "string" && body.length > PIECE)) {
      const pieces = body instanceof Pieces ? body : slices(body, PIECE);
      writePieces(pieces, res, { writeTimeoutMs: streamWriteTimeoutMs, last: (piece) => endWhenWritten(res, piece) });
    } else endWhenWritten(res, body);
  });
  /**
   * Writes `body` and ends the response only once the socket has taken all of it. node:http
   * counts a connection idle as soon as `res.end()` is called, and `closeIdleConnections()`
   * (which `server.close()` calls too) destroys it — with a large body (a 30 MB snapshot)
   * still in the process's buffers, cut. A response not yet ended is left alone, so shutdown
   * lets it finish; once it has, a server that is closing lets go of its connection.
   */
  const endWhenWritten = (res, body) => {
    res.write(body, () => {
      res.end();
      if (closing) res.once("finish", () => server.closeIdleConnections());
    });
  };
  server.on("clientError", (error, socket) => answerClientError(error, socket, answering));
  await new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, host, ok);
  });
  const address = server.address();
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    port: address.port,
    ready,
    server,
    async close() {
      closing = true;
      const closed = new Promise((ok) => server.close(ok));
      // Waiting requests answer now (503 shutting-down, or a finish's `next: null`).
      handle.close();
      // A stream never ends by itself: end each one properly (its last chunk, then FIN), and
      // let go of its connection, which a subscriber would otherwise keep open for ever.
      for (const stream of streams) stream.stop();
      server.closeIdleConnections();
      // Whatever is still open after the grace period (a request that never finishes) is cut.
      const timer = setTimeout(() => server.closeAllConnections(), closeGraceMs);
      await closed;
      clearTimeout(timer);
    },
  };
}
