// Helpers of the simulation-mode console tests (not a test file itself), beside _support.mjs
// (console-live's: Chromium, the watched page, screenshots, a pool server): a plain static
// server of www/ on 127.0.0.1 that sends the Content-Security-Policy `repute serve` sends with
// the console — simulation mode must work from any static file server, and a page that needs
// an inline script, a style attribute or a foreign worker fails here too — and page helpers.
import { before, after, afterEach } from "node:test";
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";
import { CONTENT_SECURITY_POLICY } from "../../pkg-scripts/lib/http/static-files.js";
import { WWW, launchChromium, watchedPage } from "./_support.mjs";

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".wasm": "application/wasm", ".json": "application/json" };

/** Serves www/ on 127.0.0.1 (port 0) with the console's CSP; resolves to `{ url, close() }`. */
export async function serveWww() {
  const server = createServer(async (req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname));
    if (path.endsWith("/")) path += "index.html";
    const file = join(WWW, path);
    const found = file.startsWith(WWW + sep) && (await stat(file).catch(() => null))?.isFile();
    if (!found) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "content-security-policy": CONTENT_SECURITY_POLICY });
    res.end(await readFile(file));
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((ok) => server.close(ok)) };
}

/**
 * The set-up every simulation test file shares, called at its top: www/ served and Chromium
 * launched before its tests, both closed after; `sim(viewport?)` opens a watched page on
 * simulation mode, which is checked for problems and closed after each test.
 */
export function simPages() {
  let www;
  let browser;
  const opened = [];
  before(async () => {
    www = await serveWww();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await www?.close();
  });
  afterEach(async () => {
    for (const w of opened.splice(0)) {
      w.assertClean("simulation mode");
      await w.context.close();
    }
  });
  return async function sim(viewport) {
    const w = await watchedPage(browser, viewport ? { viewport } : {});
    opened.push(w);
    await openSim(w.page, www.url);
    return w;
  };
}

/** Opens simulation mode at `base` and waits until the engine has loaded and Run shows. */
export async function openSim(page, base) {
  await page.goto(`${base}/#sim`);
  await page.getByRole("button", { name: "Run", exact: true }).waitFor();
}

/** Clicks a button that starts a download; resolves to the downloaded file's text and name. */
export async function downloadOf(page, name) {
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name, exact: true }).click()]);
  const chunks = [];
  for await (const c of await download.createReadStream()) chunks.push(c);
  return { name: download.suggestedFilename(), text: Buffer.concat(chunks).toString("utf8") };
}

/** Runs (or compares) and waits for the run to end. */
export async function run(page, name = "Run") {
  await page.getByRole("button", { name, exact: true }).click();
  await page.getByRole("status").filter({ hasText: /Done in|Stopped/ }).waitFor({ timeout: 60_000 });
}
