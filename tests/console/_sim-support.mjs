// Helpers of the simulation-mode console tests (not a test file itself): a static server of
// www/ on 127.0.0.1 that sends the Content-Security-Policy `repute serve` sends with the
// console (so a page that needs an inline script, a style attribute or a foreign worker fails
// here too), Debian's Chromium through playwright-core, a page watched for console errors,
// uncaught exceptions, failed requests and error answers, and screenshots to artifacts/.
import { createServer } from "node:http";
import { readFile, stat, mkdir } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WWW = join(ROOT, "www");
export const ARTIFACTS = join(ROOT, "tests/console/artifacts");

/** The policy repute serve sends with the console's files (CONTRACTS item 4). */
export const CSP = [
  "default-src 'none'", "script-src 'self' 'wasm-unsafe-eval'", "style-src 'self'", "img-src 'self' data:",
  "font-src 'self'", "connect-src 'self'", "worker-src 'self'", "manifest-src 'self'", "base-uri 'none'",
  "form-action 'none'", "frame-ancestors 'none'",
].join("; ");

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".wasm": "application/wasm", ".json": "application/json" };

/** Serves www/ on 127.0.0.1 (port 0) with the CSP; resolves to `{ url, close() }`. */
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
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "content-security-policy": CSP });
    res.end(await readFile(file));
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((ok) => server.close(ok)) };
}

/** Debian's Chromium, headless (never a downloaded browser). */
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/**
 * A new page (in a context of its own: its own IndexedDB) that records every console error,
 * uncaught exception, CSP violation, failed request and HTTP error answer in `problems`,
 * except answers `expected(response)` accepts (a refusal a test provokes on purpose).
 */
export async function watchedPage(browser, { expected = () => false } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const problems = [];
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on("response", (r) => {
    if (r.status() >= 400 && !expected(r)) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  return { page, context, problems };
}

/** Saves a full-page screenshot as artifacts/NAME.png. */
export async function screenshot(page, name) {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Opens simulation mode at `base` and waits until the engine has loaded and Run shows. */
export async function openSim(page, base) {
  await page.goto(`${base}/#sim`);
  await page.getByRole("button", { name: "Run", exact: true }).waitFor();
}

/** Clicks a button that starts a download; resolves to the downloaded file's text and name. */
export async function downloadOf(page, name) {
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name, exact: true }).click()]);
  const stream = await download.createReadStream();
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  return { name: download.suggestedFilename(), text: Buffer.concat(chunks).toString("utf8") };
}
