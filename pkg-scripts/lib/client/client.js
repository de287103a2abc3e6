// `repute/client`: `connectPool({ url, token })` — a pool served by `repute serve` (or the edge
// worker) used from another process as the embedded `Pool` is used in this one: the same
// methods, async, over the HTTP API (SPEC §8), failing with the same error `code`s (the
// server's problem types mapped back: errors.js), plus the network's own. A lease carries the
// server's opaque `leaseId`, which renew and release send back; nothing else about it changes.
// "Nothing available" is not an error, as in the embedded pool: `acquire` resolves to null, and
// `tryAcquire` gives the server's `Retry-After` with it as `retryAfterMs`; `acquireWait` waits on
// the server (`waitMs`, the HTTP request held open; its `signal` closes it). `finish` is a step's
// end in one request: report, release, and the next lease (SPEC §3). `call` is the
// resilient-call layer (lib/call/call.js) over this client, the same code `host.call` runs over
// an embedded pool. Owns the mapping of methods to routes and answers; the requests, retries
// and time limits are transport.js's, the event stream events.js's.

import { loadPool } from "../engine/engine-load.js";
import { call } from "../call/call.js";
import { invalidArgument } from "./errors.js";
import { Transport } from "./transport.js";
import { eventStream } from "./events.js";

export { PoolClientError, CLIENT_CODES } from "./errors.js";

/** A path segment: percent-encoded, and never a dot segment a URL parser would fold away. */
const seg = (s) => (s === "." || s === ".." ? s.replaceAll(".", "%2E") : encodeURIComponent(String(s)));

/** The id of a resource named by `{ id }` (the server's resource id, as `resources()`,
 * `register`'s server answer and events give it; a view itself will do), checked; null when it
 * is named by kind and value. */
function idOf(ref) {
  if (ref === null || typeof ref !== "object") return null;
  if (typeof ref.id !== "string" || !/^[A-Za-z0-9_-]{22}$/.test(ref.id)) {
    throw invalidArgument("name a resource by { id } (the server's resource id: 22 URL-safe characters) or by kind and value");
  }
  return ref.id;
}

/** A lease as the server gave it, with `release` on `await using` (Symbol.asyncDispose). */
function leaseOf(client, json) {
  const lease = { ...json };
  if (Symbol.asyncDispose) Object.defineProperty(lease, Symbol.asyncDispose, { value: () => client.release(lease), enumerable: false });
  return lease;
}

/** An options argument as the embedded pool takes it (lib/pool.js): absent, or a plain object
 * (`{}` or `Object.create(null)`, in any realm) holding no key but `keys`. A mistyped key is
 * refused, never dropped on the way to the server (an acquire would then lease from the whole
 * pool). Returns the object (`{}` when absent). */
function optionsOf(options, keys, what = "options") {
  if (options === undefined) return {};
  const proto = options !== null && typeof options === "object" && !Array.isArray(options) ? Object.getPrototypeOf(options) : undefined;
  if (proto === undefined || (proto !== null && Object.getPrototypeOf(proto) !== null)) throw invalidArgument(`${what} must be a plain object`);
  const label = what === "options" ? "option" : what === "filter" ? "filter" : `${what} field`;
  for (const k in options) if (!keys.includes(k)) throw invalidArgument(`unknown ${label} ${k} (it takes ${keys.join(", ")})`);
  return options;
}

/** A group in options: absent, a name (the server checks its rules) or null. */
function groupOf(g, name) {
  if (g !== undefined && g !== null && typeof g !== "string") throw invalidArgument(`${name} must be a string or null`);
  return g;
}

/** `waitMs`: an integer of ms, at least 0 (the server refuses more than its own limit). */
function waitMsOf(v, name = "waitMs") {
  if (!Number.isSafeInteger(v) || v < 0) throw invalidArgument(`${name} must be an integer >= 0 (milliseconds)`);
  return v;
}

function signalOf(v, name = "signal") {
  if (v !== undefined && !(v instanceof AbortSignal)) throw invalidArgument(`${name} must be an AbortSignal`);
  return v;
}

function leaseIdOf(lease) {
  if (!lease || typeof lease.leaseId !== "string" || lease.leaseId === "") throw invalidArgument("the lease has no leaseId: pass a lease this client's acquire or renew gave");
  return seg(lease.leaseId);
}

