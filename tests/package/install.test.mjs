// The package as users get it (issue 23): `npm pack` in pkg-scripts/ (its prepack builds the
// engine and brings in LICENSE, README.md, the config schema and example, and the console), the
// tarball installed into an empty project from the registry, and then, from that project only:
// `npx repute serve --config` (the packaged example) answering the API and serving the console
// page with every file it loads; every subpath resolved and loaded (`repute/edge` resolved: it
// loads in workerd, not in Node); the installed types checked by tsc against a usage file; the
// repository's own tooling absent from the package.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("../../", import.meta.url).pathname;
const pkgDir = join(root, "pkg-scripts");
const tsc = join(pkgDir, "node_modules/.bin/tsc");
const manifest = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
const crawleeVersion = manifest.devDependencies["@crawlee/core"];

let work;
let project;
let tarball;

function run(cmd, args, cwd, extra = {}) {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", maxBuffer: 64 << 20, ...extra });
  assert.equal(r.status, 0, `${cmd} ${args.join(" ")} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

before(() => {
  work = mkdtempSync(join(tmpdir(), "repute-package-"));
  const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", work], pkgDir));
  tarball = join(work, packed[0].filename);
  project = join(work, "project");
  run("mkdir", ["-p", project], work);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "trying-repute", private: true, type: "module" }, null, 2));
  // The registry only (its cache first): the tarball, and Crawlee's core for repute/crawlee.
  run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball, `@crawlee/core@${crawleeVersion}`], project);
});
after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test("the tarball holds the engine, the console, README, LICENSE and types, and none of the repository's tooling", () => {
  const files = run("tar", ["tzf", tarball], work).split("\n").filter(Boolean).map((f) => f.replace(/^package\//, ""));
  for (const f of ["LICENSE", "README.md", "repute.config.schema.json", "repute.config.json", "package.json", "pkg/repute_bg.wasm", "pkg/repute.js", "www/index.html", "www/vendor/repute/pkg/repute_bg.wasm", "bin/repute.js", "lib/edge/worker.js", "lib/edge/wrangler.toml"]) {
    assert.ok(files.includes(f), `${f} is in the package`);
  }
  for (const f of Object.values(manifest.exports).flatMap((e) => (typeof e === "string" ? [e] : Object.values(e).flatMap((v) => (typeof v === "string" ? [v] : Object.values(v)))))) {
    assert.ok(files.includes(f.replace(/^\.\//, "")), `${f}, named by exports, is in the package`);
  }
  for (const f of ["lib/setup.sh", "lib/edge/dev.js", "prepack", "build", "test", "perf/load.mjs", "perf/bench.mjs", "perf/bench"]) assert.ok(!files.includes(f), `${f} is not in the package`);
  assert.ok(!files.some((f) => f.startsWith("node_modules/")), "no node_modules");
  assert.match(readFileSync(join(project, "node_modules/repute/LICENSE"), "utf8"), /^MIT License/);
  assert.ok(!existsSync(join(pkgDir, "www")) && !existsSync(join(pkgDir, "LICENSE")), "postpack removed prepack's copies");
});

/** Runs `fn(url)` against `npx repute serve` started in the project (data in `data`; with the
 * package's example config, as the README shows it), then stops it. Its own process group: npx
 * runs repute serve as a child of its own, and the whole group is stopped at the end (stopping
 * npx alone left the server running, holding the test's pipes). */
async function withServe(data, fn) {
  const child = spawn("npx", ["--no", "repute", "serve", "--port", "0", "--data", data, "--config", "node_modules/repute/repute.config.json"], { cwd: project, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, REPUTE_TOKENS: "" }, detached: true });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  try {
    const url = await new Promise((resolve, reject) => {
      child.stdout.on("data", () => {
        const m = /repute: serving (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      child.on("exit", (code) => reject(new Error(`repute serve exited ${code}:\n${out}`)));
    });
    await fn(url);
  } finally {
    const exited = child.exitCode !== null ? Promise.resolve() : new Promise((r) => child.on("exit", r));
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      // the group is gone already
    }
    await exited;
    await new Promise((r) => (child.stdout.readableEnded ? r() : child.stdout.on("close", r)));
  }
}

test("npx repute serve, in the empty project, answers the API and serves the console with every file it loads", async () => {
  await withServe("data", async (url) => {
    const example = JSON.parse(readFileSync(join(project, "node_modules/repute/repute.config.json"), "utf8"));
    const config = await (await fetch(url + "/api/config")).json();
    for (const [k, v] of Object.entries(example)) {
      if (typeof v !== "object" || Array.isArray(v)) assert.deepEqual(config[k], v, `the example's ${k} is in force`);
    }
    const post = (path, body) => fetch(url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    assert.equal((await post("/api/resources", { kind: "PROXY", value: "proxy-1" })).status, 201);
    const lease = await post("/api/leases", { context: "shop.example" });
    assert.equal(lease.status, 201);
    const { leaseId } = await lease.json();
    const done = await post(`/api/leases/${leaseId}/outcome`, { outcome: { ok: true, latencyMs: 120 } });
    assert.equal(done.status, 200, await done.clone().text());
    const page = await fetch(url + "/");
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /<title>[^<]*repute/i);
    const refs = [...html.matchAll(/(?:src|href)="([^"#]+)"/g)].map((m) => m[1]).filter((r) => !/^[a-z]+:/.test(r));
    assert.ok(refs.length >= 2, `the page loads its scripts and styles (${refs.join(", ")})`);
    for (const ref of refs) {
      const r = await fetch(new URL(ref, url + "/"));
      assert.equal(r.status, 200, `${ref} is served`);
    }
    // The module the console imports reaches the engine it vendors.
    const wasm = await fetch(url + "/vendor/repute/pkg/repute_bg.wasm");
    assert.equal(wasm.status, 200);
    assert.equal(wasm.headers.get("content-type"), "application/wasm");
  });
});

