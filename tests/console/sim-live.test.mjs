// Simulation mode against a real `repute serve --record-outcomes` (a child process serving the
// console, with tokens): after workers' traffic over HTTP, the console connected as an operator
// pulls the pool's snapshot (credentials masked) and runs from it, pulls its audit log and
// reported outcomes and replays them, reads the live config into a policy, and applies a
// policy with PUT /api/config after a confirmation dialog — which the server then runs, with
// a CONFIG_CHANGED event. A viewer's Apply and a limit below what the pool holds are refused
// with the server's message shown, and change nothing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { TOKENS, launchChromium, watchedPage, openConsole, screenshot } from "./_support.mjs";
import { downloadOf, run } from "./_sim-support.mjs";
import { call, spawnServe } from "../server/_http-support.mjs";

const SECRET = "pa55w0rd-live";
let server;
let url;
let dir;
let browser;

let reported = 0;

/** A worker's traffic: 4 proxies (one with credentials), 240 acquires; a burst of timeouts cools some. */
async function traffic() {
  const worker = TOKENS.worker;
  const values = [`http://crawler:${SECRET}@dc-1.example:3128`, "http://dc-2.example:3128", "http://dc-3.example:3128", "http://dc-4.example:3128"];
  for (const value of values) await call(url, "POST", "/api/resources", { token: worker, body: { kind: "PROXY", value } });
  for (let i = 0; i < 240; i++) {
    const context = i % 4 === 0 ? "search-eu" : "shop-us";
    const lease = await call(url, "POST", "/api/leases", { token: worker, body: { context } });
    if (lease.status !== 201) continue;
    const down = context === "shop-us" && i >= 60 && i < 90;
    const outcome = down ? { ok: false, failure: "TIMEOUT", latencyMs: 10000 } : { ok: true, latencyMs: 80 };
    await call(url, "POST", "/api/outcomes", { token: worker, body: { kind: "PROXY", value: lease.json.value, context, outcome } });
    reported++;
    await call(url, "DELETE", `/api/leases/${lease.json.leaseId}`, { token: worker });
  }
}

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "repute-sim-live-"));
  const tokens = JSON.stringify({ tokens: Object.entries(TOKENS).map(([role, token]) => ({ token, role })) });
  server = spawnServe(["--data", dir, "--port", "0", "--record-outcomes"], { env: { REPUTE_TOKENS: tokens } });
  url = await server.ready;
  await traffic();
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.child.kill("SIGTERM");
  await server?.exited;
  await rm(dir, { recursive: true, force: true });
});

const liveConfig = async () => (await call(url, "GET", "/api/config", { token: TOKENS.viewer })).json;

/** The console, connected with `token` in the Live tab, switched to Simulation. */
async function simConnected(token, options) {
  const w = await watchedPage(browser, options);
  await openConsole(w.page, url, token);
  await w.page.getByRole("tab", { name: "Simulation" }).click();
  await w.page.getByRole("button", { name: "Run", exact: true }).waitFor();
  return w;
}

test("pull the live snapshot (masked) and the live log, run from the one and replay the other", async () => {
  const w = await simConnected(TOKENS.operator);
  const { page } = w;
  await page.getByRole("button", { name: "Pull the snapshot from the live pool" }).click();
  await page.getByText(/Runs start from a snapshot of 4 resources and \d+ cells/).waitFor();
  await run(page);
  assert.match(await page.locator(".run-facts").innerText(), /over 4 resources/);
  const saved = await downloadOf(page, "Save workspace to file");
  assert.ok(!saved.text.includes(SECRET), "the pulled snapshot is kept without the credential");
  assert.ok(saved.text.includes("crawler:***@dc-1.example"));

  await page.getByRole("button", { name: "Pull the log from the live pool" }).click();
  const loaded = await page.getByText(new RegExp(`\\d+ events and ${reported} reported outcomes loaded from the live pool\\.`)).innerText();
  assert.ok(Number(/^(\d+)/.exec(loaded)[1]) > 2 * reported, loaded);
  await page.getByLabel("Candidate policy").selectOption("A");
  await page.getByRole("button", { name: "Replay", exact: true }).click();
  await page.getByText(/Replayed .* of recorded traffic through policy A/).waitFor();
  const rows = await page.locator(".replay-result table").first().locator("tbody tr").allInnerTexts();
  assert.ok(rows.includes("Acquires\t240\t240"), `every acquire, leased or rejected, is replayed:\n${rows.join("\n")}`);
  assert.ok(!(await page.locator(".replay-result").innerText()).includes(SECRET));
  await screenshot(page, "sim-live-replay");
  w.assertClean("pull and replay");
  await w.context.close();
});