/**
 * Connects to a pool server. No request is made until the first call.
 * @param {object} options url (the server's base URL; a path prefix such as an edge region's is
 *   kept), token (bearer token), signal (aborts every call, for good), timeoutMs (10 s per
 *   operation, retries included), retries (2, on connection errors only), retryDelayMs (50),
 *   dispatcher (an undici Dispatcher instead of the client's own keep-alive Agent)
 */
export function connectPool(options = {}) {
  if (options === null || typeof options !== "object") throw invalidArgument("connectPool takes an options object");
  const known = new Set(["url", "token", "signal", "timeoutMs", "retries", "retryDelayMs", "dispatcher"]);
  // Unknown options are refused by name only: a mistyped key may hold a secret.
  for (const k of Object.keys(options)) if (!known.has(k)) throw invalidArgument(`unknown option (the options are ${[...known].join(", ")})`);
  if (options.url === undefined) throw invalidArgument("url is required");
  return new PoolClient(new Transport(options));
}

export class PoolClient {
  #t;

  constructor(transport) {
    this.#t = transport;
  }

  /** The server's base URL (it never carries credentials). */
  get url() {
    return this.#t.base.shown;
  }

  /** Registers a resource (idempotent); `group` (a name or null) moves a known one, `maxLeases`
   * (1–1024) sets its capacity (left out: a known one keeps its own). True when it is new. */
  async register(kind, value, options) {
    const body = { kind, value };
    const o = optionsOf(options, ["group", "maxLeases"]);
    const group = groupOf(o.group, "group");
    if (group !== undefined) body.group = group;
    if (o.maxLeases !== undefined) body.maxLeases = o.maxLeases; // the server checks it (400 naming it)
    const r = await this.#t.request("register", { method: "POST", path: "/api/resources", body, idempotent: true, expect: { 200: true, 201: true } });
    return r.json.created === true;
  }

  /** The path of a resource named by `({ id })` or `(kind, value)`: by kind and value, its id is
   * asked first with both in a request body (`POST /api/resources/lookup`), so that no value —
   * a credential, perhaps — is ever in a URL, where a proxy's access log would keep it. */
  async #target(ref, value, suffix = "") {
    let id = idOf(ref);
    if (id === null) {
      const body = { kind: ref, value };
      id = (await this.#t.request("resource-id", { method: "POST", path: "/api/resources/lookup", body, idempotent: true, expect: { 200: true } })).json.id;
    }
    return `/api/resources/${id}${suffix}`;
  }

  /** Removes a resource and its cells (operator): `(kind, value)` or `({ id })`. False when it
   * was not registered. */
  async deregister(kind, value) {
    const r = await this.#t.request("deregister", { method: "DELETE", path: await this.#target(kind, value), expect: { 204: true, 404: "unknown-resource" } });
    return r.status === 204;
  }

  /**
   * Leases the best resource for `context` (`groups`: tried in order): `{ lease }`, or
   * `{ lease: null, retryAfterMs }` when nothing is eligible — `retryAfterMs` from the server's
   * `Retry-After` (whole seconds), null when nothing will become eligible by time alone. With
   * `waitMs`, the server waits that long for a lease (see acquireWait); `signal` aborts the call.
   */
  async tryAcquire(context, options) {
    const body = { context };
    const o = optionsOf(options, ["groups", "waitMs", "signal"]);
    if (o.groups !== undefined) body.groups = o.groups; // the server checks the list (400 naming the entry)
    const waitMs = o.waitMs === undefined ? 0 : waitMsOf(o.waitMs);
    if (waitMs > 0) body.waitMs = waitMs;
    const signal = signalOf(o.signal);
    // Not idempotent: a second request after a lost answer would lease a second resource.
    // Past the server's bound on waiting requests (503 too-many-waiting) it answers as if
    // `waitMs` were 0 had found nothing, as the embedded pool does.
    const expect = { 201: true, 409: "nothing-eligible", 503: "too-many-waiting" };
    const r = await this.#t.request("acquire", { method: "POST", path: "/api/leases", body, idempotent: false, expect, signal, waitMs });
    return r.status === 201 ? { lease: leaseOf(this, r.json) } : { lease: null, retryAfterMs: r.retryAfterMs ?? null };
  }

