// What each kind of request outcome reports, through a real CheerioCrawler, real local proxies
// and sites (_support.mjs) and an embedded `Pool` (synchronous, no host around it) with
// `coolAfter: 1`, so a cell's `cooldownCause` names the one failure reported. Also: a lease is
// held for its request and for no longer (renewed while a long request runs, never shared by
// two requests at once, released when the request ends, or after `maxHoldMs`), and a request
// that waited `maxWaitMs` for a proxy in vain gives Crawlee a POOL_EXHAUSTED error with
// `retryAfterMs` in its message (waiting itself: waiting.test.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { CheerioCrawler } from "@crawlee/cheerio";
import { Pool, proxyUrls } from "repute";
import { ReputeProxyConfiguration, RequestBlockedError } from "repute/crawlee";
import { destinationOf } from "../../pkg-scripts/lib/crawlee/destination.js";
import { worldPerFile } from "./_support.mjs";
import { VirtualTimers } from "../server/_manual-timers.mjs";

let world;
let crawlee;
worldPerFile((w, c) => ([world, crawlee] = [w, c]), { forward: true });

const A = "site-a.test";
const page = (title) => (req, res) => {
  res.setHeader("content-type", "text/html; charset=utf-8");
  res.end(`<html><head><title>${title}</title></head><body>${req.url}</body></html>`);
};

/** A Pool with `names` registered (in `groups` when given); the clock and draws are the pool's. */
function poolOf(names, { config = {}, groups = {}, now } = {}) {
  const pool = new Pool({ config: { coolAfter: 1, ...config }, ...(now ? { now } : {}) });
  for (const n of names) pool.register("PROXY", n, groups[n] === undefined ? undefined : { group: groups[n] });
  return pool;
}

const cellOf = (pool, value, context = A) => pool.resources().find((r) => r.value === value)?.cells.find((c) => c.context === context) ?? null;

/** One crawl of `urls` through `pool`; what the handlers saw. */
async function crawl(pool, urls, { proxyOptions = {}, crawlerOptions = {}, handler = null } = {}) {
  const handled = [];
  const failed = [];
  const errors = [];
  // No SLOW unless a test asks: a loaded machine must not turn a success into a failure.
  const proxies = new ReputeProxyConfiguration({ pool, proxyUrl: proxyUrls({ map: world.urlMap() }), slowThresholdMs: 60_000, onError: (e) => errors.push(e), ...proxyOptions });
  const crawler = new CheerioCrawler(proxies.crawlerOptions({
    maxRequestRetries: 0,
    maxConcurrency: 1,
    async requestHandler(ctx) {
      handled.push({ url: ctx.request.url, title: ctx.$("title").text(), status: ctx.response.statusCode });
      if (handler) await handler(ctx);
    },
    failedRequestHandler: (_ctx, e) => void failed.push(e),
    ...crawlerOptions,
  }), crawlee.config());
  const stats = await crawler.run(urls);
  // A request's own lease ends with it; a session's is kept until the session ends, or close().
  if (proxyOptions.sessionLeases === false) assert.equal(proxies.held, 0, "no lease left held");
  await proxies.close();
  assert.equal(proxies.held, 0, "no lease left held");
  assert.equal(pool.stats().leased, 0, "nothing leased in the pool");
  return { stats, handled, failed, errors, proxies };
}

test("a success is reported with its latency; the page reaches the handler", async () => {
  const pool = poolOf(["proxy-1"]);
  world.sites.a.handle = page("fine");
  const { handled, failed } = await crawl(pool, [world.sites.a.url("/")]);
  assert.deepEqual(handled.map((h) => h.title), ["fine"]);
  assert.equal(failed.length, 0);
  const c = cellOf(pool, "proxy-1");
  assert.deepEqual([c.state, c.consecutiveSuccesses, c.consecutiveFailures], ["HEALTHY", 1, 0]);
  assert.equal(typeof c.p50LatencyMs, "number");
});

