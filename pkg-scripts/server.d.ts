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

/** The HTTP API of the README as one web-standard handler. */
export declare function createHandler(host: PoolHost, options?: HandlerOptions): Promise<(request: Request) => Promise<Response>>;

/** Serves a pool over node:http. Without tokens, only a loopback address is allowed. */
export declare function serve(
  pool: PoolHost,
  options?: HandlerOptions & { host?: string; port?: number; /** ms; default 10000 */ closeGraceMs?: number },
): Promise<{ url: string; port: number; close(): Promise<void> }>;

export declare function isLoopback(host: string): boolean;
