// A ready `fetch` through PROXY resources (README "Resilient calls"): `proxyFetch(host)` gives
// `fetch(attempt, input, init)` that sends the request through the leased resource's proxy
// with undici's ProxyAgent. One dispatcher per resource, never shared: keep-alive connections
// that quietly pin one proxy are a classic rotation bug, so a connection only ever carries the
// traffic of the resource it was opened for. A resource's dispatcher is closed when the host
// deregisters it (RESOURCE_DEREGISTERED) or after `idleMs` unused — a delivered body counts as
// use only while a read of it waits, and one left unread that long is cancelled when the
// dispatcher closes, so an unread answer cannot pin a connection. The attempt's signal aborts
// the request and closes its socket; the attempt's phase (connect → send → receive) is marked
// as undici reaches it, and its idempotency key is sent as `Idempotency-Key`. A proxy that hangs
// up on a CONNECT fails the request at once (undici would reconnect in a loop). Owns the
// dispatchers; the retry loop is call.js's.

import { Buffer } from "node:buffer";
import { Pool, ProxyAgent, fetch as undiciFetch } from "undici";
import { invalidOption } from "./errors.js";

const SYSTEM_TIMERS = Object.freeze({ setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (t) => clearTimeout(t) });

/** The proxy of a resource whose value is its URL (credentials in it become Basic auth). */
function fromUrl(value) {
  let u;
  try {
    u = new URL(value);
  } catch {
    u = null;
  }
  // The value is not echoed: a malformed URL may hide credentials from any redaction.
  if (!u || (u.protocol !== "http:" && u.protocol !== "https:")) throw invalidOption("the resource's value is not an http: or https: proxy URL");
  const user = decodeURIComponent(u.username);
  const pass = decodeURIComponent(u.password);
  return { uri: `${u.protocol}//${u.host}`, token: user || pass ? `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}` : undefined };
}

/**
 * The ProxyAgent's client to the proxy (undici's default, a Pool, or the caller's
 * `agent.clientFactory`), with one fix: a proxy that closes the connection without answering
 * CONNECT makes undici's `connect` fail with UND_ERR_SOCKET ("other side closed"), which
 * undici's client takes for a recoverable socket error — it reconnects at once, in a loop
 * (thousands of connections a second) until the request is aborted. Such a failure becomes
 * "socket hang up" ECONNRESET (what Node's own http client says for a peer that hangs up
 * without answering): the request fails at once, at connect, and nothing went out.
 */
function hangUpAware(factory = (origin, options) => new Pool(origin, options)) {
  return (origin, options) => {
    const client = factory(origin, options);
    const connect = client.connect.bind(client);
    client.connect = (params, callback) => {
      if (typeof callback === "function") return connect(params, callback);
      return connect(params).catch((err) => {
        if (err?.code !== "UND_ERR_SOCKET") throw err;
        throw Object.assign(new Error("socket hang up: the proxy closed the connection without answering CONNECT", { cause: err }), { code: "ECONNRESET" });
      });
    };
    return client;
  };
}

/** The handler undici calls, seen by the attempt's phase marker. */
function marked(handler, phase) {
  return new Proxy(handler, {
    get(target, prop) {
      const v = target[prop];
      if (typeof v !== "function") return v;
      if (prop === "onRequestStart" || prop === "onConnect") return (...a) => (phase("send"), v.apply(target, a));
      if (prop === "onResponseStart" || prop === "onHeaders") return (...a) => (phase("receive"), v.apply(target, a));
      return v.bind(target);
    },
  });
}

/**
 * @param {object} host the PoolHost (events: dispatchers closed on RESOURCE_DEREGISTERED) or
 *   anything; `resourceId` and `on` are used when present
 * @param {object} [options]
 * @param {(lease) => string | { uri: string, token?: string } | Promise<...>} [options.resolveProxy]
 *   maps a lease to its proxy (a URL, or the proxy's `uri` and a `Proxy-Authorization` value):
 *   for resources whose value is a handle, so secrets need not live in values. Default: the
 *   value is the proxy URL.
 * @param {number} [options.idleMs=60000] a dispatcher unused this long is closed
 * @param {object} [options.agent] more ProxyAgent options (e.g. `requestTls: { ca }`)
 */