test("a success slower than slowThresholdMs is SLOW, and still delivered", async () => {
  const pool = poolOf(["proxy-1"]);
  // Virtual time for the proxy leg (the configuration's `timers`): 300 ms pass at the site at once.
  const timers = new VirtualTimers();
  world.sites.a.handle = async (req, res) => (await timers.advance(300), page("slow")(req, res));
  const { handled } = await crawl(pool, [world.sites.a.url("/")], { proxyOptions: { slowThresholdMs: 150, timers } });
  assert.deepEqual(handled.map((h) => h.title), ["slow"]);
  const c = cellOf(pool, "proxy-1");
  assert.deepEqual([c.state, c.cooldownCause], ["COOLING", "SLOW"]);
});

test("the latency is the proxy leg, request sent to answer head: a slow body or a slow handler is not SLOW", async () => {
  const pool = poolOf(["proxy-1"]);
  // Virtual time for the proxy leg (the configuration's `timers`). The head and the first bytes
  // at once; once the crawler has the head (a postNavigationHook after the configuration's),
  // 800 ms pass before the rest of the page, and 800 ms more in the user's handler.
  const timers = new VirtualTimers();
  let headSeen;
  const head = new Promise((r) => (headSeen = r));
  world.sites.a.handle = async (req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.write("<html><head><title>late body</title></head><body>");
    await head;
    await timers.advance(800);
    res.end("</body></html>");
  };
  const { handled } = await crawl(pool, [world.sites.a.url("/")], {
    proxyOptions: { slowThresholdMs: 500, timers },
    crawlerOptions: { postNavigationHooks: [() => headSeen()] },
    handler: () => timers.advance(800), // the user's work is not the proxy's
  });
  assert.deepEqual(handled.map((h) => h.title), ["late body"]);
  const c = cellOf(pool, "proxy-1");
  assert.deepEqual([c.state, c.consecutiveSuccesses, c.cooldownCause], ["HEALTHY", 1, null], "not SLOW");
  assert.ok(c.p50LatencyMs < 500, `the head's latency: ${c.p50LatencyMs} ms`);
});

test("a 403 is BLOCKED and retried through another proxy (a RequestBlockedError); with none left, POOL_EXHAUSTED says when to retry", async () => {
  world.sites.a.handle = (req, res, from) => (from === "proxy-1" ? ((res.statusCode = 403), res.end("no")) : page("through 2")(req, res));
  // Two proxies in tiers: proxy-1 first, proxy-2 after it cooled.
  const two = poolOf(["proxy-1", "proxy-2"], { groups: { "proxy-1": "cheap", "proxy-2": "backup" } });
  const retried = [];
  const r = await crawl(two, [world.sites.a.url("/x")], {
    proxyOptions: { groups: ["cheap", "backup"] },
    crawlerOptions: { errorHandler: (_ctx, e) => void retried.push(e) },
  });
  assert.deepEqual(r.handled.map((h) => h.title), ["through 2"]);
  assert.equal(retried.length, 1);
  assert.ok(retried[0] instanceof RequestBlockedError, String(retried[0]));
  assert.deepEqual([retried[0].code, retried[0].status, retried[0].resource, retried[0].context], ["BLOCKED", 403, "proxy-1", A]);
  assert.match(retried[0].message, /refused the proxy "proxy-1" \(403\); reported BLOCKED/);
  assert.deepEqual([cellOf(two, "proxy-1").state, cellOf(two, "proxy-1").cooldownCause], ["COOLING", "BLOCKED"]);
  assert.equal(cellOf(two, "proxy-2").state, "HEALTHY");

  // One proxy: after its block nothing is left for site A. The retry waits `maxWaitMs` for a
  // proxy (none comes: the block cools it for an hour), then Crawlee has the POOL_EXHAUSTED
  // error, counts it as a failed try (maxRequestRetries) and fails the request with it.
  const one = poolOf(["proxy-1"]);
  const r1 = await crawl(one, [world.sites.a.url("/y")], { proxyOptions: { maxWaitMs: 200 }, crawlerOptions: { maxRequestRetries: 1 } });
  assert.equal(r1.handled.length, 0);
  assert.equal(r1.failed.length, 1);
  const e = r1.failed[0];
  assert.equal(e.code, "POOL_EXHAUSTED");
  assert.equal(e.retryable, true);
  // BLOCKED cools for 3600 s at the first step: the pool's next change is then.
  assert.ok(e.retryAfterMs > 3_590_000 && e.retryAfterMs <= 3_600_000, String(e.retryAfterMs));
  assert.match(e.message, new RegExp(`no proxy is available for "${A.replace(".", "\\.")}" within 200 ms; retry after ${e.retryAfterMs} ms`));
  assert.equal(world.sites.a.hits.filter((h) => h.path === "/y").length, 1, "the blocked proxy was not tried again");
  assert.ok(crawlee.lines.some((l) => l.includes(`retry after ${e.retryAfterMs} ms`)), "Crawlee's log says when");
});

