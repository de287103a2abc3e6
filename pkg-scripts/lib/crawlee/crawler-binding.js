// A ReputeProxyConfiguration as one crawler uses it (README "Crawlee"): what
// `crawlerOptions(options)` puts in the crawler's `proxyConfiguration`, and the hooks it adds
// around the user's. Crawlee's crawlers call `newProxyInfo(sessionId, { request })` before each
// navigation: the request gets a hold there (holds.js — its session's for the destination, or
// its own) in its context (`context(request)`, default `host[:port]`) with `groups`, waiting
// for a free proxy at most `maxWaitMs`, by default the navigation timeout the crawler was given
// capped at 30 s (repute serve's default limit; a server refusing the wait stops the crawl; a
// wait is no error: Crawlee counts nothing against `maxRequestRetries` while it lasts), and the
// lease's proxy URL (`proxyUrl(lease)`) goes to Crawlee. The outcome comes from the hooks:
// - a preNavigationHook (the last) notes when the request went out, and learns the crawler's
//   session pool (to hear of retired sessions) and the request's session;
// - a postNavigationHook (the first) times the proxy leg — request sent to answer head, the
//   latency every outcome reports — and judges the head (outcome.js): a blocked status is
//   reported BLOCKED at once and thrown as a `RequestBlockedError` (the crawler's own
//   SessionError: the request is retried on a new session, through another lease); a 502/504
//   is reported and Crawlee fails it itself; an answer Crawlee will skip (redirected off its
//   enqueue strategy: no handler runs after) is reported and its attempt ended there;
// - the request handler, wrapped, judges the read answer first — `isBlocked(ctx)` (a soft ban)
//   → BLOCKED, else a success or SLOW by the proxy leg — then runs the user's handler while the
//   lease is still held (ctx.sendRequest goes through the same proxy);
// - errorHandler / failedRequestHandler classify what failed before that (a timeout, a reset,
//   the proxy refusing us) and report it.
// Works for the HTTP crawlers and, with `launchContext.useIncognitoPages` (a context, and so a
// proxy, per page), the browser crawlers. Owns the wiring to one crawler; the holds, attempts
// and settings are the configuration's (proxy-configuration.js), shared by its crawlers.

import { EVENT_SESSION_RETIRED } from "@crawlee/core";
import { CallError, invalidOption } from "../call/errors.js";
import { requestBlockedError } from "./blocked-error.js";
import { crawlerError } from "./crawler-classes.js";
import { SessionLeaseEnded } from "./holds.js";
import { browserLegMs, classifyAnswer, classifyCrawleeError, headOf, PROXY_AUTH_REQUIRED } from "./outcome.js";

/** The session pool's blocked codes when the user sets none (Crawlee's BLOCKED_STATUS_CODES). */
const CRAWLEE_BLOCKED = [401, 403, 429];

const NEEDS_INCOGNITO = "repute/crawlee leases a proxy per page: give the browser crawler launchContext: { useIncognitoPages: true } (each page then has a context, and a proxy, of its own)";

/** Session pools whose retired sessions are listened to (one listener per pool). */
const listened = new WeakSet();

/** Crawlee's session pool size when the user sets none (MAX_POOL_SIZE). */
const CRAWLEE_POOL_SIZE = 1000;

/** Crawlee's navigation timeouts when the user sets none: its HTTP crawlers' and its browser
 * crawlers' `navigationTimeoutSecs` defaults. */
const HTTP_NAVIGATION_MS = 30_000;
const BROWSER_NAVIGATION_MS = 60_000;

/** The longest wait for a proxy when `maxWaitMs` is not given: `repute serve`'s default limit
 * on `waitMs` (its --max-wait-ms), so that the defaults work over a remote pool too; a try that
 * has waited this long is better retried than kept waiting. */
const DEFAULT_WAIT_CAP_MS = 30_000;

export class CrawlerBinding {
  #attempts;
  #holds;
  #s;
  #incognito;
  #maxPoolSize;
  /** How long a request waits for a lease: `maxWaitMs`, else the crawler's navigation timeout
   * (at most DEFAULT_WAIT_CAP_MS). */
  #waitMs;
  /** Crawlee reads it to relax TLS checks for a proxy that intercepts: ours do not. */
  isManInTheMiddle = false;

