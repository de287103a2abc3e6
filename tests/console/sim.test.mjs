// Simulation mode in headless Chromium, served with the console's Content-Security-Policy: a
// fixed seed gives the same summary on every run (and the numbers Node computes with the same
// code), every chart is drawn, Compare shows two policies' differences, Stop stops a long run
// while the page stays usable, a reload keeps the workspace, workspace files, snapshot start,
// replay of a recorded log, an exported policy that `repute serve --config` accepts, engine
// errors beside their field, labels and keyboard. No console error and no failed request on
// any screen; screenshots go to tests/console/artifacts/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFile, rm, mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Pool, openPool } from "repute";
import { screenshot } from "./_support.mjs";
import { simPages, downloadOf, run } from "./_sim-support.mjs";
import { call, spawnServe } from "../server/_http-support.mjs";
import { createRun } from "../../www/sim/core/simulate.js";
import { SCENARIOS, DEFAULT_SCENARIO } from "../../www/sim/core/scenario.js";
import { summaryRows, formatValue } from "../../www/sim/core/compare.js";

let tmp;
/** A watched page on simulation mode; checked for problems after the test. */
const sim = simPages();

before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "repute-console-sim-"));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const results = (page) => page.locator('section[aria-labelledby="sim-results-h"]');
const summaryText = (page) => results(page).locator("table.summary").innerText();

/** Non-transparent pixels of every chart canvas, by chart id. */
const inked = (page) => page.evaluate(() => [...document.querySelectorAll("figure[data-chart]")].map((f) => ({
  chart: f.dataset.chart,
  pixels: [...f.querySelectorAll("canvas")].map((c) => {
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
    return n;
  }),
})));

test("a fixed seed gives the same summary on every run, the numbers Node computes, and every chart", async () => {
  const { page } = await sim();
  await run(page);
  const first = await summaryText(page);
  await run(page);
  assert.equal(await summaryText(page), first, "same seed, same summary");
  // The same code in Node, on the same scenario, policy and seed, gives the same numbers.
  const r = createRun({ Pool, scenario: SCENARIOS[DEFAULT_SCENARIO].make(), config: new Pool({ seed: 0 }).config(), seed: 42 });
  r.advance();
  for (const row of summaryRows([r.finish()])) {
    assert.ok(first.includes(`${row.label}\t${formatValue(row.format, row.values[0])}`), `${row.label} in\n${first}`);
  }
  const charts = await inked(page);
  assert.deepEqual(charts.map((c) => c.chart), ["success", "rejected", "states", "cooldowns", "traffic"]);
  for (const c of charts) assert.ok(c.pixels.length === 1 && c.pixels[0] > 500, `${c.chart} is drawn: ${c.pixels}`);
  await screenshot(page, "sim-run");
});

test("Compare runs A and B on the same workload and marks where they differ", async () => {
  const { page } = await sim();
  await run(page, "Compare");
  const table = results(page).locator("table.summary");
  await assert.doesNotReject(table.getByText("Summary: B against A").waitFor());
  const rate = table.locator('tr[data-key="successRate"] td');
  const [a, b, verdict] = await rate.allInnerTexts();
  assert.notEqual(a, b, "two policies, two success rates");
  assert.equal(verdict, "worse", "plain rotation (B) does worse than reputation (A) on a flaky set");
  assert.ok(await table.locator("tr.differs").count() >= 3);
  const [sameA, sameB, same] = await table.locator('tr[data-key="attempts"] td').allInnerTexts();
  assert.equal(sameA, sameB, "same workload");
  assert.equal(same, "same");
  await results(page).getByText("Policy A did better on all 5 seeds").waitFor();
  for (const c of await inked(page)) assert.ok(c.pixels.length === 1 && c.pixels[0] > 500, `${c.chart}: A and B drawn on one plot`);
  await screenshot(page, "sim-compare");
});

test("Stop ends a long run where it is, and the page answers meanwhile", async () => {
  const { page } = await sim();
  await page.getByLabel("Simulated duration (s)").fill("604800");
  await page.getByLabel("Chart resolution (s per point)").fill("300");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const stop = page.getByRole("button", { name: "Stop", exact: true });
  await page.waitForFunction(() => document.querySelector('progress[aria-label="Simulation progress"]').value > 0.002);
  // The page stays usable while the worker runs: typing into a field is taken at once.
  await page.getByLabel("Seed", { exact: true }).fill("77");
  assert.equal(await page.getByLabel("Seed", { exact: true }).inputValue(), "77");
  assert.equal(await page.getByRole("button", { name: "Run", exact: true }).isDisabled(), true);
  await stop.click();
  await page.getByRole("status").filter({ hasText: "Stopped" }).waitFor({ timeout: 30_000 });
  const facts = await results(page).locator(".run-facts").innerText();
  const m = /stopped at (\d+):(\d\d):(\d\d) of 168:00:00/.exec(facts);
  assert.ok(m, facts);
  assert.ok(Number(m[1]) < 168);
  assert.equal(await stop.isDisabled(), true);
  assert.equal(await page.getByRole("button", { name: "Run", exact: true }).isEnabled(), true);
  await screenshot(page, "sim-stopped");
});

