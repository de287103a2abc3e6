// Types of `repute/server`: the pool server over node:http (Node). The handler it serves and its
// options are `repute/handler`'s (handler.d.ts); the host contract is host.d.ts.
import type { Host } from "./host.js";
import type { HandlerOptions } from "./handler.js";
export type { Host, Readiness, EventPage, OutcomePage } from "./host.js";
export type { TokenEntry, HandlerOptions, Reply, Handler } from "./handler.js";

/** Serves a pool over node:http. Without tokens, only a loopback address is allowed. Given a
 * promise of the pool, it listens at once and answers 503 not-ready until the pool is open; given
 * an open pool, it resolves with `ready` settled and serves from the first request. */
export declare function serve(
  pool: Host | Promise<Host>,
  options?: HandlerOptions & {
    host?: string;
    port?: number;
    /** ms; default 10000 */
    closeGraceMs?: number;
    /** ms a subscriber's socket may take nothing before it is cut; default 30000 */
    streamWriteTimeoutMs?: number;
    /** ms to receive a whole request, then 408; default 30000 */
    requestTimeoutMs?: number;
    /** A folder served at `/` outside the API (the operator console), without a token, with a
     * Content-Security-Policy that forbids inline scripts and styles, behind the same Host and
     * Origin guard as the API. Default: none. */
    www?: string;
  },
): Promise<{ url: string; port: number; /** the pool is in place */ ready: Promise<void>; close(): Promise<void> }>;

export declare function isLoopback(host: string): boolean;
