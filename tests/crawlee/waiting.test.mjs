// A request that finds no free proxy waits for one (repute/crawlee's newProxyInfo, holds.js):
// in the pool's own queue, woken by a release, for at most `maxWaitMs` — by default the
// navigation timeout the crawler was given (Crawlee's 30 s for HTTP crawlers, 60 s with a
// launchContext) capped at 30 s — then POOL_EXHAUSTED; a server whose limit refuses the wait
// stops the crawl at its first request; `close()` ends the waits; a pool without acquireWait
// fails at once, saying it cannot wait. The pool here is an embedded `Pool` on a virtual clock
// (its waits' timers fire only when a test advances them): a wait that ends, ends because a
// release served it, or because the test moved time past its bound. The crawl runs on the real
// local sites and proxies (_support.mjs) with Crawlee's own timers.
import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { CheerioCrawler } from "@crawlee/cheerio";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool, proxyUrls } from "repute";
import { connectPool } from "repute/client";
import { ReputeProxyConfiguration } from "repute/crawlee";
import { spawnServe } from "../server/_http-support.mjs";
import { VirtualTimers } from "../server/_manual-timers.mjs";
import { worldPerFile } from "./_support.mjs";

let world;
let crawlee;
worldPerFile((w, c) => ([world, crawlee] = [w, c]));
beforeEach(() => {
  for (const p of world.proxies) {
    p.maxInFlight = 0;
    p.seen.length = 0;
  }
});

const T0 = 1_700_000_000_000;

/** A Pool with `names` registered, on the virtual clock of `timers` (epoch T0 + its time);
 * leases last 5 minutes, longer than any wait here (a lapsed lease would free its proxy). */
function poolOn(timers, names) {
  const pool = new Pool({ seed: 7, config: { leaseTtlMs: 300_000 }, now: () => T0 + timers.monotonicMs(), timers });
  for (const n of names) pool.register("PROXY", n);
  pool.drainEvents();
  return pool;
}

const configOf = (pool, options = {}) => new ReputeProxyConfiguration({ pool, proxyUrl: proxyUrls({ map: world.urlMap() }), slowThresholdMs: 60_000, ...options });

/** A Crawlee request as newProxyInfo sees one (its URL is all the default context reads). */
const requestTo = (url) => ({ url });

/** Lets pending promise callbacks run (a wait's first steps are a few awaits deep). */
const settle = () => new Promise((r) => setImmediate(r));

test("more requests at once than proxies: each waits for a release, none counted against maxRequestRetries, no page fails", async () => {
  const timers = new VirtualTimers(); // never advanced: only releases can serve a wait
  const pool = poolOn(timers, ["proxy-1", "proxy-2"]);
  let mostWaiting = 0;
  world.sites.a.handle = (req, res) => {
    mostWaiting = Math.max(mostWaiting, pool.waiting);
    // real time: a delay on the real socket, so that the six requests overlap on two proxies.
    setTimeout(() => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(`<html><head><title>${req.url}</title></head></html>`);
    }, 40);
  };
  const proxies = configOf(pool);
  const handled = [];
  const failed = [];
  const crawler = new CheerioCrawler(proxies.crawlerOptions({
    minConcurrency: 6,
    maxConcurrency: 6,
    maxRequestRetries: 0, // a wait counted as a failed try would fail its page
    requestHandler: ({ request }) => void handled.push(request.url),
    failedRequestHandler: (_ctx, e) => void failed.push(e),
  }), crawlee.config());
  const urls = Array.from({ length: 12 }, (_, i) => world.sites.a.url(`/wait/${i}`));
  const stats = await crawler.run(urls);
  await proxies.close();
  assert.deepEqual(failed.map((e) => e.message), []);
  assert.deepEqual(handled.sort(), [...urls].sort());
  assert.deepEqual(stats.retryHistogram, [12], "every page on its first try");
  assert.ok(mostWaiting >= 2, `requests waited for a proxy while others were fetched (at most ${mostWaiting} at once)`);
  assert.equal(pool.drainEvents().filter((e) => e.type === "ACQUISITION_REJECTED").length, 0, "no wait ended empty");
  for (const p of world.proxies.slice(0, 2)) assert.equal(p.maxInFlight, 1, `${p.name} carried one request at a time`);
  assert.equal(world.proxies[2].seen.length, 0, "the unregistered proxy was never used");
  assert.equal(pool.stats().leased, 0);
  assert.equal(pool.waiting, 0);
});

