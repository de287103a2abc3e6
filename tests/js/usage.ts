// A usage file for the package's types (repute.d.ts, web.d.ts — part of the SPEC §9 contract):
// every method and option through the typed API, the Outcome union narrowing, Lease,
// ResourceView, CellView, PoolEvent, Stats, and a partial Config patch with nested partial maps;
// `// @ts-expect-error` lines prove wrong uses are rejected (tsc fails on an unused one).
// Type-checked only, never run:
//   pkg-scripts/node_modules/.bin/tsc -p tests/js/tsconfig.json --noEmit
// `repute` resolves through the package's `exports` (the `node` condition → repute.d.ts). The
// web entry's types are imported by path (pkg-scripts/types/): tsc always adds the `node` condition under
// "nodenext" and the exports map lists `node` first, so customConditions ["browser"] cannot
// reach web.d.ts through the package name.
import { Pool } from "repute";
import type {
  CellView,
  Config,
  ConfigPatch,
  ErrorCode,
  EventType,
  FailureType,
  Group,
  GroupsOptions,
  Kind,
  Lease,
  NextStep,
  Outcome,
  PoolEvent,
  PoolOptions,
  ProbeDue,
  RegisterOptions,
  ReputeError,
  ResourceFilter,
  ResourceDetail,
  ResourceView,
  State,
  Stats,
  WaitOptions,
  WaitTimers,
} from "repute";
import { init, Pool as WebPool } from "../../pkg-scripts/types/web.js";
import type { Lease as WebLease } from "../../pkg-scripts/types/web.js";

// ----- options and config ---------------------------------------------------------------------

const patch: ConfigPatch = {
  coolAfter: 3,
  penalties: { SLOW: 1 }, // nested maps may be partial
  cooldownBaseMs: { BLOCKED: 7_200_000, TIMEOUT: 30_000 },
  halfOpenCauses: ["BLOCKED"],
  leaseTtlMs: 10_000,
};
const options: PoolOptions = { config: patch, now: () => Date.now(), seed: 42 };
const pool: Pool = new Pool(options);
const withRandom = new Pool({ now: () => 1_700_000_000_000, random: Math.random });
const bare = new Pool();
const restored: Pool = Pool.restore(pool.snapshot(), { config: { maxCells: 1_000_000 }, seed: 1 });
const restoredBare: Pool = Pool.restore(pool.snapshot());
const lifted: Pool = Pool.restore(pool.snapshot(), { seed: 1, atLeast: { fencingHighWater: 10, nextEventSeq: 20 } });

const config: Config = pool.config();
const slowPenalty: number = config.penalties.SLOW;
const blockedBase: number = config.cooldownBaseMs.BLOCKED;
const causes: FailureType[] = config.halfOpenCauses;
const fullAsPatch: ConfigPatch = config; // a full config is a valid patch
const changed: boolean = pool.setConfig({ leaseTtlMs: 60_000, penalties: { SLOW: 1 } });
// @ts-expect-error setConfig takes a patch of known keys
pool.setConfig({ coolDown: 3 });

// @ts-expect-error unknown config key
new Pool({ config: { coolDown: 3 } });
// @ts-expect-error unknown failure type in a nested map
new Pool({ config: { penalties: { FOO: 1 } } });
// @ts-expect-error config values are numbers
new Pool({ config: { coolAfter: "3" } });
// @ts-expect-error halfOpenCauses holds failure types
new Pool({ config: { halfOpenCauses: ["FOO"] } });
// @ts-expect-error unknown option
new Pool({ clock: () => 0 });
// @ts-expect-error now is a function
new Pool({ now: 1_700_000_000_000 });
// @ts-expect-error seed is a number
new Pool({ seed: "42" });
// @ts-expect-error restore takes JSON text
Pool.restore({ format: "repute-snapshot" });
// @ts-expect-error atLeast names the counters as stats() does
Pool.restore("{}", { atLeast: { fencing: 3 } });
// @ts-expect-error atLeast is for restore only
new Pool({ atLeast: {} });
// @ts-expect-error a Config has every field (a patch is a ConfigPatch)
const notAConfig: Config = { coolAfter: 2 };

// ----- resources, leases, outcomes ------------------------------------------------------------

