// Issue 21's acceptance crawl: more concurrency than proxies. Five local sites and eight forward
// proxies (_support.mjs), each site refusing (403) a different 40 % of the proxies (16 banned
// cells of 40), a real CheerioCrawler at 50 requests at once crawling 1,000 pages through
// repute/crawlee — over an embedded Pool, and over repute/client against a real `repute serve`.
// Every proxy carries one request at a time (maxLeases 1), so a request finding none free waits
// for a release: no page may fail, and a banned (proxy × site) cell is refused at most twice
// (coolAfter 2: the second refusal cools it; with one lease per proxy no third request can be
// in flight through it meanwhile). The refusals are counted at the sites. A third crawl shows
// what `maxLeases` 4 gives (several requests per proxy at once: faster, more refusals per cell
// before the pool hears of them), measured, not timed. Each crawl prints its figures.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CheerioCrawler } from "@crawlee/cheerio";
import { Pool, proxyUrls } from "repute";
import { ReputeProxyConfiguration, RequestBlockedError } from "repute/crawlee";
import { connectPool } from "repute/client";
import { spawnServe } from "../server/_http-support.mjs";
import { crawleeSetup, startWorld } from "./_support.mjs";

const SITES = ["a", "b", "c", "d", "e"];
/** Site → the proxies it refuses: a different set each, 16 of the 40 cells (40 %). */
const BANNED = {
  a: ["proxy-1", "proxy-2", "proxy-3"],
  b: ["proxy-4", "proxy-5", "proxy-6"],
  c: ["proxy-7", "proxy-8", "proxy-1"],
  d: ["proxy-2", "proxy-3", "proxy-4"],
  e: ["proxy-5", "proxy-6", "proxy-7", "proxy-8"],
};
const PAGES_PER_SITE = 200;
const CONCURRENCY = 50;
/** How long a site takes to answer a page: a real site's time, so that requests overlap on the
 * proxies (a real delay on the socket) and more leases per proxy can show what they give. 20 ms
 * keeps 42 requests waiting at once and the maxLeases 4 crawl about twice as fast; 40 ms showed
 * the same and made each crawl of 1,000 pages 2.5 s longer (1,000 × 20 ms / 8 proxies). */
const PAGE_MS = 20;

let world;
let crawlee;
before(async () => {
  world = await startWorld({ sites: SITES, proxies: 8 });
  crawlee = await crawleeSetup();
});
after(async () => {
  await world.close();
  crawlee.close();
});

/** Every site refuses its banned proxies, and serves a small page to the others. */
function resetSites() {
  for (const k of SITES) {
    const site = world.sites[k];
    const banned = new Set(BANNED[k]);
    site.hits.length = 0;
    site.handle = (req, res, from) => {
      // real time: what more proxies give is measured on the real clock (see the header).
      setTimeout(() => {
        if (banned.has(from)) {
          res.statusCode = 403;
          return res.end("forbidden");
        }
        res.setHeader("content-type", "text/html; charset=utf-8");
        res.end(`<html><head><title>${site.name} ${req.url}</title></head><body>ok</body></html>`);
      }, PAGE_MS);
    };
  }
  for (const p of world.proxies) p.maxInFlight = 0;
}

/**
 * The crawl over `pool` (a Pool or a client): registers the eight proxies by name with
 * `maxLeases`, crawls 1,000 pages (the sites' pages interleaved) at 50 requests at once, and
 * returns its figures: pages handled, pages failed, refusals (per banned cell, at the sites),
 * seconds, the most requests Crawlee ran at once, and every error a try failed with.
 */
async function crawlAtConcurrency(pool, { maxLeases = 1 } = {}) {
  resetSites();
  for (const p of world.proxies) await pool.register("PROXY", p.name, maxLeases === 1 ? undefined : { maxLeases });
  const proxies = new ReputeProxyConfiguration({
    pool,
    proxyUrl: proxyUrls({ map: world.urlMap() }),
    // A loaded machine must not make a page SLOW (outcomes.test.mjs tests SLOW).
    slowThresholdMs: 60_000,
  });
  const handled = new Set();
  const failed = [];
  const errors = [];
  let mostAtOnce = 0;
  const crawler = new CheerioCrawler(proxies.crawlerOptions({
    // 50 at once from the start: an HTTP crawler otherwise starts at 10 (its desiredConcurrency)
    // and scales up by 5 % every 10 s while the machine is idle.
    minConcurrency: CONCURRENCY,
    maxConcurrency: CONCURRENCY,
    autoscaledPoolOptions: { desiredConcurrency: CONCURRENCY },
    // Crawlee's default maxRequestRetries (3). A refusal is a session error, which Crawlee
    // retries on a new session up to maxSessionRotations (10) times whatever maxRequestRetries
    // says; a page here meets at most 8 (every banned cell of its site, each twice).
    // A session for each try (Crawlee makes a new one per request until its pool is full; the
    // crawl's ~1,030 tries would fill the default 1,000 near the end). Once full, Crawlee may hand
    // one session to two requests at once, which share its one lease — one IP per session, by
    // design (sessions.test.mjs) — and a proxy would then carry two requests at once.
    sessionPoolOptions: { maxPoolSize: 2 * SITES.length * PAGES_PER_SITE },
    async requestHandler({ request, crawler: c }) {
      mostAtOnce = Math.max(mostAtOnce, c.autoscaledPool.currentConcurrency);
      handled.add(request.url);
    },
    errorHandler: ({ request }, e) => void errors.push(Object.assign(e, { url: request.url })),
    failedRequestHandler: (_ctx, e) => void failed.push(e),
  }), crawlee.config());
  const urls = [];
  for (let i = 0; i < PAGES_PER_SITE; i++) for (const k of SITES) urls.push(world.sites[k].url(`/item/${i}`));
  const started = performance.now();
  const stats = await crawler.run(urls);
  const seconds = (performance.now() - started) / 1000;
  await proxies.close();
  const refused = {};
  for (const k of SITES) {
    for (const name of BANNED[k]) refused[`${name}@site-${k}.test`] = world.sites[k].hits.filter((h) => h.from === name).length;
  }
  const counts = Object.values(refused);
  const triesOf = new Map();
  for (const e of errors) triesOf.set(e.url, (triesOf.get(e.url) ?? 0) + 1);
  return {
    urls,
    handled,
    failed,
    errors,
    stats,
    refused,
    figures: {
      pages: handled.size,
      failed: stats.requestsFailed,
      refusedPerCellMax: Math.max(...counts),
      refusedTotal: counts.reduce((a, b) => a + b, 0),
      mostRefusalsOfOnePage: Math.max(0, ...triesOf.values()),
      seconds: Math.round(seconds * 100) / 100,
      mostAtOnce,
      maxLeases,
    },
  };
}