test("a release wakes the waiting request at once with the freed proxy; until then it waits in the pool's queue", async () => {
  const timers = new VirtualTimers();
  const pool = poolOn(timers, ["proxy-1"]);
  const proxies = configOf(pool);
  const binding = proxies.crawlerOptions({}).proxyConfiguration;
  const held = pool.acquire("site-a.test");
  let got = null;
  const waiting = binding.newProxyInfo(undefined, { request: requestTo("http://site-a.test/x") }).then((info) => (got = info));
  await settle();
  assert.equal(pool.waiting, 1, "in the pool's queue");
  await timers.advance(29_999); // nothing but a release can serve it before its bound
  assert.equal(got, null);
  pool.release(held);
  await waiting;
  assert.equal(got.url, world.proxies[0].url(), "the freed proxy");
  assert.equal(pool.waiting, 0);
  await proxies.close();
  assert.equal(pool.stats().leased, 0);
});

test("the wait is bounded by the navigation timeout given (at most 30 s), or by maxWaitMs; then POOL_EXHAUSTED", async () => {
  const cases = [
    { label: "an HTTP crawler's default", crawler: {}, proxy: {}, bound: 30_000 },
    { label: "navigationTimeoutSecs", crawler: { navigationTimeoutSecs: 7 }, proxy: {}, bound: 7_000 },
    { label: "a browser crawler's default (60 s), capped at 30 s", crawler: { launchContext: { useIncognitoPages: true } }, proxy: {}, bound: 30_000 },
    { label: "navigationTimeoutSecs over 30 s, capped", crawler: { navigationTimeoutSecs: 45 }, proxy: {}, bound: 30_000 },
    { label: "maxWaitMs over 30 s, as given", crawler: {}, proxy: { maxWaitMs: 45_000 }, bound: 45_000 },
    { label: "maxWaitMs over navigationTimeoutSecs", crawler: { navigationTimeoutSecs: 7 }, proxy: { maxWaitMs: 2_500 }, bound: 2_500 },
    { label: "whole milliseconds (a server takes no fraction)", crawler: { navigationTimeoutSecs: 1.2345 }, proxy: {}, bound: 1_235 },
  ];
  for (const { label, crawler, proxy, bound } of cases) {
    const timers = new VirtualTimers();
    const pool = poolOn(timers, ["proxy-1"]);
    const proxies = configOf(pool, proxy);
    const binding = proxies.crawlerOptions(crawler).proxyConfiguration;
    const held = pool.acquire("site-a.test");
    let outcome = null;
    const waiting = binding.newProxyInfo(undefined, { request: requestTo("http://site-a.test/x") }).then((v) => (outcome = v), (e) => (outcome = e));
    await settle();
    assert.equal(pool.waiting, 1, label);
    await timers.advance(bound - 1);
    await settle();
    assert.equal(outcome, null, `${label}: still waiting 1 ms before ${bound} ms`);
    await timers.advance(1);
    await waiting;
    assert.equal(outcome?.code, "POOL_EXHAUSTED", `${label}: ${outcome}`);
    assert.match(outcome.message, new RegExp(`no proxy is available for "site-a\\.test" within ${bound} ms; retry after \\d+ ms`), label);
    // The proxy is leased: the pool's next change is that lease's end.
    assert.equal(outcome.retryAfterMs, held.expiresAt - (T0 + timers.monotonicMs()), label);
    assert.equal(pool.drainEvents().filter((e) => e.type === "ACQUISITION_REJECTED").length, 1, `${label}: one rejection for the whole wait`);
    pool.release(held);
    await proxies.close();
    assert.equal(pool.stats().leased, 0, label);
  }
});

