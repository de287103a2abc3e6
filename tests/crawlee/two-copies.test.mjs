// repute/crawlee with a crawler from a second copy of Crawlee (_support.mjs: every @crawlee
// package copied into a temporary node_modules, as a symlinked or workspace install loads
// them), while repute/crawlee imports the installed @crawlee/core. Crawlee tells a blocked
// request by `instanceof` of its own copy's SessionError (rotate the session, retry beyond
// maxRequestRetries); repute/crawlee must throw that copy's class, found from the crawler's own
// Request, not the one it imported — and so must the CriticalError that stops a crawl given the
// configuration as is. Real sites, proxies and crawler, as outcomes.test.mjs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import * as installed from "@crawlee/core";
import { Pool, proxyUrls } from "repute";
import { ReputeProxyConfiguration, RequestBlockedError } from "repute/crawlee";
import { crawleeSetup, secondCrawleeCopy, startWorld } from "./_support.mjs";

let world;
let crawlee;
let copy;
let core2;
let cheerio2;
before(async () => {
  world = await startWorld();
  crawlee = await crawleeSetup();
  copy = secondCrawleeCopy();
  core2 = await copy.load("@crawlee/core");
  cheerio2 = await copy.load("@crawlee/cheerio");
});
after(async () => {
  await world.close();
  crawlee.close();
  copy.close();
});

test("the second copy is a genuine one: its own classes, not the installed ones", () => {
  assert.notEqual(core2.SessionError, installed.SessionError);
  assert.notEqual(core2.Request, installed.Request);
  assert.ok(!(new core2.SessionError("x") instanceof installed.SessionError));
});

test("a blocked answer is that copy's session error: the session rotates and the request is retried through another proxy", async () => {
  world.sites.a.handle = (req, res, from) => {
    if (from === "proxy-1") return (res.statusCode = 403), res.end("no");
    res.setHeader("content-type", "text/html; charset=utf-8");
    res.end("<html><head><title>through 2</title></head></html>");
  };
  const pool = new Pool({ config: { coolAfter: 1 } });
  pool.register("PROXY", "proxy-1", { group: "cheap" });
  pool.register("PROXY", "proxy-2", { group: "backup" });
  const proxies = new ReputeProxyConfiguration({ pool, groups: ["cheap", "backup"], proxyUrl: proxyUrls({ map: world.urlMap() }), slowThresholdMs: 60_000 });
  const handled = [];
  const retried = [];
  const failed = [];
  const crawler = new cheerio2.CheerioCrawler(proxies.crawlerOptions({
    // No retries for ordinary errors: only a session error gets this request a second try.
    maxRequestRetries: 0,
    requestHandler: ({ request, $ }) => void handled.push({ title: $("title").text(), rotations: request.sessionRotationCount }),
    errorHandler: (_ctx, e) => void retried.push(e),
    failedRequestHandler: (_ctx, e) => void failed.push(e),
  }), new core2.Configuration({ persistStorage: false }));
  await crawler.run([world.sites.a.url("/two-copies")]);
  assert.deepEqual(failed.map((e) => e.message), []);
  assert.deepEqual(handled, [{ title: "through 2", rotations: 1 }], "retried once, on a new session");
  assert.equal(retried.length, 1);
  assert.ok(retried[0] instanceof core2.SessionError, "the crawler's own SessionError");
  assert.ok(retried[0] instanceof RequestBlockedError, "and still a RequestBlockedError to the user");
  assert.deepEqual([retried[0].code, retried[0].status, retried[0].resource, retried[0].context], ["BLOCKED", 403, "proxy-1", "site-a.test"]);
  await proxies.close();
  assert.equal(proxies.held, 0);
});

test("given as is to that copy's crawler, the configuration stops the crawl with that copy's CriticalError", async () => {
  world.sites.a.hits.length = 0;
  const pool = new Pool();
  pool.register("PROXY", "proxy-1");
  const proxies = new ReputeProxyConfiguration({ pool, proxyUrl: proxyUrls({ map: world.urlMap() }) });
  const failed = [];
  const crawler = new cheerio2.CheerioCrawler({
    proxyConfiguration: proxies,
    requestHandler: () => assert.fail("no page may be handled"),
    failedRequestHandler: (_ctx, e) => void failed.push(e),
  }, new core2.Configuration({ persistStorage: false }));
  await assert.rejects(crawler.run([world.sites.a.url("/as-is")]), (e) => e instanceof core2.CriticalError && /crawlerOptions/.test(e.message));
  assert.deepEqual(failed, []);
  assert.equal(world.sites.a.hits.length, 0);
});
