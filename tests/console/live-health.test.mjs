// Live mode's answer to "which sites are burning which resources, and why", in headless
// Chromium against a real pool server: the per-site strip shows exactly what `GET /api/contexts`
// says (and its failing counts equal the API's cells with a failed last outcome or a negative
// score); a cell left HEALTHY by one BLOCKED shows a "failing · BLOCKED" badge and is counted;
// the grid is sorted by severity by default; a site filters the grid. It writes the live view's
// screenshot to docs/console-live.png (the README shows it).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { startPoolServer, launchChromium, watchedPage, openConsole, until, TOKENS, ROOT } from "./_support.mjs";
import { burningPool, SECRET_VALUE } from "./_health-support.mjs";

let s;
let browser;

before(async () => {
  s = await startPoolServer({ setup: burningPool });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await s?.close();
});

const api = async (p, role = "viewer") => (await fetch(s.url + p, { headers: { authorization: `Bearer ${TOKENS[role]}` } })).json();
const grid = (page) => page.getByRole("grid", { name: "Resources by context" });
const strip = (page) => page.getByRole("region", { name: "Sites" });

test("the site strip equals GET /api/contexts; a failing-but-HEALTHY cell has its badge and is counted; a site filters the grid", async () => {
  const w = await watchedPage(browser, { viewport: { width: 1440, height: 900 } });
  try {
    const { page } = w;
    await openConsole(page, s.url, TOKENS.viewer);
    const answer = await api("/api/contexts");
    await strip(page).getByRole("button", { name: /checkout-us/ }).waitFor();
    const shown = await strip(page).locator("button.site").evaluateAll((buttons) => buttons.map((b) => {
      const f = (name) => b.querySelector(`[data-field="${name}"]`)?.textContent ?? null;
      return { context: b.dataset.context, successRate: f("successRate"), failing: f("failing"), cause: f("cause"), cooling: f("cooling"), held: f("held"), p95LatencyMs: f("p95LatencyMs"), rejected: f("rejected") };
    }));
    const pct = (r) => (r === null ? "–" : `${(r * 100).toFixed(r === 1 ? 0 : 1)} %`);
    const expected = (c) => ({
      context: c.context, successRate: pct(c.successRate), failing: String(c.failing), cause: c.cause, cooling: String(c.states.COOLING),
      held: String(c.held), p95LatencyMs: c.p95LatencyMs === null ? "–" : `${Math.round(c.p95LatencyMs)} ms`, rejected: String(c.rejected),
    });
    // Worst first: checkout-us (5 failing), then news-de (1 rejected), then search-eu.
    assert.deepEqual(shown.map((x) => x.context), ["checkout-us", "news-de", "search-eu"]);
    for (const x of shown) assert.deepEqual(x, expected(answer.contexts.find((c) => c.context === x.context)));
    const checkout = shown[0];
    assert.deepEqual([checkout.failing, checkout.cause, checkout.cooling, checkout.rejected], ["5", "BLOCKED", "1", "0"]);
    assert.equal(shown[1].rejected, "1");
    // The failing count is the API's cells with a failed last outcome or a score below zero.
    const resources = (await api("/api/resources")).resources;
    const failingInApi = resources.flatMap((r) => r.cells.filter((c) => c.context === "checkout-us" && (c.consecutiveFailures > 0 || c.score < 0)));
    assert.equal(failingInApi.length, 5);
    assert.equal(failingInApi.filter((c) => c.state === "HEALTHY").length, 4, "four of them are HEALTHY");

    // The grid: severity first by default (the cooling one, then the four failing), each failing cell badged.
    assert.equal(await page.getByLabel("Sort by", { exact: true }).inputValue(), "severity");
    const rowText = (n) => grid(page).locator(`.grid-body [role=row][aria-rowindex="${n + 2}"]`).innerText();
    assert.match(await rowText(0), /gate-04[\s\S]*COOLING/);
    const healthyFailing = grid(page).locator(".grid-body [role=row]").filter({ hasText: "gate-01." }).locator(".ctx.s-healthy").filter({ hasText: "failing · BLOCKED" });
    await healthyFailing.waitFor();
    assert.match(await healthyFailing.innerText(), /HEALTHY[\s\S]*failing ·\s*BLOCKED[\s\S]*-30/);
    assert.equal(await grid(page).locator(".flag.failing").count(), 5);

    await page.screenshot({ path: path.join(ROOT, "docs/console-live.png") });

    // A site filters the grid to its context; pressing it again shows all.
    await strip(page).getByRole("button", { name: /search-eu/ }).click();
    assert.equal(await page.getByLabel("Context", { exact: true }).inputValue(), "search-eu");
    await until(async () => (await grid(page).getByRole("columnheader").allInnerTexts()).at(-1) === "search-eu", "the search-eu column alone");
    assert.deepEqual((await grid(page).getByRole("columnheader").allInnerTexts()).slice(3), ["search-eu"]);
    assert.equal(await strip(page).getByRole("button", { name: /search-eu/ }).getAttribute("aria-pressed"), "true");
    await strip(page).getByRole("button", { name: /search-eu/ }).click();
    assert.equal(await page.getByLabel("Context", { exact: true }).inputValue(), "");
    w.assertClean("site strip");
  } finally {
    await w.context.close();
  }
});

