// End to end, all on the loopback range (_support.mjs): two sites, three forward proxies with
// passwords, a real CheerioCrawler using repute/crawlee — once over a durable embedded pool
// (openPool in a temporary folder, outcomes recorded), once over repute/client against a real
// `repute serve` child process (its audit log read through the HTTP API). The proxies are registered by name; their URLs come
// from an environment-provided map. site-a.test refuses proxy-1 (403, told by its exit
// address). proxy-1 is the cheap tier, proxy-2 and proxy-3 the backup: after the crawl proxy-1
// is cooling for site-a.test only, site-b.test kept using it, every page was fetched once
// through another proxy, the audit log shows the cooling and every outcome, no lease is held,
// and no password is anywhere but in the proxies' own credential checks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CheerioCrawler } from "@crawlee/cheerio";
import { openPool, proxyUrls } from "repute";
import { ReputeProxyConfiguration } from "repute/crawlee";
import { connectPool } from "repute/client";
import { spawnServe } from "../server/_http-support.mjs";
import { worldPerFile } from "./_support.mjs";

let world;
let crawlee;
worldPerFile((w, c) => ([world, crawlee] = [w, c]), { reset: false });

/** Every file under `dir`, as text. */
function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [readFileSync(p, "latin1")];
  });
}

/** Site A refuses proxy-1; everything else is a small page. */
function refuseProxy1(site) {
  site.hits.length = 0;
  site.handle = (req, res, from) => {
    if (from === "proxy-1") {
      res.statusCode = 403;
      return res.end("forbidden");
    }
    res.setHeader("content-type", "text/html; charset=utf-8");
    res.end(`<html><head><title>${site.name} ${req.url}</title></head><body>ok</body></html>`);
  };
}

/**
 * The scenario over `pool` (an embedded host or a client): registers the proxies by name in
 * their tiers, crawls six pages of each site one at a time (the cheap tier's proxy is free for
 * every request, so which proxy serves what does not depend on the pool's random draws), and
 * returns what the crawler saw.
 */
export async function crawlTwoSites(pool) {
  const { a, b } = world.sites;
  refuseProxy1(a);
  b.hits.length = 0;
  b.handle = null;
  for (const p of world.proxies) await pool.register("PROXY", p.name, { group: p.name === "proxy-1" ? "cheap" : "backup" });
  // What a deployment puts in its environment: resource name → proxy URL with the password.
  process.env.REPUTE_TEST_PROXY_URLS = JSON.stringify(world.urlMap());
  // slowThresholdMs: a loaded machine must not make a page SLOW (outcomes.test.mjs tests SLOW).
  const proxies = new ReputeProxyConfiguration({ pool, groups: ["cheap", "backup"], proxyUrl: proxyUrls({ env: "REPUTE_TEST_PROXY_URLS" }), slowThresholdMs: 30_000 });
  delete process.env.REPUTE_TEST_PROXY_URLS; // read once, when the resolver was made
  const pages = [];
  const byPort = new Map(world.proxies.map((p) => [String(p.port), p.name]));
  const crawler = new CheerioCrawler(proxies.crawlerOptions({
    maxConcurrency: 1,
    maxRequestRetries: 4,
    async requestHandler({ request, $, proxyInfo }) {
      pages.push({ url: request.url, title: $("title").text(), proxy: byPort.get(proxyInfo.port) });
    },
  }), crawlee.config());
  const urls = [];
  for (let i = 0; i < 6; i++) urls.push(a.url(`/item/${i}`), b.url(`/item/${i}`));
  const stats = await crawler.run(urls);
  await proxies.close(); // the sessions' leases
  return { stats, pages, proxies, urls };
}

/** The assertions on what the crawl did (the same for every pool). */
export function checkCrawl({ stats, pages, proxies, urls }) {
  const { a, b } = world.sites;
  assert.equal(stats.requestsFinished, urls.length, "every request succeeded");
  assert.equal(stats.requestsFailed, 0);
  assert.equal(proxies.held, 0, "no lease is left held");
  assert.deepEqual(pages.map((p) => p.url).sort(), [...urls].sort(), "each page handled once");
  for (const p of pages) assert.match(p.title, new RegExp(`^${p.url.startsWith("http://site-a") ? "site-a" : "site-b"}\\.test /item/\\d$`));
  // Site A: proxy-1 was refused twice (coolAfter 2), then never used there again; every page
  // came through the backup tier.
  const aRefused = a.hits.filter((h) => h.from === "proxy-1");
  assert.equal(aRefused.length, 2, "proxy-1 tried twice on site A, then cooling there");
  for (const p of pages.filter((p) => p.url.startsWith("http://site-a"))) assert.ok(["proxy-2", "proxy-3"].includes(p.proxy), `${p.url} through ${p.proxy}`);
  assert.equal(a.hits.length, 6 + 2, "six pages and two refusals: nothing fetched twice");
  // Site B: proxy-1 for every page, also after it cooled on site A.
  assert.deepEqual(new Set(b.hits.map((h) => h.from)), new Set(["proxy-1"]));
  assert.deepEqual(new Set(pages.filter((p) => p.url.startsWith("http://site-b")).map((p) => p.proxy)), new Set(["proxy-1"]));
  const cooledAt = Math.max(...aRefused.map((h) => h.seq));
  assert.ok(b.hits.some((h) => h.seq > cooledAt), "site B used proxy-1 after it cooled for site A");
  // Every proxy request carried the right password: the resolver's URL reached the proxies.
  for (const p of world.proxies) assert.ok(p.seen.every((s) => s.auth), `${p.name} saw its credentials`);
}

