// Proxy URLs by resource name (pkg-scripts/lib/call/proxy-urls.js): from a map, from an
// environment variable's JSON map, or from a resolver (single flight, cached until its expiry,
// invalidated after a refusal). Errors name the resource or the variable, never a URL or the
// variable's text, even when the text is malformed. And the use it exists for: proxyFetch over
// PROXY resources registered by name, the password reaching the proxy and nothing else.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pool, proxyFetch, proxyUrls } from "repute";
import { startOrigin, startProxy } from "./_sockets.mjs";

const lease = (value) => ({ kind: "PROXY", value, group: null, context: "c", token: 1, leasedAt: 0, expiresAt: 1 });
const SECRET = "s3cr3t-Pw!";

/** The error `fn` rejects (or throws) with, whose message must not hold `SECRET`. */
async function refusal(fn) {
  try {
    await fn();
  } catch (e) {
    assert.ok(!String(e.message).includes(SECRET) && !String(e.message).includes(encodeURIComponent(SECRET)), `no secret in: ${e.message}`);
    return e;
  }
  assert.fail("expected a refusal");
}

test("a map: the URL of each name; an unknown name or a malformed URL is refused by name only", async () => {
  const urls = proxyUrls({ map: { "proxy-de-1": `http://user:${SECRET}@10.0.0.1:8080`, "proxy-de-2": "socks5://u:p@10.0.0.2:1080" } });
  assert.equal(await urls(lease("proxy-de-1")), `http://user:${SECRET}@10.0.0.1:8080`);
  assert.equal(await urls(lease("proxy-de-2")), "socks5://u:p@10.0.0.2:1080");
  const unknown = await refusal(() => urls(lease("proxy-fr-1")));
  assert.match(unknown.message, /the map has no proxy URL for the resource "proxy-fr-1"/);
  const bad = await refusal(() => proxyUrls({ map: { "proxy-x": `ftp://user:${SECRET}@host/` } }));
  assert.equal(bad.code, "INVALID_ARGUMENT");
  assert.match(bad.message, /"proxy-x" in map is not a proxy URL/);
  const garbled = await refusal(() => proxyUrls({ map: new Map([["proxy-y", `user:${SECRET}@ host`]]) }));
  assert.match(garbled.message, /"proxy-y"/);
  urls.invalidate(lease("proxy-de-1")); // nothing newer to load: a no-op
  assert.equal(await urls(lease("proxy-de-1")), `http://user:${SECRET}@10.0.0.1:8080`);
});

test("an environment variable holding a JSON map, read once; a missing or malformed one is refused without quoting it", async () => {
  const environment = { PROXIES: JSON.stringify({ "proxy-1": `http://u:${SECRET}@127.0.0.1:3128` }) };
  const urls = proxyUrls({ env: "PROXIES", environment });
  environment.PROXIES = "{}"; // read when the resolver was made
  assert.equal(await urls(lease("proxy-1")), `http://u:${SECRET}@127.0.0.1:3128`);
  assert.match((await refusal(() => urls(lease("proxy-2")))).message, /the environment variable PROXIES has no proxy URL for the resource "proxy-2"/);
  assert.match((await refusal(() => proxyUrls({ env: "NOT_SET", environment: {} }))).message, /NOT_SET is not set/);
  const broken = await refusal(() => proxyUrls({ env: "BROKEN", environment: { BROKEN: `{"proxy-1": "http://u:${SECRET}@h:1",}` } }));
  assert.match(broken.message, /BROKEN must hold a JSON object/);
  await refusal(() => proxyUrls({ env: "LIST", environment: { LIST: `["http://u:${SECRET}@h:1"]` } }));
  process.env.REPUTE_TEST_PROXY_MAP = JSON.stringify({ a: "http://h:1" }); // the default: process.env
  try {
    assert.equal(await proxyUrls({ env: "REPUTE_TEST_PROXY_MAP" })(lease("a")), "http://h:1");
  } finally {
    delete process.env.REPUTE_TEST_PROXY_MAP;
  }
});

test("exactly one source", async () => {
  await refusal(() => proxyUrls({}));
  await refusal(() => proxyUrls({ map: {}, env: "X" }));
  await refusal(() => proxyUrls({ resolve: "not a function" }));
});

test("a resolver: one load for concurrent callers, cached until its expiry, loaded again after invalidate; failures redacted", async () => {
  let t = 0;
  let loads = 0;
  let release;
  const gate = new Promise((r) => (release = r));
  const urls = proxyUrls({
    now: () => t,
    refreshMarginMs: 100,
    resolve: async (l) => {
      loads++;
      await gate;
      return { url: `http://${l.value}:${SECRET}-${loads}@127.0.0.1:3128`, expiresAt: t + 1000 };
    },
  });
  const many = Promise.all(Array.from({ length: 10 }, () => urls(lease("proxy-1"))));
  release();
  assert.deepEqual(new Set(await many), new Set([`http://proxy-1:${SECRET}-1@127.0.0.1:3128`]));
  assert.equal(loads, 1, "ten callers, one load");
  t = 899;
  assert.equal(await urls(lease("proxy-1")), `http://proxy-1:${SECRET}-1@127.0.0.1:3128`, "cached until the margin");
  t = 900;
  assert.equal(await urls(lease("proxy-1")), `http://proxy-1:${SECRET}-2@127.0.0.1:3128`, "loaded again at the margin");
  urls.invalidate(lease("proxy-1"));
  assert.equal(await urls(lease("proxy-1")), `http://proxy-1:${SECRET}-3@127.0.0.1:3128`, "and after a refusal");
  const failing = proxyUrls({ resolve: async () => { throw new Error(`vault said no for http://admin:${SECRET}@vault:8200`); } });
  const e = await refusal(() => failing(lease("proxy-1")));
  assert.equal(e.code, "CREDENTIAL_UNAVAILABLE");
  const malformed = proxyUrls({ resolve: () => `not a url ${SECRET}` });
  assert.match((await refusal(() => malformed(lease("proxy-9")))).message, /the URL resolved for "proxy-9" is not a proxy URL/);
});

test("proxyFetch over resources registered by name: the password reaches the proxy, the pool never holds it", async () => {
  const origin = await startOrigin();
  const proxy = await startProxy();
  try {
    const pool = new Pool();
    pool.register("PROXY", "proxy-de-1");
    const proxies = proxyFetch(pool, { resolveProxy: proxyUrls({ map: { "proxy-de-1": proxy.url(`user:${SECRET}`) } }) });
    const l = pool.acquire("shop");
    const res = await proxies.fetch(l, origin.url("/item"));
    assert.equal(res.status, 200);
    await res.text();
    pool.release(l);
    assert.equal(proxy.seen[0].auth, `Basic ${Buffer.from(`user:${SECRET}`).toString("base64")}`);
    assert.ok(!pool.snapshot().includes(SECRET) && !JSON.stringify(pool.drainEvents()).includes(SECRET));
    await proxies.close();
  } finally {
    await proxy.close();
    await origin.close();
  }
});
