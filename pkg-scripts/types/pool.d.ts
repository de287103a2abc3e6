// Types of the engine's `Pool` (README "Use it from Node"), shared by both entries of the `repute` package:
// repute.d.ts (Node) and web.d.ts (browsers, edge runtimes) each re-export these and add what
// only their entry exports. Part of the contract: the test suite compiles a usage file against
// them with `tsc --noEmit`, and checks that each entry declares exactly what it exports.

export type Kind = "PROXY" | "ACCOUNT" | "SESSION";
export type FailureType = "BLOCKED" | "TLS_HANDSHAKE" | "CONNECTION_RESET" | "TIMEOUT" | "SLOW";
/** `BLOCKLISTED` is a view: the stored state shows again after unblock. */
export type State = "HEALTHY" | "COOLING" | "RECOVERING" | "BLOCKLISTED";

export type Outcome =
  | { ok: true; latencyMs?: number }
  | { ok: false; failure: FailureType; latencyMs?: number };

/** A group: a non-blank name of at most 64 UTF-8 bytes naming a tier or a place, compared
 * exactly; `null` is "no group". */
export type Group = string | null;

export interface Lease {
  kind: Kind;
  value: string;
  /** The resource's group when the lease was granted or renewed. */
  group: Group;
  context: string;
  /** Fencing token: increases for the life of the pool, across snapshots and restarts. */
  token: number;
  leasedAt: number;
  expiresAt: number;
}

export interface Config {
  coolAfter: number;
  recoverAfter: number;
  successReward: number;
  penalties: Record<FailureType, number>;
  cooldownBaseMs: Record<FailureType, number>;
  /** 0..=21 */
  maxBackoffExponent: number;
  /** finite, in [2^-20, 10^6]: 2^-20 is one unit of the fixed-point selection weights */
  explorationFloor: number;
  leaseTtlMs: number;
  windowSize: number;
  halfOpenCauses: FailureType[];
  maxResources: number;
  maxCells: number;
  eventBufferSize: number;
  /** pacing: integer ms 0..=2^31 a cell waits after its last report before it is leased again; 0 = off */
  minGapMs: number;
  /** per-context minGapMs (at most 4096 contexts; a patch replaces the whole map, never merges it) */
  minGapMsByContext: Record<string, number>;
  /** cooling cap: 1..=100, the percentage of registered resources that may cool in one context; 100 = no cap */
  maxCoolingPercent: number;
}

/** A partial config; nested maps may be partial too (`{penalties: {SLOW: 1}}`). */
export type ConfigPatch = Partial<Omit<Config, "penalties" | "cooldownBaseMs">> & {
  penalties?: Partial<Record<FailureType, number>>;
  cooldownBaseMs?: Partial<Record<FailureType, number>>;
};

export type EventType =
  | "RESOURCE_REGISTERED"
  | "RESOURCE_DEREGISTERED"
  | "RESOURCE_LEASED"
  | "LEASE_RELEASED"
  | "LEASE_EXPIRED"
  | "RESOURCE_COOLED"
  | "RESOURCE_RECOVERED"
  | "RESOURCE_BLOCKLISTED"
  | "RESOURCE_UNBLOCKED"
  | "BLOCK_EXPIRED"
  | "ACQUISITION_REJECTED"
  /** The config in force changed (`setConfig`); carries no resource. */
  | "CONFIG_CHANGED"
  /** A registered resource moved to another group (`register` with `group`). */
  | "RESOURCE_REGROUPED"
  /** The cooling cap kept a cell that would have cooled in rotation (it is `held`). */
  | "COOLDOWN_SUPPRESSED"
  /** A registered resource's `maxLeases` changed (`register` with `maxLeases`). */
  | "RESOURCE_RECONFIGURED";

