// Types of `repute/client` (Node): a pool served by `repute serve` (or the edge worker), used
// from another process with the embedded `Pool`'s methods, async, over the HTTP API.
import type { Config, ConfigPatch, ErrorCode, GroupsOptions, Kind, Lease, Outcome, PoolEvent, RegisterOptions, ResourceDetail, ResourceFilter, ResourceView, Stats } from "./pool.js";
import type { EventPage, Readiness } from "./host.js";
import type { Attempt, CallOptions } from "./repute.js";

export interface ConnectPoolOptions {
  /** The server's base URL (`http://127.0.0.1:8787`; a path prefix such as an edge region's is
   * kept). No credentials in it: pass the token. */
  url: string | URL;
  /** A bearer token (worker, operator or viewer role); never shown in an error or a log. */
  token?: string;
  /** Aborts every call of this client, for good (they reject with ABORTED). */
  signal?: AbortSignal;
  /** One operation's time limit, its retries and the waits between them included (default
   * 10000; Infinity: none). Past it: REQUEST_TIMEOUT. */
  timeoutMs?: number;
  /** Attempts beyond the first after a connection error (default 2) — never after an answer.
   * A call that is not idempotent (acquire, report, a snapshot import) is retried only when
   * its request cannot have left (the connection was refused or never opened). */
  retries?: number;
  /** The first wait before such a retry, doubling, with jitter (default 50 ms). */
  retryDelayMs?: number;
  /** An undici Dispatcher to send through instead of the client's own keep-alive Agent. */
  dispatcher?: object;
}

/** A lease from the server: the embedded pool's `Lease` plus its opaque `leaseId`, which renew
 * and release send back. `await using` releases it. */
export interface RemoteLease extends Lease {
  leaseId: string;
  [Symbol.asyncDispose](): Promise<boolean>;
}

/** An acquire's whole answer: a lease, or null with when to ask again. */
export type AcquireAnswer =
  | { lease: RemoteLease; retryAfterMs?: never }
  /** retryAfterMs: the server's Retry-After in ms (whole seconds); null when nothing will become
   * eligible by time alone. */
  | { lease: null; retryAfterMs: number | null };

export type PoolClientErrorCode =
  | ErrorCode
  /** (ErrorCode's LEASE_FINISHED is a repeated finish of one lease: 409 lease-finished.) */
  | "TOO_MANY_WAITING"
  | "SHUTTING_DOWN"
  | "STALE_SNAPSHOT"
  | "STORAGE_UNAVAILABLE"
  | "COUNTERS_EXHAUSTED"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_READY"
  | "TOO_MANY_STREAMS"
  | "EVENT_ID_AHEAD"
  | "IMPORT_IN_PROGRESS"
  | "NOT_FOUND"
  | "SERVER_ERROR"
  | "HTTP_ERROR"
  | "CONNECTION_FAILED"
  | "REQUEST_TIMEOUT"
  | "ABORTED"
  | "CLOSED";

export declare const CLIENT_CODES: readonly PoolClientErrorCode[];

/** Why a client call failed: the embedded pool's code for the same refusal, or the network's. */
export declare class PoolClientError extends Error {
  constructor(code: PoolClientErrorCode, message: string, fields?: object);
  code: PoolClientErrorCode;
  /** The same call may succeed later (a connection error, a timeout, a pool not ready …). */
  retryable: boolean;
  /** The HTTP status, when the server answered. */
  status?: number;
  /** The problem type (`urn:repute:problem:…`), when the answer was one. */
  type?: string;
  /** The answer's Retry-After, in ms. */
  retryAfterMs?: number;
  /** CONNECTION_FAILED: whether the request may have reached the server. */
  reached?: boolean;
  /** Connection attempts made. */
  attempts?: number;
}

export interface EventsOptions {
  /** Start after this seq, replaying from the audit log (default: the pool's newest event now). */
  after?: number;
  /** Ends the iterator (it throws ABORTED). */
  signal?: AbortSignal;
  /** A stream silent this long counts as dropped (default 45000; the server sends a heartbeat every 15 s). */
  idleMs?: number;
  /** Give up reconnecting (throwing the last error) after failing this long (default 30000). */
  reconnectForMs?: number;
}

/** `acquireWait`'s options (and `tryAcquire`'s, where `waitMs` may be left out). */
export interface WaitOptions extends GroupsOptions {
  /** ms the server may wait for a lease (at most its `--max-wait-ms`, default 30000); the
   * call's time limit is the client's `timeoutMs` plus this. */
  waitMs: number;
  /** Aborts the call (ABORTED) and closes its request: the server ends the wait, keeping no lease for it. */
  signal?: AbortSignal;
}

