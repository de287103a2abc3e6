// `PUT /api/config` (operator only) against a real server on 127.0.0.1: 200 with the whole config
// in force, on disk before the answer, one revision step and a CONFIG_CHANGED event in the
// audit log; workers and viewers refused (403) and unauthenticated calls 401; an invalid field
// 400 invalid-config naming it; a limit below what the pool holds 409 capacity-exceeded; a body
// that is not a JSON object 400, a wrong content type 415; nothing changed by any refusal; the
// change survives a restart of `repute serve` on the same folder (SIGTERM, then a new process).
// Also the two read routes the console uses: `GET /api/stats` and `GET /api/resources/{kind}/{value}`.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { withServer, call, assertProblem, resourcePath, tempDir, spawnServe } from "./_http-support.mjs";

const TOKENS = { operator: "opr-config-0123456789abc", worker: "wkr-config-0123456789abc", viewer: "vwr-config-0123456789abc" };
const tokens = Object.entries(TOKENS).map(([role, token]) => ({ token, role }));

const onDisk = async (dir) => JSON.parse(await readFile(path.join(dir, "snapshot.json"), "utf8"));

/** What a refused call must leave as it was: the snapshot, the config, the audit log. */
async function state(s) {
  const op = { token: TOKENS.operator };
  const [snap, config, events] = await Promise.all([
    call(s.url, "GET", "/api/snapshot", op),
    call(s.url, "GET", "/api/config", op),
    call(s.url, "GET", "/api/events?limit=1000", op),
  ]);
  return { snapshot: snap.text, config: config.json, events: events.json.events.length, disk: await onDisk(s.dir) };
}

