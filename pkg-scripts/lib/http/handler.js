// The HTTP API of SPEC §8 as one web-standard `Request → Response` handler. The Node server
// (http-server.js) and the edge worker only adapt their platform to it; neither re-implements
// routing, authentication or validation. It reads of a request only `method`, `url`,
// `headers.get()`, `body` (an async iterable of bytes, or null), `text()` and `signal`, so an
// adapter may pass a lighter object of that shape than a full `Request`. Everything about the pool itself is the host's
// (see the `host` contract below) and, underneath, the engine's.
//
// host contract: { ready, readiness?() → {ready, reason?, detail?}, now(), config(), stats(),
// register(kind, value, {group, maxLeases}?), deregister, block, unblock, setConfig,
// importSnapshot (async, on disk before they resolve), acquire(context, {groups}?),
// acquireWait(context, {groups, waitMs, signal}) (async; an aborted signal rejects with an
// AbortError, and a lease granted meanwhile is the host's to release), finish(lease, outcome,
// {next: {context, groups, waitMs, signal}}?) → Lease | null, or a promise of it (a repeated
// finish throws code LEASE_FINISHED; an abort during its wait comes after the report and the
// release are done), renew, release, report,
// resources({context, state, group}?), resource, nextChangeAt(context, {groups}?), snapshot
// (sync), readEvents({after, limit}) (async), optionally readOutcomes({after, limit}) (async;
// null when outcomes are not recorded), subscribe(listener) → unsubscribe, metrics() →
// Prometheus text (or a promise of it), observeRequest(route, method, status, seconds),
// streamCut(), contexts() (per-context health, host/context-health.js), resourceId(kind,
// value), resourceById(id) → {kind, value} | null (or a promise of it), optionally
// resourceLookup(id) (the same, as a promise, not holding up other work
// meanwhile: used instead where present), maskValue(kind, value) }.
//
// A path names a resource by `{kind}/{value}` or by its opaque id (`resource-views.js`): a
// segment that is a kind starts the first form, any other is an id.

import { Auth } from "./auth.js";
import { HttpProblem, problemOf, problemReply } from "./problems.js";
import { LeaseIds } from "./lease-id.js";
import { eventStream } from "./sse.js";
import { requestTarget } from "./request-target.js";
import { originGuard } from "./origin-guard.js";
import { body, bytes, CONFIG_BODY_LIMIT, configShape, jsonObject, JSON_TYPE, snapshotLimitFor } from "./request-body.js";
import { showResources } from "./resource-views.js";
import { eventFilterOf, readFiltered } from "./event-query.js";
import { MAX_REASON } from "../host/operator-note.js";
import { KINDS, isKind, oneOf } from "../vocabulary.js";
import { nextTurn } from "../next-turn.js";

export { snapshotLimitFor };
const WORKER = new Set(["worker", "operator"]);
const VIEWER = new Set(["viewer", "operator"]);
const OPERATOR = new Set(["operator"]);
const ANY_ROLE = new Set(["worker", "viewer", "operator"]);
const OPEN = null;
/** The actor of an operator event on a server without tokens (loopback only, every route open). */
const ANONYMOUS = "anonymous (no tokens)";
/** A route pattern segment: a resource id (any segment but a kind). */
const ID = ":id";

const bad = (detail) => new HttpProblem(400, "bad-request", detail);

/**
 * What a route returns: `{ status, headers, body }` — headers a plain object with lower-case
 * names, body a string, a ReadableStream of bytes (event streams) or null. `handle` makes a
 * web `Response` of it; a server may take it as it is (`handle.reply`) and skip that cost.
 */
function json(status, body, headers = {}) {
  return body === undefined
    ? { status, headers, body: null }
    : { status, headers: { "content-type": JSON_TYPE, ...headers }, body: JSON.stringify(body) };
}

function toResponse({ status, headers, body }) {
  return new Response(body, { status, headers });
}

