// The Durable Object that holds one region's pool (`PoolObject`): the same HTTP handler as the
// Node server (lib/http/handler.js) over a `DurableHost` (durable-host.js).
//
// - The engine is the web build, loaded from a precompiled `WebAssembly.Module` (the only form
//   workerd allows); the clock is `Date.now()`; the pool is given no seed, so the engine seeds
//   it from `crypto.getRandomValues` (getrandom) when it is made, inside the object's
//   constructor's `blockConcurrencyWhile` — never at module scope.
// - The pool is restored inside `blockConcurrencyWhile`, so no request meets it half-restored.
// - A malformed binding (`REPUTE_TOKENS`, `REPUTE_CONFIG`, or a count below that is not an
//   integer in range) makes every request answer a 500 `misconfigured` problem naming the
//   binding and what is wrong (never the secret's text).
// - Tokens come from the `REPUTE_TOKENS` secret (`{"tokens": [{"token", "role"}]}`, as the Node
//   server's `--tokens` file), compared in constant time by the handler (lib/http/auth.js).
//   Without tokens the handler serves only loopback `Host`s (a local `edge-dev`); deployed, set
//   the secret.
// - Other bindings (all optional): `REPUTE_CONFIG` (a partial config, JSON: overrides on every
//   start), `REPUTE_CHECKPOINT_MS` (alarm delay, default 10000), `REPUTE_EVENTS_KEPT` (audit
//   log retention, default 100000), `REPUTE_STREAM_MS` (an event stream's lifetime, default
//   60000: the object is not told when a subscriber leaves, so every stream ends in time and
//   EventSource resumes it by Last-Event-ID), `REPUTE_MAX_WAIT_MS` and `REPUTE_MAX_WAITING` (the
//   longest `waitMs` a request may ask for, default 30000, and the requests waiting at once,
//   default 1000: as `repute serve --max-wait-ms/--max-waiting`), `REPUTE_TEST_HOOKS` ("1": the `/__test/` routes below, for
//   the tests and the benchmark only; with it, `REPUTE_TEST_RESERVE_STEP` sets the reservation step).

import wasm from "../../pkg/repute_bg.wasm";
import { init, Pool } from "../../web.js";
import { createHandler } from "../http/handler.js";
import { webBody } from "../http/replies.js";
import { parseTokens } from "../http/auth.js";
import { HttpProblem, problemReply } from "../http/problems.js";
import { DurableHost } from "./durable-host.js";

/** `/regions/{region}` then the path the handler routes. */
const PREFIX = /^\/regions\/[^/?]+/;

/** An integer binding (a string, or a number from wrangler.toml) of at least `min`, or `fallback`
 * when unset; anything else makes the object misconfigured (a typo is not silently ignored). */
function count(env, name, min, fallback) {
  const text = env[name];
  if (text === undefined || text === "") return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) throw misconfigured(`the ${name} binding must be an integer of at least ${min}`);
  return n;
}

/** A binding the object cannot start with: every request answers this 500 problem. */
const misconfigured = (detail) => new HttpProblem(500, "misconfigured", detail);

/** The REPUTE_TOKENS secret, parsed; an error names what is wrong, never the text (a secret). */
function tokensOf(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    throw misconfigured("the REPUTE_TOKENS secret is not valid JSON");
  }
  try {
    return parseTokens(doc);
  } catch (e) {
    throw misconfigured(`the REPUTE_TOKENS secret: ${e.message}`);
  }
}

/** The REPUTE_CONFIG binding, parsed (the engine checks its fields when the pool opens). */
function configOf(text) {
  try {
    return JSON.parse(text);
  } catch {
    throw misconfigured("the REPUTE_CONFIG binding is not valid JSON");
  }
}

/** The most of a refused request's body read and dropped before answering (see `Upload`). */
const DRAIN_LIMIT = 16 * 2 ** 20;

/**
 * A request's body, read by the handler through `chunks()` (as far as it wants: stopping early
 * leaves the rest unread, not cancelled) and then `drain()`ed. workerd answers a request whose
 * body was not read to its end by resetting the connection, and a client still sending (most
 * send everything, then read) loses the answer with it: a refused 100 KB upload reset 3 times
 * in 4. So the rest of a refused body is read and dropped before the answer, up to
 * `DRAIN_LIMIT` bytes; a larger one is let go (workerd resets it; README "Edge worker").
 */
class Upload {
  #stream;
  #reader = null;
  #done = false;
  #read = 0;

  constructor(stream) {
    this.#stream = stream;
    this.#done = stream === null;
  }