const kinds: Kind[] = ["PROXY", "ACCOUNT", "SESSION"];
for (const kind of kinds) {
  const added: boolean = pool.register(kind, `${kind.toLowerCase()}-1`);
  const removed: boolean = pool.deregister(kind, "never-registered");
  void added, removed;
}

// ----- groups (SPEC version 2) ----------------------------------------------------------------

const inTier: boolean = pool.register("PROXY", "dc-1", { group: "dc-us" });
pool.register("PROXY", "dc-1", { group: null }); // moves it out of its group
pool.register("PROXY", "dc-1", {}); // leaves its group as it is
const registerOptions: RegisterOptions = { group: "residential-de" };
pool.register("PROXY", "resi-1", registerOptions);
void inTier;
// @ts-expect-error a group is a string or null
pool.register("PROXY", "x", { group: 5 });
// @ts-expect-error register takes group, not groups
pool.register("PROXY", "x", { groups: ["dc-us"] });
const tiers: GroupsOptions = { groups: ["dc-us", "residential-de", null] };
const tiered: Lease | null = pool.acquire("checkout-us", tiers);
const tieredGroup: Group | undefined = tiered?.group;
const nextInTiers: number | null = pool.nextChangeAt("checkout-us", { groups: ["dc-us"] });
void tieredGroup, nextInTiers;
// @ts-expect-error groups is a list
pool.acquire("checkout-us", { groups: "dc-us" });
// @ts-expect-error a list of names or null
pool.nextChangeAt("checkout-us", { groups: [1] });
const byGroup: ResourceFilter = { group: null, state: "HEALTHY" };
const ungrouped: ResourceView[] = pool.resources(byGroup);
const inDc: ResourceView[] = pool.resources({ group: "dc-us" });
void ungrouped, inDc;

// ----- capacity, waiting, finishing a step (SPEC version 3) -------------------------------------

const gateway: boolean = pool.register("PROXY", "gate.example.net:7000", { maxLeases: 64, group: "gateway" });
void gateway;
// @ts-expect-error maxLeases is a number
pool.register("PROXY", "x", { maxLeases: "64" });
const shared: ResourceView | undefined = pool.resources()[0];
const capacity: number | undefined = shared?.maxLeases;
const live: Lease[] | undefined = shared?.leases;
void capacity, live;
const waitOptions: WaitOptions = { waitMs: 5_000, groups: ["gateway"], signal: AbortSignal.timeout(10_000) };
const waited: Promise<Lease | null> = pool.acquireWait("checkout-us", waitOptions);
void waited;
// @ts-expect-error waitMs is required
pool.acquireWait("checkout-us", {});
const waitingNow: number = pool.waiting;
const quietly: Lease | null = pool.acquireQuiet("checkout-us");
void waitingNow, quietly;
if (quietly !== null) {
  const stepped: Lease | null = pool.finish(quietly, { ok: true, latencyMs: 120 }, { next: {} });
  const done: Lease | null = pool.finish(quietly, { ok: false, failure: "BLOCKED" });
  const nextStep: NextStep = { context: "search-eu", waitMs: 2_000 };
  const later: Promise<Lease | null> = pool.finish(quietly, { ok: true }, { next: nextStep as NextStep & { waitMs: number } });
  void stepped, done, later;
  // @ts-expect-error with next.waitMs the answer is a promise
  const notAPromise: Lease | null = pool.finish(quietly, { ok: true }, { next: { waitMs: 100 } });
  void notAPromise;
}
const finished: ErrorCode = "LEASE_FINISHED";
const reconfigured: EventType = "RESOURCE_RECONFIGURED";
const virtual: WaitTimers = { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (t) => clearTimeout(t as number) };
const onVirtualTime = new Pool({ seed: 1, timers: virtual, maxWaiters: 100 });
void finished, reconfigured, onVirtualTime;

