// The golden scenarios of tests/scenarios/ in real workerd (Miniflare), the engine loaded as the
// edge worker loads it: the module as a precompiled `WebAssembly.Module` (a CompiledWasm
// import), passed to the web entry's `init` (pkg-scripts/web.js). A small worker imports the
// host-neutral runner (tests/js/scenario-runner.mjs, the one Node and Chromium run) and answers
// each scenario POSTed to it with the runner's list of failures, so every host checks the same
// results, events and byte-identical final snapshots as the native run.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const dir = new URL("../scenarios/", import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();

// Imports resolve from this (virtual) path: the package's web entry and module, the runner.
const WORKER = `
import wasm from "../../pkg-scripts/pkg/repute_bg.wasm";
import { init, Pool } from "../../pkg-scripts/web.js";
import { runScenario } from "../js/scenario-runner.mjs";

export default {
  async fetch(request) {
    if (!(wasm instanceof WebAssembly.Module)) {
      return Response.json({ failures: ["the engine did not arrive as a precompiled WebAssembly.Module"] });
    }
    await init(wasm);
    const scenario = await request.json();
    let failures;
    try {
      failures = runScenario(Pool, scenario);
    } catch (e) {
      failures = [\`threw \${e.stack ?? e}\`];
    }
    return Response.json({ failures, runtime: navigator.userAgent });
  },
};
`;

let mf;
let url;

before(async () => {
  const { Miniflare } = await import("miniflare");
  mf = new Miniflare({
    modules: true,
    script: WORKER,
    scriptPath: fileURLToPath(new URL("./_scenarios-worker.mjs", import.meta.url)),
    modulesRoot: ROOT,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-09-01",
  });
  url = (await mf.ready).toString();
});

after(() => mf?.dispose());

test("there are golden scenarios to run, in workerd", async () => {
  assert.ok(files.length >= 8, `found ${files.length}`);
  // The runtime is workerd (Cloudflare Workers), not Node: this suite is the fourth host.
  const body = readFileSync(new URL(files[0], dir), "utf8");
  const { runtime } = await (await fetch(url, { method: "POST", body })).json();
  assert.equal(runtime, "Cloudflare-Workers");
});

for (const file of files) {
  test(`scenario ${file} in workerd`, async () => {
    const body = readFileSync(new URL(file, dir), "utf8");
    const res = await fetch(url, { method: "POST", body });
    assert.equal(res.status, 200);
    const { failures } = await res.json();
    assert.deepEqual(failures, []);
  });
}
