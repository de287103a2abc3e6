// Live mode of the operator console in headless Chromium against a real pool server on
// 127.0.0.1 (in-process `serve` of www/, tokens for each role, a fixed clock): a block made in
// the console is in the server's state and in the event list, for 1 h, a chosen time or
// permanently, and Unblock lifts it; a viewer is told its role and offered no Block, Unblock
// or Download snapshot; the grid shows `contexts: 0` for a resource nobody reported on,
// filters by context, state and kind, searches and sorts, and is driven by the keyboard (the
// group column reads "no group" in a pool without groups: live-groups.test.mjs has the rest);
// the detail shows every cell's window; a resource holding several leases shows them against its
// capacity (`maxLeases`); Download snapshot gives the server's snapshot byte for
// byte; events pause, resume, filter and page back; the CSP stops inline script. Every test
// fails on a console error, a page error, a failed request or an HTTP status ≥ 400 it did not
// provoke, and saves screenshots of its screens to tests/console/artifacts/ — and the README's
// picture of one resource's detail, docs/console-detail.png.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { startPoolServer, launchChromium, watchedPage, openConsole, screenshot, readmeScreenshot, README_SCREENSHOT, until, TOKENS, T0 } from "./_support.mjs";

const CONTEXTS = ["checkout-us", "search-eu"];
const value = (i) => `proxy-${i}.example:8080`;
const kind = (i) => (i % 3 === 0 ? "ACCOUNT" : "PROXY");

let s;
let browser;

before(async () => {
  s = await startPoolServer({
    setup: async (pool) => {
      for (let i = 0; i < 30; i++) await pool.register(kind(i), value(i));
      // A plain host:port: a viewer sees it as it is (SESSION values, say, show only as ***).
      await pool.register("PROXY", "never-reported.example:8080");
      for (let i = 0; i < 20; i++) {
        for (const c of CONTEXTS) {
          pool.report(kind(i), value(i), c, i % 4 === 0 ? { ok: false, failure: "TIMEOUT", latencyMs: 900 } : { ok: true, latencyMs: 100 + i });
        }
      }
      // Five resources cool in checkout-us (a second failure in a row).
      for (let i = 0; i < 20; i += 4) pool.report(kind(i), value(i), "checkout-us", { ok: false, failure: "BLOCKED" });
    },
  });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await s?.close();
});

const resourceOf = (k, v) => s.pool.resources().find((r) => r.kind === k && r.value === v);
const grid = (page) => page.getByRole("grid", { name: "Resources by context" });
const rowOf = (page, text) => grid(page).getByRole("row").filter({ hasText: text });
const eventList = (page) => page.getByRole("log", { name: "Pool events" });

/**
 * A test on a fresh page connected as `role` (after `prepare()`, if given); it fails on any
 * trouble the page had (see _support.mjs) as well as on its own assertions.
 */
function liveTest(name, role, body, prepare) {
  test(name, async () => {
    await prepare?.();
    const w = await watchedPage(browser);
    try {
      await openConsole(w.page, s.url, TOKENS[role]);
      await body(w.page, w);
      w.assertClean(name);
    } finally {
      await w.context.close();
    }
  });
}

/** Opens the detail of `v` by searching for it and clicking its row. */
async function openDetail(page, k, v) {
  await page.getByLabel("Search", { exact: true }).fill(v);
  await until(async () => (await grid(page).locator(".grid-body [role=row]:not([hidden])").count()) === 1, `one row for ${v}`);
  await rowOf(page, v).getByRole("gridcell").first().click();
  const detail = page.getByRole("complementary", { name: `${k}/${v}` });
  await detail.getByRole("table").or(detail.getByText("contexts: 0")).first().waitFor();
  return detail;
}

liveTest("the README's screenshot: the grid with cooling cells and one resource's detail, written to docs/console-detail.png", "operator", async (page) => {
  await page.setViewportSize({ width: 1600, height: 900 });
  const detail = await openDetail(page, kind(4), value(4)); // cooling in checkout-us
  await detail.getByText("COOLING").first().waitFor();
  await page.getByLabel("Search", { exact: true }).fill("");
  await until(async () => (await grid(page).locator(".grid-body [role=row]:not([hidden])").count()) > 10, "the whole grid again");
  await readmeScreenshot(page);
  const png = await readFile(README_SCREENSHOT);
  assert.equal(png.subarray(1, 4).toString("latin1"), "PNG", "a PNG file");
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [1600, 900], "the viewport's size");
});

