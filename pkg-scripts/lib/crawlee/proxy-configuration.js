// `ReputeProxyConfiguration`: a Crawlee `ProxyConfiguration` whose proxy for each request is a
// repute lease in the context of the request's destination (README "Crawlee"). Crawlee's HTTP
// crawlers (HttpCrawler, CheerioCrawler, …) call `newProxyInfo(sessionId, { request })` before
// each navigation: a lease is taken there (context: the request's `host[:port]`, or `context(request)`;
// `groups` passed on to acquire), and its proxy URL given to Crawlee (the value itself, or
// `proxyUrl(lease)` for resources registered by a name). The outcome comes from the crawler's
// own hooks, which `crawlerOptions(options)` adds to the crawler's options:
// - a preNavigationHook (the last) notes when the request went out;
// - a postNavigationHook (the first) times the proxy leg — request sent to answer head, the
//   latency every outcome reports — and judges the head (outcome.js): a blocked status is reported
//   BLOCKED at once and thrown as a `RequestBlockedError` (Crawlee's `SessionError`: the
//   request is retried, on another lease); a 502/504 is reported and Crawlee fails it itself;
//   an answer Crawlee will skip (redirected off its enqueue strategy: no handler runs after)
//   is reported and its lease released there;
// - the request handler, wrapped, judges the read answer first — `isBlocked(ctx)` (a soft ban)
//   → BLOCKED, else a success or SLOW by the proxy leg — then runs the
//   user's handler while the lease is still held (ctx.sendRequest goes through the same proxy);
// - errorHandler / failedRequestHandler classify what failed before that (a timeout, a reset,
//   the proxy refusing us) and report it.
// Every lease is released when its request ends (attempts.js). Owns the wiring to Crawlee.

import { ProxyConfiguration } from "@crawlee/core";
import { CallError, invalidOption, redactSecrets } from "../call/errors.js";
import { Attempts } from "./attempts.js";
import { requestBlockedError } from "./blocked-error.js";
import { destinationOf } from "./destination.js";
import { BLOCKED_STATUS_CODES, classifyAnswer, classifyCrawleeError } from "./outcome.js";

/** The shortest wait for an exhausted pool (its next change may be "now" while nothing is free). */
const MIN_WAIT_MS = 50;

/** The session pool's blocked codes when the user sets none (Crawlee's BLOCKED_STATUS_CODES). */
const CRAWLEE_BLOCKED = [401, 403, 429];

const defaultOnError = (e) => console.error(`repute/crawlee: ${redactSecrets(e?.message ?? e)}`);

export class ReputeProxyConfiguration extends ProxyConfiguration {
  #attempts;
  #context;
  #groups;
  #proxyUrl;
  #isBlocked;
  #blockedStatusCodes;
  #slowThresholdMs;
  #maxWaitMs;
  #wired = false;

