// Live mode's SPEC v2 views in headless Chromium against a real pool server on 127.0.0.1: a pool
// with groups (two groups and resources without one), pacing in one context and a cooling cap
// (one cell cooling, others held) is imported into the server; the grid shows each resource's
// group and, per cell, "paced until hh:mm:ss" and "held"; the group filter (and "no group") and
// the paced / held filter narrow the rows; the detail shows group, pacing end and held; a
// cooldown the cap suppresses live arrives in the event list as a readable line and the cell
// turns held. Fails on any console error, page error, failed request or unannounced HTTP error.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "repute";
import { startPoolServer, launchChromium, watchedPage, openConsole, screenshot, until, TOKENS, T0 } from "./_support.mjs";

const GAP_MS = 10 * 60_000;
const BLOCKED = { ok: false, failure: "BLOCKED" };

/** The pool's snapshot: dc-01..dc-10 in "dc", res-1..res-5 in "residential", plain-1..plain-3 in
 * none; search-eu paced 10 min; a 10 % cap (18 resources: one cell may cool per context). */
function v2Snapshot() {
  const pool = new Pool({ seed: 5, now: () => T0, config: { minGapMsByContext: { "search-eu": GAP_MS }, maxCoolingPercent: 10 } });
  for (let i = 1; i <= 10; i++) pool.register("PROXY", `dc-${String(i).padStart(2, "0")}`, { group: "dc" });
  for (let i = 1; i <= 5; i++) pool.register("PROXY", `res-${i}`, { group: "residential" });
  for (let i = 1; i <= 3; i++) pool.register("PROXY", `plain-${i}`);
  // dc-01 cools in checkout-us; dc-02 and dc-03 would too, but the cap holds them.
  for (const v of ["dc-01", "dc-02", "dc-03"]) for (let k = 0; k < 2; k++) pool.report("PROXY", v, "checkout-us", BLOCKED);
  // Reported in search-eu just now: paced there for 10 min.
  pool.report("PROXY", "res-1", "search-eu", { ok: true, latencyMs: 120 });
  pool.report("PROXY", "plain-1", "search-eu", { ok: true, latencyMs: 80 });
  pool.report("PROXY", "dc-05", "checkout-us", { ok: true, latencyMs: 90 });
  const json = pool.snapshot();
  pool.free();
  return json;
}

let s;
let browser;

before(async () => {
  s = await startPoolServer({ setup: (pool) => pool.importSnapshot(v2Snapshot()) });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await s?.close();
});