const lease: Lease | null = pool.acquire("checkout-us");
if (lease !== null) {
  const kind: Kind = lease.kind;
  const value: string = lease.value;
  const context: string = lease.context;
  const token: number = lease.token;
  const leasedAt: number = lease.leasedAt;
  const expiresAt: number = lease.expiresAt;
  const group: string | null = lease.group;
  void kind, value, context, token, leasedAt, expiresAt, group;

  const renewed: Lease | null = pool.renew(lease);
  const copy: Lease = JSON.parse(JSON.stringify(lease)) as Lease;
  const released: boolean = pool.release(renewed ?? copy);
  void released;

  // @ts-expect-error a lease's kind is a Kind
  pool.release({ ...lease, kind: "FOO" });
  // @ts-expect-error a lease's token is a number
  pool.renew({ ...lease, token: "1" });
  // @ts-expect-error a lease has all its fields
  pool.release({ kind: lease.kind, value: lease.value, context: lease.context, token: lease.token });
  // @ts-expect-error a lease's group is a string or null
  pool.release({ ...lease, group: 1 });
}
// @ts-expect-error acquire may return null: a Lease must be checked first
const unchecked: Lease = pool.acquire("checkout-us");

const probe: Lease | null = pool.acquireResource("PROXY", "proxy-1", "checkout-us");
void probe;

const outcomes: Outcome[] = [
  { ok: true },
  { ok: true, latencyMs: 120 },
  { ok: false, failure: "BLOCKED" },
  { ok: false, failure: "TIMEOUT", latencyMs: 30_000 },
];
for (const outcome of outcomes) {
  pool.report("PROXY", "proxy-1", "checkout-us", outcome);
  if (outcome.ok) {
    const latency: number | undefined = outcome.latencyMs;
    // @ts-expect-error a success has no failure
    outcome.failure;
    void latency;
  } else {
    const failure: FailureType = outcome.failure; // narrowed by `ok`
    void failure;
  }
}
const nothing: void = pool.report("SESSION", "session-1", "search-eu", { ok: true });
void nothing;

// @ts-expect-error unknown kind
pool.register("FOO", "x");
// @ts-expect-error kinds are upper case
pool.register("proxy", "x");
// @ts-expect-error a failure outcome needs its failure type
pool.report("PROXY", "proxy-1", "checkout-us", { ok: false });
// @ts-expect-error unknown failure type
pool.report("PROXY", "proxy-1", "checkout-us", { ok: false, failure: "REFUSED" });
// @ts-expect-error a success has no failure
pool.report("PROXY", "proxy-1", "checkout-us", { ok: true, failure: "SLOW" });
// @ts-expect-error ok is a boolean
pool.report("PROXY", "proxy-1", "checkout-us", { ok: 1 });
// @ts-expect-error latency is a number
pool.report("PROXY", "proxy-1", "checkout-us", { ok: true, latencyMs: "5" });
// @ts-expect-error an outcome is required
pool.report("PROXY", "proxy-1", "checkout-us");
// @ts-expect-error a context is a string
pool.acquire(42);
// @ts-expect-error a context is required
pool.acquire();
// @ts-expect-error acquireResource names the resource and the context
pool.acquireResource("PROXY", "proxy-1");

// ----- blocking -------------------------------------------------------------------------------

pool.block("PROXY", "proxy-1", { seconds: 90.5 });
pool.block("ACCOUNT", "account-1", { permanent: true });
const unblocked: boolean = pool.unblock("PROXY", "proxy-1");
void unblocked;
// @ts-expect-error block needs seconds or permanent
pool.block("PROXY", "proxy-1", {});
// @ts-expect-error permanent is literally true
pool.block("PROXY", "proxy-1", { permanent: false });
// @ts-expect-error seconds is a number
pool.block("PROXY", "proxy-1", { seconds: "60" });
// @ts-expect-error a block spec is required
pool.block("PROXY", "proxy-1");
// @ts-expect-error seconds and permanent exclude each other
pool.block("PROXY", "proxy-1", { seconds: 1, permanent: true });
// @ts-expect-error a seeded pool takes no random function
new Pool({ seed: 1, random: Math.random });

// ----- views ----------------------------------------------------------------------------------

