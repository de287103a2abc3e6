// The WebAssembly build in real headless Chromium (Debian's, driven by playwright-core; no
// browser is downloaded): every golden scenario gives the same results, events and
// byte-identical snapshots as the native run, the version 2 checks of tests/js/groups-checks.mjs
// and the waiting checks of tests/js/waiting-checks.mjs pass as they do in Node,
// and snapshots move between Node and the browser in both directions.
// Files are served from 127.0.0.1 by a throwaway static server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { extname, normalize, join } from "node:path";
import { chromium } from "playwright-core";
import { Pool } from "repute";
import { history } from "../js/history.mjs";
import { groupChecks } from "../js/groups-checks.mjs";
import { waitingChecks } from "../js/waiting-checks.mjs";

const root = new URL("../../", import.meta.url).pathname;
const scenarioDir = join(root, "tests/scenarios");
const files = readdirSync(scenarioDir).filter((f) => f.endsWith(".json")).sort();
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json" };

let server;
let browser;
let page;

before(async () => {
  server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname));
    const file = join(root, path);
    if (!file.startsWith(root) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    res.end(readFileSync(file));
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  page = await browser.newPage();
  page.on("pageerror", (e) => console.error("page error:", e));
  await page.goto(`http://127.0.0.1:${server.address().port}/tests/browser/page.html`);
  await page.waitForFunction(() => document.title === "ready");
});

after(async () => {
  await browser?.close();
  await new Promise((ok) => server?.close(ok));
});

test("the page runs the engine in Chromium", async () => {
  const ua = await page.evaluate(() => navigator.userAgent);
  assert.match(ua, /Chrome/);
});

for (const file of files) {
  test(`scenario ${file} in Chromium`, async () => {
    const scenario = JSON.parse(readFileSync(join(scenarioDir, file), "utf8"));
    const failures = await page.evaluate((s) => window.repute.runScenario(window.repute.Pool, s), scenario);
    assert.deepEqual(failures, []);
  });
}

for (const [i, [name]] of groupChecks.entries()) {
  test(`${name} (in Chromium)`, async () => {
    const failure = await page.evaluate((n) => {
      const { Pool: P, groupChecks: checks } = window.repute;
      try {
        checks[n][1](P);
        return null;
      } catch (e) {
        return String(e?.stack ?? e);
      }
    }, i);
    assert.equal(failure, null);
  });
}

for (const [i, [name]] of waitingChecks.entries()) {
  test(`${name} (in Chromium)`, async () => {
    const failure = await page.evaluate(async (n) => {
      const { Pool: P, waitingChecks: checks } = window.repute;
      try {
        await checks[n][1](P);
        return null;
      } catch (e) {
        return String(e?.stack ?? e);
      }
    }, i);
    assert.equal(failure, null);
  });
}

test("a snapshot taken in Node restores in Chromium byte for byte, and back", async () => {
  const now = 1_700_000_000_000;
  const fromNode = history(Pool, now).snapshot();
  const { again, fromBrowser } = await page.evaluate(([snap, t]) => {
    const { Pool: P, history: h } = window.repute;
    const again = P.restore(snap, { seed: 1, now: () => t }).snapshot();
    return { again, fromBrowser: h(P, t).snapshot() };
  }, [fromNode, now]);
  assert.equal(again, fromNode, "Node → Chromium → snapshot");
  assert.equal(fromBrowser, fromNode, "same calls, same bytes in both hosts");
  const back = Pool.restore(fromBrowser, { seed: 1, now: () => now }).snapshot();
  assert.equal(back, fromBrowser, "Chromium → Node → snapshot");
});