const grid = (page) => page.getByRole("grid", { name: "Resources by context" });
const visible = (page) => grid(page).locator(".grid-body [role=row]:not([hidden])");
const rowOf = (page, value) => visible(page).filter({ has: page.locator(".value", { hasText: new RegExp(`^${value}$`) }) });
/** A row's cells' texts: resource, group, contexts, then one per context column. */
const cellsOf = async (page, value) => (await rowOf(page, value).getByRole("gridcell").allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
const valuesShown = async (page) => (await visible(page).locator(".value").allInnerTexts()).sort();

function liveTest(name, body) {
  test(name, async () => {
    const w = await watchedPage(browser);
    try {
      await openConsole(w.page, s.url, TOKENS.operator);
      await w.page.getByText("18 of 18 resources").waitFor();
      await body(w.page, w);
      w.assertClean(name);
    } finally {
      await w.context.close();
    }
  });
}

liveTest("the grid shows each resource's group, and paced and held cells", async (page) => {
  assert.deepEqual(await grid(page).getByRole("columnheader").allInnerTexts(), ["Resource", "Group", "Contexts", "checkout-us", "search-eu"]);
  const pacedEnd = await page.evaluate((ms) => new Date(ms).toLocaleTimeString("en-GB", { hour12: false }), T0 + GAP_MS);
  assert.match(pacedEnd, /^\d\d:\d\d:\d\d$/);

  const [, dc2Group, , dc2Checkout, dc2Search] = await cellsOf(page, "dc-02");
  assert.equal(dc2Group, "dc");
  assert.match(dc2Checkout, /^HEALTHY failing · BLOCKED held -60$/, "held by the cap: its stored state kept, marked held (and failing: its score is below zero)");
  assert.equal(dc2Search, "no cell");
  const [, , , dc1Checkout] = await cellsOf(page, "dc-01");
  assert.match(dc1Checkout, /^COOLING failing · BLOCKED -60 · \d:\d\d:\d\d$/, "the one cell the cap lets cool");
  const [, resGroup, , , resSearch] = await cellsOf(page, "res-1");
  assert.equal(resGroup, "residential");
  assert.equal(resSearch, `HEALTHY paced until ${pacedEnd} 5`);
  const [, plainGroup, , , plainSearch] = await cellsOf(page, "plain-1");
  assert.equal(plainGroup, "no group");
  assert.equal(plainSearch, `HEALTHY paced until ${pacedEnd} 5`);
  const [, , , dc5Checkout] = await cellsOf(page, "dc-05");
  assert.equal(dc5Checkout, "HEALTHY 5", "checkout-us is not paced");
  // The markers are elements of their own, with a title saying what they mean.
  assert.match(await rowOf(page, "dc-02").locator(".flag.held").getAttribute("title"), /cooling cap/);
  assert.match(await rowOf(page, "res-1").locator(".flag.paced").getAttribute("title"), /^paced until /);
  await screenshot(page, "live-v2-grid");
});

liveTest("the group filter (a group, or no group) and the paced / held filter narrow the rows", async (page) => {
  const group = page.getByLabel("Group", { exact: true });
  assert.deepEqual(await group.locator("option").allInnerTexts(), ["any", "no group", "dc", "residential"]);
  await group.selectOption({ label: "dc" });
  await page.getByText("10 of 18 resources").waitFor();
  for (const row of await visible(page).all()) assert.equal((await row.getByRole("gridcell").nth(1).innerText()).trim(), "dc");
  await group.selectOption({ label: "no group" });
  await page.getByText("3 of 18 resources").waitFor();
  assert.deepEqual(await valuesShown(page), ["plain-1", "plain-2", "plain-3"]);
  await group.selectOption({ label: "residential" });
  await page.getByText("5 of 18 resources").waitFor();
  await group.selectOption({ label: "any" });

  const flag = page.getByLabel("Paced / held / failing", { exact: true });
  await flag.selectOption({ label: "held cells" });
  await page.getByText("2 of 18 resources").waitFor();
  assert.deepEqual(await valuesShown(page), ["dc-02", "dc-03"]);
  await screenshot(page, "live-v2-held");
  await flag.selectOption({ label: "paced cells" });
  await page.getByText("2 of 18 resources").waitFor();
  assert.deepEqual(await valuesShown(page), ["plain-1", "res-1"]);
  // Filters combine: paced cells in the residential group; none paced in checkout-us.
  await group.selectOption({ label: "residential" });
  await page.getByText("1 of 18 resources").waitFor();
  assert.deepEqual(await valuesShown(page), ["res-1"]);
  await group.selectOption({ label: "any" });
  await page.getByLabel("Context", { exact: true }).selectOption("checkout-us");
  await page.getByText("0 of 18 resources").waitFor();
});

liveTest("the detail shows the group, the pacing end and held", async (page) => {
  await rowOf(page, "dc-02").getByRole("gridcell").first().click();
  const dc2 = page.getByRole("complementary", { name: "PROXY/dc-02" });
  await dc2.getByRole("table").waitFor();
  await dc2.getByText("group: dc", { exact: true }).waitFor();
  const heads = await dc2.getByRole("columnheader").allInnerTexts();
  assert.deepEqual(heads.slice(4, 7), ["Cooldown", "Paced until", "Held"]);
  const [, row] = await dc2.getByRole("row").allInnerTexts();
  assert.match(row, /^checkout-us\s+HEALTHY\s+-60\s+1 \/ 0\s+–\s+–\s+held\s/, row);

  await rowOf(page, "plain-1").getByRole("gridcell").first().click();
  const plain = page.getByRole("complementary", { name: "PROXY/plain-1" });
  await plain.getByText("group: none", { exact: true }).waitFor();
  const pacedEnd = await page.evaluate((ms) => new Date(ms).toLocaleTimeString("en-GB", { hour12: false }), T0 + GAP_MS);
  const [, cell] = await plain.getByRole("row").allInnerTexts();
  assert.match(cell, new RegExp(`^search-eu\\s+HEALTHY\\s+5\\s+0 / 1\\s+–\\s+${pacedEnd} \\((9:5\\d|10:00) more\\)\\s+no\\s`), cell);
  await screenshot(page, "live-v2-detail");
});

liveTest("a cooldown the cap suppresses arrives as a readable event, and its cell turns held", async (page) => {
  const events = page.getByRole("log", { name: "Pool events" });
  const before = s.pool.stats().nextEventSeq;
  // Two BLOCKED in a row for dc-04: it would cool, but dc-01 already cools and the cap is one cell.
  s.pool.report("PROXY", "dc-04", "checkout-us", BLOCKED);
  s.pool.report("PROXY", "dc-04", "checkout-us", BLOCKED);
  const item = events.locator("li").filter({ hasText: "COOLDOWN_SUPPRESSED" });
  await item.waitFor();
  assert.match(await item.innerText(), /COOLDOWN_SUPPRESSED\s+PROXY\/dc-04 · in checkout-us · cooldown suppressed by the cooling cap: held in rotation · cause BLOCKED/);
  const suppressed = (await s.pool.readEvents({ after: before - 1, limit: 10 })).events.filter((e) => e.type === "COOLDOWN_SUPPRESSED");
  assert.deepEqual(suppressed.map((e) => [e.value, e.context, e.cause]), [["dc-04", "checkout-us", "BLOCKED"]]);
  await until(async () => /held/.test((await cellsOf(page, "dc-04"))[3]), "dc-04's cell to show held");
  // The event filter finds it by its wording.
  await page.getByLabel("Filter events", { exact: true }).fill("cooling cap");
  await until(async () => (await events.locator("li").count()) === 1, "one event about the cooling cap");
  await screenshot(page, "live-v2-suppressed");
});