const views: ResourceView[] = pool.resources();
const filtered: ResourceView[] = pool.resources({ context: "checkout-us", state: "COOLING" });
void filtered;
for (const view of [...views, ...pool.resources({ state: "BLOCKLISTED" })]) {
  const k: Kind = view.kind;
  const v: string = view.value;
  const g: string | null = view.group;
  const held: Lease | null = view.lease;
  const blocked = view.blocked;
  let blockedUntil: number | "permanent" | "no" = "no";
  if (blocked !== null) blockedUntil = "until" in blocked ? blocked.until : "permanent";
  const cells: CellView[] = view.cells;
  for (const cell of cells) {
    const context: string = cell.context;
    const state: State = cell.state;
    const score: number = cell.score;
    const failures: number = cell.consecutiveFailures;
    const successes: number = cell.consecutiveSuccesses;
    const until: number | null = cell.cooldownUntil;
    const cause: FailureType | null = cell.cooldownCause;
    const updatedAt: number = cell.updatedAt;
    const p50: number | null = cell.p50LatencyMs;
    const p95: number | null = cell.p95LatencyMs;
    const pacedUntil: number | null = cell.pacedUntil;
    const isHeld: boolean = cell.held;
    void context, state, score, failures, successes, until, cause, updatedAt, p50, p95, pacedUntil, isHeld;
    // @ts-expect-error a cell's cooldown may be null
    const sure: number = cell.cooldownUntil;
  }
  void k, v, g, held, blockedUntil;
}
const detail: ResourceDetail = pool.resource("PROXY", "proxy-1");
for (const cell of detail.cells) {
  for (const [outcome, latency] of cell.window) {
    const o: "OK" | FailureType = outcome;
    const ms: number | null = latency;
    void o, ms;
  }
  const p50: number | null = cell.p50LatencyMs;
  void p50;
}
// @ts-expect-error unknown state
pool.resources({ state: "DEAD" });
// @ts-expect-error unknown filter
pool.resources({ kind: "PROXY" });

const due: ProbeDue[] = pool.dueForRecoveryProbe();
for (const d of due) {
  const target: Lease | null = pool.acquireResource(d.kind, d.value, d.context);
  const until: number = d.cooldownUntil;
  const dueGroup: string | null = d.group;
  void target, until, dueGroup;
}

const next: number | null = pool.nextChangeAt("checkout-us");
// @ts-expect-error nextChangeAt may be null
const nextSure: number = pool.nextChangeAt("checkout-us");

const stats: Stats = pool.stats();
const counters: number[] = [
  stats.registered,
  stats.cells,
  stats.contexts,
  stats.leased,
  stats.blocked,
  stats.available,
  stats.revision,
  stats.fencingHighWater,
  stats.nextEventSeq,
  stats.eventsPending,
  stats.eventsDropped,
  stats.now,
];

const snapshot: string = pool.snapshot();

// ----- events ---------------------------------------------------------------------------------

const shown: string = Pool.maskValue("PROXY", "proxy-1.example.net:8080:user:pass");
const withIds: PoolEvent[] = pool.drainEvents({ resourceId: (k: Kind, v: string) => `${k}:${v.length}` });
const id: string | undefined = withIds[0]?.id;
void shown;
void id;
// @ts-expect-error a resourceId function returns a string
pool.drainEvents({ resourceId: () => 1 });
const events: PoolEvent[] = pool.drainEvents();
for (const e of events) {
  const seq: number = e.seq;
  const type: EventType = e.type;
  const at: number = e.at;
  const kind: Kind | undefined = e.kind;
  const value: string | undefined = e.value;
  const context: string | undefined = e.context;
  const until: number | undefined = e.until;
  const permanent: boolean | undefined = e.permanent;
  const cause: FailureType | undefined = e.cause;
  const token: number | undefined = e.token;
  const eventGroup: string | null | undefined = e.group;
  void eventGroup;
  switch (e.type) {
    case "RESOURCE_REGROUPED":
    case "COOLDOWN_SUPPRESSED":
    case "RESOURCE_COOLED":
    case "RESOURCE_BLOCKLISTED":
    case "ACQUISITION_REJECTED":
    case "CONFIG_CHANGED":
      break;
    // @ts-expect-error not an event type
    case "RESOURCE_EXPLODED":
      break;
  }
  void seq, type, at, kind, value, context, until, permanent, cause, token;
}

// ----- errors ---------------------------------------------------------------------------------

try {
  pool.register("PROXY", " ");
} catch (e) {
  const err = e as ReputeError;
  const code: ErrorCode = err.code;
  const message: string = err.message;
  const isError: Error = err;
  if (code === "INVALID_ARGUMENT" || code === "UNKNOWN_RESOURCE" || code === "CAPACITY_EXCEEDED") void message;
  // @ts-expect-error not an error code
  const bogus: ErrorCode = "NOT_FOUND";
  void isError, bogus;
}

pool.free();

// ----- the web entry --------------------------------------------------------------------------

