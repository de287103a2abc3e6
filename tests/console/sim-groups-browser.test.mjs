// Simulation mode's SPEC v2 features in headless Chromium (served with the console's CSP): the
// ready-made tiered fleet escalates shop-us to residential during the ban and returns it to
// datacenter after — asserted on the numbers the page exports, which equal Node's run of the
// same code; the outage scenario loads its A/B pair and Compare shows fewer cooling cells with
// the cooling cap than without (and the cells it holds); the v2 policy fields and the
// scenario's group fields show the engine's and the checker's verdicts beside them. No console
// error and no failed request on any screen.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "repute";
import { screenshot } from "./_support.mjs";
import { simPages, downloadOf, run } from "./_sim-support.mjs";
import { assertEscalatesAndReturns } from "./_groups-support.mjs";
import { createRun } from "../../www/sim/core/simulate.js";
import { SCENARIOS } from "../../www/sim/core/scenario.js";
import { POLICIES } from "../../www/sim/core/policies.js";

const sim = simPages();
const defaults = new Pool({ seed: 0 }).config();



/** Loads a ready-made scenario through the form. */
async function loadScenario(page, id) {
  await page.getByLabel("Ready-made scenario").selectOption(id);
  await page.getByRole("button", { name: "Load scenario", exact: true }).click();
}

/** Node's result of the same scenario, policy and seed (the page's defaults: seed 42). */
function nodeRun(id, config) {
  const r = createRun({ Pool, scenario: SCENARIOS[id].make(), config, seed: 42 });
  r.advance();
  return r.finish();
}

const described = (locator) => locator.evaluate((el) => document.getElementById(el.getAttribute("aria-describedby")).textContent);
const results = (page) => page.locator('section[aria-labelledby="sim-results-h"]');
const figure = (page, id) => results(page).locator(`figure[data-chart="${id}"]`);

test("the tiered fleet escalates shop-us to residential during the ban and returns after; the page's numbers are Node's", async () => {
  const { page } = await sim();
  await loadScenario(page, "tiered-fleet");
  assert.equal(await page.getByLabel("Set 1 group").inputValue(), "datacenter");
  assert.equal(await page.getByLabel("Set 3 group").inputValue(), "residential");
  assert.equal(await page.getByLabel("Groups preferred in context 1").inputValue(), "datacenter, residential");
  await run(page);
  const exported = JSON.parse((await downloadOf(page, "Export results (JSON)")).text);
  const [result] = exported.runs;
  assertEscalatesAndReturns(assert, result.series);
  assert.deepEqual(result.series, nodeRun("tiered-fleet", defaults).series, "the browser's run is Node's, number for number");
  // The summary and the groups chart say it too.
  // A cell: the charted seed's value, then its spread over the seeds on a line of its own.
  const share = (await results(page).locator('tr[data-key="groupShare.shop-us.residential"] td').innerText()).split("\n")[0];
  assert.match(share, /^\d+\.\d %$/);
  await figure(page, "groups").locator("canvas").waitFor();
  await screenshot(page, "sim-tiered-fleet");
});

test("the outage A/B: with the cooling cap fewer cells cool and most are held; without it the pool is parked", async () => {
  const { page } = await sim();
  await loadScenario(page, "outage-cooling-cap");
  assert.equal(await page.getByLabel("Most of the pool cooling at once per context (%) (A)").inputValue(), "100");
  assert.equal(await page.getByLabel("Most of the pool cooling at once per context (%) (B)").inputValue(), "10");
  await run(page, "Compare");
  const cells = async (key) => (await results(page).locator(`tr[data-key="${key}"] td`).allInnerTexts()).slice(0, 2).map((t) => Number(t.split("\n")[0].replace(/,/g, "")));
  const [coolingA, coolingB] = await cells("peakCooling");
  const [heldA, heldB] = await cells("peakHeld");
  assert.ok(coolingB < coolingA, `fewer cooling cells with the cap: A ${coolingA}, B ${coolingB}`);
  assert.ok(coolingA >= 40 && coolingB <= 6, `A ${coolingA}, B ${coolingB}`);
  assert.ok(heldA === 0 && heldB >= 40, `held: A ${heldA}, B ${heldB}`);
  // The same numbers as Node's runs of the two policies.
  const a = nodeRun("outage-cooling-cap", POLICIES.defaults.make(defaults)).summary;
  const b = nodeRun("outage-cooling-cap", POLICIES["cooling-cap"].make(defaults)).summary;
  assert.deepEqual([coolingA, coolingB, heldA, heldB], [a.peakCooling, b.peakCooling, a.peakHeld, b.peakHeld]);
  // Both charts drawn, A and B on one plot each: cells by state and the held chart.
  for (const id of ["states", "held"]) {
    const legend = await figure(page, id).locator(".u-legend .u-series th").allInnerTexts();
    assert.ok(legend.some((t) => t.endsWith("· Policy A")) && legend.some((t) => t.endsWith("· Policy B")), `${id}: ${legend}`);
  }
  await screenshot(page, "sim-outage-cooling-cap");
});

test("the v2 policy fields and the scenario's group fields show their problems beside them", async () => {
  const { page } = await sim();
  const cap = page.getByLabel("Most of the pool cooling at once per context (%) (A)");
  await cap.fill("0");
  assert.match(await described(cap), /^Most of the pool cooling at once per context \(%\) must be a whole number between 1 and 100$/);
  await cap.fill("25");
  assert.equal(await cap.getAttribute("aria-invalid"), null);
  const byContext = page.getByLabel("Least time between uses, per context (JSON, milliseconds) (B)");
  await byContext.fill('{"shop-us": -1}');
  assert.match(await described(byContext), /^Least time between uses, per context \(JSON, milliseconds\): shop-us must be/); // the engine's words, retold
  await byContext.fill('{"shop-us": 2000}');
  assert.equal(await described(byContext), "");

  const groups = page.getByLabel("Groups preferred in context 1");
  await groups.fill("dc, dc");
  await groups.dispatchEvent("change");
  assert.match(await described(groups), /^contexts\[0\]\.groups entry 2 repeats the group dc/);
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.getByRole("alert").filter({ hasText: "Fix the marked problems first" }).waitFor();
  await groups.fill("dc, (none)");
  await groups.dispatchEvent("change");
  assert.equal(await described(groups), "");
  await screenshot(page, "sim-v2-problems");
});
