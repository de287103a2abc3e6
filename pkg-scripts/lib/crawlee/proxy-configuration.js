// `ReputeProxyConfiguration`: a Crawlee `ProxyConfiguration` whose proxy for each request is a
// repute lease in the context of the request's destination (README "Crawlee"). It is given to a
// crawler through `crawlerOptions(options)`, which puts a binding of it in the crawler's options
// (crawler-binding.js: `newProxyInfo` and the hooks that report outcomes). Given to a crawler
// as is — `new CheerioCrawler({ proxyConfiguration })` — it would lease proxies and never hear
// how they did, and Crawlee calls nothing of it before the first request: so its own
// `newProxyInfo` stops the crawl at once with the crawler's CriticalError naming the fix
// (`crawler.run()` rejects; nothing is fetched). Owns the options and what its crawlers share:
// the holds (holds.js), the attempts (attempts.js) and the settings.

import { ProxyConfiguration } from "@crawlee/core";
import { invalidOption, redactSecrets } from "../call/errors.js";
import { poolPort } from "../call/pool-port.js";
import { Attempts, SYSTEM_TIMERS } from "./attempts.js";
import { CrawlerBinding } from "./crawler-binding.js";
import { crawlerError } from "./crawler-classes.js";
import { destinationOf } from "./destination.js";
import { Holds } from "./holds.js";
import { BLOCKED_STATUS_CODES } from "./outcome.js";

const defaultOnError = (e) => console.error(`repute/crawlee: ${redactSecrets(e?.message ?? e)}`);

const NOT_WIRED = "repute/crawlee: this ReputeProxyConfiguration was given to the crawler as is, so the crawler's hooks would never report how its proxies did; give it through crawlerOptions: new CheerioCrawler(proxies.crawlerOptions({ requestHandler, … })) — crawlerOptions sets the proxyConfiguration itself";

/** Why a session's hold ended → whether repute retires the session (Crawlee did already, or
 * will on the RequestBlockedError, for the others). */
const RETIRES = new Set(["failed", "refused", "idle", "evicted", "closed"]);

export class ReputeProxyConfiguration extends ProxyConfiguration {
  #attempts;
  #holds;
  #settings;

  /**
   * @param {object} options
   * @param {object} options.pool an embedded `Pool`, `openPool`'s host, or a `repute/client` pool
   * @param {(request) => string} [options.context] the context of a request (default: its
   *   destination, `host[:port]`: the port only when it is not the scheme's default)
   * @param {Array<string | null> | ((request) => Array<string | null> | undefined)} [options.groups]
   * @param {(lease, options?) => string | Promise<string>} [options.proxyUrl] a lease's proxy URL
   *   (default: the resource's value is the URL); `proxyUrls(…)` from "repute" makes one
   * @param {(ctx) => boolean | Promise<boolean>} [options.isBlocked] soft-ban predicate on the read answer
   * @param {number[]} [options.blockedStatusCodes=[401, 403, 429, 451]] the destination refusing this proxy (a 407 is the proxy refusing us: always CONNECTION_RESET)
   * @param {number} [options.slowThresholdMs=2000] a success whose proxy leg (request sent to
   *   answer head) took longer is reported SLOW
   * @param {boolean} [options.sessionLeases=true] one lease per Crawlee session and destination,
   *   kept for the session's life (false: one per request)
   * @param {number} [options.maxWaitMs] how long a request waits at most for a proxy when none is
   *   free, before failing the attempt with POOL_EXHAUSTED (default: the crawler's navigation
   *   timeout — `navigationTimeoutSecs`, else 30 s for HTTP crawlers and 60 s for browsers —
   *   capped at 30 s, `repute serve`'s default limit)
   * @param {number} [options.maxHoldMs=300000] a lease whose request never ended is released after this
   * @param {(error) => void} [options.onError] hears of failed reports, releases and renewals
   */
  constructor({ pool, context = destinationOf, groups, proxyUrl = (lease) => lease.value, isBlocked = null, blockedStatusCodes = BLOCKED_STATUS_CODES, slowThresholdMs = 2000, sessionLeases = true, maxWaitMs, maxHoldMs = 300_000, onError = defaultOnError, timers = SYSTEM_TIMERS } = {}) {
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
    if (typeof sessionLeases !== "boolean") throw invalidOption("sessionLeases must be true or false");
    if (!(typeof maxHoldMs === "number" && maxHoldMs > 0)) throw invalidOption("maxHoldMs must be a number > 0");
    if (!(maxWaitMs === undefined || (typeof maxWaitMs === "number" && maxWaitMs >= 0 && Number.isFinite(maxWaitMs)))) throw invalidOption("maxWaitMs must be a finite number >= 0");
    if (typeof onError !== "function") throw invalidOption("onError must be a function");
    const port = poolPort(pool);
    this.#holds = new Holds({ pool: port, raw: pool, timers, onError, onEnded: (hold, reason) => retire(hold.session, reason) });
    this.#attempts = new Attempts({ pool: port, holds: this.#holds, onError, maxHoldMs, timers });
    this.#settings = Object.freeze({ context, groups, proxyUrl, isBlocked, blockedStatusCodes: [...blockedStatusCodes], slowThresholdMs, sessionLeases, maxWaitMs });
  }