async function edge(wasm: WebAssembly.Module, bytes: Uint8Array): Promise<WebLease | null> {
  const ready: Promise<void> = init(wasm);
  await ready;
  await init(bytes);
  await init(new URL("https://example.test/repute_bg.wasm"));
  await init("/repute_bg.wasm");
  await init();
  // @ts-expect-error init does not take null (note: `init(42)` type-checks, because lib.dom's
  // WebAssembly.Module is an empty interface that any non-null value satisfies)
  await init(null);
  const p = new WebPool({ seed: 1, now: () => Date.now() });
  p.register("SESSION", "s");
  const sameClass: Pool = p; // one Pool type for both entries
  void sameClass;
  return p.acquire("edge-eu");
}

void [withRandom, bare, restored, restoredBare, lifted, slowPenalty, blockedBase, causes, fullAsPatch, changed];
void [notAConfig, unchecked, next, nextSure, counters, snapshot, edge];

// ----- Node runtime: openPool and the server ----------------------------------------------------

import { openPool, type PoolHost, type DisposableLease, type HostStats, type HostTimers } from "repute";
import type { serve, Host } from "../../pkg-scripts/types/server.js";
import type { createHandler, MemoryHost } from "../../pkg-scripts/types/handler.js";

export async function hostUsage(): Promise<void> {
  const host: PoolHost = await openPool({ dir: "./data", checkpointMs: 30_000, handleSignals: false, reserveStep: 65_536, storageRetryMs: 1_000 });
  const added: boolean = await host.register("PROXY", "proxy-9");
  void added;
  // Groups (SPEC §3): register into one, move, acquire from a list in order, filter by one.
  await host.register("PROXY", "proxy-9", { group: "dc-us" });
  await host.register("PROXY", "proxy-9", { group: null });
  const tiered: DisposableLease | null = host.acquire("checkout-us", { groups: ["dc-us", null] });
  void tiered?.group;
  void host.nextChangeAt("checkout-us", { groups: ["dc-us"] }), host.resources({ group: null });
  // @ts-expect-error groups is a list
  host.acquire("checkout-us", { groups: "dc-us" });
  let virtual = 0;
  const timers: HostTimers = { monotonicMs: () => virtual, setTimeout, clearTimeout, setInterval, clearInterval };
  const stepped: PoolHost = await openPool({ dir: "./data-2", timers });
  virtual += 1;
  void stepped;
  const r = host.readiness();
  if (!r.ready) void (r.reason === "storage-unavailable" && r.detail);
  await host.block("PROXY", "proxy-9", { seconds: 60 });
  const lease: DisposableLease | null = host.acquire("checkout-us");
  if (lease) {
    host.report(lease.kind, lease.value, lease.context, { ok: true, latencyMs: 80 });
    lease[Symbol.dispose]();
  }
  const off: () => void = host.on("RESOURCE_COOLED", (e: PoolEvent) => void e.cause);
  off();
  for await (const e of host.events({ signal: AbortSignal.timeout(10) })) void e.seq;
  const inForce: Config = await host.setConfig({ leaseTtlMs: 60_000 });
  void inForce, host.resource("PROXY", "proxy-9").cells;
  const s: HostStats = host.stats();
  void s.auditDropped;
  const page = await host.readEvents({ after: 0, limit: 10 });
  void page.next;
  const id: string = host.resourceId("PROXY", "proxy-9");
  const named: { kind: Kind; value: string } | null = host.resourceById(id);
  const masked: string = host.maskValue("ACCOUNT", "carol:hunter2");
  void named;
  void masked;
  // The Node host and the memory host both serve the handler's contract.
  const served: Host = host;
  const memory = null as unknown as MemoryHost;
  const inMemory: Host = memory;
  void served, inMemory;
  // The memory host has what every host core has: a named lease and resilient calls.
  const trial: Lease | null = memory.acquireResource("PROXY", "proxy-9", "probe");
  const body: string = await memory.call("shop.example", async (a) => `${a.lease.value}`);
  void trial, body;
  // Who and why (operator-note.js), and per-site health (GET /api/contexts).
  await host.block("PROXY", "proxy-9", { seconds: 60 }, { actor: "alice", reason: "banned on shop" });
  const health = host.contexts();
  const rate: number | null = health.contexts.map((c) => c.successRate)[0] ?? null;
  const failing: number = health.contexts.reduce((n, c) => n + c.failing, 0);
  void rate, failing;
  // @ts-expect-error operator actions are asynchronous
  const sync: boolean = host.unblock("PROXY", "proxy-9");
  void sync;
  await host.close();
}

