// One lease per Crawlee session and destination (`sessionLeases`, on by default), with a real
// CheerioCrawler, sites and proxies (_support.mjs). A site here hands each new visitor a cookie
// naming the proxy it came through, and records which proxy every later request with that cookie
// came through: a session's cookies must never reach the site from another exit IP. The lease
// is kept while the session lives, and given back when Crawlee retires the session, when a
// request through it fails, when the pool refuses its renewal, when it sits idle, or when another
// request needs its proxy; the session is then retired, never moved. Timers of the holds are
// virtual where a test moves time (tests/server/_manual-timers.mjs); Crawlee's own are real.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { CheerioCrawler } from "@crawlee/cheerio";
import { Pool, proxyUrls } from "repute";
import { ReputeProxyConfiguration } from "repute/crawlee";
import { VirtualTimers } from "../server/_manual-timers.mjs";
import { worldPerFile } from "./_support.mjs";

let world;
let crawlee;
worldPerFile((w, c) => ([world, crawlee] = [w, c]));

/** Site B as a cookie-setting site: `visits` records { from, cookie } per request. */
let visits;
let issued;
beforeEach(() => {
  visits = [];
  issued = 0;
  world.sites.b.handle = (req, res, from) => {
    const cookie = /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? "")?.[1] ?? null;
    visits.push({ from, cookie, path: req.url });
    res.setHeader("content-type", "text/html; charset=utf-8");
    if (cookie === null) res.setHeader("set-cookie", `sid=${from}.${++issued}; Path=/`);
    res.end(`<html><head><title>b ${req.url}</title></head></html>`);
  };
});

/** Every request that carried a cookie came through the proxy that issued it. */
function noCookieHopped() {
  const carried = visits.filter((v) => v.cookie !== null);
  for (const v of carried) assert.equal(v.from, v.cookie.split(".")[0], `${v.path} carried ${v.cookie} through ${v.from}`);
  return carried.length;
}

/** A Pool with `names` registered (in `groups` when given); draws from `random` or seed 7. */
function poolOf(names, { groups = {}, config = {}, random } = {}) {
  const pool = new Pool({ config, ...(random ? { random } : { seed: 7 }) });
  for (const n of names) pool.register("PROXY", n, groups[n] === undefined ? undefined : { group: groups[n] });
  pool.drainEvents();
  return pool;
}

async function crawl(pool, urls, { proxyOptions = {}, crawlerOptions = {}, handler = null } = {}) {
  const handled = [];
  const failed = [];
  const proxies = new ReputeProxyConfiguration({ pool, proxyUrl: proxyUrls({ map: world.urlMap() }), slowThresholdMs: 60_000, ...proxyOptions });
  const crawler = new CheerioCrawler(proxies.crawlerOptions({
    maxConcurrency: 1,
    maxRequestRetries: 2,
    async requestHandler(ctx) {
      handled.push({ url: ctx.request.url, session: ctx.session?.id });
      if (handler) await handler(ctx);
    },
    failedRequestHandler: (_ctx, e) => void failed.push(e),
    ...crawlerOptions,
  }), crawlee.config());
  const stats = await crawler.run(urls);
  return { stats, handled, failed, proxies, crawler };
}

const pages = (n, prefix = "p") => Array.from({ length: n }, (_, i) => world.sites.b.url(`/${prefix}/${i}`));
const leased = (pool) => pool.drainEvents().filter((e) => e.type === "RESOURCE_LEASED");

test("a session's requests to a site go through one lease: its cookies never reach the site from another IP", async () => {
  const pool = poolOf(["proxy-1", "proxy-2", "proxy-3"]);
  // One session for the whole crawl (the pool holds one), as a site that needs a login would.
  const { handled, failed, proxies } = await crawl(pool, pages(8), { crawlerOptions: { sessionPoolOptions: { maxPoolSize: 1 } } });
  assert.equal(failed.length, 0);
  assert.equal(handled.length, 8);
  assert.equal(new Set(handled.map((h) => h.session)).size, 1, "one session");
  assert.equal(noCookieHopped(), 7, "every request after the first carried the cookie");
  assert.equal(new Set(visits.map((v) => v.from)).size, 1, "all through one proxy");
  assert.equal(leased(pool).length, 1, "one lease");
  assert.equal(proxies.held, 1, "kept while the session lives");
  await proxies.close();
  assert.equal(pool.stats().leased, 0);
});

