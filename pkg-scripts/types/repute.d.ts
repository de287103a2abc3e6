/// <reference lib="esnext.disposable" />
// Types of the `repute` package in Node (README "Use it from Node"): the engine's `Pool` and its types
// (pool.d.ts), plus the Node runtime: `openPool` / `PoolHost`, the recovery prober's `httpProbe`
// and `redactCredentials`. Part of the contract: the test suite compiles a usage file against
// them with `tsc --noEmit`, and checks that node.js exports exactly the values declared here.
export * from "./pool.js";
import type { ContextsAnswer, OperatorNote, OutcomePage } from "./host.js";
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

// ----- resilient calls (lib/call/) ----------------------------------------------------------------

/** How far an attempt got; any other name given to `phase()` or by `classify` is recorded as
 * "other" (phases are metrics labels: their set is closed). */
export type CallPhase = "connect" | "tls" | "send" | "wait" | "receive" | "other";

/** What one attempt of a call is given. */
export interface Attempt {
  /** The resource leased for this attempt (released when it ends). */
  lease: Lease;
  /** Aborts at the attempt's timeout, the call's deadline or the caller's abort. */
  signal: AbortSignal;
  /** 1-based. */
  attemptNumber: number;
  /** The call's deadline on the call's monotonic clock (Infinity: none). */
  deadline: number;
  /** This attempt's timeout: min(attemptTimeoutMs, remaining − reserve). */
  timeoutMs: number;
  /** The call's key, the same on every attempt (send it to the server). */
  idempotencyKey?: string;
  /** Marks how far the attempt got (proxyFetch does it by itself). */
  phase(phase: CallPhase): void;
}

/** How an attempt is judged (lib/outcome/classify.js). */
export interface Verdict {
  /** What the pool is told: a success, a failure type, or nothing (not the resource's fault). */
  report: "ok" | FailureType | null;
  /** The result goes back to the caller as it is. */
  deliver?: boolean;
  /** Another resource may be tried. */
  retryable?: boolean;
  /** The request may have reached the server (a non-idempotent call is then not retried). */
  reached?: boolean;
  phase?: CallPhase;
  reason?: string;
  status?: number;
  code?: string;
  retryAfterMs?: number;
}

export interface CallOptions {
  /** The whole call's deadline (default 30000); the caller's `signal` may end it sooner. */
  deadlineMs?: number;
  signal?: AbortSignal;
  /** One attempt's timeout (default 10000). */
  attemptTimeoutMs?: number;
  /** Retrying is allowed for idempotent or read-only calls, or with an idempotency key. */
  idempotent?: boolean;
  idempotencyKey?: string;
  readOnly?: boolean;
  retry?: {
    /** Attempts in all (default 3). */
    maxAttempts?: number;
    /** Full jitter: a retry waits random × min(maxDelayMs, baseDelayMs × 2^(retry − 1)) (100, 2000). */
    baseDelayMs?: number;
    maxDelayMs?: number;
    /** A longer Retry-After stops the call (default 30000). */
    maxRetryAfterMs?: number;
    /** Time kept back from an attempt for a retry after it (default baseDelayMs). */
    reserveMs?: number;
  };
  /** Hedging, for `readOnly` calls only (refused otherwise: a hedged mutation runs twice): when
   * an attempt has not ended after `delayMs` (default: the context's p95 latency from the
   * pool's windows; no data, no hedge), a second one starts on another resource; the first to
   * deliver wins, the other is cancelled and its outcome not reported. */
  hedge?: true | { delayMs?: number; budget?: HedgeBudget };
  /** Bounds concurrent calls; a call that finds its queue full fails with CAPACITY_EXCEEDED, and
   * time queued counts against the deadline. */
  bulkhead?: Bulkhead;
  /** Groups to lease from, in order (README "Tiers, pacing and the cooling cap"; null: the resources with none): given to
   * every acquire of the call — first attempt, retries, hedges — and to the `nextChangeAt`
   * behind POOL_EXHAUSTED's `retryAfterMs`. */
  groups?: (string | null)[];
  /** Hooks for metrics (host.call: the host's, exposed on its /metrics); a hook that throws is
   * reported to onError and never affects the call. */
  metrics?: CallMetricsHooks;
  /** A 2xx/3xx at least this slow is returned but reported SLOW (default 2000). */
  slowThresholdMs?: number;
  /** The block-page / soft-ban predicate: sees every result first; true → BLOCKED. */
  isBlocked?: (result: unknown) => boolean | Promise<boolean>;
  /** Overrides the classification; undefined → the default table. */
  classify?: (seen: { result?: unknown; error?: unknown; latencyMs: number; phase: CallPhase | null; timedOut: boolean }) =>
    Verdict | undefined | Promise<Verdict | undefined>;
  /** Default: the process-wide `retryBudget`. */
  budget?: RetryBudget;
  /** Monotonic clock, wall clock (for Retry-After dates), timers, RNG: the host's by default. */
  now?: () => number;
  wallNow?: () => number;
  timers?: { setTimeout(callback: () => void, ms: number): unknown; clearTimeout(timer: unknown): void };
  random?: () => number;
  /** Errors of the call's own reports and releases (default: the host's onError). */
  onError?: (error: unknown) => void;
}

