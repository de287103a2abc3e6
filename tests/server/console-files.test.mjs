// The operator console's files served by the pool server (static-files.js) on 127.0.0.1: GET
// and HEAD without a token even when tokens are configured, content types, the
// Content-Security-Policy (no inline script or style; WebAssembly and workers from 'self'),
// no directory listing, no way out of the folder (`..` raw and percent-encoded, encoded
// slashes and backslashes, NUL, dotfiles, a symbolic link leading outside), API paths never
// answered from files (and still authenticated), other methods 405; and `repute serve` serving
// the repository's www/ at `/`. Raw request targets go through node:http.request, which sends
// the path as given (fetch would resolve `..` before sending).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { startServer, call, assertProblem, tempDir, spawnServe } from "./_http-support.mjs";

const TOKEN = "opr-files-0123456789abcdef";
const SECRET = "outside-the-folder-do-not-serve";
let base;
let s;

before(async () => {
  base = await tempDir("www");
  const www = path.join(base, "www");
  await mkdir(path.join(www, "sub"), { recursive: true });
  await mkdir(path.join(www, "empty"));
  await writeFile(path.join(www, "index.html"), "<!doctype html><title>console</title>");
  await writeFile(path.join(www, "app.js"), "export const x = 1;\n");
  await writeFile(path.join(www, "style.css"), "body{}\n");
  await writeFile(path.join(www, "engine.wasm"), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
  await writeFile(path.join(www, "data.json"), "{}");
  await writeFile(path.join(www, "blob.bin"), "x");
  await writeFile(path.join(www, "sub", "index.html"), "<p>sub</p>");
  await writeFile(path.join(www, ".secret"), SECRET);
  await writeFile(path.join(www, "metrics"), SECRET); // a file named like an API path
  await writeFile(path.join(base, "outside.txt"), SECRET);
  await symlink(path.join(base, "outside.txt"), path.join(www, "link-out"));
  await symlink(path.join(www, "app.js"), path.join(www, "link-in.js"));
  s = await startServer({ tokens: [{ token: TOKEN, role: "operator" }], serveOptions: { www } });
});

after(async () => {
  await s?.close();
  await rm(base, { recursive: true, force: true });
});

/** One request with the target sent exactly as given. */
function raw(method, target) {
  const { hostname, port } = new URL(s.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method, path: target }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

test("files are served without a token, with their content types and the console's security headers", async () => {
  const types = {
    "/": "text/html; charset=utf-8",
    "/index.html": "text/html; charset=utf-8",
    "/app.js": "text/javascript; charset=utf-8",
    "/style.css": "text/css; charset=utf-8",
    "/engine.wasm": "application/wasm",
    "/data.json": "application/json",
    "/blob.bin": "application/octet-stream",
    "/sub/": "text/html; charset=utf-8",
    "/sub": "text/html; charset=utf-8",
    "/app.js?v=2": "text/javascript; charset=utf-8",
    "/link-in.js": "text/javascript; charset=utf-8",
  };
  for (const [target, type] of Object.entries(types)) {
    const r = await raw("GET", target);
    assert.equal(r.status, 200, target);
    assert.equal(r.headers["content-type"], type, target);
    assert.equal(r.headers["x-content-type-options"], "nosniff", target);
    assert.equal(r.headers["content-length"], String(r.body.length), target);
    const csp = r.headers["content-security-policy"];
    const directives = Object.fromEntries(csp.split(";").map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v]));
    assert.deepEqual(directives["script-src"], ["'self'", "'wasm-unsafe-eval'"], csp);
    assert.deepEqual(directives["style-src"], ["'self'"], csp);
    assert.deepEqual(directives["worker-src"], ["'self'"], csp);
    assert.deepEqual(directives["default-src"], ["'none'"], csp);
    assert.ok(!/unsafe-inline|unsafe-eval'|\*/.test(csp.replace("'wasm-unsafe-eval'", "")), `no inline, no eval, no wildcard: ${csp}`);
  }
  assert.equal((await raw("GET", "/")).body.toString(), "<!doctype html><title>console</title>");
  const head = await raw("HEAD", "/engine.wasm");
  assert.equal(head.status, 200);
  assert.equal(head.headers["content-length"], "8");
  assert.equal(head.body.length, 0);
});

test("no listing, no escape: folders without an index, .., %2e%2e, encoded slashes, NUL, dotfiles and outward links are 404", async () => {
  const targets = [
    "/empty/",
    "/empty",
    "/../outside.txt",
    "/sub/../../outside.txt",
    "/%2e%2e/outside.txt",
    "/%2E%2E/outside.txt",
    "/sub/%2e%2e/%2e%2e/outside.txt",
    "/%2e%2e%2foutside.txt",
    "/sub/..%2F..%2Foutside.txt",
    "/..%5coutside.txt",
    "/sub%5c..%5c..%5coutside.txt",
    "/app.js%00",
    "/app.js%00.html",
    "/%00",
    "/.secret",
    "/%2esecret",
    "/./app.js",
    "/%2e/app.js",
    "//app.js",
    "/sub//index.html",
    "/link-out",
    "/%zz",
    "/nope.js",
  ];
  for (const target of targets) {
    const r = await raw("GET", target);
    assert.ok(r.status === 404 || r.status === 400, `${target}: ${r.status}`);
    assert.match(r.headers["content-type"], /^application\/problem\+json/, target);
    assert.ok(!r.body.toString().includes(SECRET), target);
  }
});

test("API paths are never files and keep their authentication; other methods on a file are 405", async () => {
  assertProblem(await call(s.url, "GET", "/metrics"), 401, "unauthorized");
  assertProblem(await call(s.url, "GET", "/api/config"), 401, "unauthorized");
  assert.equal((await call(s.url, "GET", "/api/config", { token: TOKEN })).status, 200);
  assert.equal((await call(s.url, "GET", "/healthz")).status, 200);
  for (const method of ["POST", "PUT", "DELETE"]) {
    const r = await call(s.url, method, "/app.js", { token: TOKEN });
    assertProblem(r, 405, "method-not-allowed", method);
    assert.equal(r.headers.get("allow"), "GET, HEAD");
  }
});

test("repute serve serves the repository's console at / (the page, its scripts and styles)", async () => {
  const dir = await tempDir("console-cli");
  const p = spawnServe(["--data", dir, "--port", "0"]);
  try {
    const url = await p.ready;
    const page = await call(url, "GET", "/");
    assert.equal(page.status, 200);
    assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
    assert.match(page.text, /<title>repute console<\/title>/);
    assert.match(page.headers.get("content-security-policy"), /script-src 'self' 'wasm-unsafe-eval'/);
    for (const file of ["/app.js", "/live/live.js", "/shared/connection.js", "/style.css"]) {
      assert.equal((await call(url, "GET", file)).status, 200, file);
    }
  } finally {
    p.child.kill("SIGTERM");
    await p.exited;
    await rm(dir, { recursive: true, force: true });
  }
});

test("the console's files pass the Host/Origin guard: a rebound name or a foreign page reads nothing", async () => {
  // Without tokens (loopback only), as pkg-scripts/start runs.
  const www = path.join(base, "www");
  const open = await startServer({ serveOptions: { www } });
  try {
    const { port } = new URL(open.url);
    const get = (headers) =>
      new Promise((resolve, reject) => {
        const req = http.request({ host: "127.0.0.1", port, path: "/app.js", headers }, (res) => {
          const chunks = [];
          res.on("data", (c) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode, type: res.headers["content-type"], body: Buffer.concat(chunks).toString() }));
        });
        req.on("error", reject);
        req.end();
      });
    assert.equal((await get({ host: `localhost:${port}` })).status, 200);
    const rebound = await get({ host: `rebind.attacker.example:${port}` });
    assert.equal(rebound.status, 403);
    assert.match(rebound.body, /forbidden-host/);
    assert.doesNotMatch(rebound.body, /export const x/);
    const foreign = await get({ host: `127.0.0.1:${port}`, origin: "https://evil.example" });
    assert.equal(foreign.status, 403);
    assert.match(foreign.body, /forbidden-origin/);
  } finally {
    await open.close();
  }
});