liveTest("operator: Block for 1 h, a chosen time and permanently reaches the server and the event list; Unblock lifts it", "operator", async (page, w) => {
  await screenshot(page, "live-connected");
  const [k, v] = [kind(2), value(2)];
  const detail = await openDetail(page, k, v);
  await screenshot(page, "live-detail");

  // 1 hour (the default choice).
  await detail.getByRole("button", { name: "Block", exact: true }).click();
  const dialog = page.getByRole("dialog", { name: `Block ${k}/${v}?` });
  await dialog.waitFor();
  await screenshot(page, "live-block-dialog");
  await dialog.getByRole("button", { name: "Block", exact: true }).click();
  await dialog.waitFor({ state: "detached" });
  await until(() => resourceOf(k, v).blocked?.until === T0 + 3_600_000, "a 1 h block on the server");
  await eventList(page).getByText(`${k}/${v}`).filter({ hasText: "until" }).first().waitFor();
  assert.match(await eventList(page).locator("li").first().innerText(), /RESOURCE_BLOCKLISTED/);
  await rowOf(page, v).getByText("blocked", { exact: true }).waitFor();
  assert.equal(await rowOf(page, v).getByText("BLOCKLISTED").count(), CONTEXTS.length, "every cell shows BLOCKLISTED");

  // A chosen time: 90 minutes.
  await detail.getByRole("button", { name: "Block", exact: true }).click();
  await dialog.getByLabel("How long").fill("90");
  await dialog.getByLabel("Unit").selectOption("minutes");
  await dialog.getByRole("button", { name: "Block", exact: true }).click();
  await until(() => resourceOf(k, v).blocked?.until === T0 + 90 * 60_000, "a 90 min block on the server");

  // Permanently.
  await detail.getByRole("button", { name: "Block", exact: true }).click();
  await dialog.getByLabel("permanently").check();
  await dialog.getByRole("button", { name: "Block", exact: true }).click();
  await until(() => resourceOf(k, v).blocked?.permanent === true, "a permanent block on the server");
  await detail.getByText("blocked permanently").waitFor();
  await eventList(page).getByText("permanently").first().waitFor();
  await screenshot(page, "live-blocked");

  // Unblock.
  await detail.getByRole("button", { name: "Unblock", exact: true }).click();
  const unblock = page.getByRole("dialog", { name: `Unblock ${k}/${v}?` });
  await unblock.getByRole("button", { name: "Unblock", exact: true }).click();
  await until(() => resourceOf(k, v).blocked === null, "unblocked on the server");
  await eventList(page).locator("li").filter({ hasText: "RESOURCE_UNBLOCKED" }).filter({ hasText: v }).waitFor();
  await detail.getByText("not blocked").waitFor();
  assert.equal(await detail.getByRole("button", { name: "Unblock" }).count(), 0, "nothing to unblock any more");
  const types = (await s.pool.readEvents({ after: 0, limit: 1000 })).events.filter((e) => e.value === v).map((e) => e.type);
  assert.deepEqual(types.slice(-4), ["RESOURCE_BLOCKLISTED", "RESOURCE_BLOCKLISTED", "RESOURCE_BLOCKLISTED", "RESOURCE_UNBLOCKED"]);
});

liveTest("viewer: the console names the role and offers no Block, Unblock or Download snapshot", "viewer", async (page) => {
  await page.getByRole("status").filter({ hasText: /as viewer-1 \(viewer: may watch, not change\)/ }).waitFor();
  const detail = await openDetail(page, kind(5), value(5));
  await detail.getByRole("table").waitFor();
  assert.equal(await detail.getByRole("button", { name: "Block", exact: true }).count(), 0);
  assert.equal(await detail.getByRole("button", { name: "Unblock", exact: true }).count(), 0);
  assert.equal(await page.getByRole("button", { name: "Download snapshot" }).count(), 0);
  assert.equal(await page.getByLabel("Show credentials").isVisible(), false, "a viewer cannot unmask");
  await screenshot(page, "live-viewer");
});

