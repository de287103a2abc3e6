// Shared helpers of the console's browser tests (not a test file: no `.test.` in the name): a
// real pool server on 127.0.0.1 (in-process `openPool` + `serve`, serving www/, on a fixed
// clock the test moves), Debian's Chromium through playwright-core (never downloaded), a page
// watcher that collects console errors, page errors, failed requests and HTTP statuses ≥ 400
// that the test did not announce, and screenshots into tests/console/artifacts/ (git-ignored),
// and the README's ones (docs/console-detail.png, kept in the repository; live-health.test.mjs
// writes docs/console-live.png).
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { openPool } from "../../pkg-scripts/lib/node/open-pool.js";
import { serve } from "../../pkg-scripts/lib/node/http-server.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const WWW = path.join(ROOT, "www");
export const ARTIFACTS = path.join(ROOT, "tests/console/artifacts");
export const T0 = 1_700_000_000_000;
export const TOKENS = { operator: "opr-console-0123456789abcdef", viewer: "vwr-console-0123456789abcdef", worker: "wkr-console-0123456789abcdef" };

/**
 * A pool server for the console: tokens for every role, a clock at `clock.now` (epoch ms)
 * that only the test moves, `setup(pool)` run before it listens. `close()` ends everything.
 */
export async function startPoolServer({ setup, now = T0, tokens = TOKENS } = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "repute-console-"));
  const clock = { now };
  const pool = await openPool({ dir, now: () => clock.now, seed: 11, checkpointMs: 0, handleSignals: false, onError: () => {} });
  await setup?.(pool);
  const server = await serve(pool, {
    host: "127.0.0.1",
    port: 0,
    www: WWW,
    tokens: Object.entries(tokens).map(([role, token]) => ({ token, role })),
    heartbeatMs: 1000,
  });
  return {
    url: server.url,
    pool,
    clock,
    dir,
    async close() {
      await server.close();
      await pool.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Debian's Chromium, headless, with the project's flags. */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/**
 * A new page watched for trouble. `expect(status, pathPart)` announces one response the test
 * provokes (and the console error Chromium logs for it); `problems()` lists everything else
 * that went wrong so far; `assertClean(where)` fails on any.
 */
export async function watchedPage(browser, { viewport = { width: 1400, height: 1000 }, ...options } = {}) {
  const context = await browser.newContext({ viewport, acceptDownloads: true, ...options });
  const page = await context.newPage();
  const problems = [];
  const expected = [];
  const seen = []; // announced responses that arrived: their statuses excuse one console line each
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() !== "error" && m.type() !== "warning") return;
    const status = /status of (\d{3})/.exec(m.text())?.[1];
    const i = status ? seen.indexOf(Number(status)) : -1;
    if (i >= 0) seen.splice(i, 1);
    else problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on("requestfailed", (r) => {
    // An event stream cut by a navigation or a disconnect the test makes is not a failure.
    if (r.url().endsWith("/api/events/stream") && r.failure()?.errorText === "net::ERR_ABORTED") return;
    problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on("response", (r) => {
    if (r.status() < 400) return;
    const i = expected.findIndex((e) => e.status === r.status() && r.url().includes(e.path));
    if (i >= 0) {
      expected.splice(i, 1);
      seen.push(r.status());
    } else {
      problems.push(`HTTP ${r.status()} ${r.request().method()} ${r.url()}`);
    }
  });
  return {
    page,
    context,
    expect(status, pathPart) {
      expected.push({ status, path: pathPart });
    },
    problems: () => [...problems],
    assertClean(where) {
      assert.deepEqual(problems, [], `${where}: the page had trouble`);
    },
  };
}

/** Opens the console at `url` and connects with `token` (through the form, as a person would). */
export async function openConsole(page, url, token) {
  await page.goto(url);
  // Served by the pool, the console has no Server field (it talks to its origin only).
  if (await page.locator('input[name="url"]').count()) await page.getByLabel("Server", { exact: true }).fill(url);
  await page.getByLabel("Token", { exact: true }).fill(token);
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await page.getByRole("status").filter({ hasText: "Connected to" }).waitFor();
  await page.getByRole("grid", { name: "Resources by context" }).waitFor();
}

/** Saves a full-page screenshot as tests/console/artifacts/<name>.png. */
export async function screenshot(page, name) {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** The README's picture of the console: docs/console-live.png, the page as it is in the viewport. */
export const README_SCREENSHOT = path.join(ROOT, "docs/console-detail.png");

/** Saves the viewport of `page` as the README's screenshot (README_SCREENSHOT). */
export async function readmeScreenshot(page) {
  await mkdir(path.dirname(README_SCREENSHOT), { recursive: true });
  await page.screenshot({ path: README_SCREENSHOT });
}

/** Waits until `fn()` (async) is truthy, polling; fails with `what` after `ms`. */
export async function until(fn, what, ms = 10000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