  /**
   * @param {object} options
   * @param {object} options.pool an embedded `Pool`, `openPool`'s host, or a `repute/client` pool
   * @param {(request) => string} [options.context] the context of a request (default: its
   *   destination, `host[:port]`: the port only when it is not the scheme's default)
   * @param {Array<string | null> | ((request) => Array<string | null> | undefined)} [options.groups]
   * @param {(lease, options?) => string | Promise<string>} [options.proxyUrl] a lease's proxy URL
   *   (default: the resource's value is the URL); `proxyUrls(…)` from "repute" makes one
   * @param {(ctx) => boolean | Promise<boolean>} [options.isBlocked] soft-ban predicate on the read answer
   * @param {number[]} [options.blockedStatusCodes=[401, 403, 407, 429]]
   * @param {number} [options.slowThresholdMs=2000] a success whose proxy leg (request sent to
   *   answer head) took longer is reported SLOW
   * @param {number} [options.maxWaitMs=0] wait this long at most for an exhausted pool whose next
   *   change is that near (pacing), before failing the attempt with POOL_EXHAUSTED
   * @param {number} [options.maxHoldMs=300000] a lease whose request never ended is released after this
   * @param {(error) => void} [options.onError] hears of failed reports, releases and renewals
   */
  constructor({ pool, context = destinationOf, groups, proxyUrl = (lease) => lease.value, isBlocked = null, blockedStatusCodes = BLOCKED_STATUS_CODES, slowThresholdMs = 2000, maxWaitMs = 0, maxHoldMs = 300_000, onError = defaultOnError, timers } = {}) {
    super();
    for (const m of ["acquire", "report", "release"]) {
      if (typeof pool?.[m] !== "function") throw invalidOption(`pool must have the Pool methods (${m} is missing): an embedded Pool, openPool's host or a repute/client pool`);
    }
    if (typeof context !== "function") throw invalidOption("context must be a function of the request");
    if (!(groups === undefined || Array.isArray(groups) || typeof groups === "function")) throw invalidOption("groups must be an array, or a function of the request");
    if (typeof proxyUrl !== "function") throw invalidOption("proxyUrl must be a function of the lease");
    if (!(isBlocked === null || typeof isBlocked === "function")) throw invalidOption("isBlocked must be a function");
    if (!(Array.isArray(blockedStatusCodes) && blockedStatusCodes.every((s) => Number.isInteger(s) && s >= 100 && s <= 599))) throw invalidOption("blockedStatusCodes must be HTTP status codes");
    if (!(typeof slowThresholdMs === "number" && slowThresholdMs > 0)) throw invalidOption("slowThresholdMs must be a number > 0");
    if (!(typeof maxHoldMs === "number" && maxHoldMs > 0)) throw invalidOption("maxHoldMs must be a number > 0");
    if (!(typeof maxWaitMs === "number" && maxWaitMs >= 0 && Number.isFinite(maxWaitMs))) throw invalidOption("maxWaitMs must be a finite number >= 0");
    if (typeof onError !== "function") throw invalidOption("onError must be a function");
    this.#attempts = new Attempts({ pool, onError, maxHoldMs, ...(timers ? { timers } : {}) });
    this.#context = context;
    this.#groups = groups;
    this.#proxyUrl = proxyUrl;
    this.#isBlocked = isBlocked;
    this.#blockedStatusCodes = [...blockedStatusCodes];
    this.#slowThresholdMs = slowThresholdMs;
    this.#maxWaitMs = maxWaitMs;
  }

  /** Leases held now (one per request in flight). */
  get held() {
    return this.#attempts.size;
  }

