// The host contract: what the HTTP handler (`repute/handler`, lib/http/handler.js) needs of the
// pool it serves. Implemented once by the host core (lib/host/host-core.js), which the Node
// runtime's `PoolHost` (lib/node/open-pool.js, openPool: a data folder), `MemoryHost`
// (lib/host/memory-host.js: no storage) and the edge worker's Durable Object host
// (lib/edge/durable-host.js) extend; the handler imports none of them.
import type { Config, ConfigPatch, Kind, Lease, Outcome, PoolEvent, ResourceDetail, ResourceView, State, Stats } from "./pool.js";
import type { Attempt, CallOptions } from "./call.js";

export interface Readiness {
  ready: boolean;
  reason?: "not-ready" | "storage-unavailable";
  detail?: string;
}

export interface EventPage {
  events: PoolEvent[];
  /** The seq to pass as `after` for the next page, or null when this is the last. */
  next: number | null;
}

export interface OutcomeRecord {
  seq: number;
  at: number;
  kind: Kind;
  value: string;
  id: string;
  context: string;
  outcome: Outcome;
}

export interface OutcomePage {
  outcomes: OutcomeRecord[];
  next: number | null;
}

/** Who made an operator change and why; the hosts add it to the events the change causes. */
export interface OperatorNote {
  /** The name of the token that made the call. */
  actor?: string;
  /** The caller's reason (1–500 characters). */
  reason?: string;
}

/** One context's health (`GET /api/contexts`, lib/host/context-health.js). */
export interface ContextHealth {
  context: string;
  cells: number;
  states: Record<State, number>;
  held: number;
  /** Cells whose last outcome failed or whose score is below zero, whatever their state. */
  failing: number;
  /** Failing cells by cause (a failure type, or UNKNOWN). */
  causes: Record<string, number>;
  /** The commonest cause, or null. */
  cause: string | null;
  succeeded: number;
  failed: number;
  /** succeeded / (succeeded + failed) over the window; null with no report. */
  successRate: number | null;
  granted: number;
  rejected: number;
  p95LatencyMs: number | null;
  series: { at: number; succeeded: number; failed: number; granted: number; rejected: number }[];
}

export interface ContextsAnswer {
  now: number;
  windowMs: number;
  bucketMs: number;
  contexts: ContextHealth[];
  failingCells: { id: string; context: string; cause: string }[];
  failingCellsTruncated: boolean;
}

export type BlockHow = { seconds: number; permanent?: never } | { permanent: true; seconds?: never };

export interface Host {
  /** False until the pool is in place (the handler answers 503 not-ready meanwhile). */
  readonly ready: boolean;
  /** `/readyz`: ready, or why not. */
  readiness?(): Readiness;
  /** The host clock (epoch ms), as the pool reads it. */
  now(): number;
  config(): Config;
  stats(): Stats;

  // Operator actions: resolve once the change is durable (for a durable host).
  /** `group` (a name or null) moves a known resource; absent, its group is unchanged;
   * `maxLeases` (1..=1024) likewise. */
  // `note`: who and why, added to the events the action causes (CONFIG_CHANGED also gets
  // `changes`).
  register(kind: Kind, value: string, options?: { group?: string | null; maxLeases?: number }, note?: OperatorNote): Promise<boolean>;
  deregister(kind: Kind, value: string, note?: OperatorNote): Promise<boolean>;
  block(kind: Kind, value: string, how: BlockHow, note?: OperatorNote): Promise<void>;
  unblock(kind: Kind, value: string, note?: OperatorNote): Promise<boolean>;
  setConfig(patch: ConfigPatch, note?: OperatorNote): Promise<Config>;
  /** The snapshot's text, or its UTF-8 bytes (a buffer that is wholly the snapshot's is handed
   * over: the Node host moves it to the thread that reads it, leaving it detached here). */
  importSnapshot(snapshot: string | Uint8Array): Promise<void>;

  // The hot path: synchronous.
  /** `groups`: tried in order (README "Tiers, pacing and the cooling cap"); null stands for the resources with none. */
  acquire(context: string, options?: { groups?: (string | null)[] }): Lease | null;
  /** A lease within `waitMs` (README "Fleets and concurrency"): FIFO per context and groups; an aborted
   * `signal` rejects (an AbortError) and leaks no lease. */
  acquireWait(context: string, options: { groups?: (string | null)[]; waitMs: number; signal?: AbortSignal }): Promise<Lease | null>;
  /** Report, release and the next lease (README "Fleets and concurrency"); LEASE_FINISHED on a
   * repeat. */
  finish(
    lease: Lease,
    outcome: Outcome,
    options?: { next?: { context?: string; groups?: (string | null)[]; waitMs?: number; signal?: AbortSignal } },
  ): Lease | null | Promise<Lease | null>;
  renew(lease: Lease): Lease | null;
  release(lease: Lease): boolean;
  report(kind: Kind, value: string, context: string, outcome: Outcome): void;