export interface PoolEvent {
  seq: number;
  type: EventType;
  at: number;
  kind?: Kind;
  /** The value with credentials masked (`Pool.maskValue`): never the value itself. */
  value?: string;
  /** The resource's id, when the host gave `drainEvents` a `resourceId` function (the pool
   * server's events carry it). */
  id?: string;
  context?: string;
  /** Cooldown end, block end, or lease expiry. */
  until?: number;
  permanent?: boolean;
  cause?: FailureType;
  /** Lease events: the fencing token. */
  token?: number;
  /** `RESOURCE_REGISTERED` and `RESOURCE_REGROUPED`: the resource's group (null: none). */
  group?: Group;
  /** `RESOURCE_RECONFIGURED`: the resource's new `maxLeases`. */
  maxLeases?: number;
  /** Added by the hosts (never by the engine) to an operator action's events: the name of the
   * token that made it, and the reason given. */
  actor?: string;
  reason?: string;
  /** Added by the hosts to `CONFIG_CHANGED`: each changed field (nested ones as dotted paths). */
  changes?: Record<string, { from: unknown; to: unknown }>;
  changesTruncated?: true;
}

export interface CellView {
  context: string;
  state: State;
  score: number;
  consecutiveFailures: number;
  consecutiveSuccesses: number;
  cooldownUntil: number | null;
  cooldownCause: FailureType | null;
  updatedAt: number;
  /** While the cell is paced (`minGapMs`): when its pacing ends; else null. */
  pacedUntil: number | null;
  /** Kept in rotation by the cooling cap (`maxCoolingPercent`) until its next success or a real cooldown. */
  held: boolean;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
}

export interface ResourceView {
  kind: Kind;
  value: string;
  group: Group;
  blocked: { until: number } | { permanent: true } | null;
  /** The oldest live lease (`leases[0]`), or null. */
  lease: Lease | null;
  /** How many leases it may hold at once (1..=1024; 1: exclusive). */
  maxLeases: number;
  /** Its live leases, oldest first. */
  leases: Lease[];
  /** `[]` until a report creates a cell. */
  cells: CellView[];
}

/** One remembered outcome: `"OK"` or the failure type, and the latency in ms if reported. */
export type WindowEntry = [outcome: "OK" | FailureType, latencyMs: number | null];

/** One resource in detail (`resource()`): each cell with its window, oldest first. */
export interface ResourceDetail extends Omit<ResourceView, "cells"> {
  cells: (CellView & { window: WindowEntry[] })[];
}

export interface ProbeDue {
  kind: Kind;
  value: string;
  group: Group;
  context: string;
  cooldownUntil: number;
}

export interface Stats {
  registered: number;
  cells: number;
  contexts: number;
  leased: number;
  blocked: number;
  available: number;
  revision: number;
  fencingHighWater: number;
  nextEventSeq: number;
  eventsPending: number;
  eventsDropped: number;
  now: number;
  /** Cells by stored state (a blocked resource's cells keep theirs). */
  cellsByState: { HEALTHY: number; COOLING: number; RECOVERING: number };
}

/** Timers a waiting acquire runs on (default the platform's `setTimeout`/`clearTimeout`). */
export interface WaitTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

export type PoolOptions = {
  config?: ConfigPatch;
  /** Host clock, epoch milliseconds (default `Date.now`). */
  now?: () => number;
  /** Timers of `acquireWait` (tests give virtual ones, stepped with `now`). */
  timers?: WaitTimers;
  /** The most `acquireWait`s at once (default 10000); past it a wait answers as if `waitMs` were 0. */
  maxWaiters?: number;
} & (
  | {
      /** Host random source, [0, 1). Give this or `seed`, not both. */
      random?: () => number;
      seed?: never;
    }
  | {
      /** Seed of the engine's generator (xoshiro256**, deterministic). Without `random` or
       * `seed`, the engine seeds it from `crypto.getRandomValues` when the pool is made. */
      seed?: number;
      random?: never;
    }
);

