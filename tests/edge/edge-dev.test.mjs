// `repute edge-dev` (pkg-scripts/bin/repute.js, pkg-scripts/lib/edge/dev.js): the edge worker under
// Miniflare on a port, storage persisted in a folder, tokens from a file (never printed);
// SIGTERM stops it, and a second start on the same folder serves the same pool. Without tokens
// it refuses a non-loopback address; without --persist it says what is missing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { writeFile, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { tempDir } from "./_edge-support.mjs";

const CLI = fileURLToPath(new URL("../../pkg-scripts/bin/repute.js", import.meta.url));
const TOKEN = "edge-dev-operator-token-0123456789";

function start(args) {
  const child = spawn(process.execPath, [CLI, "edge-dev", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise((r) => child.on("exit", (code) => r({ code, out })));
  const url = new Promise((resolve, reject) => {
    child.stdout.on("data", () => {
      const m = /serving (http:\/\/\S+?)\/regions\//.exec(out);
      if (m) resolve(m[1]);
    });
    exited.then(() => reject(new Error(`edge-dev exited before serving:\n${out}`)));
  });
  url.catch(() => {});
  return { child, url, exited, output: () => out };
}

test("repute edge-dev serves the worker with tokens and persisted storage; SIGTERM stops it; a restart keeps the pool", async () => {
  const dir = await tempDir("edge-dev");
  try {
    const tokens = path.join(dir, "tokens.json");
    await writeFile(tokens, JSON.stringify({ tokens: [{ token: TOKEN, role: "operator" }] }));
    const persist = path.join(dir, "state");
    const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    for (const round of [1, 2]) {
      const p = start(["--host", "127.0.0.1", "--port", "0", "--persist", persist, "--tokens", tokens]);
      const base = `${await p.url}/regions/eu`;
      assert.equal((await fetch(`${base}/api/stats`)).status, 401);
      if (round === 1) {
        const r = await fetch(`${base}/api/resources`, { method: "POST", headers: auth, body: JSON.stringify({ kind: "PROXY", value: "dev:1" }) });
        assert.equal(r.status, 201);
      }
      const stats = await (await fetch(`${base}/api/stats`, { headers: auth })).json();
      assert.equal(stats.registered, 1, `round ${round}`);
      p.child.kill("SIGTERM");
      const { code, out } = await p.exited;
      assert.equal(code, 0, out);
      assert.match(out, /repute: stopped/);
      assert.ok(!out.includes(TOKEN), "the token is never printed");
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("repute edge-dev refuses a non-loopback address without tokens, and needs --persist", () => {
  const open = spawnSync(process.execPath, [CLI, "edge-dev", "--host", "0.0.0.0", "--persist", "/tmp/x"], { encoding: "utf8" });
  assert.equal(open.status, 2);
  assert.match(open.stderr, /without tokens/);
  const none = spawnSync(process.execPath, [CLI, "edge-dev"], { encoding: "utf8" });
  assert.equal(none.status, 2);
  assert.match(none.stderr, /--persist/);
  const help = spawnSync(process.execPath, [CLI, "edge-dev", "--help"], { encoding: "utf8" });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /repute edge-dev/);
  assert.match(help.stdout, /--persist DIR/);
});

test("repute edge-dev says so when its port is taken or out of range, without the runtime's crash dump", async () => {
  const { createServer } = await import("node:net");
  const taken = createServer();
  await new Promise((r) => taken.listen(0, "127.0.0.1", r));
  const { port } = taken.address();
  const dir = await tempDir("edge-dev-port");
  try {
    const busy = spawnSync(process.execPath, [CLI, "edge-dev", "--port", String(port), "--persist", dir], { encoding: "utf8" });
    assert.equal(busy.status, 2, busy.stderr);
    assert.match(busy.stderr, new RegExp(`127\\.0\\.0\\.1:${port} is in use`));
    assert.doesNotMatch(busy.stderr, /kj::Exception|stack:/);
    const high = spawnSync(process.execPath, [CLI, "edge-dev", "--port", "70000", "--persist", dir], { encoding: "utf8" });
    assert.equal(high.status, 2, high.stderr);
    assert.match(high.stderr, /--port must be at most 65535/);
    assert.doesNotMatch(high.stderr, /kj::Exception|stack:/);
  } finally {
    taken.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("repute edge-dev checks --config before it serves: a bad field stops it, named", async () => {
  const dir = await tempDir("edge-dev-config");
  try {
    const config = path.join(dir, "config.json");
    await writeFile(config, JSON.stringify({ coolAfter: -1 }));
    const bad = spawnSync(process.execPath, [CLI, "edge-dev", "--port", "0", "--persist", path.join(dir, "state"), "--config", config], { encoding: "utf8", timeout: 20_000 });
    assert.equal(bad.status, 2, `${bad.stdout}${bad.stderr}`);
    assert.match(bad.stderr, /bad config in --config .*coolAfter/);
    assert.doesNotMatch(bad.stdout, /serving/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