/** The pool's view after the crawl: proxy-1 cooling for site A only. */
export function checkCells(resources) {
  const cell = (value, context) => resources.find((r) => r.value === value)?.cells.find((c) => c.context === context);
  const a1 = cell("proxy-1", "site-a.test");
  assert.equal(a1.state, "COOLING");
  assert.equal(a1.cooldownCause, "BLOCKED");
  assert.equal(a1.consecutiveFailures, 2);
  const b1 = cell("proxy-1", "site-b.test");
  assert.equal(b1.state, "HEALTHY");
  assert.equal(b1.consecutiveSuccesses, 6);
  for (const r of resources) {
    for (const c of r.cells) if (!(r.value === "proxy-1" && c.context === "site-a.test")) assert.equal(c.state, "HEALTHY", `${r.value} in ${c.context}`);
    assert.equal(r.lease, null, `${r.value} is not leased`);
  }
}

/** The audit log's events and the recorded outcomes say the same. */
export function checkAudit(events, outcomes) {
  const cooled = events.filter((e) => e.type === "RESOURCE_COOLED");
  assert.equal(cooled.length, 1, "one cooling in the audit log");
  assert.equal(cooled[0].value, "proxy-1");
  assert.equal(cooled[0].context, "site-a.test");
  assert.equal(cooled[0].cause, "BLOCKED");
  const leased = events.filter((e) => e.type === "RESOURCE_LEASED");
  const released = events.filter((e) => e.type === "LEASE_RELEASED");
  assert.equal(leased.length, 12 + 2, "a lease per attempt");
  assert.equal(released.length, leased.length, "each one released");
  assert.equal(events.filter((e) => e.type === "LEASE_EXPIRED").length, 0);
  const line = (o) => `${o.value}@${o.context}:${o.outcome.ok ? "ok" : o.outcome.failure}`;
  const seen = outcomes.map(line);
  assert.deepEqual(seen.filter((s) => s.startsWith("proxy-1@site-a")), ["proxy-1@site-a.test:BLOCKED", "proxy-1@site-a.test:BLOCKED"]);
  assert.equal(seen.filter((s) => s === "proxy-1@site-b.test:ok").length, 6);
  assert.equal(seen.filter((s) => /^proxy-[23]@site-a.test:ok$/.test(s)).length, 6);
  assert.equal(seen.length, 14);
  const secondBlock = seen.lastIndexOf("proxy-1@site-a.test:BLOCKED");
  assert.ok(seen.slice(secondBlock).includes("proxy-1@site-b.test:ok"), "the outcomes show site B served by proxy-1 after the cooling");
  for (const o of outcomes) assert.equal(typeof o.outcome.latencyMs, "number");
}

/** No password in any of `texts`. */
export function checkNoSecrets(label, texts) {
  for (const pw of world.passwords) {
    for (const t of texts) assert.ok(!t.includes(pw) && !t.includes(encodeURIComponent(pw)), `${label}: a password leaked`);
  }
}

test("end to end, embedded pool: the refused proxy cools for that site only and every page comes through another", async () => {
  const dir = mkdtempSync(join(tmpdir(), "repute-crawlee-pool-"));
  const host = await openPool({ dir, handleSignals: false, checkpointMs: 0, recordOutcomes: true, onError: (e) => assert.fail(String(e)) });
  try {
    const run = await crawlTwoSites(host);
    checkCrawl(run);
    checkCells(host.resources());
    assert.equal(host.stats().leased, 0);
    const events = (await host.readEvents({ limit: 1000 })).events;
    const outcomes = (await host.readOutcomes({ limit: 1000 })).outcomes;
    checkAudit(events, outcomes);
    await host.checkpoint();
    checkNoSecrets("pool folder, events, Crawlee's log", [...filesUnder(dir), JSON.stringify(events), host.snapshot(), ...crawlee.lines]);
  } finally {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("end to end, remote pool: the same crawl through repute/client against a real `repute serve`", async () => {
  const dir = mkdtempSync(join(tmpdir(), "repute-crawlee-serve-"));
  const token = "worker-token-7f3a9c";
  const viewerToken = "viewer-token-0b1e";
  const server = spawnServe(["--port", "0", "--data", dir, "--record-outcomes", "--checkpoint-ms", "0"], {
    env: { REPUTE_TOKENS: JSON.stringify({ tokens: [{ token, role: "worker" }, { token: viewerToken, role: "viewer" }] }) },
  });
  let client;
  let viewer;
  try {
    const url = await server.ready;
    client = connectPool({ url, token }); // the crawler's: a worker may lease, report, register
    viewer = connectPool({ url, token: viewerToken }); // the test's look at the pool
    const run = await crawlTwoSites(client);
    checkCrawl(run);
    checkCells(await viewer.resources());
    assert.equal((await viewer.stats()).leased, 0);
    const events = (await viewer.readEvents({ limit: 1000 })).events;
    const res = await fetch(`${url}/api/outcomes?limit=1000`, { headers: { authorization: `Bearer ${viewerToken}` } });
    assert.equal(res.status, 200);
    const { outcomes } = await res.json();
    checkAudit(events, outcomes);
    await Promise.all([client.close(), viewer.close()]);
    client = viewer = null;
    server.child.kill("SIGTERM");
    const exit = await server.exited;
    assert.equal(exit.code, 0, exit.stderr);
    checkNoSecrets("server folder and output, events, Crawlee's log", [...filesUnder(dir), JSON.stringify(events), exit.stdout, exit.stderr, ...crawlee.lines]);
    for (const line of crawlee.lines) assert.ok(!line.includes(token), "the pool token is not in Crawlee's log");
  } finally {
    await Promise.all([client?.close(), viewer?.close()]);
    if (server.child.exitCode === null) server.child.kill("SIGKILL");
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
});
