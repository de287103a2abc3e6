// Types of resilient calls (lib/call/, README "Resilient calls"): `call`'s attempt and options,
// its errors, the retry and hedge budgets, the bulkhead, and the proxy helpers (`proxyFetch`,
// `credentialCache`, `proxyUrls`). Exported by the `repute` entry (repute.d.ts) and used by the
// hosts' `call` (host.d.ts), so neither of those two imports the other for them.
import type { FailureType, Lease } from "./pool.js";


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
