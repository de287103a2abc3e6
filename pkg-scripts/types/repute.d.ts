/// <reference lib="esnext.disposable" />
// Types of the `repute` package in Node (README "Use it from Node"): the engine's `Pool` and its types
// (pool.d.ts), plus the Node runtime: `openPool` / `PoolHost`, the recovery prober's `httpProbe`
// and `redactCredentials`. Part of the contract: the test suite compiles a usage file against
// them with `tsc --noEmit`, and checks that node.js exports exactly the values declared here.
export * from "./pool.js";
export * from "./call.js";
import type { ContextsAnswer, OperatorNote, OutcomePage } from "./host.js";
import type { Attempt, CallOptions } from "./call.js";
import type { Config, ConfigPatch, EventType, FailureType, Kind, Lease, NextStep, Outcome, PoolEvent, ProbeDue, RegisterOptions, ResourceDetail, ResourceView, State, Stats, WaitOptions } from "./pool.js";

// ----- Node runtime (the `node` condition only) ------------------------------------------------

export interface OpenPoolOptions {
  /** Folder of the snapshot, its backup, the audit log and the lock (default "./data"). */
  dir?: string;
  /** A partial config: for a new pool, or overrides of a restored snapshot's config. */
  config?: ConfigPatch;
  now?: () => number;
  random?: () => number;
  seed?: number;
  /** Snapshot interval in ms (default 30000; 0 disables the timer). */
  checkpointMs?: number;
  /** Mutations after which a snapshot is written early (default 1000)… */
  burst?: number;
  /** …at most once per this many ms (default 1000). */
  burstGapMs?: number;
  audit?: { maxFileBytes?: number; maxFiles?: number; maxAgeMs?: number; queueLimit?: number };
  /** Start from the previous good snapshot (after a damaged one). */
  fromBackup?: boolean;
  /** Write a final snapshot and exit on SIGTERM / SIGINT (default true). */
  handleSignals?: boolean;
  /** Receives errors of listeners, probes and snapshot writes, and the storage going bad and
   * good again (default: console.error). */
  onError?: (error: unknown) => void;
  /** Fencing tokens and event seqs reserved on disk at a time, renewed at half (default 65536). */
  reserveStep?: number;
  /** While writes fail, how often the folder is probed and what is pending written (default 1000). */
  storageRetryMs?: number;
  /** The runtime's timers and monotonic clock (snapshot interval, bursts, storage retries,
   * checkpoint age, waiting acquires); default the process's own. Tests pass virtual ones to
   * step time. */
  timers?: HostTimers;
  /** The most `acquireWait`s at once (default 10000); past it a wait answers as if `waitMs` were 0. */
  maxWaiters?: number;
  /** A recovery prober; with one, halfOpenCauses defaults to ["BLOCKED"]. */
  prober?: {
    probes: Partial<Record<Kind, ProbeFn>>;
    /** Between the end of a round and the next (default 5000). */
    intervalMs?: number;
    /** Plus a random delay below this (default 1000). */
    jitterMs?: number;
    /** Probes in flight at once (default 4). */
    concurrency?: number;
    /** Successes that end probation (default: the pool's recoverAfter). */
    recoverAfter?: number;
    /** Errors the prober swallows (default: the host's onError); `entry.value` may hold credentials. */
    onError?: (error: unknown, entry: { kind: Kind; value: string; context: string } | null) => void;
  };
}