/** Errors are `Error`s with one of these codes; a failed call changes nothing. */
export type ErrorCode =
  | "INVALID_ARGUMENT"
  | "INVALID_CONFIG"
  | "INVALID_SNAPSHOT"
  | "UNSUPPORTED_SNAPSHOT_VERSION"
  | "CAPACITY_EXCEEDED"
  | "UNKNOWN_RESOURCE"
  /** `finish` of a lease finished already: nothing was reported again. */
  | "LEASE_FINISHED";

/** `Pool.restore`'s options: a pool's, and the least counters the restored pool may have. */
export type RestoreOptions = PoolOptions & {
  /** A host's floor: the restored revision, fencing high-water mark and next event seq are
   * raised to at least these (a host that reserved tokens and seqs past its last checkpoint,
   * or imports a snapshot older than the pool it replaces). Whole numbers ≤ 2^53 − 1. */
  atLeast?: { revision?: number; fencingHighWater?: number; nextEventSeq?: number };
};

/** `register`'s options: a key absent (or undefined) leaves a known resource's setting as is
 * (a new resource: no group, `maxLeases` 1). */
export interface RegisterOptions {
  group?: Group;
  /** How many leases the resource may hold at once, 1..=1024 (1: exclusive). */
  maxLeases?: number;
}