test("a soft ban (isBlocked on the read page) is BLOCKED; the handler only sees the real page", async () => {
  world.sites.a.handle = (req, res, from) => page(from === "proxy-1" ? "Just a moment… captcha" : "real")(req, res);
  const pool = poolOf(["proxy-1", "proxy-2"], { groups: { "proxy-1": "cheap", "proxy-2": "backup" } });
  const judged = [];
  const { handled } = await crawl(pool, [world.sites.a.url("/")], {
    proxyOptions: {
      groups: ["cheap", "backup"],
      isBlocked: async ({ $, request, response }) => (judged.push([request.url, response.statusCode]), $("title").text().includes("captcha")),
    },
  });
  assert.deepEqual(handled.map((h) => h.title), ["real"]);
  assert.deepEqual(judged, [["http://site-a.test/", 200], ["http://site-a.test/", 200]]);
  assert.deepEqual([cellOf(pool, "proxy-1").state, cellOf(pool, "proxy-1").cooldownCause], ["COOLING", "BLOCKED"]);
  assert.equal(cellOf(pool, "proxy-2").consecutiveSuccesses, 1);
});

test("pacing: a request waits in the pool's queue for the gap to end; a maxWaitMs shorter than the gap fails it with POOL_EXHAUSTED", async () => {
  world.sites.b.handle = page("b");
  const urls = [0, 1, 2].map((i) => world.sites.b.url(`/paced/${i}`));
  // One proxy, one use of it per site every 400 ms; the default wait (the navigation timeout)
  // outlasts the gap: the pool's queue wakes each request when the gap ends.
  const waiting = poolOf(["proxy-1"], { config: { minGapMs: 400 } });
  const r = await crawl(waiting, urls);
  assert.equal(r.handled.length, 3, "each request waited for the gap");
  const at = world.sites.b.hits.map((h) => h.at);
  for (let i = 1; i < at.length; i++) assert.ok(at[i] - at[i - 1] >= 350, `spaced by the gap: ${at[i] - at[i - 1]} ms`);
  world.sites.b.hits.length = 0;
  const failing = poolOf(["proxy-1"], { config: { minGapMs: 400 } });
  const f = await crawl(failing, urls, { proxyOptions: { maxWaitMs: 100 } });
  assert.equal(f.handled.length, 1);
  assert.equal(f.failed.length, 2);
  for (const e of f.failed) {
    assert.equal(e.code, "POOL_EXHAUSTED");
    assert.ok(e.retryAfterMs > 0 && e.retryAfterMs <= 300, `the gap's rest after a 100 ms wait: ${e.retryAfterMs}`);
  }
});

test("a proxy that never answers is a TIMEOUT", async () => {
  world.proxies[0].mode = "hang";
  const pool = poolOf(["proxy-1"]);
  const { failed } = await crawl(pool, [world.sites.a.url("/")], { crawlerOptions: { navigationTimeoutSecs: 1 } });
  assert.equal(failed.length, 1);
  assert.deepEqual([cellOf(pool, "proxy-1").state, cellOf(pool, "proxy-1").cooldownCause], ["COOLING", "TIMEOUT"]);
});