export type Server = typeof serve;
export type Handler = typeof createHandler;

/** The server's bounds on waiting (SPEC §3, waiting) and the handler's close(). */
export async function waitingServerUsage(host: Host, run: typeof serve, make: typeof createHandler): Promise<void> {
  const server = await run(host, { port: 0, maxWaitMs: 10_000, maxWaiting: 100 });
  await server.close();
  const handle = await make(host, { maxWaitMs: 5_000, maxWaiting: 10 });
  handle.close();
}

// ----- the recovery prober's HTTP probe and credential masking ---------------------------------

import { httpProbe, redactCredentials, ProbeError, type ProbeFn, type ProbeRequest } from "repute";

export async function proberUsage(): Promise<void> {
  const probe: ProbeFn = httpProbe({ targets: { "checkout-us": "https://shop.example/health" }, timeoutMs: 5_000, slowMs: 2_000 });
  const fromMap: ProbeFn = httpProbe({ targets: new Map([["search-eu", "http://search.example/"]]) });
  void fromMap;
  const host = await openPool({ prober: { probes: { PROXY: probe }, intervalMs: 5_000, onError: (e, entry) => void [e, entry?.context] } });
  await host.close();
  const masked: string = redactCredentials("http://user:pass@proxy-1.example.net:8080");
  void masked;
  const custom: ProbeFn = async ({ lease, signal }: ProbeRequest) => (signal.aborted ? null : { ok: true, latencyMs: lease.token });
  void custom;
  try {
    await probe({ kind: "PROXY", value: "http://proxy:8080", context: "checkout-us", lease: {} as Lease, signal: AbortSignal.timeout(1) });
  } catch (e) {
    if (e instanceof ProbeError && e.code === "PROBE_INCONCLUSIVE") void e.status;
  }
  // @ts-expect-error targets is required
  httpProbe({});
  // @ts-expect-error redactCredentials takes a string
  redactCredentials(42);
}

// ----- resilient calls -----------------------------------------------------------------------------

import { Bulkhead, CallError, credentialCache, HedgeBudget, RetryBudget, hedgeBudget, retryBudget, proxyFetch, type Attempt, type CallOptions, type Verdict } from "repute";

export async function callUsage(): Promise<void> {
  const host = await openPool({ handleSignals: false });
  const proxies = proxyFetch(host, { idleMs: 30_000, resolveProxy: (lease) => ({ uri: `http://${lease.value}:8080`, token: "Basic eDp5" }) });
  const options: CallOptions = {
    deadlineMs: 10_000,
    attemptTimeoutMs: 3_000,
    readOnly: true,
    retry: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 2_000, maxRetryAfterMs: 30_000 },
    isBlocked: async (r) => r instanceof Response && r.headers.get("cf-mitigated") === "challenge",
    budget: new RetryBudget({ ratio: 0.1, capacity: 10 }),
  };
  try {
    const text: string = await host.call("shop", async (a: Attempt) => {
      const res = await proxies.fetch(a, "https://shop.example/");
      return res.text();
    }, options);
    void text;
    const status: number = await host.call("shop", ({ lease, signal, idempotencyKey }) => proxies.fetch(lease, "https://shop.example/order", { method: "POST", signal, headers: { "x-key": idempotencyKey ?? "" } }).then((r) => r.status), { idempotencyKey: "order-1" });
    void status;
  } catch (e) {
    if (e instanceof CallError && e.code === "POOL_EXHAUSTED") void [e.retryAfterMs, e.attempts, e.stopReason, e.failures[0]?.phase];
  }
  await host.call("shop", () => 1, { readOnly: true, hedge: { delayMs: 150, budget: new HedgeBudget({ ratio: 0.1, capacity: 100 }) } });
  await host.call("shop", () => 1, { readOnly: true, hedge: true });
  const tokens = credentialCache({ load: async (lease) => ({ value: `token for ${lease.value}`, expiresAt: Date.now() + 3_600_000 }), key: () => "tenant", refreshMarginMs: 60_000 });
  const token: string = await host.call("shop", ({ lease, signal }) => tokens.get(lease, { signal }), { readOnly: true });
  void token;
  // @ts-expect-error load is required
  credentialCache({});
  const bulkhead = new Bulkhead({ maxConcurrent: 50, maxQueue: 5 });
  await host.call("shop", () => 1, { bulkhead });
  void bulkhead.stats().rejected;
  await host.call("shop", () => 1, { groups: ["dc-us", "residential-us", null] });
  // @ts-expect-error groups holds names or null
  await host.call("shop", () => 1, { groups: [1] });
  // @ts-expect-error maxConcurrent is required
  new Bulkhead({});
  void hedgeBudget.stats().cost;
  // @ts-expect-error hedge is true or options
  await host.call("shop", () => 1, { readOnly: true, hedge: 150 });
  const verdict: Verdict = { report: "BLOCKED", retryable: true };
  await host.call("shop", () => 1, { classify: ({ result }) => (result === 1 ? verdict : undefined) });
  retryBudget.disable();
  retryBudget.enable();
  void retryBudget.stats().tokens;
  // @ts-expect-error the report must be a failure type, "ok" or null
  const wrong: Verdict = { report: "FINE" };
  void wrong;
  // @ts-expect-error retry options are named
  await host.call("shop", () => 1, { retry: { attempts: 3 } });
  await proxies.close();
  await host.close();
}