/** Path segments, percent-decoded; a bad escape is a 400 naming the segment. */
function segments(pathname) {
  const parts = pathname.split("/");
  parts.shift(); // before the leading "/"
  if (!pathname.includes("%")) return parts;
  return parts.map((s, i) => {
    try {
      return decodeURIComponent(s);
    } catch {
      throw bad(`path segment ${i + 1} is not valid percent-encoding`);
    }
  });
}

function kindOf(kind) {
  if (!isKind(kind)) throw bad(`kind must be ${oneOf(KINDS)}`);
  return kind;
}

function text(name, v) {
  if (typeof v !== "string") throw bad(`${name} must be a string`);
  return v;
}

/** A `group` (SPEC §3, groups): a string or null; the engine checks the string. */
function groupOf(name, v) {
  if (v !== null && typeof v !== "string") throw bad(`${name} must be a group name (a string) or null`);
  return v;
}

/** A `groups` list: an array of group names or nulls; the engine checks its length, the
 * names and repeats, naming the entry (`groups[2]`). */
function groupsOf(v, name = "groups") {
  if (!Array.isArray(v)) throw bad(`${name} must be an array of group names (strings) or nulls`);
  v.forEach((g, i) => groupOf(`${name}[${i}]`, g));
  return v;
}

/** A resource's capacity (SPEC §3, capacity): an integer from 1 to 1024. */
function maxLeasesOf(v) {
  if (!Number.isSafeInteger(v) || v < 1 || v > 1024) throw bad("maxLeases must be an integer from 1 to 1024");
  return v;
}

/** The `next` of a finish: an object of `context`, `groups` and `waitMs`, each optional. */
function nextOf(v, waitMsOf) {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw bad("next must be an object (of context, groups, waitMs; each optional)");
  for (const k of Object.keys(v)) if (k !== "context" && k !== "groups" && k !== "waitMs") throw bad("unknown field in next (the fields are context, groups, waitMs)");
  const next = {};
  if ("context" in v) next.context = text("next.context", v.context);
  if ("groups" in v) next.groups = groupsOf(v.groups, "next.groups");
  next.waitMs = "waitMs" in v ? waitMsOf("next.waitMs", v.waitMs) : 0;
  return next;
}

const isAbort = (e) => e?.name === "AbortError";

/** The query parameters of a block: `?seconds=N` or `?permanent=true`. */
const BLOCK_QUERY = ["seconds", "permanent"];
/** Resources per step of a dashboard built in steps (`dashboard`). */
const DASHBOARD_STEP = 25;


/** The query of a request that has none. */
const NO_QUERY = new URLSearchParams();

/**
 * The query of `url` (request-target.js) checked against the parameters a route takes,
 * `allowed`: an unknown one (not quoted back: it may be a value gone astray) or one given twice
 * is a 400. Every route's query is checked here, once, before the route runs.
 */
function query(url, allowed) {
  if (allowed.length === 0 && !url.hasQuery) return NO_QUERY;
  const seen = new Set();
  for (const k of url.searchParams.keys()) {
    if (!allowed.includes(k)) throw bad(allowed.length ? `unknown query parameter (this route takes ${allowed.join(", ")})` : "this route takes no query parameters");
    if (seen.has(k)) throw bad(`query parameter ${JSON.stringify(k)} is given more than once`);
    seen.add(k);
  }
  return url.searchParams;
}

/** Whether values are shown masked: always for a viewer; for others when `?masked=true`. */
function maskedFor(role, q) {
  if (!q.has("masked")) return role === "viewer";
  const raw = q.get("masked");
  if (raw !== "true" && raw !== "false") throw bad("masked must be true or false");
  return role === "viewer" || raw === "true";
}

function nonNegativeInt(name, raw, fallback) {
  if (raw === null) return fallback;
  if (!/^\d{1,16}$/.test(raw)) throw bad(`${name} must be a non-negative integer`);
  return Number(raw);
}