test("PUT /api/config: 200 with the whole config, on disk before the answer, one revision step, CONFIG_CHANGED", async () => {
  await withServer({ tokens }, async (s) => {
    const op = { token: TOKENS.operator };
    const before = (await call(s.url, "GET", "/api/config", op)).json;
    const revision = (await onDisk(s.dir)).revision;
    const r = await call(s.url, "PUT", "/api/config", { ...op, body: { leaseTtlMs: 60000, penalties: { SLOW: 1 } } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get("content-type"), "application/json");
    const want = { ...before, leaseTtlMs: 60000, penalties: { ...before.penalties, SLOW: 1 } };
    assert.deepEqual(r.json, want, "the whole config in force");
    // No checkpoint timer runs (checkpointMs 0): the file was written for this answer.
    const disk = await onDisk(s.dir);
    assert.deepEqual(disk.config, want);
    assert.equal(disk.revision, revision + 1, "one revision step");
    assert.deepEqual((await call(s.url, "GET", "/api/config", { token: TOKENS.viewer })).json, want);
    const events = (await call(s.url, "GET", "/api/events", op)).json.events;
    assert.deepEqual(events.map((e) => e.type), ["CONFIG_CHANGED"]);
    // The same again: 200, nothing new.
    const again = await call(s.url, "PUT", "/api/config", { ...op, body: { leaseTtlMs: 60000 } });
    assert.deepEqual(again.json, want);
    assert.equal((await onDisk(s.dir)).revision, revision + 1);
    assert.equal((await call(s.url, "GET", "/api/events", op)).json.events.length, 1);
  });
});

test("PUT /api/config refusals name the problem and change nothing", async () => {
  await withServer({ tokens }, async (s) => {
    const op = { token: TOKENS.operator };
    await call(s.url, "POST", "/api/resources", { ...op, body: { kind: "PROXY", value: "p1" } });
    await call(s.url, "POST", "/api/resources", { ...op, body: { kind: "PROXY", value: "p2" } });
    const before = await state(s);
    const put = (body, extra = {}) => call(s.url, "PUT", "/api/config", { token: TOKENS.operator, body, ...extra });
    const cases = [
      [await put({ leaseTtlMs: 60000, coolAfter: 0 }), 400, "invalid-config", /^coolAfter\b.*1/],
      [await put({ penalties: { SLOW: -1 } }), 400, "invalid-config", /^penalties\.SLOW\b/],
      [await put({ leaseTTL: 5 }), 400, "invalid-config", /leaseTTL/],
      [await put({ coolAfter: "2" }), 400, "invalid-config", /coolAfter/],
      [await put({ maxResources: 1, leaseTtlMs: 60000 }), 409, "capacity-exceeded", /maxResources = 1 is below the 2 resources/],
      [await put([1, 2]), 400, "bad-request", /JSON object/],
      [await put("{"), 400, "bad-request", /not valid UTF-8 JSON/],
      [await put({ leaseTtlMs: 1 }, { headers: { "content-type": "text/plain" } }), 415, "unsupported-media-type", /JSON/],
      // Too many per-context gaps is refused from its shape, before the body's keys are
      // scanned for duplicates (which costs in proportion to a body of up to 8 MiB): this one
      // has a duplicate too, and is refused for its size.
      [await put(`{"minGapMsByContext":{${Array.from({ length: 4097 }, (_, i) => `"site-${i}.example":1000`).join(",")},"site-0.example":5}}`), 400, "invalid-config", /^minGapMsByContext\b.*4096/],
      // Counted on the bytes, before they are decoded or parsed: this body is not even JSON past
      // its 4,097th gap (cut short), and is refused for its count, not its syntax. A gap key
      // spelled with escapes is the same key.
      [await put(`{"minGapMsByContext":{${Array.from({ length: 4097 }, (_, i) => `"site-${i}.example":1000`).join(",")},"cut`), 400, "invalid-config", /^minGapMsByContext\b.*4096.*got 4097/],
      [await put(`{"\\u006dinGapMsByContext":{${Array.from({ length: 4100 }, (_, i) => `"s\\"${i}":1`).join(",")}}}`), 400, "invalid-config", /got 4100/],
      // Over the body limit (sized for 4,096 gaps with every key character escaped): a 413
      // naming it, from the declared length, before a byte is read.
      [await put("x".repeat(8 * 2 ** 20 + 1)), 413, "body-too-large", /8388608 bytes/],
      [await call(s.url, "PUT", "/api/config?x=1", { ...op, body: {} }), 400, "bad-request", /query parameter/],
      [await call(s.url, "PUT", "/api/config", { token: TOKENS.worker, body: { leaseTtlMs: 60000 } }), 403, "forbidden", /worker/],
      [await call(s.url, "PUT", "/api/config", { token: TOKENS.viewer, body: { leaseTtlMs: 60000 } }), 403, "forbidden", /viewer/],
      [await call(s.url, "PUT", "/api/config", { body: { leaseTtlMs: 60000 } }), 401, "unauthorized", /token/],
    ];
    for (const [r, status, name, detail] of cases) {
      assertProblem(r, status, name);
      assert.match(r.json.detail, detail, r.text);
    }
    assert.deepEqual(await state(s), before);
  });
});

test("GET /api/stats and GET /api/resources/{kind}/{value} (viewer): the console's tiles and detail", async () => {
  await withServer({ tokens }, async (s) => {
    const op = { token: TOKENS.operator };
    const viewer = { token: TOKENS.viewer };
    const value = "http://user:pw@proxy-1.example:8080";
    await call(s.url, "POST", "/api/resources", { ...op, body: { kind: "PROXY", value } });
    await call(s.url, "POST", "/api/outcomes", { ...op, body: { kind: "PROXY", value, context: "c", outcome: { ok: true, latencyMs: 40 } } });
    await call(s.url, "POST", resourcePath("PROXY", value, "/block?seconds=60"), op);
    const stats = await call(s.url, "GET", "/api/stats", viewer);
    assert.equal(stats.status, 200, stats.text);
    assert.deepEqual(
      [stats.json.registered, stats.json.cells, stats.json.blocked, stats.json.leased, stats.json.cellsByState, stats.json.eventsDropped],
      [1, 1, 1, 0, { HEALTHY: 1, COOLING: 0, RECOVERING: 0 }, 0],
    );
    const d = await call(s.url, "GET", resourcePath("PROXY", value), viewer);
    assert.equal(d.status, 200, d.text);
    assert.deepEqual(d.json.blocked, { until: s.clock.now + 60_000 });
    assert.deepEqual(d.json.cells.map((c) => [c.context, c.state, c.window]), [["c", "BLOCKLISTED", [["OK", 40]]]]);
    assertProblem(await call(s.url, "GET", resourcePath("PROXY", "nope"), viewer), 404, "unknown-resource");
    assertProblem(await call(s.url, "GET", resourcePath("NOPE", "x"), viewer), 400, "bad-request");
    assertProblem(await call(s.url, "GET", "/api/stats"), 401, "unauthorized");
    assertProblem(await call(s.url, "GET", resourcePath("PROXY", value)), 401, "unauthorized");
  });
});

const dirs = [];
const children = new Set();
after(async () => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

test("a config changed over HTTP survives a restart of repute serve on the same folder", async () => {
  const dir = await tempDir("config-restart");
  dirs.push(dir);
  const start = async () => {
    const p = spawnServe(["--data", dir, "--port", "0"]);
    children.add(p.child);
    p.exited.then(() => children.delete(p.child));
    return { ...p, url: await p.ready };
  };
  const first = await start();
  const r = await call(first.url, "PUT", "/api/config", { body: { windowSize: 20, halfOpenCauses: ["BLOCKED"] } });
  assert.equal(r.status, 200, r.text);
  first.child.kill("SIGKILL"); // acknowledged means on disk: no clean shutdown needed
  await first.exited;
  const second = await start();
  const config = (await call(second.url, "GET", "/api/config")).json;
  assert.deepEqual([config.windowSize, config.halfOpenCauses], [20, ["BLOCKED"]]);
  second.child.kill("SIGTERM");
  assert.equal((await second.exited).code, 0);
});
