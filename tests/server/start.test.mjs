// The README's "Start it" section, as a newcomer runs it: `pkg-scripts/start` (here on a free
// port and a temporary data folder), wait for /readyz, the README's two curl commands exactly
// as written (only the port changed), then SIGTERM and the final snapshot on disk.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { ROOT, tempDir } from "./_http-support.mjs";

const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
const shellBlocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);

/** The README's curl commands, one string each (continuation lines joined). */
function curlCommands() {
  const block = shellBlocks.find((b) => b.includes("curl"));
  assert.ok(block, "the README has a block of curl examples");
  return block.replace(/\\\n\s*/g, "").split("\n").filter((l) => l.startsWith("curl "));
}

test("the README's start command is `pkg-scripts/start` and the test command `pkg-scripts/test`", () => {
  assert.equal(shellBlocks[0].trim(), "pkg-scripts/start");
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

  const [register, acquire] = curlCommands().map((c) =>
    JSON.parse(execFileSync("bash", ["-c", c.replaceAll("localhost:8787", `localhost:${port}`)], { encoding: "utf8" })),
  );
  assert.equal(register.kind, "PROXY");
  assert.equal(register.created, true);
  assert.equal(acquire.kind, "PROXY");
  assert.equal(acquire.context, "checkout-us");
  assert.equal(acquire.token, 1);
  assert.equal(typeof acquire.leaseId, "string");
  assert.ok(acquire.expiresAt > acquire.leasedAt);

  child.kill("SIGTERM");
  const { code } = await exited;
  assert.equal(code, 0, `${stdout}\n${stderr}`);
  assert.match(stdout, /repute: SIGTERM: draining\nrepute: stopped/);
  const snapshot = JSON.parse(readFileSync(path.join(dir, "snapshot.json"), "utf8"));
  assert.deepEqual(snapshot.registered.map((r) => r.kind), ["PROXY"]);
  assert.equal(snapshot.registered[0].value, "http://user:pass@proxy-1.example.net:8080", "the snapshot keeps the raw value");
  assert.equal(snapshot.fencingHighWater, 1, "the lease's token is in the final snapshot");
});