test("with sessionLeases: false a request has a lease of its own (and a session's cookies travel with it)", async () => {
  // Draws that alternate between the last and the first candidate: the picks spread.
  let n = 0;
  const pool = poolOf(["proxy-1", "proxy-2", "proxy-3"], { random: () => (n++ % 2 === 0 ? 0.99 : 0) });
  const { handled, proxies } = await crawl(pool, pages(8), { proxyOptions: { sessionLeases: false }, crawlerOptions: { sessionPoolOptions: { maxPoolSize: 1 } } });
  assert.equal(handled.length, 8);
  assert.equal(proxies.held, 0, "released with each request");
  assert.equal(leased(pool).length, 8, "a lease per request");
  assert.throws(() => noCookieHopped(), /carried proxy-\d\.\d+ through proxy-\d/, "the one session's cookie came through other proxies");
});

test("the lease ends with the session: Crawlee retires it after maxUsageCount, the next session has a lease of its own", async () => {
  const pool = poolOf(["proxy-1", "proxy-2", "proxy-3"]);
  const { handled, proxies } = await crawl(pool, pages(6), { crawlerOptions: { sessionPoolOptions: { maxPoolSize: 1, sessionOptions: { maxUsageCount: 3 } } } });
  assert.equal(handled.length, 6);
  assert.equal(new Set(handled.map((h) => h.session)).size, 2, "two sessions of three requests");
  noCookieHopped();
  const events = pool.drainEvents();
  assert.equal(events.filter((e) => e.type === "RESOURCE_LEASED").length, 2, "a lease per session");
  assert.equal(events.filter((e) => e.type === "LEASE_RELEASED").length, 2, "each released when Crawlee retired its session");
  assert.equal(proxies.held, 0);
});

test("a request that fails through a session's lease ends it, and the session with it: the retry is a new session on another lease", async () => {
  // proxy-1 first (the cheap tier); one refusal cools it on the site (coolAfter 1).
  const pool = poolOf(["proxy-1", "proxy-2"], { groups: { "proxy-1": "cheap", "proxy-2": "backup" }, config: { coolAfter: 1 } });
  world.sites.b.handle = ((inner) => (req, res, from) => {
    // proxy-1's second request to the site finds it refused (403).
    if (from === "proxy-1" && visits.filter((v) => v.from === "proxy-1").length === 1) {
      visits.push({ from, cookie: /(?:^|;\s*)sid=([^;]+)/.exec(req.headers.cookie ?? "")?.[1] ?? null, path: req.url });
      return (res.statusCode = 403), res.end("no");
    }
    return inner(req, res, from);
  })(world.sites.b.handle);
  const sessionsSeen = [];
  const { handled, failed, proxies, crawler } = await crawl(pool, pages(4), {
    proxyOptions: { groups: ["cheap", "backup"] },
    crawlerOptions: { sessionPoolOptions: { maxPoolSize: 1 } },
    handler: (ctx) => void sessionsSeen.push(ctx.session),
  });
  assert.equal(failed.length, 0);
  assert.equal(handled.length, 4);
  assert.equal(noCookieHopped(), 3, "the first session's cookie on the refused request, the second's twice");
  const [first, second] = [...new Set(sessionsSeen)];
  assert.ok(first && second, "two sessions");
  assert.equal(first.isUsable(), false, "the refused session is retired");
  assert.notEqual(visits.at(-1).from, "proxy-1", "the new session goes through the other proxy");
  void crawler;
  await proxies.close();
});