  // Reads.
  /** `group: null` keeps the resources with no group. */
  /** With `after` and/or `limit`, a page (Pool.resources). */
  resources(filter?: { context?: string; state?: State; group?: string | null; after?: { kind: Kind; value: string }; limit?: number }): ResourceView[];
  resource(kind: Kind, value: string): ResourceDetail;
  nextChangeAt(context: string, options?: { groups?: (string | null)[] }): number | null;
  /** The canonical snapshot of the live pool. */
  snapshot(): string;
  /** Per-context health (`GET /api/contexts`); a host without it answers that route 404. */
  contexts?(): ContextsAnswer;
  /** The audit log, by seq. */
  readEvents(options: { after: number; limit: number }): Promise<EventPage>;
  /** The reported outcomes, when recorded; null (or absent) when not. */
  readOutcomes?(options: { after: number; limit: number }): Promise<OutcomePage | null> | OutcomePage | null;
  /** Live events, synchronously as they happen; returns the unsubscribe function. */
  subscribe(listener: (event: PoolEvent) => void): () => void;

  // Observability.
  /** Prometheus text exposition. */
  metrics(): string | Promise<string>;
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  /** An event-stream subscriber was cut for not keeping up. */
  streamCut(): void;

  // Naming.
  /** The resource's opaque id (22 URL-safe characters, revealing nothing of the value). */
  resourceId(kind: Kind, value: string): string;
  /** The resource an id names (one held or lately held), or null. */
  resourceById(id: string): { kind: Kind; value: string } | null | Promise<{ kind: Kind; value: string } | null>;
  /** Optional: `resourceById` as a promise that does not hold up other work meanwhile (a search
   * of a large pool a page at a time); the handler uses it where present. */
  resourceLookup?(id: string): Promise<{ kind: Kind; value: string } | null>;
  /** The value with its credentials masked. */
  maskValue(kind: Kind, value: string): string;
}

/** The engine's `Pool` class, as `MemoryHost` takes it (Node's or the web build's). */
export interface PoolClass {
  new (options?: object): unknown;
  restore(snapshotJson: string, options?: object): unknown;
  maskValue(kind: Kind, value: string): string;
}

export interface MemoryHostOptions {
  Pool: PoolClass;
  /** A partial config: a new pool's, or overrides of a restored one's. */
  config?: ConfigPatch;
  now?: () => number;
  seed?: number;
  random?: () => number;
  /** At least 16 bytes keying the resource ids (default: fresh random bytes). */
  key?: Uint8Array;
  /** A snapshot to start from (default: a new pool). */
  snapshot?: string | null;
  /** Counters the pool starts at or above. */
  floor?: { fencing?: number; eventSeq?: number };
  /** Events kept for `readEvents` (default 10000). */
  eventsKept?: number;
  /** Where a throwing subscriber or listener is reported (default: nowhere). */
  onError?: (error: unknown) => void;
}

/** The host contract in memory, with no storage (lib/host/memory-host.js): every method of
 * `Host` (declared once, there), made definite, plus what only this host has. */
export interface MemoryHost extends Host {
  readiness(): Readiness;
  contexts(): ContextsAnswer;
  stats(): Stats & { auditDropped: number; deliveryDropped: number; checkpointAgeMs: number | null };
  readEvents(options?: { after?: number; limit?: number }): Promise<EventPage>;
  metrics(): string;
  resourceById(id: string): { kind: Kind; value: string } | null;
  resourceLookup(id: string): Promise<{ kind: Kind; value: string } | null>;
  /** Calls `cb` for events of `type` ("event" for every type); returns a disposer (the host
   * core's, as on openPool's host; `addEventListener` too: the host is an EventTarget). */
  on(type: PoolEvent["type"] | "event", cb: (event: PoolEvent) => void): () => void;
  /** Live events (after replaying the event log past `after`, when given). */
  events(options?: { signal?: AbortSignal; after?: number; queue?: number }): AsyncIterable<PoolEvent>;
  /** A lease on one named resource (the prober's trial), uncounted by the metrics. */
  acquireResource(kind: Kind, value: string, context: string): Lease | null;
  /** A resilient call through this pool on the host's clock (README "Resilient calls"), as
   * openPool's host has it. */
  call<T>(context: string, attempt: (attempt: Attempt) => T | Promise<T>, options?: CallOptions): Promise<T>;
  close(): void;
}
export declare class MemoryHost {
  static create(options: MemoryHostOptions): Promise<MemoryHost>;
}
