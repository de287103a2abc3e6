// How a ReputeProxyConfiguration gets into a crawler, with a real CheerioCrawler, sites and
// proxies (_support.mjs). Through `crawlerOptions(options)` each crawler gets a binding of it,
// with the hooks that report outcomes. Given as is — `new CheerioCrawler({ proxyConfiguration
// })`, the plain Crawlee way — it could lease proxies but never hear how they did, and Crawlee
// calls nothing of it before the first request: the crawl stops there at once (the crawler's
// CriticalError), naming the fix, before anything is fetched or counted as a failed page.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CheerioCrawler } from "@crawlee/cheerio";
import { Pool, proxyUrls } from "repute";
import { ReputeProxyConfiguration } from "repute/crawlee";
import { worldPerFile } from "./_support.mjs";

let world;
let crawlee;
worldPerFile((w, c) => ([world, crawlee] = [w, c]));

function poolOf(names) {
  const pool = new Pool();
  for (const n of names) pool.register("PROXY", n);
  return pool;
}

const urls = () => [0, 1, 2, 3].map((i) => world.sites.a.url(`/plain/${i}`));

test("given the plain Crawlee way, the crawl stops at its first request, naming the fix; nothing is fetched or failed", async () => {
  const pool = poolOf(["proxy-1", "proxy-2"]);
  const proxies = new ReputeProxyConfiguration({ pool, proxyUrl: proxyUrls({ map: world.urlMap() }) });
  const failed = [];
  const crawler = new CheerioCrawler({
    proxyConfiguration: proxies,
    maxConcurrency: 2,
    maxRequestRetries: 3,
    requestHandler: () => assert.fail("no page may be handled"),
    failedRequestHandler: (_ctx, e) => void failed.push(e),
  }, crawlee.config());
  await assert.rejects(crawler.run(urls()), (e) => {
    assert.match(e.message, /given to the crawler as is/);
    assert.match(e.message, /new CheerioCrawler\(proxies\.crawlerOptions\(\{ requestHandler, … \}\)\)/);
    return true;
  });
  assert.deepEqual(failed, [], "no request was counted as failed: the crawl stopped");
  assert.equal(world.sites.a.hits.length, 0, "nothing fetched");
  assert.equal(proxies.held, 0);
  assert.equal(pool.stats().leased, 0, "nothing leased");
});

test("one configuration wired into one crawler and given as is to another: the first crawls, the second stops", async () => {
  const pool = poolOf(["proxy-1", "proxy-2"]);
  const proxies = new ReputeProxyConfiguration({ pool, proxyUrl: proxyUrls({ map: world.urlMap() }), slowThresholdMs: 60_000 });
  const handled = [];
  const wired = new CheerioCrawler(proxies.crawlerOptions({ maxConcurrency: 2, requestHandler: ({ request }) => void handled.push(request.url) }), crawlee.config());
  assert.notEqual(wired.proxyConfiguration, proxies, "the crawler has a binding of its own");
  await wired.run(urls());
  assert.equal(handled.length, 4);
  const plain = new CheerioCrawler({ proxyConfiguration: proxies, requestHandler: () => assert.fail("not handled") }, crawlee.config());
  await assert.rejects(plain.run([world.sites.b.url("/plain")]), /crawlerOptions/);
  assert.equal(world.sites.b.hits.length, 0);
  await proxies.close();
  assert.equal(pool.stats().leased, 0);
});

test("crawlerOptions refuses, at once, another proxyConfiguration and a browser without incognito pages; a binding needs a request", async () => {
  const proxies = new ReputeProxyConfiguration({ pool: poolOf(["proxy-1"]) });
  assert.throws(() => new ReputeProxyConfiguration({ pool: {} }), /Pool methods/);
  assert.throws(() => proxies.crawlerOptions({ proxyConfiguration: new ReputeProxyConfiguration({ pool: poolOf([]) }) }), /another proxyConfiguration/);
  assert.deepEqual(Object.keys(proxies.crawlerOptions({ proxyConfiguration: proxies })).includes("proxyConfiguration"), true, "its own is fine");
  assert.throws(() => proxies.crawlerOptions({ launchContext: { useIncognitoPages: false } }), /launchContext: \{ useIncognitoPages: true \}/);
  assert.throws(() => proxies.crawlerOptions({ launchContext: {} }), /useIncognitoPages/);
  const binding = proxies.crawlerOptions({}).proxyConfiguration;
  await assert.rejects(binding.newProxyInfo("s"), /useIncognitoPages: true/);
  assert.equal(await proxies.crawlerOptions({ launchContext: { useIncognitoPages: true } }).proxyConfiguration.newProxyInfo("s"), undefined, "a browser's own launch gets no proxy: its pages have theirs");
  await assert.rejects(proxies.newProxyInfo("s", {}), /crawlerOptions/);
});
