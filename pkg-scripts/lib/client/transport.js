// The pool client's HTTP transport (`repute/client`): one undici `Agent` per client, so calls
// share keep-alive connections to the pool server; the bearer token on every request (held
// here, never shown); one time limit per operation (`timeoutMs`, covering every attempt, the
// waits between them and reading the answer); the caller's signals; and bounded retries on
// connection errors only — never on an answer, whatever its status. An operation that is not
// idempotent (acquire, report, a snapshot import) is retried only when its request cannot have
// left (the connection was refused, or never opened); an idempotent one also when the
// connection broke after sending. Answers are read whole here; what they mean is client.js's.

import { Agent } from "undici";
import { PoolClientError, answerError, invalidArgument, retryAfterMs } from "./errors.js";

/** Transport error codes of a request that cannot have been sent (no connection was made). */
const NEVER_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "UND_ERR_CONNECT_TIMEOUT"]);
const MAX_DELAY_MS = 2 ** 31 - 1;

/** The base URL's parts; refuses credentials, a query or a fragment (never echoing the URL). */
function baseOf(url) {
  let u;
  try {
    u = new URL(String(url));
  } catch {
    throw invalidArgument("url must be an absolute http: or https: URL");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw invalidArgument("url must be an absolute http: or https: URL");
  if (u.username || u.password) throw invalidArgument("url must not carry credentials: pass the bearer token as `token`");
  if (u.search || u.hash) throw invalidArgument("url must not have a query or a fragment");
  return { origin: u.origin, prefix: u.pathname.replace(/\/+$/, ""), shown: `${u.origin}${u.pathname.replace(/\/+$/, "")}` };
}

/** A positive integer of ms (or Infinity where allowed). */
function duration(name, v, fallback, { infinite = false, min = 1 } = {}) {
  if (v === undefined) return fallback;
  if (!(typeof v === "number" && v >= min && (Number.isInteger(v) || (infinite && v === Infinity)))) {
    throw invalidArgument(`${name} must be an integer >= ${min}${infinite ? " or Infinity" : ""}`);
  }
  return v;
}

/** Headers of an undici answer: lower-case names, one value. */
const header = (headers, name) => {
  const v = headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
};

export class Transport {
  #token;
  #agent;
  #closing = new AbortController();
  #signal;
  #random;

  /**
   * @param {object} o url, token, signal (aborts everything, for good), timeoutMs (10 s),
   *   retries (2: attempts beyond the first, on connection errors), retryDelayMs (50: the first
   *   wait, doubling, with jitter), dispatcher (an undici Dispatcher to use instead of the
   *   client's own Agent), random
   */
  constructor({ url, token, signal, timeoutMs, retries, retryDelayMs, dispatcher, random = Math.random } = {}) {
    this.base = baseOf(url);
    if (token !== undefined && token !== null && (typeof token !== "string" || token === "" || /[\r\n]/.test(token))) {
      throw invalidArgument("token must be a non-empty string without line breaks");
    }
    this.#token = token || null;
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalidArgument("signal must be an AbortSignal");
    this.#signal = signal ?? null;
    this.timeoutMs = duration("timeoutMs", timeoutMs, 10_000, { infinite: true });
    this.retries = duration("retries", retries, 2, { min: 0 });
    this.retryDelayMs = duration("retryDelayMs", retryDelayMs, 50, { min: 0 });
    this.#random = random;
    // Keep-alive under the server's own (65 s): a connection is closed by the client first.
    this.#agent = dispatcher ?? new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000, connect: { timeout: Math.min(10_000, this.timeoutMs) } });
    this.ownAgent = dispatcher === undefined;
  }

  get closed() {
    return this.#closing.signal.aborted;
  }

  /** Why an operation must stop now (closed, aborted by a signal), or null. */
  #stopped(signal) {
    if (this.#closing.signal.aborted) return new PoolClientError("CLOSED", "the pool client is closed");
    if (this.#signal?.aborted || signal?.aborted) return new PoolClientError("ABORTED", "aborted by the caller's signal");
    return null;
  }

  /**
   * One operation: `op` names it in errors; `method`, `path` (after the base, starting with
   * "/"), `body` (an object sent as JSON, or a string sent as application/json), `idempotent`,
   * `expect` (statuses that are answers, not errors: {200: true, 409: "nothing-eligible"} —
   * a string admits that status only with that problem), `signal`, `stream` (give the open
   * answer, body unread, for a stream), `waitMs` (how long the server may wait before it answers:
   * added to the time limit). Resolves to { status, headers, text, json, problem }
   * (or { status, headers, body } when streaming).
   */
  async request(op, { method = "GET", path, body, idempotent = method === "GET" || method === "PUT" || method === "DELETE", expect = { 200: true }, signal, stream = false, headers = {}, waitMs = 0 }) {
    const started = performance.now();
    const limitMs = this.timeoutMs + waitMs;
    const deadline = started + limitMs;
    let payload;
    const h = { ...headers };
    if (body !== undefined) {
      payload = typeof body === "string" ? body : JSON.stringify(body);
      h["content-type"] = "application/json";
    }
    if (this.#token !== null) h.authorization = `Bearer ${this.#token}`;
    for (let attempt = 1; ; attempt++) {
      const stop = this.#stopped(signal);
      if (stop) throw stop;
      const controller = new AbortController();
      let timedOut = false;
      const left = deadline - performance.now();
      if (left <= 0) throw new PoolClientError("REQUEST_TIMEOUT", `${op}: no answer within ${limitMs} ms`, { attempts: attempt - 1 });
      const timer = left === Infinity ? null : setTimeout(() => ((timedOut = true), controller.abort()), Math.min(left, MAX_DELAY_MS));
      const signals = [this.#closing.signal, this.#signal, signal].filter(Boolean);
      const onAbort = () => controller.abort();
      for (const s of signals) s.addEventListener("abort", onAbort, { once: true });
      let res;
      let reading = false;
      let streaming = false;
      try {
        res = await this.#agent.request({ origin: this.base.origin, path: this.base.prefix + path, method, headers: h, body: payload, signal: controller.signal });
        const status = res.statusCode;
        if (stream && expect[status] === true) {
          // The caller reads it; the timer no longer applies (a stream has its own idle check),
          // the signals still do, until the body closes.
          streaming = true;
          res.body.once("close", () => {
            for (const s of signals) s.removeEventListener("abort", onAbort);
          });
          return { status, headers: res.headers, body: res.body };
        }
        reading = true;
        const text = await res.body.text();
        const type = (header(res.headers, "content-type") ?? "").split(";")[0].trim();
        let json;
        if (type === "application/json" || type === "application/problem+json") {
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
        }
        const problem = type === "application/problem+json" && json && typeof json === "object" ? json : null;
        const wanted = expect[status];
        const retryAfter = retryAfterMs(header(res.headers, "retry-after"));
        if (wanted === true || (typeof wanted === "string" && problem?.type === `urn:repute:problem:${wanted}`)) {
          return { status, headers: res.headers, text, json, problem, retryAfterMs: retryAfter };
        }
        throw answerError(op, status, problem, retryAfter);
      } catch (e) {
        if (e instanceof PoolClientError) throw e;
        const stopNow = this.#stopped(signal);
        if (stopNow) throw stopNow;
        if (timedOut) throw new PoolClientError("REQUEST_TIMEOUT", `${op}: no answer within ${limitMs} ms`, { attempts: attempt });
        // A connection error: it never left, or it may have reached the server.
        const code = typeof e?.code === "string" ? e.code : "unknown";
        const reached = reading || !NEVER_SENT.has(code);
        const failure = new PoolClientError("CONNECTION_FAILED", `${op}: the connection to the pool server failed (${code})`, { reached, attempts: attempt, cause: e });
        if (attempt > this.retries || (reached && !idempotent)) throw failure;
        const wait = Math.floor(this.retryDelayMs * 2 ** (attempt - 1) * (0.5 + this.#random() / 2));
        if (performance.now() + wait >= deadline) throw failure;
        await this.#sleep(wait, signal);
      } finally {
        clearTimeout(timer);
        if (!streaming) for (const s of signals) s.removeEventListener("abort", onAbort);
      }
    }
  }

  /** Waits `ms`, or less when the client closes or a signal aborts (then the loop stops). */
  #sleep(ms, signal) {
    return new Promise((resolve) => {
      const signals = [this.#closing.signal, this.#signal, signal].filter(Boolean);
      const done = () => {
        clearTimeout(timer);
        for (const s of signals) s.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      for (const s of signals) s.addEventListener("abort", done, { once: true });
    });
  }

  /** Stops every operation (they reject with CLOSED) and closes the connections. */
  async close() {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    if (this.ownAgent) await this.#agent.destroy().catch(() => {});
  }
}
