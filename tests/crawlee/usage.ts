// Type-checks repute/crawlee with a real CheerioCrawler (nothing is emitted or run):
//   pkg-scripts/node_modules/.bin/tsc -p tests/crawlee/tsconfig.json --noEmit
// The user's handler and hooks get the crawler's own context types through crawlerOptions().
import { CheerioCrawler, type CheerioCrawlingContext } from "@crawlee/cheerio";
import { PlaywrightCrawler } from "@crawlee/playwright";
import { chromium } from "playwright-core";
import { Pool, openPool, proxyUrls } from "repute";
import { ReputeProxyConfiguration } from "repute/crawlee";
import { connectPool } from "repute/client";

export async function crawl(): Promise<void> {
  const host = await openPool({ handleSignals: false });
  const proxies = new ReputeProxyConfiguration({ pool: host, groups: ["dc-de", "residential-de"], proxyUrl: proxyUrls({ env: "REPUTE_PROXY_URLS" }) });
  const crawler = new CheerioCrawler(proxies.crawlerOptions({
    maxConcurrency: 10,
    async requestHandler({ $, request, enqueueLinks }) {
      const title: string = $("title").text();
      void [title, request.loadedUrl];
      await enqueueLinks();
    },
    postNavigationHooks: [async ({ response }: CheerioCrawlingContext) => void response?.statusCode],
    failedRequestHandler: async ({ request }, error) => void [request.url, error.message],
  }));
  await crawler.run(["https://shop.example/"]);
  // An embedded Pool fits as well, and the router serves when no handler is given.
  const embedded = new ReputeProxyConfiguration({ pool: new Pool(), sessionLeases: false });
  const routed = new CheerioCrawler(embedded.crawlerOptions({ maxRequestRetries: 5 }));
  routed.router.addDefaultHandler(async ({ $ }) => void $("h1").text());
  // A remote pool, more requests at once than proxies (the README's example).
  const remote = new ReputeProxyConfiguration({ pool: connectPool({ url: "http://127.0.0.1:8787", token: "t" }), proxyUrl: proxyUrls({ map: { "proxy-de-1": "http://u:p@h:1" } }) });
  await new CheerioCrawler(remote.crawlerOptions({
    maxConcurrency: 50,
    autoscaledPoolOptions: { desiredConcurrency: 50 },
    navigationTimeoutSecs: 30,
    async requestHandler({ request, $ }) { void [request.url, $("title").text()]; },
  })).run(["https://shop.example/"]);
  // How long a request may wait for a proxy, whatever the navigation timeout.
  new ReputeProxyConfiguration({ pool: new Pool(), maxWaitMs: 10_000 });
  // @ts-expect-error the crawler's options are checked through crawlerOptions
  new CheerioCrawler(proxies.crawlerOptions({ maxConcurrency: "ten" }));
  // A browser crawler: a context, and so a proxy, per page (the README's example).
  const browsers = new PlaywrightCrawler(proxies.crawlerOptions({
    launchContext: { launcher: chromium, useIncognitoPages: true, launchOptions: { executablePath: "/usr/bin/chromium" } },
    async requestHandler({ request, page }) { void [request.url, await page.title()]; },
  }));
  await browsers.run(["https://shop.example/"]);
  // @ts-expect-error sessionLeases is on or off
  new ReputeProxyConfiguration({ pool: new Pool(), sessionLeases: "per-site" });
  await Promise.all([proxies.close(), embedded.close(), remote.close()]);
  await host.close();
}