export interface CallMetricsHooks {
  /** result: "ok" or the CallError code. */
  call?(context: string, result: string, seconds: number): void;
  /** outcome: what was reported ("ok", a failure type, "none") or "cancelled" (a lost hedge). */
  attempt?(context: string, outcome: string, phase: CallPhase, seconds: number): void;
  retry?(context: string): void;
  hedge?(context: string, result: "won" | "lost" | "refused"): void;
  budgetExhausted?(reason: "budget" | "disabled"): void;
  bulkheadRejected?(): void;
}

export type CallErrorCode =
  | "DEADLINE_EXCEEDED"
  | "POOL_EXHAUSTED"
  | "RETRY_BUDGET_EXHAUSTED"
  | "NOT_RETRYABLE"
  | "ATTEMPTS_EXHAUSTED"
  | "ABORTED"
  | "CAPACITY_EXCEEDED"
  | "CREDENTIAL_UNAVAILABLE"
  | "INVALID_ARGUMENT";

export interface AttemptFailure {
  attempt: number;
  /** As events show it: credentials masked. */
  resource: string | null;
  failure: FailureType | null;
  phase: CallPhase;
  reason: string;
  status?: number;
  code?: string;
}

/** Why a call failed; never carries a credential. */
export declare class CallError extends Error {
  constructor(code: CallErrorCode, message: string, fields?: object);
  code: CallErrorCode;
  /** Trying the whole call again later may succeed. */
  retryable: boolean;
  attempts: number;
  stopReason:
    | "deadline" | "pool-exhausted" | "no-other-resource" | "retry-budget" | "retries-disabled" | "not-retryable"
    | "not-idempotent" | "max-attempts" | "retry-after" | "aborted" | "invalid-argument" | "lease-lost" | (string & {});
  failures: AttemptFailure[];
  /** POOL_EXHAUSTED: when a resource may be eligible again; retry-after: what the server asked. */
  retryAfterMs?: number;
  /** The last answer the call did not return (unread). */
  readonly response?: unknown;
}

/** Retries ≤ ratio × calls + capacity, process-wide; `disable()` is the kill switch (retries
 * and hedges). */
export declare class RetryBudget {
  constructor(options?: { ratio?: number; capacity?: number });
  onCall(): void;
  tryRetry(): boolean;
  /** Gives back the token of a retry that could not start. */
  refund(): void;
  readonly enabled: boolean;
  disable(): void;
  enable(): void;
  stats(): { calls: number; retries: number; refused: number; tokens: number; ratio: number; capacity: number; enabled: boolean };
}

/** The budget every call shares unless given its own. */
export declare const retryBudget: RetryBudget;

/** Each hedge costs round(1 / min(ratio, 0.5)) tokens (default ratio 0.1), each completed
 * hedged call returns one, up to `capacity` (default 100). */
export declare class HedgeBudget {
  constructor(options?: { ratio?: number; capacity?: number });
  tryHedge(): boolean;
  refund(): void;
  onCallDone(): void;
  stats(): { hedges: number; refused: number; tokens: number; cost: number; capacity: number };
}