  /**
   * Leases the best resource for `context`, waiting on the server up to `waitMs` for one (woken
   * by releases and whatever else makes one eligible; first come, first served); null when none
   * came. The call's time limit is the client's `timeoutMs` plus `waitMs`. `signal` aborts the
   * call (ABORTED) and closes its request: the server ends the wait and keeps no lease for it.
   */
  async acquireWait(context, options) {
    const o = optionsOf(options, ["groups", "waitMs", "signal"]);
    if (o.waitMs === undefined) throw invalidArgument("acquireWait needs waitMs (milliseconds to wait)");
    return (await this.tryAcquire(context, o)).lease;
  }

  /** Leases the best resource for `context`, or null when nothing is eligible (see tryAcquire). */
  async acquire(context, options) {
    return (await this.tryAcquire(context, options)).lease;
  }

  /** Reports an outcome. Not retried once it may have reached the server (it would count twice). */
  async report(kind, value, context, outcome) {
    await this.#t.request("report", { method: "POST", path: "/api/outcomes", body: { kind, value, context, outcome }, idempotent: false, expect: { 204: true } });
  }

  /** Extends the lease; null when it lapsed, is not the current one, or the resource is blocked. */
  async renew(lease) {
    const r = await this.#t.request("renew", { method: "POST", path: `/api/leases/${leaseIdOf(lease)}/renewal`, idempotent: true, expect: { 200: true, 409: "lease-not-renewed" } });
    return r.status === 200 ? leaseOf(this, r.json) : null;
  }

  /**
   * Finishes a step in one request: reports `outcome` on the lease's cell (also when the lease
   * has lapsed), releases the lease (if still its holder) and, with `next` (`{ context?, groups?,
   * waitMs?, signal? }`; `context` defaults to the lease's), leases the next — or null when none
   * is eligible (within `next.waitMs`). Without `next`, resolves to null.
   *
   * At most once per lease. It is not retried once it may have reached the server (its answer
   * would carry the next lease): a call that fails with CONNECTION_FAILED `reached: true` may
   * have been applied. Calling finish again is safe: if the first was applied, the server counts
   * nothing twice and this fails with LEASE_FINISHED (status 409) — the outcome is counted, the
   * lease released; a next lease the lost answer carried stays held until it lapses, so ask for
   * the next with acquireWait. A lease id the server does not know (it restarted since) is
   * finished here as a report of the outcome and, with `next`, an acquire.
   */
  async finish(lease, outcome, options) {
    const id = leaseIdOf(lease);
    const { next } = optionsOf(options, ["next"]);
    const body = { outcome };
    let waitMs = 0;
    let signal;
    if (next !== undefined) {
      const n = optionsOf(next, ["context", "groups", "waitMs", "signal"], "next");
      body.next = {};
      if (n.context !== undefined) body.next.context = n.context;
      if (n.groups !== undefined) body.next.groups = n.groups;
      if (n.waitMs !== undefined) waitMs = body.next.waitMs = waitMsOf(n.waitMs, "next.waitMs");
      signal = signalOf(n.signal, "next.signal");
    }
    const expect = { 200: true, 404: "no-such-lease" };
    const r = await this.#t.request("finish", { method: "POST", path: `/api/leases/${id}/outcome`, body, idempotent: false, expect, signal, waitMs });
    if (r.status === 200) return r.json.next ? leaseOf(this, r.json.next) : null;
    await this.report(lease.kind, lease.value, lease.context, outcome);
    if (next === undefined) return null;
    const again = { waitMs, ...(body.next.groups !== undefined ? { groups: body.next.groups } : {}), ...(signal ? { signal } : {}) };
    return (await this.tryAcquire(body.next.context ?? lease.context, again)).lease;
  }

  /** Returns the lease; false when this is not (or no longer) the current holder. */
  async release(lease) {
    const r = await this.#t.request("release", { method: "DELETE", path: `/api/leases/${leaseIdOf(lease)}`, expect: { 204: true, 404: "no-such-lease" } });
    return r.status === 204;
  }

  /** Blocks a resource everywhere (operator): `(kind, value, how)` or `({ id }, how)`; `how`
   * is `{ seconds }` or `{ permanent: true }`. */
  async block(kind, value, how) {
    if (kind !== null && typeof kind === "object") [value, how] = [undefined, value];
    if (how === null || typeof how !== "object") throw invalidArgument("block takes { seconds } or { permanent: true }");
    const keys = Object.keys(how);
    let query;
    if (keys.length === 1 && how.permanent === true) query = "permanent=true";
    else if (keys.length === 1 && typeof how.seconds === "number" && Number.isFinite(how.seconds)) query = `seconds=${how.seconds}`;
    else throw invalidArgument("block takes { seconds } or { permanent: true }");
    await this.#t.request("block", { method: "POST", path: await this.#target(kind, value, `/block?${query}`), idempotent: true, expect: { 204: true } });
  }