/**
 * Builds the handler. Options: `tokens` (parsed list; empty = no authentication), `bodyLimit`
 * (bytes, default 64 KiB), `snapshotLimit` (bytes of a `PUT /api/snapshot`, default
 * `snapshotLimitFor` the pool's config), `heartbeatMs`, `streamQueue` and `maxStreams` (SSE:
 * concurrent subscribers, default 32), `streamMaxMs` (SSE: a stream's lifetime, default none),
 * `loopbackOnly` (origin-guard.js; default: when there are no tokens), `maxWaitMs` (the
 * largest `waitMs` a request may ask for; default 30 000) and `maxWaiting` (requests waiting at
 * once; default 1 000). The handler's `close()` ends every wait in progress (a server that is
 * shutting down).
 */
export async function createHandler(
  host,
  {
    tokens = [],
    bodyLimit = 64 * 1024,
    snapshotLimit,
    heartbeatMs = 15000,
    streamQueue = 1000,
    maxStreams = 32,
    streamMaxMs = Infinity,
    loopbackOnly = tokens.length === 0,
    maxWaitMs = 30000,
    maxWaiting = 1000,
  } = {},
) {
  const onStreamCut = () => host.streamCut();
  const guard = originGuard({ loopbackOnly });
  let streams = 0;
  /** Requests waiting in the host (acquireWait, or a finish's next), at most `maxWaiting`. */
  let waiting = 0;
  /** Aborted by `close()`: every wait in progress ends. */
  const closing = new AbortController();
  const auth = await Auth.create(tokens);
  const ids = await LeaseIds.create();
  /** The lease with its id (a promise of it where sealing is asynchronous: WebCrypto). */
  const withId = (lease) => {
    const id = ids.encode(lease);
    return typeof id === "string" ? { ...lease, leaseId: id } : id.then((leaseId) => ({ ...lease, leaseId }));
  };

  /** `waitMs` of a body (`name` in errors): an integer of ms from 0 to `maxWaitMs`. */
  const waitMsOf = (name, v) => {
    if (!Number.isSafeInteger(v) || v < 0) throw bad(`${name} must be a non-negative integer (milliseconds)`);
    if (v > maxWaitMs) throw bad(`${name} is over this server's limit of ${maxWaitMs} ms`);
    return v;
  };
  /** `Retry-After` (whole seconds, at least 1) for `context`: when something may become
   * eligible by time alone; null when nothing will. */
  const retryAfterOf = (context, options) => {
    const at = host.nextChangeAt(context, options);
    return at === null ? null : String(Math.max(1, Math.ceil((at - host.now()) / 1000)));
  };
  /** True when one more request may wait in the host now. */
  const mayWait = () => waiting < maxWaiting && !closing.signal.aborted;
  /**
   * Runs `wait(signal)` (a host call that may wait) as one of the `maxWaiting`: `signal` ends
   * the wait when the client goes away or the handler closes. A lease it gives to a client
   * that has gone meanwhile is released here at once (the host releases one it granted after
   * the abort itself). Resolves to `{ lease }`, or `{ aborted: "client" | "closing" }`.
   */
  const asWaiter = async (request, wait) => {
    waiting++;
    const signal = AbortSignal.any([request.signal, closing.signal]);
    let lease;
    try {
      lease = await wait(signal);
    } catch (e) {
      if (!isAbort(e) || !signal.aborted) throw e;
      return { aborted: request.signal.aborted ? "client" : "closing" };
    } finally {
      waiting--;
    }
    if (lease && request.signal.aborted) {
      host.release(lease);
      return { aborted: "client" };
    }
    return { lease };
  };
  const clientGone = () => new HttpProblem(499, "client-closed-request", "the client closed the connection while the request waited");
  // One snapshot upload is read at a time: ten at once could hold ten times the limit.
  let importing = false;

  /**
   * The dashboard's JSON text (`{"resources": [...]}`, and `"next"` for a page: `limit` given),
   * built `DASHBOARD_STEP` resources at a time with a turn of the event loop between steps, so
   * that a large one (a second of work for the whole of a 126k-cell pool) does not hold up
   * every other request meanwhile. Each step reads the pool as it is then.
   */
  const dashboard = async ({ limit, after, ...filter }, masked) => {
    const parts = [];
    let last = after;
    let lastId = null;
    for (let left = limit ?? Infinity; left > 0; ) {
      const step = Math.min(left, DASHBOARD_STEP);
      const views = host.resources({ ...filter, limit: step, ...(last ? { after: last } : {}) });
      for (const view of showResources(host, views, { masked })) parts.push(JSON.stringify(view));
      left -= views.length;
      if (views.length < step) break;
      last = { kind: views[views.length - 1].kind, value: views[views.length - 1].value };
      lastId = host.resourceId(last.kind, last.value);
      if (left > 0) await nextTurn();
    }
    const list = `{"resources":[${parts.join(",")}]`;
    if (limit === undefined) return `${list}}`;
    return `${list},"next":${parts.length === limit ? JSON.stringify(lastId) : "null"}}`;
  };

  /** The resource `id` names, or null: by the host's stepwise lookup where it has one. */
  const lookup = (id) => (host.resourceLookup ? host.resourceLookup(id) : host.resourceById(id));
  /** The resource an id in a path names; an unknown id is a 404 (as an unknown value is). */
  const byId = async (id) => {
    const r = await lookup(id);
    if (!r) throw new HttpProblem(404, "unknown-resource", "no resource has this id");
    return r;
  };
  /** One resource with its cells' windows (the console's detail), shown as the dashboard shows
   * it (its id; masked for a viewer). */
  const resource = (q, { kind, value }, role) =>
    json(200, showResources(host, [host.resource(kind, value)], { masked: maskedFor(role, q) })[0]);
  const deregister = async ({ kind, value }, note) => {
    if (!(await host.deregister(kind, value, note))) throw new HttpProblem(404, "unknown-resource", "the resource is not registered");
    return json(204);
  };
  /** `POST …/block`: how long from the query; an optional JSON body `{reason}` (a reason
   * without a body is none). */
  const block = async (req, q, { kind, value }, note) => {
    let how;
    if (q.has("permanent") && !q.has("seconds")) {
      if (q.get("permanent") !== "true") throw bad("permanent must be true");
      how = { permanent: true };
    } else if (q.has("seconds") && !q.has("permanent")) {
      const raw = q.get("seconds");
      if (!/^\d+(\.\d+)?$/.test(raw)) throw bad("seconds must be a positive number");
      how = { seconds: Number(raw) };
    } else {
      throw bad("give exactly one of ?seconds=N or ?permanent=true");
    }
    await host.block(kind, value, how, { ...note, ...(await reasonOf(req)) });
    return json(204);
  };
  /** `{reason}` of an optional JSON body `{reason}` (none: `{}`): a string of 1 to MAX_REASON
   * characters with no control characters. */
  const reasonOf = async (req) => {
    const declared = req.headers.get("content-length");
    if (!req.body || declared === "0" || (declared === null && !req.headers.get("content-type"))) return {};
    const b = await body(req, bodyLimit, [], ["reason"]);
    if (!("reason" in b)) return {};
    if (typeof b.reason !== "string" || b.reason.length === 0 || b.reason.length > MAX_REASON || /[\u0000-\u001f\u007f]/.test(b.reason)) {
      throw bad(`reason must be a string of 1 to ${MAX_REASON} characters, without control characters`);
    }
    return { reason: b.reason };
  };
  /** The group and capacity a just-registered resource has: those asked for; else (the key
   * absent) none and 1 for a new resource, those it kept for a known one. */
  const current = (kind, value, b, created) => {
    let group = "group" in b ? b.group : null;
    let maxLeases = "maxLeases" in b ? b.maxLeases : 1;
    if (!created && !("group" in b && "maxLeases" in b)) {
      try {
        const view = host.resource(kind, value);
        if (!("group" in b)) group = view.group ?? null;
        if (!("maxLeases" in b)) maxLeases = view.maxLeases ?? 1;
      } catch {
        // removed meanwhile by a concurrent deregister
      }
    }
    return { group, maxLeases };
  };
  const unblock = async (req, { kind, value }, note) =>
    json(200, { unblocked: await host.unblock(kind, value, { ...note, ...(await reasonOf(req)) }) });

  // [method, pattern, roles, name, query parameters taken, handler(request, query, parts, role,
  // note)] — `note`: `{actor}`, the token's name, for the operator events the call causes;
  // a pattern segment ":" matches anything, ID any but a kind. The first route that matches
  // serves (the ID forms come before the {kind}/{value} forms they overlap). The query is
  // checked against the route's list before the handler runs (`query`).
  const routes = [
    ["GET", ["healthz"], OPEN, "healthz", [], () => json(200, { status: "ok" })],
    // Who the token is: its role and name (the console offers only what the role may do).
    ["GET", ["api", "session"], ANY_ROLE, "session", [], (req, q, parts, role, note) =>
      json(200, { role: role ?? "operator", name: note.actor, tokens: auth.enabled })],
    ["GET", ["readyz"], OPEN, "readyz", [], () => {
      const r = host.ready && host.readiness ? host.readiness() : { ready: host.ready };
      return json(r.ready ? 200 : 503, r);
    }],
    ["GET", ["metrics"], VIEWER, "metrics", [], async () =>
      ({ status: 200, headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" }, body: await host.metrics() })],
    ["POST", ["api", "resources"], WORKER, "register", [], async (req, q, parts, role, note) => {
      // `group` absent: a known resource keeps its group; given (a name or null): it moves.
      // `maxLeases` absent: a known resource keeps its capacity, a new one gets 1.
      const b = await body(req, bodyLimit, ["kind", "value"], ["group", "maxLeases"]);
      const kind = kindOf(b.kind);
      const value = text("value", b.value);
      let options;
      if ("group" in b) options = { group: groupOf("group", b.group) };
      if ("maxLeases" in b) options = { ...options, maxLeases: maxLeasesOf(b.maxLeases) };
      const created = await host.register(kind, value, options, note);
      const now = current(kind, value, b, created);
      return json(created ? 201 : 200, { kind, value, id: host.resourceId(kind, value), created, ...now });
    }],
    ["GET", ["api", "resources"], VIEWER, "resources", ["context", "state", "group", "limit", "after", "masked"], async (req, q, parts, role) => {
      const filter = {};
      if (q.has("context")) filter.context = q.get("context");
      if (q.has("state")) filter.state = q.get("state");
      // `?group=` (empty) asks for the resources with no group: a group name is never blank.
      if (q.has("group")) filter.group = q.get("group") === "" ? null : q.get("group");
      // `?limit=N&after=ID`: a page, in canonical order, after the resource ID names; `next`
      // names the page's last resource while there may be more.
      const paged = q.has("limit") || q.has("after");
      if (paged) {
        filter.limit = nonNegativeInt("limit", q.get("limit"), 100);
        if (filter.limit < 1 || filter.limit > 1000) throw bad("limit must be in 1..=1000");
        if (q.has("after")) {
          filter.after = await lookup(q.get("after"));
          if (!filter.after) throw bad("after names no registered resource (removed since the page before?): start again without it");
        }
      }
      return { status: 200, headers: { "content-type": JSON_TYPE }, body: await dashboard(filter, maskedFor(role, q)) };
    }],
    // A resource's id from its kind and value, sent in a body: what a client asks before naming
    // the resource in a path, so that no value (a credential, perhaps) is in a URL.
    ["POST", ["api", "resources", "lookup"], VIEWER, "resource-id", [], async (req) => {
      const b = await body(req, bodyLimit, ["kind", "value"]);
      return json(200, { id: host.resourceId(kindOf(b.kind), text("value", b.value)) });
    }],
    ["GET", ["api", "resources", ID], VIEWER, "resource", ["masked"], async (req, q, [, , id], role) => resource(q, await byId(id), role)],
    ["DELETE", ["api", "resources", ID], OPERATOR, "deregister", [], async (req, q, [, , id], role, note) => deregister(await byId(id), note)],
    ["POST", ["api", "resources", ID, "block"], OPERATOR, "block", BLOCK_QUERY, async (req, q, [, , id], role, note) => block(req, q, await byId(id), note)],
    ["DELETE", ["api", "resources", ID, "block"], OPERATOR, "unblock", [], async (req, q, [, , id], role, note) => unblock(req, await byId(id), note)],
    ["GET", ["api", "resources", ":", ":"], VIEWER, "resource", ["masked"], (req, q, [, , kind, value], role) => resource(q, { kind: kindOf(kind), value }, role)],
    ["DELETE", ["api", "resources", ":", ":"], OPERATOR, "deregister", [], (req, q, [, , kind, value], role, note) => deregister({ kind: kindOf(kind), value }, note)],
    ["POST", ["api", "resources", ":", ":", "block"], OPERATOR, "block", BLOCK_QUERY, (req, q, [, , kind, value], role, note) => block(req, q, { kind: kindOf(kind), value }, note)],
    ["DELETE", ["api", "resources", ":", ":", "block"], OPERATOR, "unblock", [], (req, q, [, , kind, value], role, note) => unblock(req, { kind: kindOf(kind), value }, note)],
    ["POST", ["api", "leases"], WORKER, "acquire", [], async (req) => {
      const b = await body(req, bodyLimit, ["context"], ["groups", "waitMs"]);
      const context = text("context", b.context);
      // With `groups`, the listed groups in order (SPEC §3); Retry-After is for them alone.
      const options = "groups" in b ? { groups: groupsOf(b.groups) } : undefined;
      const waitMs = "waitMs" in b ? waitMsOf("waitMs", b.waitMs) : 0;
      let lease;
      if (waitMs === 0) lease = host.acquire(context, options);
      // A client that left already (while its token was checked, say) is not waited for.
      else if (req.signal.aborted) throw clientGone();
      else if (mayWait()) {
        const r = await asWaiter(req, (signal) => host.acquireWait(context, { ...options, waitMs, signal }));
        if (r.aborted === "client") throw clientGone();
        if (r.aborted === "closing") throw new HttpProblem(503, "shutting-down", "the server is shutting down", { "retry-after": "1" });
        lease = r.lease;
      } else {
        // No room to wait (or the server is closing): answered at once, as if waitMs were 0.
        lease = host.acquire(context, options);
        if (!lease) {
          const headers = { "retry-after": retryAfterOf(context, options) ?? "1" };
          if (closing.signal.aborted) throw new HttpProblem(503, "shutting-down", "the server is shutting down", headers);
          throw new HttpProblem(503, "too-many-waiting", `${maxWaiting} requests are waiting already; nothing is eligible now`, headers);
        }
      }
      if (lease) return json(201, await withId(lease));
      const retryAfter = retryAfterOf(context, options);
      const which = options ? "of the listed groups " : "";
      const detail = retryAfter === null
        ? `no resource ${which}is eligible, and none will become eligible by time alone`
        : `no resource ${which}is eligible ${waitMs > 0 ? `after waiting ${waitMs} ms` : "now"}`;
      throw new HttpProblem(409, "nothing-eligible", detail, retryAfter === null ? {} : { "retry-after": retryAfter });
    }],
    ["POST", ["api", "leases", ":", "outcome"], WORKER, "finish", [], async (req, q, [, , id]) => {
      const b = await body(req, bodyLimit, ["outcome"], ["next"]);
      const next = "next" in b ? nextOf(b.next, waitMsOf) : null;
      const lease = await ids.decode(id);
      if (!lease) throw new HttpProblem(404, "no-such-lease", "this server issued no such lease id (it may have restarted since)");
      const held = { ...lease, leasedAt: 0, expiresAt: 0 };
      if (next === null) {
        await host.finish(held, b.outcome);
        return json(200, { next: null });
      }
      const { waitMs, ...where } = next;
      if (waitMs > 0 && req.signal.aborted) {
        // The client left already: its step is finished all the same, with no next lease.
        await host.finish(held, b.outcome);
        throw clientGone();
      }
      let granted;
      if (waitMs > 0 && mayWait()) {
        const r = await asWaiter(req, (signal) => host.finish(held, b.outcome, { next: { ...where, waitMs, signal } }));
        // The outcome was reported and the lease released before the wait: only `next` is lost.
        if (r.aborted === "client") throw clientGone();
        granted = r.aborted === "closing" ? null : r.lease;
      } else {
        // No room to wait (or no wait asked): the next lease is tried at once.
        granted = await host.finish(held, b.outcome, { next: where });
      }
      if (granted) return json(200, { next: await withId(granted) });
      const context = where.context ?? lease.context;
      const retryAfter = closing.signal.aborted ? "1" : retryAfterOf(context, where.groups ? { groups: where.groups } : undefined);
      return json(200, { next: null }, retryAfter === null ? {} : { "retry-after": retryAfter });
    }],
    ["POST", ["api", "leases", ":", "renewal"], WORKER, "renew", [], async (req, q, [, , id]) => {
      const lease = await ids.decode(id);
      const renewed = lease && host.renew({ ...lease, leasedAt: 0, expiresAt: 0 });
      if (!renewed) throw new HttpProblem(409, "lease-not-renewed", "the lease lapsed, is not the current one, or the resource is blocked");
      return json(200, await withId(renewed));
    }],
    ["DELETE", ["api", "leases", ":"], WORKER, "release", [], async (req, q, [, , id]) => {
      const lease = await ids.decode(id);
      if (!lease || !host.release({ ...lease, leasedAt: 0, expiresAt: 0 })) {
        throw new HttpProblem(404, "no-such-lease", "not the current holder of a lease");
      }
      return json(204);
    }],
    ["POST", ["api", "outcomes"], WORKER, "report", [], async (req) => {
      const b = await body(req, bodyLimit, ["kind", "value", "context", "outcome"]);
      host.report(kindOf(b.kind), text("value", b.value), text("context", b.context), b.outcome);
      return json(204);
    }],
    ["GET", ["api", "events"], VIEWER, "events", ["after", "limit", "type", "context", "resource", "before"], async (req, q) => {
      const after = nonNegativeInt("after", q.get("after"), 0);
      const limit = nonNegativeInt("limit", q.get("limit"), 100);
      if (limit < 1 || limit > 1000) throw bad("limit must be in 1..=1000");
      const filter = eventFilterOf(q);
      return json(200, filter ? await readFiltered(host, { after, limit, filter }) : await host.readEvents({ after, limit }));
    }],
    ["GET", ["api", "outcomes"], VIEWER, "outcomes", ["after", "limit"], async (req, q) => {
      const after = nonNegativeInt("after", q.get("after"), 0);
      const limit = nonNegativeInt("limit", q.get("limit"), 100);
      if (limit < 1 || limit > 1000) throw bad("limit must be in 1..=1000");
      const page = await host.readOutcomes?.({ after, limit });
      if (!page) throw new HttpProblem(404, "outcomes-not-recorded", "this pool does not record reported outcomes (start it with --record-outcomes)");
      return json(200, page);
    }],
    ["GET", ["api", "events", "stream"], VIEWER, "stream", ["after"], (req, q) => {
      const last = req.headers.get("last-event-id");
      const after = nonNegativeInt("Last-Event-ID", last ?? q.get("after"), null);
      const newest = host.stats().nextEventSeq - 1;
      if (after !== null && after > newest) {
        throw new HttpProblem(409, "event-id-ahead", `event ${after} is beyond the newest event (${newest}): resume from ${newest} or less`);
      }
      if (streams >= maxStreams) {
        throw new HttpProblem(503, "too-many-streams", `the server already serves ${maxStreams} event streams`, { "retry-after": "5" });
      }
      streams++;
      const onEnd = () => streams--;
      return eventStream(host, { after, heartbeatMs, maxQueue: streamQueue, onCut: onStreamCut, onEnd, signal: req.signal, maxMs: streamMaxMs });
    }],
    ["GET", ["api", "config"], VIEWER, "config", [], () => json(200, host.config())],
    ["PUT", ["api", "config"], OPERATOR, "config-update", [], async (req, q, parts, role, note) =>
      json(200, await host.setConfig(await jsonObject(req, Math.max(bodyLimit, CONFIG_BODY_LIMIT), configShape), note))],
    ["GET", ["api", "stats"], VIEWER, "stats", [], () => json(200, host.stats())],
    ["GET", ["api", "contexts"], VIEWER, "contexts", [], () => {
      if (!host.contexts) throw new HttpProblem(404, "contexts-not-kept", "this host keeps no per-context health");
      return json(200, host.contexts());
    }],
    ["GET", ["api", "snapshot"], OPERATOR, "snapshot-export", [], () =>
      ({ status: 200, headers: { "content-type": JSON_TYPE }, body: host.snapshot() })],
    ["PUT", ["api", "snapshot"], OPERATOR, "snapshot-import", [], async (req) => {
      const type = (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
      if (type !== JSON_TYPE) throw new HttpProblem(415, "unsupported-media-type", "send the snapshot as application/json");
      if (importing) throw new HttpProblem(409, "import-in-progress", "another snapshot is being imported", { "retry-after": "1" });
      importing = true;
      try {
        const raw = await bytes(req, snapshotLimit ?? snapshotLimitFor(host.config()), "the snapshot");
        let text;
        try {
          text = new TextDecoder("utf-8", { fatal: true }).decode(raw);
        } catch {
          throw bad("the snapshot is not valid UTF-8");
        }
        await host.importSnapshot(text);
      } finally {
        importing = false;
      }
      return json(204);
    }],
  ];

  /** True when `parts` fit `pattern` (see `routes`). */
  function fits(pattern, parts) {
    if (pattern.length !== parts.length) return false;
    for (let i = 0; i < pattern.length; i++) {
      const p = pattern[i];
      if (p === ":") continue;
      if (p === ID ? parts[i] === "" || isKind(parts[i]) : p !== parts[i]) return false;
    }
    return true;
  }

  /** The route for `method` on `parts`, or the methods the path allows (empty: no such path). */
  function match(method, parts) {
    const allowed = [];
    for (const route of routes) {
      const [m, pattern] = route;
      if (!fits(pattern, parts)) continue;
      if (m === method) return { route };
      if (!allowed.includes(m)) allowed.push(m);
    }
    return { allowed };
  }

  /** The reply to `request` (see `json`). */
  async function reply(request) {
    const started = performance.now();
    let name = "unmatched";
    let out;
    try {
      const { path, url } = requestTarget(request);
      guard(request);
      const parts = segments(path);
      const { route, allowed } = match(request.method, parts);
      if (!route) {
        throw allowed.length > 0
          ? new HttpProblem(405, "method-not-allowed", `${request.method} is not allowed here`, { allow: allowed.join(", ") })
          : new HttpProblem(404, "not-found", "no such route");
      }
      const [, , roles, routeName, takes, run] = route;
      name = routeName;
      let role = null; // null: no tokens, every route open
      let actor = ANONYMOUS;
      if (roles !== OPEN && auth.enabled) {
        const who = await auth.identify(request);
        if (who === null) throw new HttpProblem(401, "unauthorized", "a valid bearer token is required", { "www-authenticate": "Bearer" });
        if (!roles.has(who.role)) throw new HttpProblem(403, "forbidden", `the ${who.role} role may not do this`);
        role = who.role;
        actor = who.name;
      }
      if (roles !== OPEN && !host.ready) throw new HttpProblem(503, "not-ready", "the pool is still being restored", { "retry-after": "1" });
      out = await run(request, query(url, takes), parts, role, { actor });
    } catch (error) {
      out = problemReply(problemOf(error));
    }
    host.observeRequest(name, request.method, out.status, (performance.now() - started) / 1000);
    return out;
  }

  const handle = async (request) => toResponse(await reply(request));
  handle.reply = reply;
  /** Ends every wait in progress: a waiting acquire answers 503 shutting-down, a finish its
   * `next: null`. Waits asked for afterwards answer at once. */
  handle.close = () => closing.abort();
  return handle;
}
