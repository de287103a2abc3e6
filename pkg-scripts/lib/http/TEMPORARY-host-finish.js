// TEMPORARY — DELETE THIS FILE (and its one import and call in handler.js) when the lead's
// branch for issue 21 is merged into `load`: there every host (openPool's PoolHost,
// MemoryHost, the edge's DurableHost) has its own `acquireWait` and `finish` (SPEC §3,
// "Capacity, waiting and finishing a step"), and this stand-in must not survive.
//
// Until then it gives a host that lacks them crude versions, so that the HTTP routes and the
// load script can run and be measured on this branch:
// - `acquireWait` does NOT wait: it is an immediate `acquire` (an aborted signal rejects);
// - `finish` is the host's own report + release (+ an immediate acquire for `next`), with a
//   bounded memory of finished tokens for `LEASE_FINISHED`. It is not atomic and does not wake
//   waiters (there are none). The real `finish` costs the same engine calls or fewer.

/** Finished tokens are remembered in two generations of this many (a Set that drops its
 * oldest one by one was a tenth of the server's time under load). */
const FINISHED_KEPT = 32768;

const abortError = () => Object.assign(new Error("the wait was aborted"), { name: "AbortError", code: "ABORT_ERR" });

/** Adds the stand-ins `host` lacks (in place; a test's own `acquireWait` is kept). */
export function temporaryFinish(host) {
  if (typeof host.finish === "function" || !Object.isExtensible(host)) return host;
  let finished = new Set();
  let older = new Set();
  const acquireNow = (context, groups) => host.acquire(context, groups === undefined ? undefined : { groups });
  host.acquireWait ??= async (context, { groups, signal } = {}) => {
    if (signal?.aborted) throw abortError();
    return acquireNow(context, groups);
  };
  host.finish = (lease, outcome, { next } = {}) => {
    if (finished.has(lease.token) || older.has(lease.token)) throw Object.assign(new Error("this lease was finished already"), { code: "LEASE_FINISHED" });
    host.report(lease.kind, lease.value, lease.context, outcome);
    finished.add(lease.token);
    if (finished.size >= FINISHED_KEPT) [older, finished] = [finished, new Set()];
    host.release(lease);
    if (!next) return null;
    if (next.signal?.aborted) throw abortError();
    return acquireNow(next.context ?? lease.context, next.groups);
  };
  return host;
}