  async *chunks() {
    if (this.#done) return;
    this.#reader ??= this.#stream.getReader();
    while (!this.#done) {
      const { done, value } = await this.#reader.read();
      if (done) this.#done = true;
      else {
        this.#read += value.byteLength;
        yield value;
      }
    }
  }

  /** Reads what is left of the body (`declared`: its content-length) and drops it; false when
   * more is left than is read so. */
  async drain(declared) {
    if (this.#done) return true;
    if (Number(declared) - this.#read > DRAIN_LIMIT) return false;
    try {
      for await (const _ of this.chunks()) if (this.#read > DRAIN_LIMIT) return false;
    } catch {
      return false; // the client went away
    }
    return true;
  }
}

export class PoolObject {
  #ctx;
  #env;
  #host = null;
  #handle = null;
  #testNow = null;
  /** The problem every request answers when a binding is malformed (see the constructor). */
  #broken = null;

  constructor(ctx, env) {
    this.#ctx = ctx;
    this.#env = env;
    // Test hooks only: a clock the tests set (REPUTE_TEST_NOW to start, then the
    // x-repute-test-now header of each request), so the Node server's suites run unchanged.
    const hooks = env.REPUTE_TEST_HOOKS === "1";
    this.#testNow = hooks && env.REPUTE_TEST_NOW ? Number(env.REPUTE_TEST_NOW) : null;
    const now = hooks ? () => this.#testNow ?? Date.now() : Date.now;
    ctx.blockConcurrencyWhile(async () => {
      await init(wasm);
      try {
        const tokens = env.REPUTE_TOKENS ? tokensOf(env.REPUTE_TOKENS) : [];
        const config = env.REPUTE_CONFIG ? configOf(env.REPUTE_CONFIG) : undefined;
        const checkpointMs = count(env, "REPUTE_CHECKPOINT_MS", 0, 10000);
        const eventsKept = count(env, "REPUTE_EVENTS_KEPT", 1, 100000);
        const streamMaxMs = count(env, "REPUTE_STREAM_MS", 1, 60000);
        const maxWaitMs = count(env, "REPUTE_MAX_WAIT_MS", 0, 30000);
        const maxWaiting = count(env, "REPUTE_MAX_WAITING", 0, 1000);
        try {
          this.#host = await DurableHost.restore({
            ctx,
            Pool,
            config,
            now,
            checkpointMs,
            ...(hooks && env.REPUTE_TEST_RESERVE_STEP ? { reserveStep: Number(env.REPUTE_TEST_RESERVE_STEP) } : {}),
            eventsKept,
          });
        } catch (e) {
          if (e.code === "INVALID_CONFIG") throw misconfigured(`the REPUTE_CONFIG binding: ${e.message}`);
          throw e;
        }
        this.#handle = await createHandler(this.#host, { tokens, streamMaxMs, maxWaitMs, maxWaiting });
      } catch (e) {
        // A bad binding stays bad until it is redeployed: answer it, rather than throw here
        // (which resets the object, to fail again on every request with no clear error).
        if (!(e instanceof HttpProblem)) throw e;
        this.#broken = e;
        console.error(`repute: ${e.message}`);
      }
    });
  }

  async fetch(request) {
    if (this.#broken) {
      const { status, headers, body } = problemReply(this.#broken);
      return new Response(body, { status, headers });
    }
    // The target as the platform passes it (workerd has resolved dot segments already).
    const raw = request.url.slice(request.url.indexOf("/", request.url.indexOf("//") + 2));
    const target = raw.replace(PREFIX, "") || "/";
    if (this.#env.REPUTE_TEST_HOOKS === "1") {
      const at = request.headers.get("x-repute-test-now");
      if (at !== null) this.#testNow = Number(at);
      if (target.startsWith("/__test/")) return this.#test(target, new URL(request.url));
    }
    if (!this.#host.recover()) {
      const { status, headers, body } = problemReply(new HttpProblem(503, "storage-unavailable", "the Durable Object's storage cannot be read; nothing was changed", { "retry-after": "1" }));
      return new Response(body, { status, headers });
    }
    // The handler reads only these of a request (handler.js); the target is the region's.
    const upload = new Upload(request.body);
    const adapted = {
      method: request.method,
      url: request.url,
      target,
      headers: request.headers,
      get body() {
        return upload.chunks();
      },
      signal: request.signal,
      text: () => request.text(),
    };
    const { status, headers, body } = await this.#handle.reply(adapted);
    // A request refused before its body was read (401, 413, 415, …): read the rest first.
    await upload.drain(request.headers.get("content-length"));
    // A large dashboard comes in pieces: a stream that builds each only when workerd asks.
    return new Response(webBody(body), { status, headers });
  }

  async alarm() {
    if (this.#broken) return;
    this.#host.alarm();
  }

  /** Test and benchmark hooks (REPUTE_TEST_HOOKS=1 only). */
  #test(target, url) {
    const path = target.split("?")[0];
    const json = (v) => Response.json(v);
    const host = this.#host;
    if (path === "/__test/checkpoint") {
      try {
        return json({ ...host.checkpoint(), pending: host.pending() });
      } catch (e) {
        return Response.json({ error: e.message, pending: host.pending() }, { status: 503 });
      }
    }
    if (path === "/__test/pending") return json(host.pending());
    if (path === "/__test/fail-load") {
      host.store.failLoad = url.searchParams.get("on") === "1";
      return json({ failLoad: host.store.failLoad });
    }
    if (path === "/__test/fail-reserve") {
      host.store.failReserve = url.searchParams.get("on") === "1";
      return json({ failReserve: host.store.failReserve });
    }
    if (path === "/__test/fail-checkpoint") {
      host.store.failAfter = Number(url.searchParams.get("after") ?? 0);
      return json({ armed: host.store.failAfter });
    }
    if (path === "/__test/stored") {
      const started = performance.now();
      const stored = host.store.load();
      const snapshot = url.searchParams.get("full") === "1" ? (stored?.snapshot ?? null) : undefined;
      return json({ ms: performance.now() - started, resources: stored?.resources ?? 0, bytes: stored?.snapshot.length ?? 0, snapshot, size: host.store.size() });
    }
    return new Response("no such test hook", { status: 404 });
  }
}