/** The hedging budget every hedged call shares unless given its own. */
export declare const hedgeBudget: HedgeBudget;

/** At most `maxConcurrent` calls at once, `maxQueue` (default 0) more waiting; the rest fail at once. */
export declare class Bulkhead {
  constructor(options: { maxConcurrent: number; maxQueue?: number });
  /** A permit's release function, once the call may run (see CallOptions.bulkhead). */
  enter(signal: AbortSignal): Promise<() => void>;
  stats(): { active: number; queued: number; rejected: number; maxConcurrent: number; maxQueue: number };
}

export interface ProxyFetchOptions {
  /** Lease → proxy URL (or `{ uri, token }`): for values that are handles (default: the value). */
  resolveProxy?: (lease: Lease) => string | { uri: string; token?: string } | Promise<string | { uri: string; token?: string }>;
  /** A resource's dispatcher unused this long is closed (default 60000); a delivered body left
   * unread this long is then cancelled (reading it later fails with an AbortError). */
  idleMs?: number;
  /** More undici ProxyAgent options (e.g. `requestTls: { ca }`). */
  agent?: object;
  timers?: { setTimeout(callback: () => void, ms: number): unknown; clearTimeout(timer: unknown): void };
}

export interface ProxyFetch {
  /** fetch through the proxy of `attempt.lease` (or of a bare lease): one dispatcher per resource. */
  fetch(attempt: Attempt | Lease, input: string | URL, init?: RequestInit): Promise<Response>;
  /** Dispatchers open (one per resource used lately). */
  readonly size: number;
  close(): Promise<void>;
}

/** A ready fetch through PROXY resources; dispatchers close on RESOURCE_DEREGISTERED or idle. */
export declare function proxyFetch(host: object, options?: ProxyFetchOptions): ProxyFetch;

export interface CredentialCache<T> {
  /** The lease's credential: cached, or from the one load in flight for its key (waits at
   * most until `signal`). */
  get(lease: Lease, options?: { signal?: AbortSignal }): Promise<T>;
  /** Drops the lease's credential (the server refused it). */
  invalidate(lease: Lease): void;
  stats(): { cached: number; inFlight: number; loads: number };
}

/** Credentials for ACCOUNT (or any) resources with single-flight refresh: concurrent callers of
 * one key share one `load`; a credential is reused until `refreshMarginMs` (30000) before its
 * `expiresAt`; a failed load rejects every waiter with CREDENTIAL_UNAVAILABLE, redacted. */
export declare function credentialCache<T>(options: {
  load: (lease: Lease, signal: AbortSignal) => Promise<{ value: T; expiresAt?: number }>;
  key?: (lease: Lease) => string;
  refreshMarginMs?: number;
  now?: () => number;
}): CredentialCache<T>;

/** A lease's proxy URL (password included) by its resource's name: resources are registered by
 * a name ("proxy-de-1"), so the secret never lives in values, events or snapshots. Give exactly
 * one source: `map` (name → URL), `env` (an environment variable holding that map as JSON, read
 * once), or `resolve` (loads one resource's URL; cached until `refreshMarginMs` before its
 * `expiresAt`, one load for concurrent callers). Errors never quote a URL. Fits
 * `proxyFetch(host, { resolveProxy })` and repute/crawlee's `proxyUrl`. */
export declare function proxyUrls(options:
  | { map: Record<string, string> | Map<string, string>; env?: never; resolve?: never }
  | { env: string; environment?: Record<string, string | undefined>; map?: never; resolve?: never }
  | {
      map?: never;
      env?: never;
      resolve: (lease: Lease, signal: AbortSignal) => string | { url: string; expiresAt?: number } | Promise<string | { url: string; expiresAt?: number }>;
      refreshMarginMs?: number;
      now?: () => number;
    }): ProxyUrls;

export interface ProxyUrls {
  (lease: Lease, options?: { signal?: AbortSignal }): Promise<string>;
  /** Drops a resolved URL the proxy refused (a 407): the next lookup loads it again. */
  invalidate(lease: Lease): void;
}