test("a proxy that drops the connection is a CONNECTION_RESET", async () => {
  world.proxies[0].mode = "reset";
  const pool = poolOf(["proxy-1"]);
  const { failed } = await crawl(pool, [world.sites.a.url("/")]);
  assert.equal(failed.length, 1);
  assert.deepEqual([cellOf(pool, "proxy-1").state, cellOf(pool, "proxy-1").cooldownCause], ["COOLING", "CONNECTION_RESET"]);
});

test("a proxy refusing our credentials (407) is CONNECTION_RESET, not a site block, and the resolver is told to load them again", async () => {
  const pool = poolOf(["proxy-1"]);
  const invalidated = [];
  const wrong = Object.assign(async () => world.proxies[0].url("wrong-password"), { invalidate: (lease) => invalidated.push(lease.value) });
  const retried = [];
  const { failed } = await crawl(pool, [world.sites.a.url("/")], { proxyOptions: { proxyUrl: wrong, maxWaitMs: 0 }, crawlerOptions: { errorHandler: (_ctx, e) => void retried.push(e) } });
  assert.equal(failed.length, 1);
  assert.match(retried[0]?.message, /the proxy refused our credentials \(407\) for "site-a\.test" through "proxy-1"; reported CONNECTION_RESET, the request is retried through another proxy/, "retried through another proxy (none is left here)");
  assert.equal(failed[0].code, "POOL_EXHAUSTED");
  assert.deepEqual([cellOf(pool, "proxy-1").state, cellOf(pool, "proxy-1").cooldownCause], ["COOLING", "CONNECTION_RESET"]);
  assert.deepEqual(invalidated, ["proxy-1"]);
  assert.equal(world.sites.a.hits.length, 0, "the site was never reached");
});

test("answers about the request or the server (404, 500, 503) report nothing; 502 is CONNECTION_RESET, 504 TIMEOUT", async () => {
  const status = (code, type) => (req, res) => (res.writeHead(code, { "content-type": type }), res.end(`<title>status ${code}</title>`));
  for (const [code, type, cause] of [
    [404, "text/html", null], [404, "text/plain", null], [500, "text/html", null], [503, "text/plain", null],
    [502, "text/html", "CONNECTION_RESET"], [504, "text/plain", "TIMEOUT"],
  ]) {
    const pool = poolOf(["proxy-1"]);
    world.sites.a.handle = status(code, type);
    const { handled, failed } = await crawl(pool, [world.sites.a.url(`/${code}`)]);
    // Crawlee hands a 404 page to the handler, and fails a type it does not parse or a 5xx.
    if (code === 404 && type === "text/html") assert.deepEqual(handled.map((h) => h.status), [404], "a 404 is a page for the handler");
    else assert.equal(failed.length, 1, `${code} ${type} fails the request (Crawlee)`);
    const c = cellOf(pool, "proxy-1");
    if (cause === null) assert.equal(c, null, `${code} ${type}: nothing reported`);
    else assert.deepEqual([c.state, c.cooldownCause], ["COOLING", cause], `${code} ${type}`);
  }
});

test("an answer Crawlee will not parse (a PDF) still counts as the proxy's success", async () => {
  const pool = poolOf(["proxy-1"]);
  world.sites.a.handle = (req, res) => (res.writeHead(200, { "content-type": "application/pdf" }), res.end("%PDF-1.4"));
  const { failed } = await crawl(pool, [world.sites.a.url("/doc.pdf")]);
  assert.match(failed[0].message, /served Content-Type application\/pdf/);
  const c = cellOf(pool, "proxy-1");
  assert.deepEqual([c.state, c.consecutiveSuccesses], ["HEALTHY", 1]);
});

test("the user's handler failing is not the proxy's fault: the success stands, the lease is released", async () => {
  const pool = poolOf(["proxy-1"]);
  world.sites.a.handle = page("ok");
  const { failed } = await crawl(pool, [world.sites.a.url("/")], { handler: () => { throw new Error("a bug in the handler"); } });
  assert.equal(failed.length, 1);
  assert.match(failed[0].message, /a bug in the handler/);
  const c = cellOf(pool, "proxy-1");
  assert.deepEqual([c.state, c.consecutiveSuccesses, c.consecutiveFailures], ["HEALTHY", 1, 0]);
});

