// Live mode's layout in headless Chromium: no horizontal page overflow at 390×844 (the grid
// scrolls inside itself, tiles wrap), nothing overlapping at 1440×900 and 1280×800, a sticky
// name column, names cut in the middle (the part that tells rows apart stays) with the full
// value shown on focus, and keyboard focus always revealed: after End the focused cell is
// inside the grid's viewport, horizontally too. The Server field is not offered when the page
// is served by the pool (it may only talk to its origin).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startPoolServer, launchChromium, watchedPage, openConsole, until, TOKENS, screenshot } from "./_support.mjs";
import { burningPool } from "./_health-support.mjs";

let s;
let browser;

/** Eight sites, so the grid is wider than any screen. */
async function widePool(pool) {
  await burningPool(pool);
  for (const site of ["shop-fr", "shop-de", "maps-us", "mail-uk", "video-jp"]) pool.report("PROXY", "gate-00.customer-zone.resi.example.com:7000", site, { ok: true, latencyMs: 90 });
}

before(async () => {
  s = await startPoolServer({ setup: widePool });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await s?.close();
});

const grid = (page) => page.getByRole("grid", { name: "Resources by context" });

async function connected(viewport, role = "operator") {
  const w = await watchedPage(browser, { viewport });
  await openConsole(w.page, s.url, TOKENS[role]);
  await grid(w.page).locator(".grid-body [role=row]:not([hidden])").first().waitFor();
  await w.page.getByRole("log", { name: "Pool events" }).locator("li").first().waitFor();
  return w;
}

test("390×844: the live page is no wider than the screen; the grid scrolls inside itself", async () => {
  const w = await connected({ width: 390, height: 844 });
  try {
    const { page } = w;
    const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, body: document.body.scrollWidth }));
    await screenshot(page, "live-390");
    assert.ok(widths.page <= 390, `page ${widths.page} px wide`);
    const scroller = await page.locator(".grid-scroll").evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }));
    assert.ok(scroller.scrollWidth > scroller.clientWidth, "the grid scrolls inside itself");
    w.assertClean("390");
  } finally {
    await w.context.close();
  }
});

for (const viewport of [{ width: 1440, height: 900 }, { width: 1280, height: 800 }]) {
  test(`${viewport.width}×${viewport.height}: no control or panel overlaps another`, async () => {
    const w = await connected(viewport);
    try {
      const { page } = w;
      const overlaps = await page.evaluate(() => {
        const boxes = [...document.querySelectorAll("#live .toolbar > *, #live .tiles > *, #live .site-list > li, #live .filters > *, #live .panel")]
          .filter((el) => el.offsetParent !== null)
          .map((el) => ({ el, r: el.getBoundingClientRect() }));
        const out = [];
        for (let i = 0; i < boxes.length; i++) {
          for (let j = i + 1; j < boxes.length; j++) {
            const [a, b] = [boxes[i], boxes[j]];
            if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
            const x = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
            const y = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
            if (x > 1 && y > 1) out.push(`${a.el.className || a.el.tagName} × ${b.el.className || b.el.tagName}`);
          }
        }
        return out;
      });
      assert.deepEqual(overlaps, []);
      assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= viewport.width);
      w.assertClean(`${viewport.width}`);
    } finally {
      await w.context.close();
    }
  });
}

test("keyboard: after End the focused cell is inside the grid's viewport (horizontally too); the name column stays in view", async () => {
  const w = await connected({ width: 1280, height: 800 });
  try {
    const { page } = w;
    await grid(page).locator('.grid-body [tabindex="0"]').focus();
    await page.keyboard.press("End");
    const inside = async () => page.evaluate(() => {
      const cell = document.activeElement.getBoundingClientRect();
      const view = document.querySelector(".grid-scroll").getBoundingClientRect();
      const name = document.activeElement.parentElement.querySelector(".res").getBoundingClientRect();
      return { cell: [cell.left, cell.right, cell.top, cell.bottom], view: [view.left, view.right, view.top, view.bottom], name: [name.left, name.right] };
    });
    const r = await inside();
    assert.equal(await page.evaluate(() => document.activeElement.getAttribute("aria-colindex")), String(3 + 7), "the last column (seven contexts have cells)");
    assert.ok(r.cell[0] >= r.view[0] && r.cell[1] <= r.view[1] + 1, `inside horizontally: ${JSON.stringify(r)}`);
    assert.ok(r.cell[2] >= r.view[2] && r.cell[3] <= r.view[3] + 1, `inside vertically: ${JSON.stringify(r)}`);
    assert.ok(r.name[0] >= r.view[0] - 1 && r.name[0] <= r.view[0] + 2, `the name column is sticky: ${JSON.stringify(r)}`);
    assert.ok(r.cell[0] >= r.name[1] - 1, "the focused cell is not under the sticky name column");
    // Back with Home: the name cell is focused, its full value shown.
    await page.keyboard.press("Home");
    const focusedName = await page.evaluate(() => document.activeElement.querySelector(".value").title);
    assert.match(focusedName, /^gate-\d\d\.customer-zone\.resi\.example\.com:7000$/);
    await page.locator(".grid-focus").filter({ hasText: `PROXY ${focusedName}` }).waitFor();
    w.assertClean("End");
  } finally {
    await w.context.close();
  }
});

test("names are cut in the middle: the end that tells rows apart stays visible", async () => {
  const w = await connected({ width: 1440, height: 900 });
  try {
    const { page } = w;
    const tails = await grid(page).locator(".grid-body [role=row]:not([hidden]) .res .value .tail").allInnerTexts();
    assert.ok(tails.length > 5);
    assert.ok(tails.every((t) => /\.com:7000$/.test(t)), tails.join(" | "));
    const heads = await grid(page).locator(".grid-body [role=row]:not([hidden]) .res .value .head").allInnerTexts();
    assert.ok(heads.some((t) => /^gate-\d\d\./.test(t)), "the start that tells rows apart is kept");
    w.assertClean("names");
  } finally {
    await w.context.close();
  }
});

test("served by the pool, the console offers no Server field: it says which pool it talks to", async () => {
  const w = await connected({ width: 1280, height: 800 });
  try {
    const { page } = w;
    assert.equal(await page.locator('input[name="url"]').count(), 0);
    await page.getByText(`Pool: ${s.url}`).waitFor();
    w.assertClean("server field");
  } finally {
    await w.context.close();
  }
});
