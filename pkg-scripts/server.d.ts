// Types of `repute/server` (Node) and `repute/handler` (any runtime with Request/Response).
import type { PoolHost } from "./repute.js";

export interface TokenEntry {
  token: string;
  role: "worker" | "operator" | "viewer";
}

export interface HandlerOptions {
  tokens?: TokenEntry[];
  bodyLimit?: number;
  heartbeatMs?: number;
  streamQueue?: number;
}

/** A reply before it becomes a `Response`: headers with lower-case names; body a string, an
 * event stream's bytes, or null. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string | ReadableStream<Uint8Array> | null;
}

/** The HTTP API of the README as one web-standard handler; `reply` gives the same answer
 * without building a `Response` (what the Node server uses). */
export interface Handler {
  (request: Request): Promise<Response>;
  reply(request: Request): Promise<Reply>;
}

export declare function createHandler(host: PoolHost, options?: HandlerOptions): Promise<Handler>;

/** Serves a pool over node:http. Without tokens, only a loopback address is allowed. Given a
 * promise of the pool, it listens at once and answers 503 not-ready until the pool is open. */
export declare function serve(
  pool: PoolHost | Promise<PoolHost>,
  options?: HandlerOptions & {
    host?: string;
    port?: number;
    /** ms; default 10000 */
    closeGraceMs?: number;
    /** A folder served at `/` outside the API (the operator console), without a token, with a
     * Content-Security-Policy that forbids inline scripts and styles. Default: none. */
    www?: string;
  },
): Promise<{ url: string; port: number; /** the pool is in place */ ready: Promise<void>; close(): Promise<void> }>;

export declare function isLoopback(host: string): boolean;