  /**
   * @param {object} shared the configuration's `{ attempts, holds, settings }`
   * @param {object} options the crawler's options (as given to crawlerOptions)
   */
  constructor({ attempts, holds, settings }, options) {
    this.#attempts = attempts;
    this.#holds = holds;
    this.#s = settings;
    const incognito = options.launchContext?.useIncognitoPages;
    if (options.launchContext !== undefined && incognito !== true) throw invalidOption(NEEDS_INCOGNITO);
    this.#incognito = incognito === true;
    this.#maxPoolSize = options.sessionPoolOptions?.maxPoolSize ?? CRAWLEE_POOL_SIZE;
    const navigation = options.navigationTimeoutSecs;
    // Whole milliseconds: a server takes `waitMs` as an integer.
    this.#waitMs = Math.ceil(settings.maxWaitMs
      ?? Math.min(DEFAULT_WAIT_CAP_MS, typeof navigation === "number" && navigation > 0 ? navigation * 1000 : options.launchContext !== undefined ? BROWSER_NAVIGATION_MS : HTTP_NAVIGATION_MS));
  }

  /** Leases held now by the configuration (all its crawlers). */
  get held() {
    return this.#holds.size;
  }

  /** Crawlee's entry: the proxy of this try of `request`. A browser crawler also asks, with no
   * request, for a proxy to launch a browser with: with incognito pages it gets none (each
   * page has its own). */
  async newProxyInfo(sessionId, options = {}) {
    const request = options?.request;
    if (!request) {
      if (this.#incognito) return undefined;
      throw crawlerError(undefined, "CriticalError", `${NEEDS_INCOGNITO}; an HTTP crawler passes { request } to newProxyInfo`);
    }
    if (typeof sessionId === "number") sessionId = `${sessionId}`;
    const context = this.#s.context(request);
    if (typeof context !== "string" || context.trim() === "") throw invalidOption("context(request) must give a non-blank string");
    const groups = typeof this.#s.groups === "function" ? this.#s.groups(request) : this.#s.groups;
    const session = this.#s.sessionLeases && typeof sessionId === "string" && sessionId !== "" ? sessionId : null;
    let attempt;
    try {
      attempt = await this.#attempts.open(request, { context, groups, sessionId: session, waitMs: this.#waitMs });
    } catch (e) {
      // Crawlee rotates the session on its own SessionError and tries the request again.
      if (e instanceof SessionLeaseEnded) throw crawlerError(request, "SessionError", e.message);
      // A pool server whose limit on waitMs is below this wait would refuse every request the
      // same way: the crawl stops at its first, naming both fixes.
      if (e?.code === "INVALID_ARGUMENT" && /waitMs/.test(e.message)) {
        throw crawlerError(request, "CriticalError", `the pool refused to wait ${this.#waitMs} ms for a proxy (${e.message}): give ReputeProxyConfiguration a maxWaitMs within the server's limit, or raise the limit (repute serve --max-wait-ms)`);
      }
      throw e;
    }
    const { lease } = attempt;
    const name = this.#attempts.name(lease);
    try {
      if (lease.kind !== "PROXY") throw invalidOption(`the pool leased ${lease.kind} ${JSON.stringify(name)} for ${JSON.stringify(context)}, not a PROXY: list the proxies' groups in \`groups\``);
      const url = await this.#s.proxyUrl(lease);
      return proxyInfo(url, sessionId, name);
    } catch (e) {
      void this.#holds.end(attempt.hold, "failed");
      await this.#attempts.close(attempt);
      if (e instanceof CallError) throw e; // its message is redacted already
      throw new CallError("CREDENTIAL_UNAVAILABLE", `the proxy URL of ${JSON.stringify(name)} could not be had: ${e?.message ?? e}`, { retryable: true, stopReason: "credential" });
    }
  }

  /** The URL alone (same hold as `newProxyInfo`: the request goes through it until it ends). */
  async newUrl(sessionId, options) {
    return (await this.newProxyInfo(sessionId, options))?.url;
  }

  /** The crawler's options with this binding as their proxyConfiguration and the hooks added
   * around the user's own (which still run, as do the handlers and the router). */
  crawlerOptions(options) {
    const { handlePageFunction, handleFailedRequestFunction, ...rest } = options;
    const handler = rest.requestHandler ?? handlePageFunction;
    const failed = rest.failedRequestHandler ?? handleFailedRequestFunction;
    const errorHandler = rest.errorHandler;
    // Crawlee's HTTP crawler runs a postNavigationHook of its own before ours: it fails (without
    // retry) an answer whose content type it does not parse, unless the session pool counts the
    // status as blocked. Our blocked codes and the proxy's own refusal (407) are the session
    // pool's too, so a refusal with any body (a 407 is often text/plain) reaches our hook and is
    // retried through another proxy.
    const sessionPool = rest.useSessionPool === false ? {} : {
      sessionPoolOptions: {
        ...rest.sessionPoolOptions,
        blockedStatusCodes: [...new Set([...(rest.sessionPoolOptions?.blockedStatusCodes ?? CRAWLEE_BLOCKED), ...this.#s.blockedStatusCodes, PROXY_AUTH_REQUIRED])],
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

  // ----- the hooks ----------------------------------------------------------------------------

  async #wentOut(ctx) {
    const attempt = this.#attempts.get(ctx.request);
    if (!attempt) return;
    if (ctx.page !== undefined && ctx.crawler?.launchContext?.useIncognitoPages !== true) {
      // A browser without incognito pages keeps its first page's proxy for every page.
      await this.#attempts.close(attempt);
      throw crawlerError(ctx.request, "CriticalError", NEEDS_INCOGNITO);
    }
    const sessionPool = ctx.crawler?.sessionPool;
    this.#listen(sessionPool);
    this.#holds.seen(attempt.hold, ctx.session, () => this.#full(sessionPool));
    this.#attempts.sent(attempt);
  }

  /** Whether the crawler's session pool is full: until it is, Crawlee makes a new session for
   * each request and hands none out again (its documented rotation), so an idle session's lease
   * would serve no one. */
  #full(sessionPool) {
    const live = sessionPool?.usableSessionsCount;
    const retired = sessionPool?.retiredSessionsCount;
    if (typeof live !== "number" || typeof retired !== "number") return true;
    // Its own size (set however the options reached it), else what crawlerOptions was given.
    const size = typeof sessionPool.maxPoolSize === "number" ? sessionPool.maxPoolSize : this.#maxPoolSize;
    return live + retired >= size;
  }

  /** Hears of the sessions the crawler retires: their holds end. */
  #listen(sessionPool) {
    if (!sessionPool || typeof sessionPool.on !== "function" || listened.has(sessionPool)) return;
    listened.add(sessionPool);
    sessionPool.on(EVENT_SESSION_RETIRED, (session) => {
      if (session?.id !== undefined) this.#holds.endSession(String(session.id), "retired");
    });
  }

  async #answered(ctx) {
    const attempt = this.#attempts.get(ctx.request);
    if (!attempt || attempt.settled || !ctx.response) return;
    this.#attempts.answered(attempt, browserLegMs(ctx.response));
    const v = await classifyAnswer(ctx.response, { blockedStatusCodes: this.#s.blockedStatusCodes });
    if (v.proxy) {
      // Not a page: the proxy (or the relay in front of it) refused or failed. Crawlee rotates
      // the session on its own SessionError and retries, through another lease; refused
      // credentials are loaded again.
      await this.#attempts.settle(attempt, v.report, this.#attempts.latency(attempt));
      if (v.credentials) this.#s.proxyUrl.invalidate?.(attempt.lease);
      throw crawlerError(ctx.request, "SessionError", `repute: ${v.reason} for ${JSON.stringify(attempt.context)} through ${JSON.stringify(this.#attempts.name(attempt.lease))}; reported ${v.report}, the request is retried through another proxy`);
    }
    if (v.report === "BLOCKED") {
      await this.#attempts.settle(attempt, v.report, this.#attempts.latency(attempt));
      throw this.#blocked(attempt, v.status);
    }
    if (willSkip(ctx)) {
      // Crawlee drops this request once the body is read, calling neither the request handler
      // nor an error handler: its outcome is the answer's head, and the attempt ends here.
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
        if (this.#s.isBlocked && (await this.#s.isBlocked(ctx))) {
          await this.#attempts.settle(attempt, "BLOCKED", this.#attempts.latency(attempt));
          throw this.#blocked(attempt, attempt.answer.status, "a block page");
        }
        const latency = this.#attempts.latency(attempt);
        await this.#attempts.settle(attempt, latency >= this.#s.slowThresholdMs ? "SLOW" : "ok", latency);
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
      if (v.report === null && ctx.response) v = await classifyAnswer(ctx.response, { blockedStatusCodes: this.#s.blockedStatusCodes });
      if (v.credentials) this.#s.proxyUrl.invalidate?.(attempt.lease);
      await this.#attempts.settle(attempt, v.report, this.#attempts.latency(attempt));
    }
    await this.#attempts.close(attempt);
  }

  #blocked(attempt, status, what = `${status}`) {
    const resource = this.#attempts.name(attempt.lease);
    const who = `${JSON.stringify(attempt.context)} refused the proxy ${JSON.stringify(resource)} (${what})`;
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
  const { url } = headOf(ctx.response);
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
