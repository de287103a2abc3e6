// The worker's routes of the HTTP handler (handler.js): register a resource, acquire a lease
// (at once, or waiting up to `waitMs` for one), finish a step (report and release, and perhaps
// the next lease), renew, release, report. Lease ids are sealed (lease-id.js); a request that
// waits counts among `maxWaiting`, and its wait ends when its client leaves or the handler
// closes (`closing`, an AbortSignal).

import { HttpProblem } from "./problems.js";
import { body } from "./request-body.js";
import { json } from "./replies.js";
import { bad, groupOf, groupsOf, kindOf, maxLeasesOf, nextOf, text } from "./arguments.js";

const isAbort = (e) => e?.name === "AbortError";
const clientGone = () => new HttpProblem(499, "client-closed-request", "the client closed the connection while the request waited");

/** The lease routes' handlers over `host`, sealing lease ids with `ids` (LeaseIds). Options as
 * `createHandler`'s: `bodyLimit`, `maxWaitMs`, `maxWaiting`. */
export function leaseRoutes({ host, ids, closing, bodyLimit, maxWaitMs, maxWaiting }) {
  /** Requests waiting in the host (acquireWait, or a finish's next), at most `maxWaiting`. */
  let waiting = 0;
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
  const mayWait = () => waiting < maxWaiting && !closing.aborted;
  /**
   * Runs `wait(signal)` (a host call that may wait) as one of the `maxWaiting`: `signal` ends
   * the wait when the client goes away or the handler closes. A lease it gives to a client
   * that has gone meanwhile is released here at once (the host releases one it granted after
   * the abort itself). Resolves to `{ lease }`, or `{ aborted: "client" | "closing" }`.
   */
  const asWaiter = async (request, wait) => {
    waiting++;
    const signal = AbortSignal.any([request.signal, closing]);
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
  /** The lease a path's id names (its times are the engine's to know), or null. */
  const held = async (id) => {
    const lease = await ids.decode(id);
    return lease && { ...lease, leasedAt: 0, expiresAt: 0 };
  };

  return {
    async register(req, note) {
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
    },
    async acquire(req) {
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
          if (closing.aborted) throw new HttpProblem(503, "shutting-down", "the server is shutting down", headers);
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
    },
    async finish(req, id) {
      const b = await body(req, bodyLimit, ["outcome"], ["next"]);
      const next = "next" in b ? nextOf(b.next, waitMsOf) : null;
      const lease = await held(id);
      if (!lease) throw new HttpProblem(404, "no-such-lease", "this server issued no such lease id (it may have restarted since)");
      if (next === null) {
        await host.finish(lease, b.outcome);
        return json(200, { next: null });
      }
      const { waitMs, ...where } = next;
      if (waitMs > 0 && req.signal.aborted) {
        // The client left already: its step is finished all the same, with no next lease.
        await host.finish(lease, b.outcome);
        throw clientGone();
      }
      let granted;
      if (waitMs > 0 && mayWait()) {
        const r = await asWaiter(req, (signal) => host.finish(lease, b.outcome, { next: { ...where, waitMs, signal } }));
        // The outcome was reported and the lease released before the wait: only `next` is lost.
        if (r.aborted === "client") throw clientGone();
        granted = r.aborted === "closing" ? null : r.lease;
      } else {
        // No room to wait (or no wait asked): the next lease is tried at once.
        granted = await host.finish(lease, b.outcome, { next: where });
      }
      if (granted) return json(200, { next: await withId(granted) });
      const context = where.context ?? lease.context;
      const retryAfter = closing.aborted ? "1" : retryAfterOf(context, where.groups ? { groups: where.groups } : undefined);
      return json(200, { next: null }, retryAfter === null ? {} : { "retry-after": retryAfter });
    },
    async renew(id) {
      const lease = await held(id);
      const renewed = lease && host.renew(lease);
      if (!renewed) throw new HttpProblem(409, "lease-not-renewed", "the lease lapsed, is not the current one, or the resource is blocked");
      return json(200, await withId(renewed));
    },
    async release(id) {
      const lease = await held(id);
      if (!lease || !host.release(lease)) throw new HttpProblem(404, "no-such-lease", "not the current holder of a lease");
      return json(204);
    },
    async report(req) {
      const b = await body(req, bodyLimit, ["kind", "value", "context", "outcome"]);
      host.report(kindOf(b.kind), text("value", b.value), text("context", b.context), b.outcome);
      return json(204);
    },
  };
}
