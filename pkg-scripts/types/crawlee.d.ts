// Types of `repute/crawlee` (Node): a Crawlee ProxyConfiguration backed by a repute pool. Needs
// `@crawlee/core` 3 (an optional peer dependency). Compiled against tests/js/usage.ts, and with a
// real CheerioCrawler against tests/crawlee/usage.ts.
import { ProxyConfiguration, SessionError, type ProxyInfo, type Request } from "@crawlee/core";
import type { Group, Kind, Lease, Outcome } from "./pool.js";

/** What repute/crawlee needs of a pool: an embedded `Pool`, `openPool`'s host, or a
 * `repute/client` pool (its calls are async; every one is awaited — the call layer's pool port).
 * `acquireWait` lets a request wait for a free proxy (without it, a request finding none fails
 * at once with POOL_EXHAUSTED); `renew` keeps a long request's lease; `nextChangeAt` (embedded)
 * or `tryAcquire` (a client: the server's Retry-After) give an exhausted acquire its
 * `retryAfterMs`; `maskValue` names resources in messages. */
export interface CrawleePool {
  acquire(context: string, options?: { groups?: Group[] }): Lease | null | Promise<Lease | null>;
  acquireWait?(context: string, options: { groups?: Group[]; waitMs: number; signal?: AbortSignal }): Promise<Lease | null>;
  report(kind: Kind, value: string, context: string, outcome: Outcome): unknown;
  release(lease: Lease): unknown;
  renew?(lease: Lease): Lease | null | Promise<Lease | null>;
  tryAcquire?(context: string, options?: { groups?: Group[] }): Promise<{ lease: Lease | null; retryAfterMs?: number | null }>;
  nextChangeAt?(context: string, options?: { groups?: Group[] }): number | null;
  now?(): number;
  maskValue?(kind: Kind, value: string): string;
}

export interface ReputeProxyConfigurationOptions {
  pool: CrawleePool;
  /** The context a request's lease is taken in (default: its destination `host[:port]`, the
   * port only when it is not the scheme's default: `example.com`, `example.com:8443`). */
  context?: (request: Request) => string;
  /** Groups tried in order by every acquire (README "Tiers, pacing and the cooling cap"), or a function of the request. */
  groups?: Group[] | ((request: Request) => Group[] | undefined);
  /** A lease's proxy URL, password included (default: the resource's value is the URL):
   * `proxyUrls({ env: "REPUTE_PROXY_URLS" })` from "repute" makes one. Its `invalidate`, when
   * present, is called when the proxy refuses the credentials (407). */
  proxyUrl?: ((lease: Lease) => string | Promise<string>) & { invalidate?(lease: Lease): void };
  /** A soft ban: an answer that reads as a block page (a 200 CAPTCHA) is reported BLOCKED. It
   * sees the crawler's context once the body is read (`$`, `body`, `response`, `request`). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the context's type is the crawler's
  isBlocked?: (ctx: any) => boolean | Promise<boolean>;
  /** Answers that mean the destination refused the proxy: BLOCKED (default [401, 403, 429, 451]).
   * A 407 is the proxy refusing our credentials: CONNECTION_RESET whatever this list says. */
  blockedStatusCodes?: number[];
  /** A success whose proxy leg (request sent to answer head: no wait for the lease, body or
   * handler in it) took longer than this is SLOW (default 2000). Every outcome's latency is
   * that leg. */
  slowThresholdMs?: number;
  /** One lease per Crawlee session and destination, kept while the session lives, so that its
   * cookies never reach a site from another exit IP (default true); false: one per request. */
  sessionLeases?: boolean;
  /** How long a request waits at most for a proxy when none is free (a release, an expiry, the
   * end of a cooldown or a pacing gap serves it, first come first served) before its try fails
   * with POOL_EXHAUSTED. Default: the navigation timeout given to `crawlerOptions` —
   * `navigationTimeoutSecs`, else Crawlee's 30 s for HTTP crawlers, 60 s with a
   * `launchContext` — capped at 30 s, `repute serve`'s default `--max-wait-ms` (a value over a
   * server's limit stops the crawl with a `CriticalError`). 0: fail at once. Waiting is no error: Crawlee counts nothing against
   * `maxRequestRetries` for it. */
  maxWaitMs?: number;
  /** A lease whose request never ended (a crawl torn down) is released after this (default 300000). */
  maxHoldMs?: number;
  /** Hears of reports, releases and renewals the pool refused (default: console.error, redacted). */
  onError?: (error: unknown) => void;
}

/** A Crawlee ProxyConfiguration whose proxy for each request is a repute lease in the context
 * of the request's destination (a session's, or the request's own), its outcome reported from
 * the crawler's hooks. Give it to the crawler with `crawlerOptions(…)`. */
export declare class ReputeProxyConfiguration extends ProxyConfiguration {
  constructor(options: ReputeProxyConfigurationOptions);
  /** Leases held now: one per session and destination, or per request in flight. */
  readonly held: number;
  /** Called by a crawler only when the configuration was given to it as is (not through
   * `crawlerOptions`): rejects with Crawlee's CriticalError naming the fix, which stops the crawl. */
  newProxyInfo(sessionId?: string | number, options?: { request?: Request; proxyTier?: number }): Promise<ProxyInfo | undefined>;
  newUrl(sessionId?: string | number, options?: { request?: Request; proxyTier?: number }): Promise<string | undefined>;
  /** The crawler's options with a binding of this configuration as their proxyConfiguration and
   * its hooks added (the user's own hooks and handlers still run, after ours):
   * `new CheerioCrawler(proxies.crawlerOptions({ … }))`. The binding's `newProxyInfo` leases
   * the proxy of `options.request`, waiting up to `maxWaitMs` for one, and throws a
   * `POOL_EXHAUSTED` CallError (with `retryAfterMs` when known) that Crawlee retries when none
   * came. */
  crawlerOptions<O extends object>(options?: O): O;
  /** Ends the waits for a proxy (each rejects with an AbortError) and releases every lease
   * still held: the sessions' (call it after the crawl) and those of requests still running (a
   * crawl torn down). */
  close(): Promise<void>;
}

/** Thrown for an answer judged BLOCKED, after it was reported: Crawlee retries it through
 * another proxy (a SessionError rotates the session). It is built on the SessionError of the
 * crawler's own copy of @crawlee/core (a symlinked or workspace install may load two), and
 * `instanceof RequestBlockedError` holds whichever copy that is. */
export declare class RequestBlockedError extends SessionError {
  readonly code: "BLOCKED";
  readonly status?: number;
  /** The resource as events name it. */
  readonly resource: string;
  readonly context: string;
}

export declare const BLOCKED_STATUS_CODES: readonly number[];