  /** Leases held now (one per request in flight, or per session and destination). */
  get held() {
    return this.#holds.size;
  }

  /** Crawlee calls this only when the configuration was given to it as is: the crawl stops. */
  async newProxyInfo(_sessionId, options) {
    throw crawlerError(options?.request, "CriticalError", NOT_WIRED);
  }

  async newUrl(_sessionId, options) {
    throw crawlerError(options?.request, "CriticalError", NOT_WIRED);
  }

  /**
   * The crawler's options with a binding of this configuration as their proxyConfiguration and
   * its hooks added (the user's own hooks and handlers still run):
   * `new CheerioCrawler(proxies.crawlerOptions({ requestHandler, … }))`.
   */
  crawlerOptions(options = {}) {
    if (options === null || typeof options !== "object") throw invalidOption("crawlerOptions takes the crawler's options object");
    if (options.proxyConfiguration !== undefined && options.proxyConfiguration !== this) throw invalidOption("the options already have another proxyConfiguration");
    const binding = new CrawlerBinding({ attempts: this.#attempts, holds: this.#holds, settings: this.#settings }, options);
    return binding.crawlerOptions(options);
  }

  /** Ends the waits for a proxy (an AbortError each) and releases every lease still held: the
   * sessions' (call it when the crawl is over), and those of requests still running (a crawl
   * torn down). */
  async close() {
    await Promise.all([this.#attempts.closeAll(), this.#holds.closeAll()]);
  }
}

/** Sessions whose `markGood` keeps them retired (retire()). */
const kept = new WeakSet();

/** Retires a Crawlee session whose lease repute ended, so that it does not go on from another
 * IP (a session that Crawlee retired or will retire is left alone). The retirement must outlast
 * the success Crawlee marks once the request's handler has returned: `markGood` lowers the error
 * score that `retire()` raised, the session would be usable again, and a full session pool would
 * hand it out — its request then fails as a session whose lease has ended, a session error:
 * one more try, on a new session (counted in the request's retryCount and session rotations).
 * So that session's `markGood` retires it again. */
function retire(session, reason) {
  if (!RETIRES.has(reason) || typeof session?.retire !== "function") return;
  if (typeof session.isUsable === "function" && !session.isUsable()) return;
  session.retire();
  if (typeof session.markGood !== "function" || typeof session.isUsable !== "function" || kept.has(session)) return;
  kept.add(session);
  const markGood = session.markGood;
  session.markGood = function markGoodStayingRetired(...args) {
    const result = markGood.apply(this, args);
    if (this.isUsable()) this.retire();
    return result;
  };
}