test("repute/client loads no engine: importing and using it reads no .wasm and compiles no engine module; maskValue loads it on its first call", async () => {
  // Preloaded before the client: records every .wasm file read and every WebAssembly module
  // compiled — "engine" when it exports the engine's functions (rawpool_*), else "other" (undici
  // compiles its own HTTP parser, llhttp, which is not ours to avoid).
  writeFileSync(join(project, "record-wasm.mjs"), `
    import fs from "node:fs";
    import { syncBuiltinESMExports } from "node:module";
    const loads = (globalThis.wasmLoads = []);
    const read = fs.readFileSync;
    fs.readFileSync = function (file, ...rest) {
      if (String(file instanceof URL ? file.pathname : file).endsWith(".wasm")) loads.push("read " + String(file));
      return read.call(this, file, ...rest);
    };
    syncBuiltinESMExports();
    const note = (m) => {
      const engine = WebAssembly.Module.exports(m).some((e) => e.name.startsWith("rawpool_"));
      loads.push(engine ? "engine" : "other");
      return m;
    };
    const Module = WebAssembly.Module;
    const Recorded = function (bytes) { return note(new Module(bytes)); };
    Recorded.prototype = Module.prototype;
    Object.assign(Recorded, { exports: Module.exports, imports: Module.imports, customSections: Module.customSections });
    WebAssembly.Module = Recorded;
    const compile = WebAssembly.compile;
    WebAssembly.compile = (...args) => compile(...args).then(note);
    const instantiate = WebAssembly.instantiate;
    WebAssembly.instantiate = (...args) => instantiate(...args).then((r) => (r.module ? (note(r.module), r) : r));
  `);
  writeFileSync(join(project, "remote.mjs"), `
    const { connectPool } = await import("repute/client");
    const afterImport = [...globalThis.wasmLoads];
    const client = connectPool({ url: process.argv[2] });
    await client.register("ACCOUNT", "login57/qzx57pw");
    const lease = await client.acquire("shop.example");
    await client.finish(lease, { ok: true, latencyMs: 5 });
    const afterUse = [...globalThis.wasmLoads];
    const masked = client.maskValue("ACCOUNT", "login57/qzx57pw");
    console.log(JSON.stringify({ afterImport, afterUse, afterMask: globalThis.wasmLoads, leased: lease.value, masked }));
    await client.close();
  `);
  await withServe("data-client", async (url) => {
    const r = spawnSync(process.execPath, ["--import", "./record-wasm.mjs", "remote.mjs", url], { cwd: project, encoding: "utf8" });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const got = JSON.parse(r.stdout);
    const ours = (loads) => loads.filter((l) => l !== "other");
    assert.deepEqual(ours(got.afterImport), [], "importing repute/client loads no engine");
    assert.deepEqual(ours(got.afterUse), [], "register, acquire and finish over HTTP load none either");
    assert.equal(got.leased, "login57/qzx57pw", "the client works: the worker gets the value as it is");
    assert.equal(got.masked, "login57/***", "maskValue is the engine's rule");
    assert.ok(got.afterMask.some((l) => l.endsWith("repute_bg.wasm")) && got.afterMask.includes("engine"), `the recorder sees the engine load: ${got.afterMask}`);
  });
});