test("Apply: the operator confirms, the live pool runs the policy; Cancel changes nothing", async () => {
  const w = await simConnected(TOKENS.operator);
  const { page } = w;
  const before = await liveConfig();
  await page.getByLabel("Ready-made policy for B").selectOption("plain-rotation");
  await page.getByRole("button", { name: "Load policy B" }).click();
  await run(page, "Compare");
  await page.getByLabel("Policy to export or apply").selectOption("B");
  await page.getByRole("button", { name: "Apply to live pool…" }).click();
  const dialog = page.getByRole("dialog", { name: /Apply policy B to the live pool/ });
  await dialog.waitFor();
  assert.match(await dialog.innerText(), /coolAfter: 2 → 1000/);
  await screenshot(page, "sim-apply-dialog");
  await dialog.getByRole("button", { name: "Cancel" }).click();
  assert.deepEqual(await liveConfig(), before, "Cancel sends nothing");

  await page.getByRole("button", { name: "Apply to live pool…" }).click();
  await dialog.getByRole("button", { name: "Apply policy B" }).click();
  const told = page.getByRole("status").filter({ hasText: "Applied policy B to the live pool" });
  await told.waitFor();
  // Told beside the button pressed, not at the Run button far above.
  const [said, pressed] = [await told.boundingBox(), await page.getByRole("button", { name: "Apply to live pool…" }).boundingBox()];
  assert.ok(Math.abs(said.y - (pressed.y + pressed.height)) < 80, `the message ${JSON.stringify(said)} is beside Apply ${JSON.stringify(pressed)}`);
  const applied = await liveConfig();
  assert.equal(applied.coolAfter, 1000);
  assert.deepEqual(applied.penalties, { BLOCKED: 0, TLS_HANDSHAKE: 0, CONNECTION_RESET: 0, TIMEOUT: 0, SLOW: 0 });
  const events = (await call(url, "GET", "/api/events?limit=1000&after=0", { token: TOKENS.viewer })).json;
  let all = events.events;
  for (let next = events.next; next !== null; ) {
    const page2 = (await call(url, "GET", `/api/events?limit=1000&after=${next}`, { token: TOKENS.viewer })).json;
    all = all.concat(page2.events);
    next = page2.next;
  }
  assert.ok(all.some((e) => e.type === "CONFIG_CHANGED"), "the change is an event");

  // The live config read back into policy A.
  await page.getByRole("button", { name: "Use the live pool's config as A" }).click();
  await page.getByText("Loaded the live pool's config.").waitFor();
  assert.equal(await page.getByLabel("Failures in a row before a cell cools (A)").inputValue(), "1000");

  // A limit below what the pool holds (4 resources): refused with the server's message,
  // nothing changed. (The simulation itself must fit it: 3 resources.)
  for (const n of [1, 2, 3]) await page.getByLabel(`Set ${n} resources`).fill("1");
  await page.getByLabel("Most resources in the pool (B)").fill("3");
  await run(page, "Compare");
  await page.getByLabel("Policy to export or apply").selectOption("B");
  w.expect(409, "/api/config");
  await page.getByRole("button", { name: "Apply to live pool…" }).click();
  await dialog.getByRole("button", { name: "Apply policy B" }).click();
  await dialog.getByRole("alert").filter({ hasText: /The pool refused: .*\(HTTP 409\)/ }).waitFor();
  await dialog.getByRole("button", { name: "Cancel" }).click();
  assert.deepEqual(await liveConfig(), applied);
  w.assertClean("apply");
  await w.context.close();
  // Put the pool back for the other tests.
  await call(url, "PUT", "/api/config", { token: TOKENS.operator, body: before });
});

test("Apply with a viewer token is refused, the server's message shown", async () => {
  const w = await simConnected(TOKENS.viewer);
  const { page } = w;
  const before = await liveConfig();
  await page.getByLabel("Failures in a row before a cell cools (A)").fill("5");
  await run(page);
  w.expect(403, "/api/config");
  await page.getByRole("button", { name: "Apply to live pool…" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("button", { name: "Apply policy A" }).click();
  const refused = await dialog.getByRole("alert").filter({ hasText: /\(HTTP 403\)/ }).innerText();
  assert.match(refused, /The pool refused: the viewer role may not do this/);
  await screenshot(page, "sim-apply-refused");
  assert.deepEqual(await liveConfig(), before);
  w.assertClean("viewer apply");
  await w.context.close();
});