test("a lease is renewed while its request runs, and outlives its TTL", async () => {
  // Virtual time for the pool and the renewals (the configuration's `timers`): three TTLs pass
  // in the handler at once; the sites and Crawlee keep their real clocks.
  const timers = new VirtualTimers();
  const pool = poolOf(["proxy-1"], { config: { leaseTtlMs: 1000 }, now: () => 1_700_000_000_000 + timers.monotonicMs() });
  pool.drainEvents();
  world.sites.a.handle = page("ok");
  let renewedMidway = null;
  await crawl(pool, [world.sites.a.url("/")], {
    proxyOptions: { timers },
    handler: async () => {
      await timers.advance(3200); // more than three TTLs (renewed every 500 ms)
      renewedMidway = pool.resources()[0].lease;
    },
  });
  assert.ok(renewedMidway, "still leased after three TTLs");
  const types = pool.drainEvents().map((e) => e.type);
  assert.ok(!types.includes("LEASE_EXPIRED"), types.join());
  assert.equal(types.filter((t) => t === "LEASE_RELEASED").length, 1);
});

test("leases are exclusive per request: three proxies, three requests at once, never two on one proxy", async () => {
  const pool = poolOf(["proxy-1", "proxy-2", "proxy-3"]);
  // real time: the requests must overlap on the real sockets to the proxies.
  world.sites.b.handle = (req, res) => setTimeout(() => page("b")(req, res), 60);
  for (const p of world.proxies) p.maxInFlight = 0;
  const urls = Array.from({ length: 12 }, (_, i) => world.sites.b.url(`/page/${i}`));
  const { stats, handled } = await crawl(pool, urls, { crawlerOptions: { minConcurrency: 3, maxConcurrency: 3, maxRequestRetries: 3 } });
  assert.equal(stats.requestsFinished, 12);
  assert.equal(handled.length, 12);
  for (const p of world.proxies) assert.ok(p.maxInFlight <= 1, `${p.name} carried ${p.maxInFlight} at once`);
  assert.ok(world.proxies.filter((p) => p.maxInFlight === 1).length >= 2, "the requests spread over the proxies");
});

test("a lease whose request never ends is released after maxHoldMs, and onError says so", async () => {
  const pool = poolOf(["proxy-1"]);
  world.sites.a.handle = page("ok");
  let leasedAfterHold = "unset";
  const timers = new VirtualTimers(); // the safety net's timer: 1 s passes in the handler at once
  const { errors } = await crawl(pool, [world.sites.a.url("/")], {
    proxyOptions: { maxHoldMs: 200, timers },
    handler: async () => {
      await timers.advance(1000);
      leasedAfterHold = pool.resources()[0].lease;
    },
  });
  assert.equal(leasedAfterHold, null, "released by the safety net while the handler still ran");
  assert.equal(errors.length, 1);
  assert.match(errors[0].message, /the lease of proxy-1 for "site-a\.test" was held 200 ms without its request ending; released/);
});

