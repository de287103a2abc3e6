// The README's "Start it" section, as a newcomer runs it: `pkg-scripts/start` (here on a free
// port and a temporary data folder), wait for /readyz, then the curl commands of "One step over
// HTTP" exactly as written (only the port changed, and LEASE_ID put in as the text says):
// register, acquire, report, release, acquire again and finish with the next lease; then
// SIGTERM and the final snapshot on disk.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { ROOT, tempDir } from "./_http-support.mjs";

const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
const shellBlocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);

/** The text of the README's section under the heading `title` (up to the next heading of its level or above). */
function section(title) {
  const at = readme.indexOf(`\n${title}\n`);
  assert.ok(at >= 0, `the README has a section "${title}"`);
  const level = title.split(" ")[0];
  const end = readme.slice(at + 1).search(new RegExp(`\n#{1,${level.length}} `));
  return end < 0 ? readme.slice(at) : readme.slice(at, at + 1 + end);
}

/** The curl commands of each sh block of `text`, one string each (continuation lines joined). */
function curlBlocks(text) {
  const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  return blocks.map((b) => b.replace(/\\\n\s*/g, "").split("\n").filter((l) => l.startsWith("curl ")));
}

test("the README's start command is `pkg-scripts/start` and the test command `pkg-scripts/test`", () => {
  const start = [...section("## Start it").matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.deepEqual(start.map((b) => b.trim()), ["pkg-scripts/start"]);
  assert.ok(shellBlocks.some((b) => b.trim() === "pkg-scripts/test"));
  assert.equal(readFileSync(path.join(ROOT, ".ci/run"), "utf8").match(/pkg-scripts\/test/g)?.length, 1, ".ci/run runs the README's test command");
});

test("pkg-scripts/start serves; the README's curl examples answer as shown; SIGTERM leaves the final snapshot", async (t) => {
  const dir = await tempDir("start");
  t.after(() => rm(dir, { recursive: true, force: true }));
  const child = spawn(path.join(ROOT, "pkg-scripts/start"), ["--port", "0", "--data", dir], {
    cwd: ROOT,
    env: { ...process.env, REPUTE_TOKENS: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  t.after(() => child.exitCode === null && child.kill("SIGKILL"));

  // The server prints where it listens; the build before it may take a while on a first run.
  const url = await new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      const m = /repute: listening on (http:\/\/\S+);/.exec(stdout);
      if (m) {
        clearInterval(poll);
        resolve(m[1]);
      }
    }, 20);
    exited.then((r) => {
      clearInterval(poll);
      reject(new Error(`start exited (${r.code ?? r.signal}):\n${stdout}\n${stderr}`));
    });
  });
  const port = new URL(url).port;
  for (;;) {
    const r = await fetch(`${url}/readyz`);
    if (r.status === 200) break;
    assert.equal(r.status, 503, "not ready yet, or ready");
    await new Promise((r) => setTimeout(r, 20));
  }

  // The operator console is at the same address.
  const page = await fetch(`${url}/`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<title>repute console<\/title>/);
  assert.match(page.headers.get("content-security-policy") ?? "", /script-src 'self'/);

  const blocks = curlBlocks(section("## One step over HTTP"));
  assert.deepEqual(blocks.map((b) => b.length), [2, 2, 1], "register + acquire; report + release; finish");
  /** Runs a README curl command against this server, with `leaseId` for LEASE_ID. */
  const curl = (command, leaseId) =>
    execFileSync("bash", ["-c", command.replaceAll("localhost:8787", `localhost:${port}`).replaceAll("LEASE_ID", leaseId ?? "LEASE_ID")], { encoding: "utf8" });
  const [register, acquire] = blocks[0].map((c) => JSON.parse(curl(c)));
  assert.equal(register.kind, "PROXY");
  assert.equal(register.created, true);
  assert.equal(acquire.kind, "PROXY");
  assert.equal(acquire.context, "checkout-us");
  assert.equal(acquire.token, 1);
  assert.equal(typeof acquire.leaseId, "string");
  assert.ok(acquire.expiresAt > acquire.leasedAt);

  // Report and release: each answers 204 (curl prints the status).
  assert.deepEqual(blocks[1].map((c) => curl(c, acquire.leaseId)), ["204\n", "204\n"]);
  const viewer = async (p) => (await (await fetch(`${url}${p}`)).json()).resources;
  const [view] = await viewer("/api/resources");
  assert.equal(view.lease, null, "the lease was released");
  assert.deepEqual(view.cells.map((c) => [c.context, c.consecutiveSuccesses, c.p50LatencyMs]), [["checkout-us", 1, 120]]);

  // Acquire again, then finish it with the failure shown and the next lease in the same request.
  const again = JSON.parse(curl(blocks[0][1]));
  assert.equal(again.token, 2);
  const finished = JSON.parse(curl(blocks[2][0], again.leaseId));
  assert.equal(finished.next?.value, "http://user:pass@proxy-1.example.net:8080", "the next lease, on the one proxy");
  assert.equal(finished.next.token, 3);
  const [after] = await viewer("/api/resources");
  assert.equal(after.cells[0].consecutiveFailures, 1, "the BLOCKED outcome was reported");
  assert.equal(after.lease?.token, 3, "the finished lease was released, the next one is held");
  // A repeat of the same finish is refused, reporting nothing twice.
  const repeat = JSON.parse(curl(blocks[2][0], again.leaseId));
  assert.match(repeat.type, /lease-finished/);
  assert.equal((await viewer("/api/resources"))[0].cells[0].consecutiveFailures, 1);

  child.kill("SIGTERM");
  const { code } = await exited;
  assert.equal(code, 0, `${stdout}\n${stderr}`);
  assert.match(stdout, /repute: SIGTERM: draining\nrepute: stopped/);
  const snapshot = JSON.parse(readFileSync(path.join(dir, "snapshot.json"), "utf8"));
  assert.deepEqual(snapshot.registered.map((r) => r.kind), ["PROXY"]);
  assert.equal(snapshot.registered[0].value, "http://user:pass@proxy-1.example.net:8080", "the snapshot keeps the raw value");
  assert.equal(snapshot.fencingHighWater, 3, "the last lease's token is in the final snapshot");
});
