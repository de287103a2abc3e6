// repute/crawlee with Crawlee's PlaywrightCrawler, in Debian's Chromium (its path given to
// playwright-core's launcher: no browser is downloaded, and Crawlee's `playwright` is not needed)
// against the local sites and forward proxies of _support.mjs. With `useIncognitoPages` every
// page has a browser context of its own, and so a proxy — one lease per page. Crawlee gives a
// page's proxy to Chromium through a local relay (proxy-chain), which answers an upstream
// failure with a status of its own (595 reset, 597 credentials refused): those are the proxy's
// failures, not pages. Real sleeps are only Chromium's and the sites'.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PlaywrightCrawler } from "@crawlee/playwright";
import { chromium } from "playwright-core";
import { Pool, proxyUrls } from "repute";
import { ReputeProxyConfiguration } from "repute/crawlee";
import { worldPerFile } from "./_support.mjs";

const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const launchContext = { launcher: chromium, useIncognitoPages: true, launchOptions: { executablePath: CHROMIUM, headless: true, args: ARGS } };

let world;
let crawlee;
worldPerFile((w, c) => ([world, crawlee] = [w, c]), { forward: true });

const page = (title) => (req, res) => {
  res.setHeader("content-type", "text/html; charset=utf-8");
  res.end(`<html><head><title>${title}</title></head><body>${req.url}</body></html>`);
};

function poolOf(names, { groups = {}, config = {} } = {}) {
  const pool = new Pool({ config: { coolAfter: 1, ...config } });
  for (const n of names) pool.register("PROXY", n, groups[n] === undefined ? undefined : { group: groups[n] });
  return pool;
}

const cellOf = (pool, value, context) => pool.resources().find((r) => r.value === value)?.cells.find((c) => c.context === context) ?? null;

async function crawl(pool, urls, { proxyOptions = {}, crawlerOptions = {}, map = world.urlMap() } = {}) {
  const handled = [];
  const failed = [];
  const retried = [];
  const byPort = new Map(world.proxies.map((p) => [String(p.port), p.name]));
  const proxies = new ReputeProxyConfiguration({ pool, proxyUrl: proxyUrls({ map }), slowThresholdMs: 60_000, ...proxyOptions });
  const crawler = new PlaywrightCrawler(proxies.crawlerOptions({
    launchContext,
    maxConcurrency: 2,
    maxRequestRetries: 0,
    navigationTimeoutSecs: 10,
    async requestHandler({ page: p, request, proxyInfo, response }) {
      handled.push({ url: request.url, path: new URL(request.url).pathname, title: await p.title(), status: response?.status(), proxy: byPort.get(proxyInfo?.port) });
    },
    errorHandler: (_ctx, e) => void retried.push(e),
    failedRequestHandler: (_ctx, e) => void failed.push(e),
    ...crawlerOptions,
  }), crawlee.config());
  await crawler.run(urls);
  await proxies.close();
  assert.equal(pool.stats().leased, 0, "nothing left leased");
  return { handled, failed, retried };
}

test("PlaywrightCrawler with incognito pages: a lease per page, each page through its own proxy; a refused proxy cools on that site and the page comes through another", async () => {
  world.sites.a.handle = (req, res, from) => (from === "proxy-1" ? ((res.statusCode = 403), res.end("no")) : page(`a ${req.url}`)(req, res));
  world.sites.b.handle = (req, res) => page(`b ${req.url}`)(req, res);
  const pool = poolOf(["proxy-1", "proxy-2", "proxy-3"], { groups: { "proxy-1": "cheap", "proxy-2": "backup", "proxy-3": "backup" } });
  const urls = [0, 1, 2].flatMap((i) => [world.sites.a.url(`/a/${i}`), world.sites.b.url(`/b/${i}`)]);
  const { handled, failed, retried } = await crawl(pool, urls, { proxyOptions: { groups: ["cheap", "backup"] }, crawlerOptions: { maxRequestRetries: 2 } });
  assert.deepEqual(failed.map((e) => e.message), []);
  assert.equal(handled.length, 6);
  for (const h of handled) assert.equal(h.title, `${h.path.startsWith("/a/") ? "a" : "b"} ${h.path}`);
  // Each page's document came through the proxy its lease named.
  for (const h of handled) {
    const site = h.path.startsWith("/a/") ? world.sites.a : world.sites.b;
    assert.equal(site.hits.filter((x) => x.path === h.path).at(-1).from, h.proxy, h.path);
  }
  assert.equal(retried.length, 1, "one refusal, retried through another proxy");
  assert.equal(retried[0].code, "BLOCKED");
  assert.deepEqual([cellOf(pool, "proxy-1", "site-a.test").state, cellOf(pool, "proxy-1", "site-a.test").cooldownCause], ["COOLING", "BLOCKED"]);
  assert.ok(handled.filter((h) => h.path.startsWith("/a/")).every((h) => h.proxy !== "proxy-1"));
  // Site B keeps the cheap proxy where it is free (a site-A page may hold it at that moment).
  const b1 = cellOf(pool, "proxy-1", "site-b.test");
  assert.equal(b1.state, "HEALTHY");
  assert.equal(b1.consecutiveSuccesses, handled.filter((h) => h.path.startsWith("/b/") && h.proxy === "proxy-1").length);
  assert.ok(b1.consecutiveSuccesses >= 1);
});