/** A finish's next lease: in `context` (default: the finished lease's), of `groups`, waiting up to `waitMs`. */
export interface NextOptions {
  context?: string;
  groups?: (string | null)[];
  waitMs?: number;
  signal?: AbortSignal;
}

export declare class PoolClient {
  /** The server's base URL. */
  readonly url: string;
  /** `maxLeases` (1–1024): how many leases of the resource may be live at once (default 1). */
  register(kind: Kind, value: string, options?: RegisterOptions & { maxLeases?: number }): Promise<boolean>;
  /** Operator. False when the resource was not registered. By kind and value the client asks
   * the resource's id first (`POST /api/resources/lookup`, the value in its body): no value is
   * ever in a URL; by id (a view will do) with no extra request. */
  deregister(kind: Kind, value: string): Promise<boolean>;
  /** By the server's resource id (a view will do). */
  deregister(resource: { id: string }): Promise<boolean>;
  /** Null when nothing is eligible (as the embedded pool's acquire). */
  acquire(context: string, options?: GroupsOptions): Promise<RemoteLease | null>;
  /** The same, with the server's Retry-After when nothing is eligible (or no lease came within `waitMs`). */
  tryAcquire(context: string, options?: GroupsOptions & { waitMs?: number; signal?: AbortSignal }): Promise<AcquireAnswer>;
  /** Waits on the server up to `waitMs` for a lease (first come, first served, woken by
   * releases); null when none came, or at once when the server already holds its limit of
   * waiting requests (`--max-waiting`: 503 too-many-waiting). */
  acquireWait(context: string, options: WaitOptions): Promise<RemoteLease | null>;
  /**
   * A step's end in one request: reports `outcome` (also for a lapsed lease), releases the
   * lease, and with `next` leases the next (null when none is eligible within `next.waitMs`);
   * null without `next`. At most once per lease: not retried once the request may have reached
   * the server (CONNECTION_FAILED with `reached: true`); calling it again is safe, and fails
   * with LEASE_FINISHED (409) when the first was applied — then the outcome counted once and a
   * next lease the lost answer carried stays held until it lapses. A lease id the server does
   * not know (it restarted) is finished as a report (and an acquire for `next`).
   */
  finish(lease: RemoteLease, outcome: Outcome, options?: { next?: NextOptions }): Promise<RemoteLease | null>;
  report(kind: Kind, value: string, context: string, outcome: Outcome): Promise<void>;
  /** Null when the lease lapsed, is not the current one (the server restarted, say) or the resource is blocked. */
  renew(lease: RemoteLease): Promise<RemoteLease | null>;
  /** False when not (or no longer) the current holder. */
  release(lease: RemoteLease): Promise<boolean>;
  /** Operator. */
  block(kind: Kind, value: string, how: { seconds: number; permanent?: never } | { permanent: true; seconds?: never }): Promise<void>;
  block(resource: { id: string }, how: { seconds: number; permanent?: never } | { permanent: true; seconds?: never }): Promise<void>;
  /** Operator. */
  unblock(kind: Kind, value: string): Promise<boolean>;
  unblock(resource: { id: string }): Promise<boolean>;
  resources(filter?: ResourceFilter): Promise<(ResourceView & { id: string })[]>;
  resource(kind: Kind, value: string): Promise<ResourceDetail & { id: string }>;
  resource(resource: { id: string }): Promise<ResourceDetail & { id: string }>;
  /** One page of the audit log. */
  readEvents(options?: { after?: number; limit?: number }): Promise<EventPage>;
  /** Live events, each once, in seq order, resuming by Last-Event-ID after a dropped connection. */
  events(options?: EventsOptions): AsyncGenerator<PoolEvent, void, undefined>;
  stats(): Promise<Stats>;
  config(): Promise<Config>;
  /** Operator. */
  setConfig(patch: ConfigPatch): Promise<Config>;
  /** Operator: the canonical snapshot's text. */
  snapshot(): Promise<string>;
  /** Operator. */
  importSnapshot(snapshotJson: string): Promise<void>;
  /** `/readyz`: ready, or why not. */
  readiness(): Promise<Readiness>;
  /** The value as events show it (credentials masked): the engine's rule, its WebAssembly
   * module loaded on the first call (importing or using the client otherwise loads none). */
  maskValue(kind: Kind, value: string): string;
  /** A resilient call through the remote pool: the same layer as `host.call` (README "Resilient
   * calls"); the attempt's `lease` is a RemoteLease. */
  call<T>(context: string, attempt: (attempt: Attempt & { lease: RemoteLease }) => T | Promise<T>, options?: CallOptions): Promise<T>;
  /** Aborts what is in flight (CLOSED) and closes the connections. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A client of the pool server at `url`; no request is made until the first call. */
export declare function connectPool(options: ConnectPoolOptions): PoolClient;