test("every subpath resolves and loads from the installed package (repute/edge resolves; it loads in workerd)", () => {
  writeFileSync(join(project, "check.mjs"), `
    import * as repute from "repute";
    import * as client from "repute/client";
    import * as crawlee from "repute/crawlee";
    import * as server from "repute/server";
    import * as handler from "repute/handler";
    import pkg from "repute/package.json" with { type: "json" };
    import schema from "repute/config.schema.json" with { type: "json" };
    import example from "repute/config.example.json" with { type: "json" };
    const edge = import.meta.resolve("repute/edge");
    console.log(JSON.stringify({
      repute: Object.keys(repute).sort(), client: Object.keys(client).sort(), crawlee: Object.keys(crawlee).sort(),
      server: Object.keys(server).sort(), handler: Object.keys(handler).sort(), version: pkg.version, edge,
      schema: schema.title, example: Object.keys(example).length,
    }));
  `);
  const got = JSON.parse(run(process.execPath, ["check.mjs"], project));
  assert.ok(got.repute.includes("Pool") && got.repute.includes("openPool"), got.repute.join());
  assert.deepEqual(got.client, ["CLIENT_CODES", "PoolClient", "PoolClientError", "connectPool"]);
  assert.ok(got.crawlee.includes("ReputeProxyConfiguration"));
  assert.deepEqual(got.server, ["isLoopback", "serve"]);
  assert.deepEqual(got.handler, ["MemoryHost", "createHandler"]);
  assert.equal(got.version, manifest.version);
  assert.match(got.edge, /node_modules\/repute\/lib\/edge\/worker\.js$/);
  assert.equal(got.schema, "repute pool config", "repute/config.schema.json is the config's schema");
  assert.ok(got.example > 0, "repute/config.example.json is the example config");
});

test("the installed types: a usage file of every subpath type-checks, and a misuse does not", () => {
  const usage = `
    import { Pool, openPool, type Lease } from "repute";
    import { connectPool, type PoolClient } from "repute/client";
    import { ReputeProxyConfiguration } from "repute/crawlee";
    import { serve } from "repute/server";
    import { createHandler, MemoryHost } from "repute/handler";
    import worker, { PoolObject } from "repute/edge";
    export async function use(): Promise<void> {
      const pool = new Pool({ seed: 1 });
      pool.register("PROXY", "proxy-1", { maxLeases: 2 });
      const lease: Lease | null = pool.acquire("shop.example");
      if (lease) pool.finish(lease, { ok: true, latencyMs: 80 });
      const host = await openPool({ dir: "./data" });
      const server = await serve(host, { host: "127.0.0.1", port: 0 });
      const client: PoolClient = connectPool({ url: server.url });
      await client.acquireWait("shop.example", { waitMs: 1000 });
      const handle = await createHandler(await MemoryHost.create({ Pool }), {});
      void [handle, new ReputeProxyConfiguration({ pool }), worker.fetch, PoolObject];
      await server.close();
    }
  `;
  const check = (text) => {
    writeFileSync(join(project, "usage.ts"), text);
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2023", "dom"], types: [], skipLibCheck: false },
      files: ["usage.ts"],
    }));
    return spawnSync(tsc, ["-p", project], { cwd: project, encoding: "utf8" });
  };
  const ok = check(usage);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  const wrong = check(usage.replace(`import { serve } from "repute/server";`, `import { serve, createHandler as notHere } from "repute/server";`));
  assert.notEqual(wrong.status, 0, "repute/server does not declare createHandler");
  assert.match(wrong.stdout, /createHandler/);
});