// ----- proxy URLs by name, and repute/crawlee ------------------------------------------------------

import { proxyUrls } from "repute";
import { BLOCKED_STATUS_CODES, ReputeProxyConfiguration, RequestBlockedError, type CrawleePool } from "repute/crawlee";
import type { ProxyInfo, Request as CrawleeRequest } from "@crawlee/core";

export async function crawleeUsage(request: CrawleeRequest): Promise<void> {
  const fromEnv = proxyUrls({ env: "REPUTE_PROXY_URLS" });
  const fromMap = proxyUrls({ map: { "proxy-de-1": "http://user:pass@127.0.0.1:8080" } });
  const fromVault = proxyUrls({ resolve: async (lease) => ({ url: `http://u:p@${lease.value}:8080`, expiresAt: Date.now() + 60_000 }), refreshMarginMs: 5_000 });
  const url: string = await fromMap({ kind: "PROXY", value: "proxy-de-1", group: null, context: "c", token: 1, leasedAt: 0, expiresAt: 1 });
  void url;
  fromVault.invalidate({ kind: "PROXY", value: "proxy-de-1", group: null, context: "c", token: 1, leasedAt: 0, expiresAt: 1 });
  // @ts-expect-error one source at a time: map, env or resolve
  proxyUrls({ map: {}, env: "X" });
  const host = await openPool({ handleSignals: false });
  proxyFetch(host, { resolveProxy: fromEnv });
  const embedded = new Pool();
  for (const pool of [host, embedded] satisfies CrawleePool[]) {
    const proxies = new ReputeProxyConfiguration({
      pool,
      proxyUrl: fromEnv,
      groups: (r) => (r.url.includes("checkout") ? ["dc-de", "residential-de"] : undefined),
      context: (r) => new URL(r.url).hostname,
      isBlocked: async (ctx) => ctx.$("title").text().includes("captcha"),
      blockedStatusCodes: [...BLOCKED_STATUS_CODES, 503],
      slowThresholdMs: 5_000,
      maxHoldMs: 120_000,
      maxWaitMs: 5_000,
      onError: (e) => void e,
    });
    const info: ProxyInfo | undefined = await proxies.newProxyInfo("session-1", { request });
    void info?.url;
    const options = proxies.crawlerOptions({ maxConcurrency: 10 });
    const n: number = options.maxConcurrency;
    void [n, proxies.held];
    await proxies.close();
  }
  // @ts-expect-error a pool is required
  new ReputeProxyConfiguration({});
  // @ts-expect-error groups are names or null
  new ReputeProxyConfiguration({ pool: embedded, groups: [1] });
  const blocked = new Error() as unknown;
  if (blocked instanceof RequestBlockedError) void [blocked.code, blocked.status, blocked.resource, blocked.context];
  await host.close();
}

// ----- the pool client (repute/client) -----------------------------------------------------------

import { connectPool, PoolClient, PoolClientError, CLIENT_CODES, type AcquireAnswer, type RemoteLease, type PoolClientErrorCode } from "repute/client";