test("in the browser the latency is the document's proxy leg, as Chromium timed it: a page that loads slowly after its head is not SLOW", async () => {
  world.sites.b.handle = (req, res) => {
    if (req.url !== "/slow") return page("asset")(req, res);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.write("<html><head><title>slow</title></head><body>");
    // real time: Chromium times the proxy leg on its own clock; wide margins, as a first page's
    // head is slower.
    setTimeout(() => res.end("</body></html>"), 2000);
  };
  const pool = poolOf(["proxy-1"]);
  const { handled } = await crawl(pool, [world.sites.b.url("/slow")], { proxyOptions: { slowThresholdMs: 1200 } });
  assert.deepEqual(handled.map((h) => h.title), ["slow"]);
  const c = cellOf(pool, "proxy-1", "site-b.test");
  assert.deepEqual([c.state, c.consecutiveSuccesses], ["HEALTHY", 1], "not SLOW");
  assert.ok(c.p50LatencyMs < 1200, `${c.p50LatencyMs} ms`);
});

test("a proxy that resets, refuses the credentials or hangs: the relay's 595 and 597 are the proxy's failures, never a page", async () => {
  const url = (p) => world.sites.a.url(p);
  world.sites.a.handle = page("a");
  for (const [mode, password, cause] of [["reset", undefined, "CONNECTION_RESET"], ["forward", "wrong-password", "CONNECTION_RESET"], ["hang", undefined, "TIMEOUT"]]) {
    world.proxies[0].mode = mode;
    const map = world.urlMap();
    if (password) map["proxy-1"] = world.proxies[0].url(password);
    const pool = poolOf(["proxy-1"]);
    const { handled, failed } = await crawl(pool, [url(`/${mode}`)], { map, crawlerOptions: { navigationTimeoutSecs: 2 } });
    assert.deepEqual(handled, [], `${mode}: no page`);
    assert.equal(failed.length, 1, mode);
    const c = cellOf(pool, "proxy-1", "site-a.test");
    assert.deepEqual([c.state, c.cooldownCause], ["COOLING", cause], mode);
  }
});

test("a browser crawler without incognito pages is refused: at once in crawlerOptions, or at its first page when launchContext comes around it", async () => {
  const proxies = new ReputeProxyConfiguration({ pool: poolOf(["proxy-1"]), proxyUrl: proxyUrls({ map: world.urlMap() }) });
  assert.throws(() => proxies.crawlerOptions({ launchContext: { ...launchContext, useIncognitoPages: false } }), /useIncognitoPages: true/);
  // The options spread into the crawler's with a launchContext of their own.
  const crawler = new PlaywrightCrawler({
    ...proxies.crawlerOptions({ requestHandler: () => assert.fail("no page") }),
    launchContext: { ...launchContext, useIncognitoPages: false },
  }, crawlee.config());
  await assert.rejects(crawler.run([world.sites.a.url("/shared-browser")]), /useIncognitoPages: true/);
  assert.equal(world.sites.a.hits.length, 0, "nothing fetched");
  await proxies.close();
});

test("after the browser crawls above: no proxy password in Crawlee's log", () => {
  assert.ok(crawlee.lines.length > 10, "the crawls above logged");
  for (const pw of [...world.passwords, "wrong-password"]) {
    for (const line of crawlee.lines) assert.ok(!line.includes(pw) && !line.includes(encodeURIComponent(pw)), `a password in: ${line.slice(0, 200)}`);
  }
});