test("events: filtered by the server (type=), lease churn hidden until asked for, '0 of N match', a block's actor and reason", async () => {
  const w = await watchedPage(browser, { viewport: { width: 1440, height: 900 } });
  try {
    const { page } = w;
    const asked = [];
    page.on("request", (r) => r.url().includes("/api/events?") && asked.push(new URL(r.url()).searchParams));
    await openConsole(page, s.url, TOKENS.operator);
    const log = page.getByRole("log", { name: "Pool events" });
    const items = log.locator("li");
    await items.first().waitFor();
    assert.ok(asked.length > 0 && asked.every((q) => q.has("type")), "the type filter goes to the server");
    assert.ok(!asked[0].get("type").split(",").includes("RESOURCE_LEASED"), "lease churn is not asked for");
    const leasedInLog = (await api("/api/events?type=RESOURCE_LEASED&limit=1000")).events.length;
    assert.equal(leasedInLog, 12);
    assert.equal(await items.filter({ hasText: "RESOURCE_LEASED" }).count(), 0, "hidden by default");

    const events = page.getByRole("region", { name: "Events" });
    await events.getByLabel("Show lease churn").check();
    await until(async () => (await items.filter({ hasText: "RESOURCE_LEASED" }).count()) === 12, "the 12 leases");
    assert.ok(asked.some((q) => !q.has("type")), "with churn shown, no type filter");

    await events.getByLabel("Event type", { exact: true }).selectOption("RESOURCE_UNBLOCKED");
    await events.getByText(/^0 of \d+ events match/).waitFor();
    assert.ok(asked.some((q) => q.get("type") === "RESOURCE_UNBLOCKED"));
    assert.equal(await items.count(), 0);
    await events.getByLabel("Event type", { exact: true }).selectOption("");
    await events.getByLabel("Show lease churn").uncheck();

    // A block from the console, with a reason: the event says who and why.
    await page.getByLabel("Search", { exact: true }).fill("gate-05.");
    await grid(page).locator(".grid-body [role=row]:not([hidden])").first().getByRole("gridcell").first().click();
    await page.getByRole("button", { name: "Block", exact: true }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Reason").fill("checkout bans it: ticket 42");
    await dialog.getByRole("button", { name: "Block" }).click();
    const line = items.filter({ hasText: "RESOURCE_BLOCKLISTED" }).first();
    await line.waitFor();
    assert.match(await line.innerText(), /by operator-1 · reason: “checkout bans it: ticket 42”/);
    const stored = (await api("/api/events?type=RESOURCE_BLOCKLISTED")).events.at(-1);
    assert.deepEqual([stored.actor, stored.reason], ["operator-1", "checkout bans it: ticket 42"]);

    // One resource's events, filtered by the server.
    await page.getByRole("button", { name: "Events of this resource" }).click();
    await until(() => asked.some((q) => q.get("resource") === stored.id), "a request with resource=");
    const own = (await api(`/api/events?resource=${stored.id}&limit=1000`)).events.filter((e) => !["RESOURCE_LEASED", "LEASE_RELEASED", "ACQUISITION_REJECTED"].includes(e.type));
    await until(async () => (await items.count()) === own.length, `the ${own.length} events of gate-05`);
    assert.deepEqual(await items.evaluateAll((li) => li.map((x) => Number(x.dataset.seq))), own.map((e) => e.seq).reverse());
    await page.getByRole("button", { name: /^Show the events of every resource/ }).click();
    await until(async () => (await items.count()) > own.length, "every resource again");
    w.assertClean("events");
  } finally {
    await w.context.close();
  }
});

test("roles: values are masked for everyone by default; an operator's Show credentials reveals them for the session; a viewer has no such switch", async () => {
  const w = await watchedPage(browser, { viewport: { width: 1440, height: 900 } });
  try {
    const { page } = w;
    const everything = () => page.evaluate(() => document.body.innerText + [...document.querySelectorAll("[title]")].map((e) => e.title).join(" "));
    await openConsole(page, s.url, TOKENS.operator);
    await page.getByRole("status").filter({ hasText: "as operator-1 (operator: may change the pool)" }).waitFor();
    await grid(page).getByText("gate-99.example.com:7000").waitFor();
    assert.ok(!(await everything()).includes("hunter2"), "masked by default, for an operator too");
    await page.getByLabel("Show credentials").check();
    await grid(page).getByText(SECRET_VALUE).waitFor();
    // Per session: a reload keeps it; a new session (another context) starts masked again.
    await page.reload();
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await grid(page).getByText(SECRET_VALUE).waitFor();
    await page.getByLabel("Show credentials").uncheck();
    await until(async () => !(await everything()).includes("hunter2"), "masked again");
    w.assertClean("show credentials");
  } finally {
    await w.context.close();
  }
});

test("the live chart draws success rate and rejected acquires per site, equal to GET /api/contexts's series", async () => {
  const w = await watchedPage(browser, { viewport: { width: 1440, height: 900 } });
  try {
    const { page } = w;
    await openConsole(page, s.url, TOKENS.viewer);
    const chart = (id) => page.locator(`.site-charts [data-chart="${id}"]`);
    await chart("rejected").locator("canvas").waitFor();
    const answer = await api("/api/contexts");
    const drawn = await page.evaluate(() => ["success", "rejected"].map((id) => {
      const plot = document.querySelector(`.site-charts [data-chart="${id}"]`).plot;
      return { labels: plot.series.slice(1).map((x) => x.label), data: plot.data.map((d) => [...d]) };
    }));
    const [success, rejected] = drawn;
    assert.deepEqual(success.labels, ["checkout-us", "news-de", "search-eu"]);
    assert.deepEqual(rejected.labels, success.labels);
    for (const [i, name] of success.labels.entries()) {
      const c = answer.contexts.find((x) => x.context === name);
      assert.deepEqual(rejected.data[i + 1], c.series.map((b) => b.rejected), name);
      assert.deepEqual(success.data[i + 1], c.series.map((b) => (b.succeeded + b.failed ? (100 * b.succeeded) / (b.succeeded + b.failed) : null)), name);
    }
    assert.deepEqual(rejected.data[0], answer.contexts[0].series.map((b) => b.at / 1000));
    w.assertClean("chart");
  } finally {
    await w.context.close();
  }
});