test("an idle session's lease never keeps a proxy from a request that needs it: the session is retired instead", async () => {
  // Two sessions for one proxy: the pool is full after two, so an idle session's lease is kept
  // (Crawlee may hand the session out again) until another session needs the proxy.
  const pool = poolOf(["proxy-1"]);
  const { handled, failed, proxies } = await crawl(pool, pages(8), { crawlerOptions: { sessionPoolOptions: { maxPoolSize: 2 } } });
  assert.equal(failed.length, 0);
  assert.equal(handled.length, 8);
  noCookieHopped();
  assert.ok(new Set(handled.map((h) => h.session)).size >= 2);
  await proxies.close();
  assert.equal(pool.stats().leased, 0);
});

test("a session repute retired stays retired after Crawlee marks its last request good: a full session pool never hands it out again", async () => {
  // Two requests at once on one proxy: the second waits, so the first's session gives its lease
  // back when its request ends (inside the handler, before Crawlee marks the session good) and
  // is retired. Crawlee's markGood lowered the error score retire() had raised, and the session
  // was usable again: the full session pool (2) handed it out, and its request failed as a
  // session whose lease had ended — a wasted try (errorHandler), retried on a new session.
  const pool = poolOf(["proxy-1"]);
  const retried = [];
  const sessions = new Set();
  const { handled, failed, proxies } = await crawl(pool, pages(12, "kept"), {
    crawlerOptions: {
      minConcurrency: 2,
      maxConcurrency: 2,
      maxRequestRetries: 0,
      sessionPoolOptions: { maxPoolSize: 2 },
      errorHandler: (_ctx, e) => void retried.push(e.message),
    },
    handler: (ctx) => void sessions.add(ctx.session),
  });
  assert.deepEqual(failed.map((e) => e.message), []);
  assert.deepEqual(retried, []);
  assert.equal(handled.length, 12);
  noCookieHopped();
  await proxies.close();
  for (const s of sessions) assert.equal(s.isUsable(), false, `session ${s.id}: retired once its lease ended`);
  assert.equal(pool.stats().leased, 0);
});

test("a session's lease is given back when it sits idle for half a TTL, and when the pool refuses its renewal", async () => {
  const timers = new VirtualTimers();
  const pool = poolOf(["proxy-1", "proxy-2"]);
  // Idle: the crawl is over, its session is kept until a renewal finds it unused.
  const idle = await crawl(pool, pages(2, "idle"), { proxyOptions: { timers }, crawlerOptions: { sessionPoolOptions: { maxPoolSize: 1 } } });
  assert.equal(idle.proxies.held, 1);
  const session = idle.crawler.sessionPool.sessions?.[0] ?? null;
  await timers.advance(14_999);
  assert.equal(idle.proxies.held, 1, "renewed… not yet: half the 30 s TTL has not passed");
  await timers.advance(1);
  assert.equal(idle.proxies.held, 0, "idle since the last renewal point: given back");
  assert.equal(pool.stats().leased, 0);
  if (session) assert.equal(session.isUsable(), false, "and its session retired");
  // Refused: proxy-2 is blocked while a request goes through the session's lease; the renewal
  // is refused, the lease given back once that request has ended, and its session retired.
  const refusedTimers = new VirtualTimers();
  let during = null;
  const refused = await crawl(pool, pages(3, "refused"), {
    proxyOptions: { timers: refusedTimers },
    crawlerOptions: { sessionPoolOptions: { maxPoolSize: 1 } },
    handler: async (ctx) => {
      if (during !== null) return;
      const value = visits.at(-1).from;
      pool.block("PROXY", value, { seconds: 60 });
      await refusedTimers.advance(15_000); // the renewal point: refused (blocked)
      during = { value, usable: ctx.session.isUsable(), leased: pool.resources().find((r) => r.value === value).lease !== null };
    },
  });
  assert.deepEqual([during.usable, during.leased], [false, true], "the session is retired at once; its request keeps the lease until it ends");
  assert.equal(refused.handled.length, 3);
  noCookieHopped();
  assert.ok(visits.slice(-2).every((v) => v.from !== during.value), "later requests: a new session through another proxy");
  await refused.proxies.close();
});