test("close() ends the waits (an AbortError) and leaves nothing leased; the configuration still serves later requests", async () => {
  const timers = new VirtualTimers();
  const pool = poolOn(timers, ["proxy-1"]);
  const proxies = configOf(pool);
  const binding = proxies.crawlerOptions({}).proxyConfiguration;
  const held = pool.acquire("site-a.test");
  const waits = [1, 2, 3].map((i) => binding.newProxyInfo(`session-${i}`, { request: requestTo(`http://site-a.test/${i}`) }));
  await settle();
  assert.equal(pool.waiting, 3);
  await proxies.close();
  for (const w of waits) await assert.rejects(w, (e) => e.name === "AbortError" && /closed while this request waited/.test(e.message));
  assert.equal(pool.waiting, 0);
  assert.equal(pool.stats().leased, 1, "only the test's own lease");
  pool.release(held);
  const info = await binding.newProxyInfo(undefined, { request: requestTo("http://site-a.test/after") });
  assert.equal(info.url, world.proxies[0].url());
  await proxies.close();
  assert.equal(pool.stats().leased, 0);
});

test("a pool without acquireWait cannot wait: a request finding no proxy fails at once with POOL_EXHAUSTED saying so", async () => {
  const timers = new VirtualTimers();
  const inner = poolOn(timers, ["proxy-1"]);
  // A pool of the older shape (acquire, report, release): a custom adapter, say.
  const pool = {
    acquire: (context, options) => inner.acquire(context, options),
    report: (...a) => inner.report(...a),
    release: (lease) => inner.release(lease),
    nextChangeAt: (context, options) => inner.nextChangeAt(context, options),
    now: () => T0 + timers.monotonicMs(),
  };
  const proxies = configOf(pool);
  const binding = proxies.crawlerOptions({}).proxyConfiguration;
  const first = await binding.newProxyInfo(undefined, { request: requestTo("http://site-a.test/1") });
  assert.equal(first.url, world.proxies[0].url(), "a free proxy is leased as ever");
  await assert.rejects(binding.newProxyInfo(undefined, { request: requestTo("http://site-a.test/2") }), (e) => {
    assert.equal(e.code, "POOL_EXHAUSTED");
    assert.match(e.message, /no proxy is available for "site-a\.test" \(this pool cannot wait for one: it has no acquireWait, so the request fails at once\); retry after \d+ ms/);
    return true;
  });
  await proxies.close();
  assert.equal(inner.stats().leased, 0);
});

test("a pool server whose --max-wait-ms is below maxWaitMs refuses the wait: the crawl stops at its first request, naming both fixes", async () => {
  const dir = mkdtempSync(join(tmpdir(), "repute-crawlee-limit-"));
  const server = spawnServe(["--port", "0", "--data", dir, "--checkpoint-ms", "0", "--max-wait-ms", "1000"]);
  let client;
  try {
    client = connectPool({ url: await server.ready });
    await client.register("PROXY", "proxy-1");
    const proxies = new ReputeProxyConfiguration({ pool: client, proxyUrl: proxyUrls({ map: world.urlMap() }), maxWaitMs: 5_000 });
    const failed = [];
    const crawler = new CheerioCrawler(proxies.crawlerOptions({
      maxRequestRetries: 3,
      requestHandler: () => assert.fail("no page may be handled"),
      failedRequestHandler: (_ctx, e) => void failed.push(e),
    }), crawlee.config());
    await assert.rejects(crawler.run([world.sites.a.url("/limit/1"), world.sites.a.url("/limit/2")]), (e) => {
      assert.match(e.message, /the pool refused to wait 5000 ms for a proxy \(.*limit of 1000 ms.*\)/);
      assert.match(e.message, /maxWaitMs within the server's limit, or raise the limit \(repute serve --max-wait-ms\)/);
      return true;
    });
    assert.deepEqual(failed, [], "no request counted as failed: the crawl stopped");
    assert.equal(world.sites.a.hits.length, 0, "nothing fetched");
    await proxies.close();
    assert.equal((await client.stats()).leased, 0, "nothing leased");
  } finally {
    await client?.close();
    server.child.kill("SIGTERM");
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});