liveTest("the grid: contexts: 0, filters, search, sorting and the keyboard", "viewer", async (page, w) => {
  const count = page.getByText(/ of 31 resources$/);
  await page.getByText("31 of 31 resources").waitFor();
  assert.equal(await rowOf(page, "never-reported.example:8080").getByRole("gridcell").nth(2).innerText(), "contexts: 0");
  assert.equal(await rowOf(page, "never-reported.example:8080").getByRole("gridcell").nth(1).innerText(), "no group");
  const headers = await grid(page).getByRole("columnheader").allInnerTexts();
  assert.deepEqual(headers, ["Resource", "Group", "Contexts", ...CONTEXTS]);

  await page.getByLabel("State", { exact: true }).selectOption("COOLING");
  await page.getByText("5 of 31 resources").waitFor();
  await screenshot(page, "live-grid-cooling");
  const cooling = await grid(page).locator(".grid-body [role=row]:not([hidden])").allInnerTexts();
  assert.equal(cooling.length, 5);
  for (const text of cooling) assert.match(text, /COOLING/);
  // Two hours of cooldown, counting down with the browser's clock (the server's stands still).
  assert.ok(cooling.every((t) => /-35 · (1:5\d:\d\d|2:00:00)\b/.test(t)), `a countdown on each: ${cooling}`);
  const firstCooling = grid(page).locator(".grid-body .s-cooling .score").first();
  const shown = await firstCooling.innerText();
  await until(async () => (await firstCooling.innerText()) !== shown, "the countdown to move on");

  await page.getByLabel("Context", { exact: true }).selectOption("search-eu");
  await page.getByText("0 of 31 resources").waitFor(); // nothing cools in search-eu
  assert.deepEqual(await grid(page).getByRole("columnheader").allInnerTexts(), ["Resource", "Group", "Contexts", "search-eu"]);
  await page.getByLabel("State", { exact: true }).selectOption("");
  await page.getByLabel("Kind", { exact: true }).selectOption("ACCOUNT");
  await page.getByText("10 of 31 resources").waitFor();
  for (const text of await grid(page).locator(".grid-body [role=row]:not([hidden])").allInnerTexts()) assert.match(text, /^ACCOUNT/);
  await page.getByLabel("Kind", { exact: true }).selectOption("");
  await page.getByLabel("Context", { exact: true }).selectOption("");
  await page.getByLabel("Search", { exact: true }).fill("PROXY-1");
  await page.getByText(/^\d+ of 31 resources$/).filter({ hasText: /^(7|8|9|10|11) of/ }).waitFor();
  for (const text of await grid(page).locator(".grid-body [role=row]:not([hidden])").allInnerTexts()) assert.match(text, /proxy-1/);
  await page.getByLabel("Search", { exact: true }).fill("");

  // Severity puts the cooling resources first, lowest score first among equals.
  await page.getByLabel("Sort by", { exact: true }).selectOption("severity");
  await count.waitFor();
  const firstRows = await grid(page).locator(".grid-body [role=row]:not([hidden])").evaluateAll((rows) =>
    rows.sort((a, b) => a.ariaRowIndex - b.ariaRowIndex).slice(0, 6).map((r) => r.innerText));
  assert.equal(firstRows.filter((t) => /COOLING/.test(t)).length, 5, firstRows.join("\n"));
  assert.doesNotMatch(firstRows[5], /COOLING/);

  // Keyboard: into the grid, down two rows, Enter opens that resource; Escape comes back.
  await grid(page).locator('.grid-body [tabindex="0"]').focus();
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowRight");
  const focused = await page.evaluate(() => [document.activeElement.getAttribute("aria-colindex"), document.activeElement.parentElement.getAttribute("aria-rowindex")]);
  assert.deepEqual(focused, ["2", "4"], "column 2 of the third resource row (row 1 is the header)");
  const third = await grid(page).locator('.grid-body [role=row][aria-rowindex="4"] .value').getAttribute("title"); // the full name (shown cut in the middle)
  await page.keyboard.press("Enter");
  await page.getByRole("complementary", { name: new RegExp(`/${third.replace(/[.]/g, "\\.")}$`) }).waitFor();
  assert.equal(await page.evaluate(() => document.activeElement.id), "detail-title", "focus moves to the detail");
  await page.keyboard.press("Escape");
  await until(() => page.evaluate(() => document.activeElement.getAttribute("role") === "gridcell"), "focus back in the grid");
  await page.keyboard.press("Control+End");
  assert.equal(await page.evaluate(() => document.activeElement.parentElement.getAttribute("aria-rowindex")), "32");
});

liveTest("the detail shows every cell with p50/p95 and its recent outcomes; contexts: 0 for a fresh resource", "viewer", async (page, w) => {
  const detail = await openDetail(page, kind(4), value(4));
  const rows = await detail.getByRole("row").allInnerTexts();
  assert.equal(rows.length, 1 + CONTEXTS.length);
  assert.match(rows[1], /^checkout-us\s+COOLING\s+-35\s+2 \/ 0\s+BLOCKED, (1:5\d:\d\d|2:00:00) \([^)]*\)\s+–\s+no\s+900 ms\s+900 ms\s+TIMEOUT 900 ms\s*BLOCKED$/s);
  assert.match(rows[2], /^search-eu\s+HEALTHY\s+-5\s+1 \/ 0\s+–\s+–\s+no\s+900 ms\s+900 ms\s+TIMEOUT 900 ms$/s);
  await screenshot(page, "live-detail-cells");
  const fresh = await openDetail(page, "PROXY", "never-reported.example:8080");
  await fresh.getByText(/^contexts: 0/).waitFor();
});