/** What every crawl must show, whatever the pool and its capacity. */
function checkNoPageFailed(run) {
  assert.deepEqual(run.failed.map((e) => e.message), [], "no page failed");
  assert.equal(run.figures.failed, 0);
  assert.equal(run.handled.size, run.urls.length, "every page handled");
  // Every retried try was a refusal: no wait for a proxy ever failed one (POOL_EXHAUSTED), nor
  // anything else.
  const other = run.errors.filter((e) => !(e instanceof RequestBlockedError));
  assert.deepEqual(other.map((e) => `${e.code ?? e.name}: ${e.message}`), [], "only refusals were retried");
  assert.equal(run.errors.length, run.figures.refusedTotal, "each refusal retried once, through another proxy");
  assert.ok(run.figures.mostAtOnce > 8 * run.figures.maxLeases, `more requests at once than proxy places (${run.figures.mostAtOnce})`);
}

/** With one lease per proxy: at most two refusals per banned cell, and one request per proxy. */
function checkExclusive(run) {
  checkNoPageFailed(run);
  for (const [cell, n] of Object.entries(run.refused)) assert.ok(n <= 2, `${cell} refused ${n} requests`);
  for (const p of world.proxies) assert.equal(p.maxInFlight, 1, `${p.name} carried one request at a time`);
}

test("8 proxies, 50 requests at once, 1,000 pages over an embedded Pool: no page fails, at most 2 refusals per banned cell", async (t) => {
  const pool = new Pool();
  let mostWaiting = 0;
  const sample = setInterval(() => (mostWaiting = Math.max(mostWaiting, pool.waiting)), 5); // a look, not a wait
  let run;
  try {
    run = await crawlAtConcurrency(pool);
  } finally {
    clearInterval(sample);
  }
  t.diagnostic(`embedded, maxLeases 1: ${JSON.stringify({ ...run.figures, mostWaiting })}`);
  checkExclusive(run);
  assert.ok(mostWaiting > 0, "requests waited in the pool's queue");
  assert.equal(pool.stats().leased, 0, "every lease released");
  assert.equal(pool.waiting, 0);
});

test("the same crawl with maxLeases 4 per proxy: no page fails; faster, and more refusals per banned cell (figures, not timed)", async (t) => {
  const pool = new Pool();
  const run = await crawlAtConcurrency(pool, { maxLeases: 4 });
  t.diagnostic(`embedded, maxLeases 4: ${JSON.stringify(run.figures)}`);
  checkNoPageFailed(run);
  // Up to 4 requests may be in flight through a banned cell when its first refusal is
  // reported; once two are, it cools: at most one lease released before the second report
  // plus the 4 live then.
  for (const [cell, n] of Object.entries(run.refused)) assert.ok(n <= 4 + 1, `${cell} refused ${n} requests`);
  assert.ok(world.proxies.some((p) => p.maxInFlight > 1), "a proxy carried several requests at once");
  for (const p of world.proxies) assert.ok(p.maxInFlight <= 4, `${p.name} carried ${p.maxInFlight} at once`);
  assert.equal(pool.stats().leased, 0);
});

test("the same crawl over repute/client against a real `repute serve`: no page fails, at most 2 refusals per banned cell", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "repute-crawlee-fleet-"));
  const token = "worker-token-5d1c";
  const viewerToken = "viewer-token-93ab";
  const server = spawnServe(["--port", "0", "--data", dir, "--checkpoint-ms", "0"], {
    env: { REPUTE_TOKENS: JSON.stringify({ tokens: [{ token, role: "worker" }, { token: viewerToken, role: "viewer" }] }) },
  });
  let client;
  let viewer;
  try {
    const url = await server.ready;
    client = connectPool({ url, token }); // the crawler's
    viewer = connectPool({ url, token: viewerToken }); // the test's look at the pool
    const run = await crawlAtConcurrency(client);
    t.diagnostic(`remote, maxLeases 1: ${JSON.stringify(run.figures)}`);
    checkExclusive(run);
    assert.equal((await viewer.stats()).leased, 0, "every lease released");
  } finally {
    await Promise.all([client?.close(), viewer?.close()]);
    server.child.kill("SIGTERM");
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});