test("a reload keeps the workspace and the last run", async () => {
  const { page } = await sim();
  await page.getByLabel("Seed", { exact: true }).fill("7");
  await page.getByLabel("Set 3 resources").fill("12");
  await run(page);
  const summary = await summaryText(page);
  await page.getByText("Workspace saved in this browser").waitFor();
  await page.reload();
  await page.getByRole("button", { name: "Run", exact: true }).waitFor();
  assert.equal(await page.getByLabel("Seed", { exact: true }).inputValue(), "7");
  assert.equal(await page.getByLabel("Set 3 resources").inputValue(), "12");
  assert.equal(await summaryText(page), summary, "the last run is shown again");
  await run(page);
  assert.equal(await summaryText(page), summary, "and seed 7 gives it again");
});

test("the workspace saves to a file and loads from one", async () => {
  const { page } = await sim();
  await page.getByLabel("Seed", { exact: true }).fill("123");
  const saved = await downloadOf(page, "Save workspace to file");
  assert.equal(saved.name, "repute-workspace.json");
  const doc = JSON.parse(saved.text);
  assert.equal(doc.format, "repute-console-workspace");
  assert.equal(doc.seed, 123);
  await page.getByLabel("Seed", { exact: true }).fill("5");
  const file = path.join(tmp, "ws.json");
  await writeFile(file, saved.text);
  await page.getByLabel("Load workspace from file").setInputFiles(file);
  await page.getByText("Workspace loaded from the file.").waitFor();
  assert.equal(await page.getByLabel("Seed", { exact: true }).inputValue(), "123");
  await writeFile(file, "{}");
  await page.getByLabel("Load workspace from file").setInputFiles(file);
  await page.getByText(/That workspace cannot be loaded: not a console workspace/).waitFor();
  assert.equal(await page.getByLabel("Seed", { exact: true }).inputValue(), "123", "a bad file changes nothing");
});

test("the engine's verdict on a policy is shown beside the field it names", async () => {
  const { page } = await sim();
  const field = page.getByLabel("Failures in a row before a cell cools (A)");
  await field.fill("0");
  const described = await field.evaluate((el) => document.getElementById(el.getAttribute("aria-describedby")).textContent);
  assert.equal(described, "Failures in a row before a cell cools must be a whole number between 1 and 1,000");
  assert.equal(await field.getAttribute("aria-invalid"), "true");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.getByRole("alert").filter({ hasText: "Fix the marked problems first" }).waitFor();
  await page.getByLabel("Score lost on SLOW (B)").fill("-3");
  const slow = await page.getByLabel("Score lost on SLOW (B)").evaluate((el) => document.getElementById(el.getAttribute("aria-describedby")).textContent);
  assert.match(slow, /^Score lost on SLOW must be a number between 0 and 200$/);
  await field.fill("3");
  assert.equal(await field.getAttribute("aria-invalid"), null);
  await screenshot(page, "sim-policy-error");
});

test("a policy exported from a run is a config repute serve --config accepts", async () => {
  const { page } = await sim();
  await run(page, "Compare");
  await page.getByLabel("Policy to export or apply").selectOption("B");
  const exported = await downloadOf(page, "Export policy as config");
  assert.equal(exported.name, "repute-policy-B.json");
  const file = path.join(tmp, "policy.json");
  await writeFile(file, exported.text);
  const dir = await mkdtemp(path.join(tmp, "serve-"));
  const server = spawnServe(["--config", file, "--port", "0", "--data", dir]);
  try {
    const url = await server.ready;
    const live = await call(url, "GET", "/api/config");
    assert.deepEqual(live.json, JSON.parse(exported.text));
    assert.equal(live.json.coolAfter, 1000, "plain rotation");
  } finally {
    server.child.kill("SIGTERM");
    await server.exited;
  }
  const json = await downloadOf(page, "Export results (JSON)");
  assert.deepEqual(JSON.parse(json.text).labels, ["A", "B"]);
  const csv = await downloadOf(page, "Export series (CSV)");
  assert.match(csv.text, /^run,bucket_start_s,shop-us acquires,/);
  assert.equal(csv.text.trimEnd().split("\r\n").length, 1 + 2 * 120);
  const summary = await downloadOf(page, "Export summary (CSV)");
  assert.match(summary.text, /^measure,A,B,/);
});

