// The README's "Fleet workers" examples run as written against a real `repute serve` (its URL and
// a worker token put in place of the example's), and do what they say: the proxy registered by
// name in its group, leased, its success reported in the context, the lease released; then a
// worker's loop of 100 steps, each a finish with the next lease, ending with none held.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { connectPool } from "repute/client";
import { startServer } from "../server/_http-support.mjs";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const start = readme.indexOf("\n### Fleet workers\n");
const section = readme.slice(start, readme.indexOf("\n## ", start + 1)); // to the next section
const [example, workerLoop] = [...section.matchAll(/```javascript\n([\s\S]*?)```/g)].map((m) => m[1]);

test("the Fleet workers example runs against a real server and leaves the pool as it says", async () => {
  assert.ok(example?.includes('from "repute/client"'), "the section has its example");
  const tokens = [{ token: "worker-token-readme-3c9d", role: "worker" }, { token: "viewer-token-readme-7a1e", role: "viewer" }];
  const server = await startServer({ tokens });
  const dir = mkdtempSync(join(new URL(".", import.meta.url).pathname, ".readme-"));
  const viewer = connectPool({ url: server.url, token: tokens[1].token });
  try {
    assert.ok(example.includes('"http://127.0.0.1:8787"'));
    writeFileSync(join(dir, "example.mjs"), example.replace('"http://127.0.0.1:8787"', JSON.stringify(server.url)));
    await promisify(execFile)(process.execPath, [join(dir, "example.mjs")], { cwd: dir, env: { ...process.env, REPUTE_TOKEN: tokens[0].token }, timeout: 30_000 });
    const [view] = await viewer.resources();
    assert.deepEqual([view.value, view.group, view.lease], ["proxy-de-1", "dc-de", null]);
    assert.deepEqual(view.cells.map((c) => [c.context, c.consecutiveSuccesses, c.p50LatencyMs]), [["shop.example", 1, 120]]);
    // The worker loop: 100 pages, each finished with the next lease but the last.
    assert.ok(workerLoop?.includes("pool.finish("), "the section has its worker loop");
    writeFileSync(join(dir, "loop.mjs"), workerLoop.replace('"http://127.0.0.1:8787"', JSON.stringify(server.url)));
    await promisify(execFile)(process.execPath, [join(dir, "loop.mjs")], { cwd: dir, env: { ...process.env, REPUTE_TOKEN: tokens[0].token }, timeout: 30_000 });
    const [after] = await viewer.resources();
    assert.equal(after.lease, null, "the last finish asked for no next lease");
    assert.equal(after.cells[0].consecutiveSuccesses, 101, "one success, then a hundred");
  } finally {
    await viewer.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
