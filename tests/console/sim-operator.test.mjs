// Simulation mode as an operator reads it, in headless Chromium with the console's CSP: the two
// policy fieldsets side by side without covering each other (1440×900, 1280×800) and no page
// wider than a phone (390×844); policy fields in words with durations in s / min / h; a
// Compare whose verdict weighs wasted requests and holds over 5 seeds (the page's words equal
// Node's verdict on the same seeds), whose times to recover count from an incident's start,
// with the spread per measure; charts with shaded incidents, legends that show values before
// any hover, one colour per policy in every chart and round time ticks. Writes the A/B
// screenshot the README shows (docs/console-ab.png).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { Pool } from "repute";
import { screenshot, ROOT } from "./_support.mjs";
import { simPages, downloadOf, run } from "./_sim-support.mjs";
import { createRun } from "../../www/sim/core/simulate.js";
import { SCENARIOS } from "../../www/sim/core/scenario.js";
import { POLICIES } from "../../www/sim/core/policies.js";
import { verdictOf, seedsFrom, SEEDS } from "../../www/sim/core/verdict.js";
import { POLICY_COLOURS } from "../../www/sim/ui/charts.js";
import { TICKS_S } from "../../www/sim/core/chart-data.js";

const sim = simPages();
const defaults = new Pool({ seed: 0 }).config();


const results = (page) => page.locator('section[aria-labelledby="sim-results-h"]');
async function loadScenario(page, id) {
  await page.getByLabel("Ready-made scenario").selectOption(id);
  await page.getByRole("button", { name: "Load scenario", exact: true }).click();
}
const intersect = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

for (const [width, height] of [[1440, 900], [1280, 800]]) {
  test(`at ${width}×${height} the policy fieldsets do not overlap and every field shows`, async () => {
    const { page } = await sim({ width, height });
    const sets = page.locator("fieldset.policy");
    assert.equal(await sets.count(), 2);
    const [a, b] = [await sets.nth(0).boundingBox(), await sets.nth(1).boundingBox()];
    assert.ok(!intersect(a, b), `A ${JSON.stringify(a)} and B ${JSON.stringify(b)} do not intersect`);
    for (const [i, box] of [a, b].entries()) {
      const controls = sets.nth(i).locator("input, select, button");
      const n = await controls.count();
      assert.ok(n > 20, `${n} controls in policy ${"AB"[i]}`);
      for (let k = 0; k < n; k++) {
        const c = controls.nth(k);
        await c.scrollIntoViewIfNeeded();
        const r = await c.boundingBox();
        const box2 = await sets.nth(i).boundingBox();
        assert.ok(r.x >= box2.x - 1 && r.x + r.width <= box2.x + box2.width + 1, `${await c.getAttribute("id")} inside its fieldset: ${JSON.stringify(r)} in ${JSON.stringify(box2)}`);
        // Nothing covers it: the element at its centre is itself (or inside it).
        const hit = await c.evaluate((el) => {
          const q = el.getBoundingClientRect();
          const at = document.elementFromPoint(q.x + q.width / 2, q.y + q.height / 2);
          return at === el || el.contains(at);
        });
        assert.ok(hit, `${await c.getAttribute("id")} of policy ${"AB"[i]} is not covered`);
      }
      assert.ok(box.width > 300);
    }
    await screenshot(page, `sim-policies-${width}`);
  });
}

test("at 390×844 the simulation tab is no wider than the phone, before and after a comparison", async () => {
  const { page } = await sim({ width: 390, height: 844 });
  const wide = () => page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(await wide() <= 390, `scrollWidth ${await wide()}`);
  await run(page, "Compare");
  await results(page).locator("figure[data-chart] canvas").first().waitFor();
  assert.ok(await wide() <= 390, `after Compare: scrollWidth ${await wide()}`);
  await screenshot(page, "sim-390");
});

test("policy fields read in words, durations in s / min / h; the raw key is the title", async () => {
  const { page } = await sim();
  const blocked = page.getByLabel("First cooldown after BLOCKED (e.g. 90 s, 5 min, 1 h) (A)");
  assert.equal(await blocked.inputValue(), "1 h", "3600000 ms reads 1 h");
  assert.match(await blocked.locator("xpath=..").getAttribute("title"), /cooldownBaseMs\.BLOCKED/);
  assert.equal(await page.getByLabel("Lease lifetime (e.g. 90 s, 5 min, 1 h) (B)").inputValue(), "30 s");
  await blocked.fill("1 h 30 min");
  await page.getByLabel("Lease lifetime (e.g. 90 s, 5 min, 1 h) (A)").fill("90");
  const doc = JSON.parse((await downloadOf(page, "Save workspace to file")).text);
  assert.equal(doc.policies.A.cooldownBaseMs.BLOCKED, 5_400_000);
  assert.equal(doc.policies.A.leaseTtlMs, 90_000, "a bare number is seconds");
  const problem = async (f) => f.evaluate((el) => document.getElementById(el.getAttribute("aria-describedby")).textContent);
  await blocked.fill("soon");
  assert.equal(await problem(blocked), "First cooldown after BLOCKED: write a duration such as 90 s, 5 min, 1 h 30 min or 250 ms");
  assert.equal(await blocked.getAttribute("aria-invalid"), "true");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.getByRole("alert").filter({ hasText: "Fix the marked problems first" }).waitFor();
  await blocked.fill("0 s");
  assert.equal(await problem(blocked), "First cooldown after BLOCKED must be between 1 ms and 24.9 days");
  await blocked.fill("2 h");
  assert.equal(await problem(blocked), "");
  // The scenario's own checks speak the same way.
  await page.getByLabel("Simulated duration (s)").fill("0");
  await page.getByText("must be a whole number of seconds between 1 and 604,800 (7 days)").first().waitFor();
});