  /** Ends a block (operator): `(kind, value)` or `({ id })`; true when there was one. */
  async unblock(kind, value) {
    const r = await this.#t.request("unblock", { method: "DELETE", path: await this.#target(kind, value, "/block") });
    return r.json.unblocked === true;
  }

  /** The dashboard view: resources with their cells (`group: null`: those with no group). */
  async resources(filter) {
    filter = optionsOf(filter, ["context", "state", "group"], "filter");
    for (const k of ["context", "state"]) if (filter[k] !== undefined && typeof filter[k] !== "string") throw invalidArgument(`filter.${k} must be a string`);
    groupOf(filter.group, "filter.group");
    const q = new URLSearchParams();
    if (filter.context !== undefined) q.set("context", filter.context);
    if (filter.state !== undefined) q.set("state", filter.state);
    if (filter.group !== undefined) q.set("group", filter.group ?? "");
    const qs = q.toString();
    return (await this.#t.request("resources", { path: `/api/resources${qs ? `?${qs}` : ""}` })).json.resources;
  }

  /** One resource, its cells with their windows: `(kind, value)` or `({ id })`. */
  async resource(kind, value) {
    return (await this.#t.request("resource", { path: await this.#target(kind, value) })).json;
  }

  /** One page of the audit log: `{ events, next }`. */
  async readEvents({ after = 0, limit = 100 } = {}) {
    return (await this.#t.request("events", { path: `/api/events?after=${encodeURIComponent(after)}&limit=${encodeURIComponent(limit)}` })).json;
  }

  /** Live events as an async iterator that resumes after a dropped connection (events.js).
   * Without `after`, the starting point (the pool's newest event) is asked for now, not at the
   * first `next()`: an event made in between is delivered, not skipped. */
  events(options = {}) {
    const latest = async (signal) => (await this.#t.request("stats", { path: "/api/stats", signal })).json.nextEventSeq - 1;
    if (options === null || typeof options !== "object" || options.after !== undefined) return eventStream(this.#t, latest, options ?? undefined);
    const signal = options.signal instanceof AbortSignal ? options.signal : undefined;
    const start = latest(signal);
    start.catch(() => {}); // its failure is the iterator's, at the first next()
    return eventStream(this.#t, () => start, options);
  }

  async stats() {
    return (await this.#t.request("stats", { path: "/api/stats" })).json;
  }

  async config() {
    return (await this.#t.request("config", { path: "/api/config" })).json;
  }

  /** Changes the pool's config (operator): a partial config; resolves to the whole config. */
  async setConfig(patch) {
    return (await this.#t.request("config", { method: "PUT", path: "/api/config", body: patch, idempotent: true })).json;
  }

  /** The canonical snapshot (operator), as text. */
  async snapshot() {
    return (await this.#t.request("snapshot", { path: "/api/snapshot" })).text;
  }

  /** Replaces the pool's state with a snapshot (operator); never to a lower revision. */
  async importSnapshot(snapshotJson) {
    if (typeof snapshotJson !== "string") throw invalidArgument("importSnapshot takes the snapshot's JSON text");
    await this.#t.request("snapshot import", { method: "PUT", path: "/api/snapshot", body: snapshotJson, idempotent: false, expect: { 204: true } });
  }

  /** Readiness (`/readyz`): `{ ready, reason?, detail? }`; never throws for a not-ready pool. */
  async readiness() {
    return (await this.#t.request("readiness", { path: "/readyz", expect: { 200: true, 503: true } })).json;
  }

  /** The value with its credentials masked (the rule events use: the engine's, loaded on the
   * first call — a client that never masks never loads the WebAssembly module). */
  maskValue(kind, value) {
    return loadPool().maskValue(kind, value);
  }

  /** A resilient call through this pool (README "Resilient calls"): the same layer as `host.call`. */
  call(context, attempt, options = {}) {
    return call(this, context, attempt, options);
  }

  /** Aborts what is in flight (CLOSED) and closes the connections. */
  close() {
    return this.#t.close();
  }
}
// `await using client = connectPool(…)` closes it (where the runtime has the symbol).
if (Symbol.asyncDispose) {
  Object.defineProperty(PoolClient.prototype, Symbol.asyncDispose, { value() { return this.close(); }, configurable: true });
}
