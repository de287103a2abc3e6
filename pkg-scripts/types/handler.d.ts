// Types of `repute/handler`: the HTTP API as one web-standard handler, for any runtime with
// Request/Response, and `MemoryHost`, a host that keeps its pool in memory (what the edge
// worker builds on). The host contract is host.d.ts.
import type { Host } from "./host.js";
export type { Host, MemoryHostOptions, Readiness, EventPage, OutcomePage } from "./host.js";
export { MemoryHost } from "./host.js";

export interface TokenEntry {
  token: string;
  role: "worker" | "operator" | "viewer";
}

export interface HandlerOptions {
  tokens?: TokenEntry[];
  /** Bytes of a request body (default 65536); a `PUT /api/config` may take up to 8 MiB (a
   * `minGapMsByContext` of 4096 contexts) whatever this says. */
  bodyLimit?: number;
  /** Bytes of a `PUT /api/snapshot` (default: sized from the pool's maxCells and windowSize). */
  snapshotLimit?: number;
  heartbeatMs?: number;
  streamQueue?: number;
  /** Concurrent event-stream subscribers; one more is a 503. Default 32. */
  maxStreams?: number;
  /** ms an event stream lasts before it ends (the subscriber resumes by Last-Event-ID); default
   * none. The edge worker sets it: a Durable Object is not told when a subscriber leaves. */
  streamMaxMs?: number;
  /** Serve only loopback Host and Origin values (origin-guard.js). Default: when there are no tokens. */
  loopbackOnly?: boolean;
  /** The largest `waitMs` a request may ask for (`POST /api/leases`, a finish's `next`), in ms;
   * more is a 400 naming the field and this limit. Default 30000 (`--max-wait-ms`). */
  maxWaitMs?: number;
  /** Requests waiting at once. Past it, an acquire that cannot be served at once answers 503
   * `too-many-waiting` with Retry-After, and a finish tries its `next` at once (as if `waitMs`
   * were 0). Default 1000 (`--max-waiting`). */
  maxWaiting?: number;
}

/** A large answer (a dashboard of more than 10 resources) sent as it is built: its pieces,
 * joined, are the body; read the next only once the one before is sent. `stream()` gives them
 * as the bytes of a ReadableStream that builds each piece when its reader asks. */
export interface Pieces extends AsyncIterable<string> {
  stream(): ReadableStream<Uint8Array>;
}

/** A reply before it becomes a `Response`: headers with lower-case names; body a string,
 * `Pieces`, an event stream's bytes, or null. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string | Pieces | ReadableStream<Uint8Array> | null;
}

/** The HTTP API of the README as one web-standard handler; `reply` gives the same answer
 * without building a `Response` (what the Node server uses). Groups (README "Tiers, pacing and the cooling cap"): `group` in
 * `POST /api/resources` (a name, or null; absent: a known resource keeps its group), `groups`
 * in `POST /api/leases` (its 409's Retry-After is for those groups), and `GET
 * /api/resources?group=NAME`, where an empty `?group=` asks for the resources with no group.
 * Capacity and waiting (README "Fleets and concurrency"): `maxLeases` in `POST /api/resources`, `waitMs` in
 * `POST /api/leases`, and `POST /api/leases/{leaseId}/outcome` (finish a step); a request that
 * waits ends when `request.signal` aborts (its client went away) and leaks no lease. */
export interface Handler {
  (request: Request): Promise<Response>;
  reply(request: Request): Promise<Reply>;
  /** Ends every wait in progress (a server shutting down): a waiting acquire answers 503
   * `shutting-down`, a finish `{"next": null}`. */
  close(): void;
}

export declare function createHandler(host: Host, options?: HandlerOptions): Promise<Handler>;