export function proxyFetch(host, { resolveProxy = (lease) => lease.value, idleMs = 60_000, agent = {}, timers = SYSTEM_TIMERS } = {}) {
  if (typeof resolveProxy !== "function") throw invalidOption("resolveProxy must be a function");
  if (!(typeof idleMs === "number" && idleMs > 0)) throw invalidOption("idleMs must be a number > 0");
  /** key → { agent: Promise<ProxyAgent>, busy, bodies, idle }: `busy` counts requests waiting
   * for their answer's head and body reads waiting for data; `bodies` the delivered bodies not
   * yet read to the end (each with the function that abandons it). */
  const entries = new Map();
  let closed = false;
  const keyOf = (kind, value) => (typeof host?.resourceId === "function" ? host.resourceId(kind, value) : `${kind}\u0000${value}`);

  /** Ends a resource's dispatcher: gracefully when idle, at once (in-flight requests fail)
   * when the resource is gone or this proxyFetch closes. */
  function drop(key, graceful = false) {
    const e = entries.get(key);
    if (!e) return Promise.resolve();
    entries.delete(key);
    if (e.idle !== null) timers.clearTimeout(e.idle);
    // Bodies nobody has read for idleMs are cancelled: reading one later fails (it does not
    // end short), and the request no longer holds its connection open.
    if (graceful) for (const abandon of e.bodies) abandon();
    e.bodies.clear();
    return e.agent
      .then((a) => (graceful ? a.close() : a.destroy()))
      .catch(() => {});
  }

  const off = typeof host?.on === "function"
    ? host.on("RESOURCE_DEREGISTERED", (ev) => void drop(ev.id ?? `${ev.kind}\u0000${ev.value}`))
    : () => {};

  function entry(lease) {
    const key = keyOf(lease.kind, lease.value);
    let e = entries.get(key);
    if (!e) {
      const made = Promise.resolve(resolveProxy(lease)).then((p) => {
        const proxy = typeof p === "string" ? fromUrl(p) : p;
        if (!proxy || typeof proxy.uri !== "string") throw invalidOption("resolveProxy must give a proxy URL or { uri, token }");
        return new ProxyAgent({ ...agent, clientFactory: hangUpAware(agent.clientFactory), uri: proxy.uri, token: proxy.token, proxyTunnel: false });
      });
      e = { key, agent: made, busy: 0, bodies: new Set(), idle: null };
      made.catch(() => entries.get(key) === e && entries.delete(key));
      entries.set(key, e);
    }
    return e;
  }

  /** A request starts, or a body read begins waiting: the dispatcher is not idle. */
  function busy(e) {
    e.busy++;
    if (e.idle !== null) timers.clearTimeout(e.idle);
    e.idle = null;
  }

  /** …and ends: with nothing else waiting, the dispatcher idles; idleMs later it is closed. */
  function rest(e) {
    if (--e.busy > 0 || entries.get(e.key) !== e || idleMs === Infinity) return;
    if (e.idle !== null) timers.clearTimeout(e.idle);
    // Node runs a delay past 2^31 − 1 ms after 1 ms: clamp it.
    e.idle = timers.setTimeout(() => void drop(e.key, true), Math.min(idleMs, 2 ** 31 - 1));
    e.idle?.unref?.();
  }

  /**
   * `fetch` through the resource of `attempt.lease` (or of a bare lease). With an attempt, its
   * signal, phase marker and idempotency key are applied.
   */
  async function fetchThrough(attempt, input, init = {}) {
    if (closed) throw invalidOption("this proxyFetch is closed");
    const lease = attempt?.lease ?? attempt;
    if (!lease || typeof lease.kind !== "string" || typeof lease.value !== "string") throw invalidOption("fetch needs an attempt or a lease");
    const phase = typeof attempt?.phase === "function" ? attempt.phase : () => {};
    const headers = new Headers(init.headers);
    if (attempt?.idempotencyKey !== undefined && !headers.has("idempotency-key")) headers.set("idempotency-key", attempt.idempotencyKey);
    const signals = [init.signal, attempt?.signal].filter(Boolean);
    const e = entry(lease);
    busy(e);
    // undici does not cancel a CONNECT in progress when the request is aborted: an abort before
    // the request went out ends the resource's dispatcher (and that socket); the next request
    // on the resource opens a new one. (Leases are exclusive: nothing else is in flight on it.)
    let reached = "connect";
    const onAbort = () => reached === "connect" && void drop(e.key);
    const mark = (p) => {
      reached = p;
      phase(p);
    };
    for (const s of signals) s.addEventListener("abort", onAbort, { once: true });
    const unhook = () => signals.forEach((s) => s.removeEventListener("abort", onAbort));
    try {
      mark("connect");
      const base = await e.agent;
      const dispatcher = base.compose((dispatch) => (opts, handler) => dispatch(opts, marked(handler, mark)));
      const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
      const res = await undiciFetch(input, { ...init, headers, dispatcher, ...(signal ? { signal } : {}) });
      unhook();
      if (!res.body) {
        rest(e);
        return res;
      }
      // The body is the caller's: the dispatcher counts as busy only while a read of it waits
      // for data (the stream pulls only when read: highWaterMark 0). One left unread idleMs is
      // abandoned when the dispatcher closes.
      const reader = res.body.getReader();
      let control;
      const abandon = () => {
        const why = new DOMException(`the body was left unread for ${idleMs} ms (proxyFetch idleMs): it was cancelled and its connection closed`, "AbortError");
        try {
          control.error(why);
        } catch {
          // already closed
        }
        reader.cancel(why).catch(() => {});
      };
      e.bodies.add(abandon);
      const body = new ReadableStream({
        start(c) {
          control = c;
        },
        async pull(c) {
          busy(e);
          try {
            const { value, done: end } = await reader.read();
            if (end) {
              e.bodies.delete(abandon);
              c.close();
            } else c.enqueue(value);
          } catch (err) {
            e.bodies.delete(abandon);
            c.error(err);
          } finally {
            rest(e);
          }
        },
        cancel(reason) {
          e.bodies.delete(abandon);
          return reader.cancel(reason);
        },
      }, { highWaterMark: 0 });
      const wrapped = new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
      // A constructed Response has no url and is never `redirected`: keep the fetched one's
      // (where a followed redirect ended, e.g. a captcha page, matters to the caller).
      Object.defineProperties(wrapped, { url: { value: res.url, enumerable: true }, redirected: { value: res.redirected, enumerable: true } });
      rest(e); // the answer's head is in: what remains is the caller's reading
      return wrapped;
    } catch (err) {
      unhook();
      rest(e);
      throw err;
    }
  }

  return {
    fetch: fetchThrough,
    /** Open dispatchers (one per resource used lately). */
    get size() {
      return entries.size;
    },
    /** Closes every dispatcher and stops listening to the host. */
    async close() {
      closed = true;
      off();
      await Promise.all([...entries.keys()].map((key) => drop(key)));
    },
  };
}