/** `acquireWait`'s options. */
export interface WaitOptions extends GroupsOptions {
  /** How long to wait for a lease, in ms (0: answer at once, as `acquire`). */
  waitMs: number;
  /** Aborting it ends the wait (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** `finish`'s next lease: in `context` (default the finished lease's), from `groups`. */
export interface NextStep extends GroupsOptions {
  context?: string;
  /** Wait this long for it, in ms: given (0 included), `finish` returns a promise. */
  waitMs?: number;
}

/** `acquire`'s and `nextChangeAt`'s options: 1 to 16 distinct groups, tried in order. */
export interface GroupsOptions {
  groups?: Group[];
}

/** `resources()`'s filter: one context's cells, a view state, one group (null: no group); with
 * `after` and/or `limit`, a page: at most `limit` of the resources after `after` (registered or
 * not) in canonical order (kind, then value bytes). */
export interface ResourceFilter {
  context?: string;
  state?: State;
  group?: Group;
  after?: { kind: Kind; value: string };
  limit?: number;
}

export interface ReputeError extends Error {
  code: ErrorCode;
}

export interface PartsRestore {
  /** Before the first part: room for the resources to come (`registeredByKind()` of the pool
   * whose parts these are). A count off the mark costs only room or time. */
  reserve(byKind: Partial<Record<Kind, number>>): void;
  add(registered: Uint8Array, blocklist: Uint8Array, cells: Uint8Array): void;
  /** One bounded piece of the build once every part is in; true when it is complete. */
  step(): boolean;
  raise(atLeast: { revision?: number; fencingHighWater?: number; nextEventSeq?: number }): void;
  /** The head of the snapshot built, counters as raised. */
  head(): string;
  finish(): Pool;
  free(): void;
}

export declare class Pool {
  constructor(options?: PoolOptions);
  static restore(snapshotJson: string, options?: RestoreOptions): Pool;
  /** A restore fed a snapshot's parts and built in steps (a host's import that must not hold
   * its loop): `head` is `snapshotPart()`; each `add` the next resources' parts, in canonical
   * order, as their three sections' UTF-8 bytes (entries comma-separated). `restore` of the
   * joined document's pool. */
  static restoreInParts(head: string, options?: Omit<RestoreOptions, "atLeast">): PartsRestore;
  /** The value as events, errors and a viewer's dashboard show it: credentials masked (the
   * engine's rule; see the README). */
  static maskValue(kind: Kind, value: string): string;
  /** True when newly added. With `group`, sets the resource's group: a known resource whose
   * group differs moves (a `RESOURCE_REGROUPED` event); without it, its group stays. With
   * `maxLeases`, sets how many leases it may hold at once (`RESOURCE_RECONFIGURED` when a
   * known resource's changes; lowering it ends no lease). */
  register(kind: Kind, value: string, options?: RegisterOptions): boolean;
  /** Removes the resource, its cells, its block. */
  deregister(kind: Kind, value: string): boolean;
  /** With `groups`, leases from the first listed group that has a candidate not held by the
   * cooling cap (else the first with any candidate), in list order. */
  acquire(context: string, options?: GroupsOptions): Lease | null;
  /** `acquire` that emits no `ACQUISITION_REJECTED` when it grants nothing: for a host that
   * waits and retries by itself. */
  acquireQuiet(context: string, options?: GroupsOptions): Lease | null;
  /** A lease within `waitMs`, or null: at once when one can be granted, else when a release,
   * an expiry, an unblock, a cooldown or pacing end, a registration or a config change makes
   * one; first come, first served per context and group list. */
  acquireWait(context: string, options: WaitOptions): Promise<Lease | null>;
  /** `acquireWait`s not yet answered. */
  readonly waiting: number;
  /** A worker's step in one call: reports `outcome` on the lease's cell (even when the lease
   * lapsed), releases it, and with `next` leases the next one. LEASE_FINISHED on a second
   * finish of the same lease (nothing is reported twice). With `next.waitMs`, a promise. */
  finish(lease: Lease, outcome: Outcome, options: { next: NextStep & { waitMs: number } }): Promise<Lease | null>;
  finish(lease: Lease, outcome: Outcome, options?: { next?: NextStep & { waitMs?: undefined } }): Lease | null;
  acquireResource(kind: Kind, value: string, context: string): Lease | null;
  report(kind: Kind, value: string, context: string, outcome: Outcome): void;
  renew(lease: Lease): Lease | null;
  release(lease: Lease): boolean;
  block(kind: Kind, value: string, how: { seconds: number; permanent?: never } | { permanent: true; seconds?: never }): void;
  unblock(kind: Kind, value: string): boolean;
  /** Canonical JSON. */
  snapshot(): string;
  /** The snapshot in parts, for a host that stores each resource on its own (the edge
   * worker): with no argument the head — every field before `registered`, as text; with a
   * resource three lines — its `registered` entry, its `blocklist` entry or "", its cells
   * comma-separated — or null when it is not registered. */
  snapshotPart(): string;
  snapshotPart(kind: Kind, value: string): string | null;
  /** Puts back a resource from its part (`snapshotPart(kind, value)` taken before it was
   * deregistered): registration, block and cells with their history, not its leases (they
   * ended). False when that resource is registered. One revision step, RESOURCE_REGISTERED. */
  reinstate(part: string): boolean;
  /** `resourceId(kind, value)`, when given, names each event's resource by the value as
   * registered (the event shows it masked); its answer becomes the event's `id`. */
  drainEvents(options?: { resourceId?: (kind: Kind, value: string) => string }): PoolEvent[];
  resources(filter?: ResourceFilter): ResourceView[];
  /** One resource with its cells' windows; UNKNOWN_RESOURCE when not registered. */
  resource(kind: Kind, value: string): ResourceDetail;
  dueForRecoveryProbe(): ProbeDue[];
  /** With `groups`, for the listed groups only. */
  nextChangeAt(context: string, options?: GroupsOptions): number | null;
  stats(): Stats;
  /** Registered resources of each kind. */
  registeredByKind(): Record<Kind, number>;
  config(): Config;
  /** Applies a partial config over the one in force (INVALID_CONFIG naming the field;
   * CAPACITY_EXCEEDED when a limit is below what the pool holds; nothing changes on an error).
   * True when the config changed: one revision step and a `CONFIG_CHANGED` event. */
  setConfig(patch: ConfigPatch): boolean;
  /** Frees the engine's memory now instead of at garbage collection. */
  free(): void;
}
