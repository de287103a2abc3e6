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
// Prometheus text (or a promise of it), observeRequest(route, method, status, seconds) (an
// answer sent in pieces counts until its first piece),
// streamCut(), contexts() (per-context health, host/context-health.js), resourceId(kind,
// value), resourceById(id) → {kind, value} | null (or a promise of it), optionally
// resourceLookup(id) (the same, as a promise, not holding up other work
// meanwhile: used instead where present), maskValue(kind, value) }.
//
// A path names a resource by `{kind}/{value}` or by its opaque id (`resource-views.js`): a
// segment that is a kind starts the first form, any other is an id.
//
// This file holds the route table, authentication and dispatch; the routes' work is in
// routes-views.js (dashboard and reads), routes-leases.js (the worker's), routes-operator.js,
// and what a route returns in replies.js.

import { Auth } from "./auth.js";
import { HttpProblem, problemOf, problemReply } from "./problems.js";
import { LeaseIds } from "./lease-id.js";
import { eventStream } from "./sse.js";
import { requestTarget } from "./request-target.js";
import { originGuard } from "./origin-guard.js";
import { snapshotLimitFor } from "./request-body.js";
import { json, toResponse } from "./replies.js";
import { kindOf, nonNegativeInt, query, segments } from "./arguments.js";
import { viewRoutes } from "./routes-views.js";
import { leaseRoutes } from "./routes-leases.js";
import { operatorRoutes } from "./routes-operator.js";
import { isKind } from "../vocabulary.js";

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
/** The query parameters of a block: `?seconds=N` or `?permanent=true`. */
const BLOCK_QUERY = ["seconds", "permanent"];

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
  /** Aborted by `close()`: every wait in progress ends. */
  const closing = new AbortController();
  const auth = await Auth.create(tokens);
  const ids = await LeaseIds.create();

  /** The resource `id` names, or null: by the host's stepwise lookup where it has one. */
  const lookup = (id) => (host.resourceLookup ? host.resourceLookup(id) : host.resourceById(id));
  /** The resource an id in a path names; an unknown id is a 404 (as an unknown value is). */
  const byId = async (id) => {
    const r = await lookup(id);
    if (!r) throw new HttpProblem(404, "unknown-resource", "no resource has this id");
    return r;
  };
  /** `{kind}/{value}` of a path. */
  const named = (kind, value) => ({ kind: kindOf(kind), value });
  const views = viewRoutes({ host, lookup, bodyLimit });
  const leases = leaseRoutes({ host, ids, closing: closing.signal, bodyLimit, maxWaitMs, maxWaiting });
  const ops = operatorRoutes({ host, bodyLimit, snapshotLimit });

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
    ["POST", ["api", "resources"], WORKER, "register", [], (req, q, parts, role, note) => leases.register(req, note)],
    ["GET", ["api", "resources"], VIEWER, "resources", ["context", "state", "group", "limit", "after", "masked"], views.resources],
    ["POST", ["api", "resources", "lookup"], VIEWER, "resource-id", [], views.resourceId],
    ["GET", ["api", "resources", ID], VIEWER, "resource", ["masked"], async (req, q, [, , id], role) => views.resource(q, await byId(id), role)],
    ["DELETE", ["api", "resources", ID], OPERATOR, "deregister", [], async (req, q, [, , id], role, note) => ops.deregister(await byId(id), note)],
    ["POST", ["api", "resources", ID, "block"], OPERATOR, "block", BLOCK_QUERY, async (req, q, [, , id], role, note) => ops.block(req, q, await byId(id), note)],
    ["DELETE", ["api", "resources", ID, "block"], OPERATOR, "unblock", [], async (req, q, [, , id], role, note) => ops.unblock(req, await byId(id), note)],
    ["GET", ["api", "resources", ":", ":"], VIEWER, "resource", ["masked"], (req, q, [, , kind, value], role) => views.resource(q, named(kind, value), role)],
    ["DELETE", ["api", "resources", ":", ":"], OPERATOR, "deregister", [], (req, q, [, , kind, value], role, note) => ops.deregister(named(kind, value), note)],
    ["POST", ["api", "resources", ":", ":", "block"], OPERATOR, "block", BLOCK_QUERY, (req, q, [, , kind, value], role, note) => ops.block(req, q, named(kind, value), note)],
    ["DELETE", ["api", "resources", ":", ":", "block"], OPERATOR, "unblock", [], (req, q, [, , kind, value], role, note) => ops.unblock(req, named(kind, value), note)],
    ["POST", ["api", "leases"], WORKER, "acquire", [], leases.acquire],
    ["POST", ["api", "leases", ":", "outcome"], WORKER, "finish", [], (req, q, [, , id]) => leases.finish(req, id)],
    ["POST", ["api", "leases", ":", "renewal"], WORKER, "renew", [], (req, q, [, , id]) => leases.renew(id)],
    ["DELETE", ["api", "leases", ":"], WORKER, "release", [], (req, q, [, , id]) => leases.release(id)],
    ["POST", ["api", "outcomes"], WORKER, "report", [], leases.report],
    ["GET", ["api", "events"], VIEWER, "events", ["after", "limit", "type", "context", "resource", "before"], views.events],
    ["GET", ["api", "outcomes"], VIEWER, "outcomes", ["after", "limit"], views.outcomes],
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
    ["PUT", ["api", "config"], OPERATOR, "config-update", [], (req, q, parts, role, note) => ops.configUpdate(req, note)],
    ["GET", ["api", "stats"], VIEWER, "stats", [], () => json(200, host.stats())],
    ["GET", ["api", "contexts"], VIEWER, "contexts", [], () => {
      if (!host.contexts) throw new HttpProblem(404, "contexts-not-kept", "this host keeps no per-context health");
      return json(200, host.contexts());
    }],
    ["GET", ["api", "snapshot"], OPERATOR, "snapshot-export", [], ops.snapshotExport],
    ["PUT", ["api", "snapshot"], OPERATOR, "snapshot-import", [], ops.snapshotImport],
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
