// The pool server on Node's `http`: adapts node:http to the web-standard handler (handler.js)
// and owns what only a process has — listening, keep-alive, graceful shutdown. It adds no
// route, no validation and no authentication of its own.

import { createServer } from "node:http";
import { Readable } from "node:stream";
import { isIP } from "node:net";
import { createHandler } from "./handler.js";

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host) {
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1";
}

/**
 * Starts serving `pool` (a PoolHost). Options: `host` (default 127.0.0.1), `port` (0 picks
 * one), `tokens` (parsed token list; without any, only a loopback address is allowed),
 * handler options (`bodyLimit`, `heartbeatMs`, `streamQueue`). Resolves to
 * `{ url, port, close() }`; `close()` stops accepting, waits for requests in flight (streams
 * are ended), and resolves — the caller then closes the pool (final checkpoint).
 */
export async function serve(pool, { host = "127.0.0.1", port = 8787, tokens = [], ...handlerOptions } = {}) {
  if (tokens.length === 0 && !isLoopback(host)) {
    throw Object.assign(new Error(`refusing to listen on ${host} without tokens: configure tokens, or listen on 127.0.0.1`), {
      code: "INSECURE_BIND",
    });
  }
  const handle = await createHandler(pool, { tokens, ...handlerOptions });
  const streams = new Set();
  const server = createServer({ keepAliveTimeout: 65000, requestTimeout: 30000 }, async (req, res) => {
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const request = new Request(`http://${req.headers.host ?? "localhost"}${req.url}`, {
      method: req.method,
      headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
      body: hasBody ? Readable.toWeb(req) : undefined,
      duplex: hasBody ? "half" : undefined,
      signal: controller.signal,
    });
    let response;
    try {
      response = await handle(request);
    } catch {
      response = new Response(null, { status: 500 });
    }
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) {
      res.end();
      return;
    }
    const body = Readable.fromWeb(response.body);
    if (response.headers.get("content-type") === "text/event-stream") {
      streams.add(body);
      res.on("close", () => streams.delete(body));
    }
    body.on("error", () => res.destroy());
    body.pipe(res);
  });
  await new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, host, ok);
  });
  const address = server.address();
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    port: address.port,
    server,
    async close() {
      const closed = new Promise((ok) => server.close(ok));
      for (const s of streams) s.destroy();
      server.closeIdleConnections();
      await closed;
    },
  };
}