test("a run starts from an uploaded snapshot, with its credentials masked", async () => {
  const { page } = await sim();
  let now = 1_700_000_000_000;
  const live = new Pool({ seed: 1, now: () => now });
  for (let i = 0; i < 6; i++) live.register("PROXY", `http://user:hunter${i}@10.1.0.${i}:3128`);
  const file = path.join(tmp, "snapshot.json");
  await writeFile(file, live.snapshot());
  await page.getByLabel("Snapshot file (JSON)").setInputFiles(file);
  await page.getByText(/Runs start from a snapshot of 6 resources and 0 cells/).waitFor();
  await run(page);
  assert.match(await results(page).locator(".run-facts").innerText(), /over 6 resources/);
  const saved = await downloadOf(page, "Save workspace to file");
  assert.ok(!saved.text.includes("hunter"), "no credential in the workspace");
  await page.getByRole("button", { name: "Start from fresh resources" }).click();
  await page.getByText("Runs start from fresh resources").waitFor();
});

test("Replay feeds a recorded log through a candidate policy", async () => {
  const dir = await mkdtemp(path.join(tmp, "replay-"));
  const clock = { now: 1_700_000_000_000 };
  const pool = await openPool({ dir, now: () => clock.now, seed: 3, checkpointMs: 0, handleSignals: false, recordOutcomes: true });
  for (const v of ["good-1", "good-2", "good-3", "bad-1"]) await pool.register("PROXY", v);
  for (let i = 0; i < 400; i++) {
    clock.now += 1000;
    const lease = pool.acquire("shop-us");
    if (!lease) continue;
    const down = i >= 100 && i < 120; // a short outage of the site: everything times out
    pool.report(lease.kind, lease.value, "shop-us", down || lease.value === "bad-1" ? { ok: false, failure: "TIMEOUT" } : { ok: true });
    pool.release(lease);
  }
  const events = (await pool.readEvents({ after: 0, limit: 1000 })).events;
  const outcomes = (await pool.readOutcomes({ after: 0, limit: 1000 })).outcomes;
  await pool.close();
  const file = path.join(tmp, "log.json");
  await writeFile(file, JSON.stringify({ events, outcomes }));

  const { page } = await sim();
  await page.getByLabel("Recorded log (JSON or JSON lines)").setInputFiles(file);
  await page.getByText(`${events.length} events and ${outcomes.length} reported outcomes loaded from the file.`).waitFor();
  await page.getByLabel("Candidate policy").selectOption("B");
  await page.getByRole("button", { name: "Replay", exact: true }).click();
  await page.getByText(/Replayed .* of recorded traffic through policy B/).waitFor();
  const table = page.locator(".replay-result table").first();
  const cooldowns = await table.locator("tr", { hasText: "Cooldowns started" }).locator("td").allInnerTexts();
  assert.notEqual(cooldowns[0], "0", "the live pool cooled its resources in the outage");
  assert.equal(cooldowns[1], "0", "plain rotation cools nothing");
  assert.equal(await page.locator(".replay-result table").count(), 3);
  await screenshot(page, "sim-replay");
});

test("every control is labelled; Run and Compare are reachable and work from the keyboard", async () => {
  const { page } = await sim();
  const unlabelled = await page.evaluate(() => [...document.querySelectorAll("#sim input, #sim select, #sim button")]
    .filter((el) => el.tagName === "BUTTON" ? !(el.textContent.trim() || el.getAttribute("aria-label")) : el.labels.length === 0 && !el.getAttribute("aria-label"))
    .map((el) => el.outerHTML));
  assert.deepEqual(unlabelled, []);
  for (const name of ["Run", "Stop", "Compare"]) assert.equal(await page.getByRole("button", { name, exact: true }).count(), 1, name);
  const focusOn = async (name) => {
    for (let i = 0; i < 400; i++) {
      await page.keyboard.press("Tab");
      if (await page.evaluate((n) => document.activeElement?.textContent === n, name)) return true;
    }
    return false;
  };
  assert.ok(await focusOn("Run"), "Run is reachable with Tab");
  await page.keyboard.press("Enter");
  await page.getByRole("status").filter({ hasText: /Done in/ }).waitFor({ timeout: 60_000 });
  assert.ok(await focusOn("Compare"), "Compare is reachable with Tab");
});