liveTest("Download snapshot saves the server's snapshot byte for byte", "operator", async (page, w) => {
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download snapshot" }).click()]);
  const saved = await readFile(await download.path(), "utf8");
  assert.equal(saved, s.pool.snapshot(), "the same bytes as the pool's snapshot (the clock does not move)");
  assert.match(download.suggestedFilename(), /^repute-snapshot-revision-\d+\.json$/);
  const said = page.getByRole("status").filter({ hasText: "Snapshot downloaded" });
  await said.waitFor();
  // Said next to the button pressed: on its row, within a few hundred px of it.
  const [button, status] = [await page.getByRole("button", { name: "Download snapshot" }).boundingBox(), await said.boundingBox()];
  assert.ok(Math.abs(status.y - button.y) < 40 && status.x - (button.x + button.width) < 400, `next to the button: ${JSON.stringify({ button, status })}`);
});

/** The last seq before the events test opens its page (after `moreEvents`). */
let newest;

/** More events than one page: 60, about a resource the other tests leave alone. */
async function moreEvents() {
  for (let i = 0; i < 30; i++) {
    await s.pool.block("PROXY", value(29), { seconds: 1 });
    await s.pool.unblock("PROXY", value(29));
  }
  newest = s.pool.stats().nextEventSeq - 1;
}

liveTest("events: live ones arrive, Pause holds them, Resume shows them, the filter narrows, older pages load", "viewer", async (page) => {
  const items = eventList(page).locator("li");
  await until(async () => (await items.count()) === 50, "the latest page of 50 events");
  assert.equal(Number(await items.first().getAttribute("data-seq")), newest);
  await s.pool.block("PROXY", value(7), { seconds: 60 });
  await items.filter({ hasText: value(7) }).first().waitFor();

  await page.getByRole("button", { name: "Pause" }).click();
  await s.pool.unblock("PROXY", value(7));
  await page.getByRole("status").filter({ hasText: "paused: 1 new" }).waitFor();
  const unblocked7 = items.filter({ hasText: "RESOURCE_UNBLOCKED" }).filter({ hasText: value(7) });
  assert.equal(await unblocked7.count(), 0, "held back while paused");
  await screenshot(page, "live-events-paused");
  await page.getByRole("button", { name: "Resume" }).click();
  await unblocked7.waitFor();

  await page.getByLabel("Filter events", { exact: true }).fill(value(7));
  await until(async () => (await items.count()) === 2, "only the two events about proxy-7");
  await page.getByLabel("Filter events", { exact: true }).fill("");
  await page.getByRole("button", { name: "Load older events" }).click();
  await until(async () => (await items.count()) === newest + 2, `all ${newest + 2} events`);
  assert.equal(await items.last().getAttribute("data-seq"), "1");
  assert.equal(await page.getByRole("button", { name: "Load older events" }).isDisabled(), true);
}, moreEvents);

/** Leases on the shared resource of the next test (released after it). */
let shared = [];

liveTest("a resource that holds several leases shows them against its capacity, in the grid, the detail and the events", "viewer", async (page) => {
  const row = rowOf(page, value(28));
  await page.getByLabel("Search", { exact: true }).fill(value(28));
  await row.getByText("leased 2/3").waitFor();
  const detail = await openDetail(page, kind(28), value(28));
  await detail.getByText(/^2 of 3 leases: checkout-us, token \d+, until .+; search-eu, token \d+, until .+$/).waitFor();
  await eventList(page).locator("li").filter({ hasText: "RESOURCE_RECONFIGURED" }).filter({ hasText: "now up to 3 leases at once" }).first().waitFor();
  await screenshot(page, "live-shared-resource");
  for (const l of shared) s.pool.release(l);
}, async () => {
  await s.pool.register(kind(28), value(28), { maxLeases: 3 });
  shared = ["checkout-us", "search-eu"].map((c) => s.pool.acquireResource(kind(28), value(28), c));
  assert.ok(shared.every(Boolean), "two leases on one resource");
});

test("the Content-Security-Policy stops inline script in the console", async () => {
  const w = await watchedPage(browser);
  const { page } = w;
  const response = await page.goto(s.url);
  assert.match(response.headers()["content-security-policy"], /script-src 'self' 'wasm-unsafe-eval'/);
  const outcome = await page.evaluate(() => new Promise((resolve) => {
    document.addEventListener("securitypolicyviolation", (e) => resolve({ ran: Boolean(window.__inline), directive: e.effectiveDirective }), { once: true });
    const script = document.createElement("script");
    script.textContent = "window.__inline = true";
    document.body.append(script);
  }));
  assert.deepEqual(outcome, { ran: false, directive: "script-src-elem" });
  // Chromium reports the refused script on the console: that line is this test's doing.
  assert.ok(w.problems().every((p) => /Content Security Policy/.test(p)), w.problems().join("\n"));
  await w.context.close();
});