  /** Crawlee's entry: a lease for `request`, as the proxy of this navigation. */
  async newProxyInfo(sessionId, options = {}) {
    if (typeof sessionId === "number") sessionId = `${sessionId}`;
    const request = options?.request;
    if (!request) throw invalidOption("repute/crawlee leases a proxy per request: newProxyInfo needs { request } (an HttpCrawler or CheerioCrawler passes it)");
    if (!this.#wired) throw invalidOption("repute/crawlee hears of outcomes through the crawler's hooks: build the crawler with proxies.crawlerOptions({ … })");
    const context = this.#context(request);
    if (typeof context !== "string" || context.trim() === "") throw invalidOption("context(request) must give a non-blank string");
    const groups = typeof this.#groups === "function" ? this.#groups(request) : this.#groups;
    const attempt = await this.#lease(request, context, groups);
    const { lease } = attempt;
    try {
      if (lease.kind !== "PROXY") throw invalidOption(`the pool leased ${lease.kind} ${JSON.stringify(this.#attempts.name(lease))} for ${JSON.stringify(context)}, not a PROXY: list the proxies' groups in \`groups\``);
      const url = await this.#proxyUrl(lease);
      return proxyInfo(url, sessionId, this.#attempts.name(lease));
    } catch (e) {
      await this.#attempts.close(attempt);
      if (e instanceof CallError) throw e; // its message is redacted already
      throw new CallError("CREDENTIAL_UNAVAILABLE", `the proxy URL of ${JSON.stringify(this.#attempts.name(lease))} could not be had: ${e?.message ?? e}`, { retryable: true, stopReason: "credential" });
    }
  }

  /** A lease for the request; an exhausted pool is waited for while its next change comes
   * within `maxWaitMs` (pacing gaps), else its POOL_EXHAUSTED error goes to Crawlee. */
  async #lease(request, context, groups) {
    const until = this.#attempts.now() + this.#maxWaitMs;
    for (;;) {
      try {
        return await this.#attempts.open(request, context, groups);
      } catch (e) {
        const left = until - this.#attempts.now();
        if (!(e instanceof CallError && e.code === "POOL_EXHAUSTED" && typeof e.retryAfterMs === "number" && e.retryAfterMs <= left)) throw e;
        await this.#attempts.wait(Math.min(left, Math.max(MIN_WAIT_MS, e.retryAfterMs)));
      }
    }
  }

  /** The URL alone (same lease as `newProxyInfo`: held until the request ends). */
  async newUrl(sessionId, options) {
    return (await this.newProxyInfo(sessionId, options))?.url;
  }

  /**
   * The crawler's options with this configuration and its hooks added (the user's own hooks and
   * handlers still run): `new CheerioCrawler(proxies.crawlerOptions({ requestHandler, … }))`.
   */
  crawlerOptions(options = {}) {
    if (options === null || typeof options !== "object") throw invalidOption("crawlerOptions takes the crawler's options object");
    if (options.proxyConfiguration !== undefined && options.proxyConfiguration !== this) throw invalidOption("the options already have another proxyConfiguration");
    const { handlePageFunction, handleFailedRequestFunction, ...rest } = options;
    const handler = rest.requestHandler ?? handlePageFunction;
    const failed = rest.failedRequestHandler ?? handleFailedRequestFunction;
    const errorHandler = rest.errorHandler;
    this.#wired = true;
    // Crawlee's HTTP crawler runs a postNavigationHook of its own before ours: it fails (without
    // retry) an answer whose content type it does not parse, unless the session pool counts the
    // status as blocked. Our blocked codes are the session pool's too, so a refusal with any
    // body (a 407 is often text/plain) reaches our hook and is retried through another proxy.
    const sessionPool = rest.useSessionPool === false ? {} : {
      sessionPoolOptions: {
        ...rest.sessionPoolOptions,
        blockedStatusCodes: [...new Set([...(rest.sessionPoolOptions?.blockedStatusCodes ?? CRAWLEE_BLOCKED), ...this.#blockedStatusCodes])],
      },
    };
    return {
      ...rest,
      ...sessionPool,
      proxyConfiguration: this,
      preNavigationHooks: [...(rest.preNavigationHooks ?? []), (ctx) => this.#wentOut(ctx)],
      postNavigationHooks: [(ctx) => this.#answered(ctx), ...(rest.postNavigationHooks ?? [])],
      // Without a handler of the user's, the crawler's own router handles requests.
      requestHandler: async (ctx) => this.#handle(ctx, handler ?? ((c) => c.crawler.router(c))),
      errorHandler: async (ctx, error) => {
        await this.#failed(ctx, error);
        return errorHandler?.(ctx, error);
      },
      failedRequestHandler: async (ctx, error) => {
        await this.#failed(ctx, error);
        return failed?.(ctx, error);
      },
    };
  }

  /** Releases every lease still held (a crawl torn down mid-request). */
  async close() {
    await this.#attempts.closeAll();
  }

  // ----- the hooks ----------------------------------------------------------------------------

  #wentOut(ctx) {
    const attempt = this.#attempts.get(ctx.request);
    if (attempt) this.#attempts.sent(attempt);
  }

  async #answered(ctx) {
    const attempt = this.#attempts.get(ctx.request);
    if (!attempt || attempt.settled || !ctx.response) return;
    this.#attempts.answered(attempt);
    const v = await classifyAnswer(ctx.response, { blockedStatusCodes: this.#blockedStatusCodes });
    if (v.report === "BLOCKED") {
      await this.#attempts.settle(attempt, v.report, this.#attempts.latency(attempt));
      if (v.status === 407) this.#proxyUrl.invalidate?.(attempt.lease);
      throw this.#blocked(attempt, v.status);
    }
    if (willSkip(ctx)) {
      // Crawlee drops this request once the body is read, calling neither the request handler
      // nor an error handler: its outcome is the answer's head, and the lease ends here.
      await this.#attempts.settle(attempt, v.report, this.#attempts.latency(attempt));
      await this.#attempts.close(attempt);
      return;
    }
    if (v.report === "ok") {
      attempt.answer = v; // judged again once the body is read
      return;
    }
    await this.#attempts.settle(attempt, v.report, this.#attempts.latency(attempt));
    // Anything else Crawlee handles as it would (a 5xx fails the request; a 404 is a page).
  }

  async #handle(ctx, handler) {
    const attempt = this.#attempts.get(ctx.request);
    try {
      if (attempt && !attempt.settled && attempt.answer) {
        if (this.#isBlocked && (await this.#isBlocked(ctx))) {
          await this.#attempts.settle(attempt, "BLOCKED", this.#attempts.latency(attempt));
          throw this.#blocked(attempt, attempt.answer.status, "a block page");
        }
        const latency = this.#attempts.latency(attempt);
        await this.#attempts.settle(attempt, latency >= this.#slowThresholdMs ? "SLOW" : "ok", latency);
      }
      return await handler(ctx);
    } finally {
      if (attempt) await this.#attempts.close(attempt);
    }
  }

  async #failed(ctx, error) {
    const attempt = this.#attempts.get(ctx.request);
    if (!attempt) return;
    if (!attempt.settled) {
      // A transport failure says most; else an answer that arrived (Crawlee's own hook may have
      // failed it before ours saw it: a type it does not parse) is judged by its head.
      let v = classifyCrawleeError(error);
      if (v.report === null && ctx.response) v = await classifyAnswer(ctx.response, { blockedStatusCodes: this.#blockedStatusCodes });
      if (v.report === "BLOCKED" && v.status === 407) this.#proxyUrl.invalidate?.(attempt.lease);
      await this.#attempts.settle(attempt, v.report, this.#attempts.latency(attempt));
    }
    await this.#attempts.close(attempt);
  }

  #blocked(attempt, status, what = `${status}`) {
    const resource = this.#attempts.name(attempt.lease);
    const who = status === 407
      ? `the proxy ${JSON.stringify(resource)} refused our credentials (407) for ${JSON.stringify(attempt.context)}`
      : `${JSON.stringify(attempt.context)} refused the proxy ${JSON.stringify(resource)} (${what})`;
    return requestBlockedError(attempt.request, `repute: ${who}; reported BLOCKED, the request is retried through another proxy`, { status, resource, context: attempt.context });
  }
}

/**
 * Whether Crawlee will skip the request once its answer is parsed: it landed (after redirects)
 * off the enqueue strategy of the `enqueueLinks` that added it. Crawlee 3 then returns without
 * calling the request handler or an error handler (some versions tell `onSkippedRequest`, not
 * all), so this asks the crawler's own test, with the URL the answer came from.
 */
function willSkip(ctx) {
  const url = ctx.response?.url;
  if (typeof ctx.crawler?.requestMatchesEnqueueStrategy !== "function" || typeof url !== "string" || url === "") return false;
  try {
    return !ctx.crawler.requestMatchesEnqueueStrategy(Object.create(ctx.request, { loadedUrl: { value: url } }));
  } catch {
    return false;
  }
}

/** Crawlee's ProxyInfo of a proxy URL; a URL that does not parse is named, never quoted. */
function proxyInfo(url, sessionId, resource) {
  let u;
  try {
    u = new URL(url);
  } catch {
    u = null;
  }
  if (!u || !u.hostname) throw invalidOption(`the proxy URL of ${JSON.stringify(resource)} is not a URL`);
  return {
    sessionId,
    url,
    username: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    hostname: u.hostname,
    port: u.port,
  };
}