export async function clientUsage(): Promise<void> {
  const client: PoolClient = connectPool({ url: "http://127.0.0.1:8787", token: "worker-token", timeoutMs: 5_000, retries: 2, signal: AbortSignal.timeout(60_000) });
  const created: boolean = await client.register("PROXY", "http://127.0.0.1:3128", { group: "dc" });
  void created;
  const lease: RemoteLease | null = await client.acquire("shop", { groups: ["dc", null] });
  if (lease !== null) {
    const id: string = lease.leaseId;
    void id;
    const renewed: RemoteLease | null = await client.renew(lease);
    void renewed;
    await client.report(lease.kind, lease.value, lease.context, { ok: false, failure: "BLOCKED" });
    const released: boolean = await client.release(lease);
    void released;
    await lease[Symbol.asyncDispose]();
  }
  // Capacity, waiting and finishing a step (SPEC §3, version 3).
  await client.register("PROXY", "http://gateway:8000", { group: "dc", maxLeases: 50 });
  const waited: RemoteLease | null = await client.acquireWait("shop", { groups: ["dc"], waitMs: 5_000, signal: AbortSignal.timeout(10_000) });
  if (waited !== null) {
    const next: RemoteLease | null = await client.finish(waited, { ok: true, latencyMs: 120 }, { next: { waitMs: 5_000 } });
    if (next !== null) void (await client.finish(next, { ok: false, failure: "TIMEOUT" }, { next: { context: "news", groups: ["dc", null], signal: AbortSignal.timeout(1_000) } }));
    void (await client.finish(waited, { ok: true }));
  }
  void (await client.tryAcquire("shop", { waitMs: 1_000 })).retryAfterMs;
  const finishedCode: PoolClientErrorCode = "LEASE_FINISHED";
  void finishedCode;
  const answer: AcquireAnswer = await client.tryAcquire("shop");
  if (answer.lease === null) {
    const wait: number | null = answer.retryAfterMs;
    void wait;
  } else void answer.lease.token;
  await client.block("PROXY", "p1", { seconds: 60 });
  await client.block("PROXY", "p1", { permanent: true });
  const unblocked: boolean = await client.unblock("PROXY", "p1");
  const removed: boolean = await client.deregister("PROXY", "p1");
  void [unblocked, removed];
  const views = await client.resources({ context: "shop", state: "COOLING", group: null });
  void views[0]?.id;
  void (await client.resource("PROXY", "p1")).cells[0]?.window;
  const page = await client.readEvents({ after: 0, limit: 100 });
  void page.next;
  for await (const event of client.events({ after: 0, signal: AbortSignal.timeout(1_000), idleMs: 45_000, reconnectForMs: 30_000 })) void event.seq;
  void (await client.stats()).leased;
  void (await client.config()).leaseTtlMs;
  void (await client.setConfig({ penalties: { SLOW: 1 } })).penalties.SLOW;
  const snapshot: string = await client.snapshot();
  await client.importSnapshot(snapshot);
  void (await client.readiness()).ready;
  const masked: string = client.maskValue("PROXY", "http://u:p@h:1");
  void masked;
  const status: number = await client.call("shop", async ({ lease, signal }) => {
    void lease.leaseId;
    return signal.aborted ? 0 : 200;
  }, { readOnly: true, deadlineMs: 10_000, groups: ["dc"] });
  void status;
  try {
    await client.acquire("shop");
  } catch (e) {
    if (e instanceof PoolClientError) {
      const code: PoolClientErrorCode = e.code;
      void [code, e.retryable, e.status, e.type, e.retryAfterMs, e.reached, e.attempts, CLIENT_CODES.length];
    }
  }
  // @ts-expect-error url is required
  connectPool({ token: "t" });
  // @ts-expect-error block takes seconds or permanent, not both
  await client.block("PROXY", "p1", { seconds: 1, permanent: true });
  // @ts-expect-error renew takes a lease from the server (with its leaseId)
  await client.renew({ kind: "PROXY", value: "p1", group: null, context: "shop", token: 1, leasedAt: 0, expiresAt: 0 });
  await client.close();
}

// ----- the web entry declares the engine, not the Node runtime ---------------------------------

// @ts-expect-error openPool is Node-only
import { openPool as webOpenPool } from "../../pkg-scripts/types/web.js";
void webOpenPool;