export interface HostTimers {
  /** Milliseconds on a clock that never goes back (default `performance.now`). */
  monotonicMs(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(timer: unknown): void;
}

export interface DisposableLease extends Lease {
  [Symbol.dispose](): void;
}

export interface HostStats extends Stats {
  auditDropped: number;
  deliveryDropped: number;
  checkpointAgeMs: number | null;
}

/** One pool, durable in a folder, observable. Hot-path calls are synchronous; operator
 * actions resolve once they are on disk. A call the disk cannot back throws (or rejects) with
 * `code: "STORAGE_UNAVAILABLE"` and `retryAfter` (seconds), having changed nothing. */
export declare class PoolHost extends EventTarget {
  readonly ready: boolean;
  /** Open, and the folder takes writes; else why not (for `/readyz`). */
  readiness(): { ready: boolean; reason?: "not-ready" | "storage-unavailable"; detail?: string };
  readonly dir: string;
  /** `groups`: tried in order (README "Tiers, pacing and the cooling cap"); null stands for the resources with none. */
  acquire(context: string, options?: { groups?: (string | null)[] }): DisposableLease | null;
  /** `acquire` with no ACQUISITION_REJECTED when it grants nothing (a wait's retry). */
  acquireQuiet(context: string, options?: { groups?: (string | null)[] }): DisposableLease | null;
  /** A lease within `waitMs`, first come first served (see `Pool.acquireWait`), on `timers`. */
  acquireWait(context: string, options: WaitOptions): Promise<DisposableLease | null>;
  /** `acquireWait`s not yet answered. */
  readonly waiting: number;
  /** Report, release and the next lease in one call (see `Pool.finish`); with `next.waitMs`
   * (and `next.signal`) the next lease may be waited for. */
  finish(lease: Lease, outcome: Outcome, options?: { next?: NextStep & { signal?: AbortSignal } }): DisposableLease | null | Promise<DisposableLease | null>;
  acquireResource(kind: Kind, value: string, context: string): DisposableLease | null;
  report(kind: Kind, value: string, context: string, outcome: Outcome): void;
  renew(lease: Lease): DisposableLease | null;
  release(lease: Lease): boolean;
  /** `group` (a name or null) moves a known resource; absent, its group is unchanged;
   * `maxLeases` likewise. */
  /** `note` (each operator action): who and why, added to the events it causes (`actor`,
   * `reason`; CONFIG_CHANGED also gets `changes`). */
  register(kind: Kind, value: string, options?: RegisterOptions, note?: OperatorNote): Promise<boolean>;
  deregister(kind: Kind, value: string, note?: OperatorNote): Promise<boolean>;
  block(kind: Kind, value: string, how: { seconds: number; permanent?: never } | { permanent: true; seconds?: never }, note?: OperatorNote): Promise<void>;
  unblock(kind: Kind, value: string, note?: OperatorNote): Promise<boolean>;
  /** Read and restored on a worker thread, then built here in ~1 ms steps: the pool goes on
   * serving until the swap. Its UTF-8 bytes are taken too (a buffer that is wholly the
   * snapshot's is handed over to that thread, leaving it detached). */
  importSnapshot(snapshot: string | Uint8Array): Promise<void>;
  snapshot(): string;
  /** `group: null` keeps the resources with no group. */
  resources(filter?: { context?: string; state?: State; group?: string | null }): ResourceView[];
  resource(kind: Kind, value: string): ResourceDetail;
  dueForRecoveryProbe(): ProbeDue[];
  nextChangeAt(context: string, options?: { groups?: (string | null)[] }): number | null;
  /** A resilient call: lease, attempt, classify, report, release, retry on another resource
   * within one deadline (README "Resilient calls"). Resolves with what the delivering attempt
   * returned; rejects with a `CallError`. */
  call<T>(context: string, attempt: (attempt: Attempt) => T | Promise<T>, options?: CallOptions): Promise<T>;
  stats(): HostStats;
  config(): Config;
  /** Changes the config in force (see `Pool.setConfig`); resolves to it once it is on disk. */
  setConfig(patch: ConfigPatch, note?: OperatorNote): Promise<Config>;
  /** Per-context health (`GET /api/contexts`). */
  contexts(): ContextsAnswer;
  /** The resource's opaque id: 22 URL-safe characters, stable for this data folder (its
   * `resource-id.key`), revealing nothing of the value. Events this host delivers carry it. */
  resourceId(kind: Kind, value: string): string;
  /** The resource an id names (one the pool holds or held lately), or null. */
  resourceById(id: string): { kind: Kind; value: string } | null;
  /** The same as a promise, searching a large pool a page at a time between other work. */
  resourceLookup(id: string): Promise<{ kind: Kind; value: string } | null>;
  /** The value as events show it: credentials masked (`Pool.maskValue`). */
  maskValue(kind: Kind, value: string): string;
  /** Calls `cb` for events of `type` ("event" for every type); returns a disposer. */
  on(type: EventType | "event", cb: (event: PoolEvent) => void): () => void;
  /** Live events (after replaying the audit log past `after`, when given). */
  events(options?: { signal?: AbortSignal; after?: number; queue?: number }): AsyncIterable<PoolEvent>;
  readEvents(options?: { after?: number; limit?: number }): Promise<{ events: PoolEvent[]; next: number | null }>;
  checkpoint(): Promise<void>;
  metrics(): Promise<string>;
  // The rest of the handler's host contract (host.d.ts).
  now(): number;
  subscribe(listener: (event: PoolEvent) => void): () => void;
  readOutcomes(options?: { after?: number; limit?: number }): Promise<OutcomePage | null> | null;
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  streamCut(): void;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export declare function openPool(options?: OpenPoolOptions): Promise<PoolHost>;

// ----- the recovery prober's HTTP probe ----------------------------------------------------------

/** What a probe is asked to test, holding a real lease on the resource for the probe's duration. */
export interface ProbeRequest {
  kind: Kind;
  /** For a proxy, its URL, credentials included. */
  value: string;
  context: string;
  lease: Lease;
  /** Aborted when the prober stops or loses the lease. */
  signal: AbortSignal;
}

/** Resolves with the outcome to report, or null when this resource cannot be tested in this
 * context (nothing is reported; the cell stays due). */
export type ProbeFn = (probe: ProbeRequest) => Promise<Outcome | null> | Outcome | null;

export interface HttpProbeOptions {
  /** Context → http: or https: URL fetched through the proxy. */
  targets: Record<string, string> | Map<string, string>;
  /** The whole request's deadline (default 10000). */
  timeoutMs?: number;
  /** A success at least this slow is reported as SLOW (default Infinity). */
  slowMs?: number;
  /** Monotonic clock in ms, for latency. */
  now?: () => number;
}

/** A probe for PROXY resources whose value is a proxy URL: fetches the context's target through
 * it on a fresh connection and classifies the answer (403/429/451 → BLOCKED, timeouts → TIMEOUT,
 * TLS errors → TLS_HANDSHAKE, 407/502/socket errors → CONNECTION_RESET; see prober.js). */
export declare function httpProbe(options: HttpProbeOptions): ProbeFn;

/** `scheme://user:pass@host` → `scheme://***@host`: for logging a proxy resource's value. */
export declare function redactCredentials(text: string): string;

/** Errors of the prober and httpProbe; never carry a proxy's credentials. */
export declare class ProbeError extends Error {
  constructor(message: string, code: string, fields?: object);
  code: "INVALID_ARGUMENT" | "PROBE_INCONCLUSIVE" | "PROBE_FAILED" | "ABORTED" | (string & {});
  /** PROBE_INCONCLUSIVE: the status the target answered. */
  status?: number;
}