/** Node's summaries of a scenario under a policy on the page's seeds (42 and the 4 after it). */
function nodeSeeds(id, config) {
  return seedsFrom(42).map((seed) => {
    const r = createRun({ Pool, scenario: SCENARIOS[id].make(), config, seed });
    r.advance();
    return r.finish().summary;
  });
}

test("an A/B comparison: a verdict over 5 seeds that weighs wasted requests, recoveries from the start, readable charts", async () => {
  const { page } = await sim({ width: 1440, height: 900 });
  await loadScenario(page, "outage-cooling-cap");
  await run(page, "Compare");
  const table = results(page).locator("table.summary");

  // The verdict is Node's on the same 5 seeds, in the page's words. B (the cooling cap) has the
  // higher success rate but sends ~3.5× more requests into the site while it is down.
  const expected = verdictOf(nodeSeeds("outage-cooling-cap", POLICIES.defaults.make(defaults)), nodeSeeds("outage-cooling-cap", POLICIES["cooling-cap"].make(defaults)));
  assert.equal(SEEDS, 5);
  const said = await results(page).locator(".winner").innerText();
  assert.equal(said, expected.text);
  const rate = await table.locator('tr[data-key="successRate"] td').allInnerTexts();
  assert.equal(rate[2], "better", "B's success rate is higher on every seed…");
  const wasted = await table.locator('tr[data-key="failures"] td').allInnerTexts();
  assert.equal(wasted[2], "worse", "…but it wastes more requests on refusals");
  assert.match(said, /^Policy A did better on all 5 seeds/, "so A is the better policy, all things weighed");
  // The spread of every measure over the seeds.
  assert.match(rate[0], /mean \d+\.\d %, \d+\.\d % – \d+\.\d % over 5 seeds/);
  // Time to recover counts from the outage's start (10 min): never less than the outage.
  const recover = await table.locator('tr[data-key="worstRecoverS"]').innerText();
  assert.match(recover, /from its start/);
  const [recA, recB] = await table.locator('tr[data-key="worstRecoverS"] td').allInnerTexts();
  assert.match(recA.split("\n")[0], /^15 min$/);
  assert.match(recB.split("\n")[0], /^10 min$/);

  // Charts: one plot per chart, A and B in the policies' colours in every chart.
  const figures = results(page).locator("figure[data-chart]");
  const n = await figures.count();
  assert.ok(n >= 5);
  for (let i = 0; i < n; i++) {
    const f = figures.nth(i);
    const id = await f.getAttribute("data-chart");
    assert.equal(await f.locator("canvas").count(), 1, id);
    const legend = await f.locator(".u-legend .u-series").evaluateAll((rows) => rows.slice(1).map((r) => ({
      label: r.querySelector(".u-label").textContent,
      colour: getComputedStyle(r.querySelector(".u-marker")).borderLeftColor,
      value: r.querySelector(".u-value").textContent,
    })));
    const rgb = (hex) => `rgb(${[1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16)).join(", ")})`;
    for (const s of legend) {
      assert.equal(s.colour, rgb(POLICY_COLOURS[s.label.endsWith("· Policy A") ? 0 : 1]), `${id} ${s.label}: colour of its policy`);
      // Values before any hover: the whole run's figure, not "--".
      assert.match(s.value, /^(whole run|total|at the end|peak) (\d[\d,]*(\.\d)?( %)?|—)$/, `${id} ${s.label}: ${s.value}`);
    }
    // Time ticks on round units (the run is 1 h: minutes).
    const ticks = (await f.locator(".chart").getAttribute("data-x-ticks")).split(" ").map(Number);
    const step = ticks[1] - ticks[0];
    assert.ok(TICKS_S.includes(step) && step >= 60 && ticks.every((t) => t % step === 0), `${id} ticks ${ticks}`);
  }

  // The outage (10 min to 20 min of the hour) is shaded on every chart; before it is not.
  const shade = await figures.evaluateAll((fs) => fs.map((f) => {
    const canvas = f.querySelector("canvas");
    const over = f.querySelector(".u-over").getBoundingClientRect();
    const c = canvas.getBoundingClientRect();
    const ratio = canvas.width / c.width;
    const all = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data; // one readback per canvas
    const px = (fx) => {
      const at = 4 * (Math.round((over.y - c.y + 2) * ratio) * canvas.width + Math.round((over.x - c.x + fx * over.width) * ratio));
      return all.slice(at, at + 4);
    };
    const last = 3600 - 30; // the last chart point's time (30 s buckets)
    return { chart: f.dataset.chart, inside: [...px(900 / last)], outside: [...px(300 / last)] };
  }));
  for (const s of shade) {
    assert.ok(s.inside[3] > 0 && s.inside[0] > s.inside[2], `${s.chart}: the incident is shaded (${s.inside})`);
    assert.equal(s.outside[3], 0, `${s.chart}: no shade before it (${s.outside})`);
  }
  await results(page).getByText(/^Shaded: outage in shop-us, 10 min to 20 min/).waitFor();

  await mkdir(path.join(ROOT, "docs"), { recursive: true });
  await results(page).screenshot({ path: path.join(ROOT, "docs/console-ab.png") });
  await screenshot(page, "sim-operator-compare");
});