test("context(request) and groups(request) choose per request: the lease, its outcome and its cell follow them", async () => {
  const pool = poolOf(["proxy-1", "proxy-2"], { groups: { "proxy-1": "cheap", "proxy-2": "backup" } });
  world.sites.b.handle = page("b");
  const asked = [];
  const { handled } = await crawl(pool, [
    { url: world.sites.b.url("/search/1"), label: "vip" },
    { url: world.sites.b.url("/item/1") },
  ], {
    proxyOptions: {
      context: (request) => `b:${new URL(request.url).pathname.split("/")[1]}`,
      groups: (request) => (asked.push(request.url), request.label === "vip" ? ["backup"] : undefined),
    },
  });
  assert.equal(handled.length, 2);
  assert.deepEqual(asked, [world.sites.b.url("/search/1"), world.sites.b.url("/item/1")]);
  // vip → only the backup group; the other → no groups given: any resource (proxy-1 or proxy-2).
  assert.equal(world.sites.b.hits.find((h) => h.path === "/search/1").from, "proxy-2");
  assert.equal(cellOf(pool, "proxy-2", "b:search").consecutiveSuccesses, 1, "reported in the chosen context");
  const item = world.sites.b.hits.find((h) => h.path === "/item/1").from;
  assert.equal(cellOf(pool, item, "b:item").consecutiveSuccesses, 1);
  assert.equal(cellOf(pool, "proxy-1", "site-b.test"), null, "nothing in the hostname's context");
  assert.equal(cellOf(pool, "proxy-2", "site-b.test"), null);
  // A context function giving no string fails the request, leasing nothing.
  const bad = await crawl(pool, [world.sites.b.url("/x")], { proxyOptions: { context: () => " " } });
  assert.match(bad.failed[0]?.message ?? "", /context\(request\) must give a non-blank string/);
});

test("the default context is the destination host[:port]: a non-default port is kept, the scheme's default one is not", async () => {
  const pool = poolOf(["proxy-1"]);
  world.sites.a.handle = page("a");
  // The proxies resolve site-a.test whatever the port: the same site, three ways of naming it.
  const { handled } = await crawl(pool, ["http://site-a.test:8443/one", "http://site-a.test:80/two", "http://site-a.test/three"]);
  assert.equal(handled.length, 3);
  assert.equal(cellOf(pool, "proxy-1", "site-a.test:8443")?.consecutiveSuccesses, 1, "the non-default port names its own context");
  assert.equal(cellOf(pool, "proxy-1", "site-a.test")?.consecutiveSuccesses, 2, "port 80 of http is the host alone");
  assert.equal(destinationOf({ url: "https://example.com:443/x" }), "example.com");
  assert.equal(destinationOf({ url: "https://example.com:8443/x" }), "example.com:8443");
  assert.equal(destinationOf({ url: "http://[::1]:8080/" }), "[::1]:8080");
});

test("a request Crawlee skips after the answer (redirected off its enqueue strategy) still ends its lease: reported, released at once", async () => {
  // Site A's front page links to /away, which redirects to site B. enqueueLinks() keeps to
  // site A's hostname, so Crawlee drops /away once it sees where it landed — without calling
  // the request handler or an error handler.
  const pool = poolOf(["proxy-1"]);
  world.sites.a.handle = (req, res) => {
    if (req.url === "/away") return (res.writeHead(302, { location: world.sites.b.url("/landing") }), res.end());
    res.setHeader("content-type", "text/html; charset=utf-8");
    res.end(`<html><head><title>front</title></head><body><a href="/away">away</a></body></html>`);
  };
  world.sites.b.handle = page("landing");
  const errors = [];
  const { handled, failed } = await crawl(pool, [world.sites.a.url("/")], {
    proxyOptions: { maxHoldMs: 60_000, onError: (e) => errors.push(e) },
    handler: async (ctx) => void (await ctx.enqueueLinks()),
  });
  assert.deepEqual(handled.map((h) => h.url), ["http://site-a.test/"], "the redirected request never reached the handler");
  assert.equal(failed.length, 0);
  assert.equal(world.sites.b.hits.length, 1, "the redirect was followed through the proxy");
  assert.deepEqual(errors, [], "released when the request ended, not by the maxHoldMs safety net");
  // The proxy delivered both answers: two successes in site A's context.
  assert.equal(cellOf(pool, "proxy-1").consecutiveSuccesses, 2);
});

test("after every outcome above: no proxy password in Crawlee's log", () => {
  assert.ok(crawlee.lines.length > 20, "the crawls above logged");
  for (const pw of [...world.passwords, "wrong-password"]) {
    for (const line of crawlee.lines) assert.ok(!line.includes(pw) && !line.includes(encodeURIComponent(pw)), `a password in: ${line.slice(0, 200)}`);
  }
});
