// `repute serve` options beyond the basics, as a child process on 127.0.0.1: the pool's config
// (`--config FILE` / `REPUTE_CONFIG`), checked by the engine at start, overriding a restored
// snapshot's config, shown by `GET /api/config`; the example repute.config.json accepted as the
// README says; and the recovery prober (`--probe-targets` /
// `REPUTE_PROBE_TARGETS`) probing a cooled proxy through a real forward proxy until it is
// healthy again.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { writeFile, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { call, assertProblem, spawnServe, runServeToExit, tempDir, CLI, ROOT } from "./_http-support.mjs";
import { execFileSync } from "node:child_process";

const DEFAULT_CONFIG = JSON.parse(
  execFileSync(process.execPath, ["--input-type=module", "-e", 'import { Pool } from "repute"; process.stdout.write(JSON.stringify(new Pool({ seed: 1 }).config()))'], {
    encoding: "utf8",
  }),
);

async function serving(t, args, env) {
  const p = spawnServe(args, { env });
  t.after(async () => {
    if (p.child.exitCode === null) {
      p.child.kill("SIGTERM");
      await p.exited;
    }
  });
  return { url: await p.ready, stop: async () => (p.child.kill("SIGTERM"), p.exited) };
}

async function folder(t) {
  const dir = await tempDir("cli");
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test("--help lists --config, the prober's flags and their environment variables, ", () => {
  const out = execFileSync(process.execPath, [CLI, "--help"], { encoding: "utf8" });
  for (const s of ["--config FILE", "REPUTE_CONFIG", "--probe-targets FILE", "REPUTE_PROBE_TARGETS", "--probe-interval-ms", "REPUTE_PROBE_INTERVAL_MS", "--probe-timeout-ms", "REPUTE_PROBE_TIMEOUT_MS"]) {
    assert.ok(out.includes(s), `--help mentions ${s}`);
  }
});

test("--config FILE: a partial config fills the rest from defaults; GET /api/config shows it; leases use it", async (t) => {
  const dir = await folder(t);
  const file = path.join(dir, "config.json");
  await writeFile(file, JSON.stringify({ leaseTtlMs: 60000, penalties: { SLOW: 1 } }));
  const { url } = await serving(t, ["--data", path.join(dir, "data"), "--port", "0", "--config", file]);
  const config = (await call(url, "GET", "/api/config")).json;
  assert.deepEqual(config, { ...DEFAULT_CONFIG, leaseTtlMs: 60000, penalties: { ...DEFAULT_CONFIG.penalties, SLOW: 1 } });
  await call(url, "POST", "/api/resources", { body: { kind: "PROXY", value: "p1" } });
  const lease = (await call(url, "POST", "/api/leases", { body: { context: "c" } })).json;
  assert.equal(lease.expiresAt - lease.leasedAt, 60000);
});

test("the example repute.config.json: `repute serve --config repute.config.json` from the top of the repository serves it over the defaults", async (t) => {
  const dir = await folder(t);
  const example = JSON.parse(await readFile(path.join(ROOT, "repute.config.json"), "utf8"));
  const { url } = await serving(t, ["--data", path.join(dir, "data"), "--port", "0", "--config", "repute.config.json"]);
  const config = (await call(url, "GET", "/api/config")).json;
  // Nested tables change only the keys given; everything else (a list, a map) is replaced whole.
  const tables = ["penalties", "cooldownBaseMs"];
  const expected = { ...DEFAULT_CONFIG, ...example };
  for (const k of tables) if (example[k]) expected[k] = { ...DEFAULT_CONFIG[k], ...example[k] };
  assert.deepEqual(config, expected);
  assert.ok(Object.keys(example).length >= 5, "the example sets several fields");
  assert.notDeepEqual(config, DEFAULT_CONFIG);
});

test("REPUTE_CONFIG holds the same JSON inline; --config wins over it", async (t) => {
  const dir = await folder(t);
  const inline = await serving(t, ["--data", path.join(dir, "a"), "--port", "0"], { REPUTE_CONFIG: '{"coolAfter": 3}' });
  assert.equal((await call(inline.url, "GET", "/api/config")).json.coolAfter, 3);
  const file = path.join(dir, "config.json");
  await writeFile(file, '{"coolAfter": 5}');
  const both = await serving(t, ["--data", path.join(dir, "b"), "--port", "0", "--config", file], { REPUTE_CONFIG: '{"coolAfter": 3}' });
  assert.equal((await call(both.url, "GET", "/api/config")).json.coolAfter, 5);
});

test("a bad config stops start-up with the engine's message naming the field, before anything listens", async (t) => {
  const dir = await folder(t);
  const file = path.join(dir, "config.json");
  for (const [text, message] of [
    ['{"coolAfter": 0}', /bad config in --config .*config\.json: .*coolAfter/],
    ['{"penalties": {"BLOCKED": -1}}', /bad config in --config .*: .*penalties\.BLOCKED/],
    ['{"nope": 1}', /bad config in --config .*: .*nope/],
    ["{coolAfter: 2}", /--config .*config\.json is not valid JSON/],
  ]) {
    await writeFile(file, text);
    const r = await runServeToExit(["--data", path.join(dir, "data"), "--port", "0", "--config", file]);
    assert.equal(r.code, 2, `${text}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stdout, /listening/, "nothing listened");
  }
  const env = await runServeToExit(["--data", path.join(dir, "data"), "--port", "0"], { env: { REPUTE_CONFIG: '{"windowSize": 0}' } });
  assert.equal(env.code, 2);
  assert.match(env.stderr, /bad config in REPUTE_CONFIG: .*windowSize/);
  // Nested 5,000 deep: "Maximum call stack size exceeded" at start before (issue 26).
  const deep = await runServeToExit(["--data", path.join(dir, "data"), "--port", "0"], {
    env: { REPUTE_CONFIG: `{"cooldownBaseMs":${"[".repeat(5000)}${"]".repeat(5000)}}` },
  });
  assert.equal(deep.code, 2, deep.stderr);
  assert.match(deep.stderr, /bad config in REPUTE_CONFIG: cooldownBaseMs(\[0\]){32}: nested deeper than 32 levels/);
  const missing = await runServeToExit(["--port", "0", "--config", path.join(dir, "absent.json")]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /cannot read --config .*absent\.json: ENOENT/);
});

test("on restart, --config overrides those fields of the snapshot's config; the rest is kept", async (t) => {
  const dir = await folder(t);
  const data = path.join(dir, "data");
  const file = path.join(dir, "config.json");
  await writeFile(file, '{"coolAfter": 4, "leaseTtlMs": 45000}');
  const first = await serving(t, ["--data", data, "--port", "0", "--config", file]);
  await call(first.url, "POST", "/api/resources", { body: { kind: "PROXY", value: "p1" } });
  await first.stop();

  await writeFile(file, '{"leaseTtlMs": 5000}');
  const second = await serving(t, ["--data", data, "--port", "0", "--config", file]);
  const config = (await call(second.url, "GET", "/api/config")).json;
  assert.equal(config.leaseTtlMs, 5000, "overridden");
  assert.equal(config.coolAfter, 4, "kept from the snapshot");
  assert.equal((await call(second.url, "GET", "/api/resources")).json.resources.length, 1, "the pool itself was restored");
  await second.stop();

  const third = await serving(t, ["--data", data, "--port", "0"]);
  assert.equal((await call(third.url, "GET", "/api/config")).json.leaseTtlMs, 5000, "without --config the snapshot's config stands");
});

test("GET /api/config is a viewer's read: a worker token is refused, no token is 401; PUT is an operator's", async (t) => {
  const dir = await folder(t);
  const tokens = { tokens: [{ token: "viewer-token-0123456789", role: "viewer" }, { token: "worker-token-0123456789", role: "worker" }] };
  const { url } = await serving(t, ["--data", dir, "--port", "0"], { REPUTE_TOKENS: JSON.stringify(tokens) });
  assert.equal((await call(url, "GET", "/api/config", { token: "viewer-token-0123456789" })).status, 200);
  assertProblem(await call(url, "GET", "/api/config", { token: "worker-token-0123456789" }), 403, "forbidden");
  assertProblem(await call(url, "GET", "/api/config"), 401, "unauthorized");
  assertProblem(await call(url, "PUT", "/api/config", { token: "viewer-token-0123456789", body: {} }), 403, "forbidden");
});

/** Listens on 127.0.0.1, port 0; resolves to the port. */
const listen = (server) => new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));

test("--probe-targets: the prober tests a cooled proxy through it, and the cell becomes healthy again", async (t) => {
  const hits = [];
  const target = http.createServer((req, res) => {
    hits.push(req.url);
    res.end("ok");
  });
  // A forward proxy: absolute-URI requests, forwarded to the target.
  const proxy = http.createServer((req, res) => {
    const upstream = http.request(new URL(req.url), { method: req.method }, (up) => {
      res.writeHead(up.statusCode, up.headers);
      up.pipe(res);
    });
    upstream.on("error", () => (res.writeHead(502), res.end()));
    req.pipe(upstream);
  });
  const [targetPort, proxyPort] = [await listen(target), await listen(proxy)];
  t.after(() => (target.close(), proxy.close()));

  const dir = await folder(t);
  const value = `http://127.0.0.1:${proxyPort}`;
  const { url } = await serving(t, ["--data", dir, "--port", "0", "--probe-interval-ms", "20"], {
    REPUTE_CONFIG: JSON.stringify({ cooldownBaseMs: { CONNECTION_RESET: 50 } }),
    REPUTE_PROBE_TARGETS: JSON.stringify({ shop: `http://127.0.0.1:${targetPort}/health` }),
  });
  // With a prober, only BLOCKED cooldowns are half-open: a CONNECTION_RESET cell waits for it.
  assert.deepEqual((await call(url, "GET", "/api/config")).json.halfOpenCauses, ["BLOCKED"]);
  await call(url, "POST", "/api/resources", { body: { kind: "PROXY", value } });
  for (let i = 0; i < 2; i++) {
    await call(url, "POST", "/api/outcomes", { body: { kind: "PROXY", value, context: "shop", outcome: { ok: false, failure: "CONNECTION_RESET" } } });
  }
  const cellOf = async () => (await call(url, "GET", "/api/resources?context=shop")).json.resources[0].cells[0];
  assert.equal((await cellOf()).state, "COOLING");
  const states = new Set();
  for (let i = 0; i < 500 && (await cellOf()).state !== "HEALTHY"; i++) {
    states.add((await cellOf()).state);
    await new Promise((r) => setTimeout(r, 20));
  }
  const cell = await cellOf();
  assert.equal(cell.state, "HEALTHY", `the prober brought it back (seen: ${[...states]})`);
  assert.ok(hits.length >= 2 && hits.every((h) => h === "/health"), `probes reached the target through the proxy: ${hits}`);
  const events = (await call(url, "GET", "/api/events?limit=1000")).json.events.map((e) => e.type);
  assert.ok(events.includes("RESOURCE_RECOVERED"));
});

test("bad probe targets stop start-up with a message", async (t) => {
  const dir = await folder(t);
  const r = await runServeToExit(["--data", dir, "--port", "0"], { env: { REPUTE_PROBE_TARGETS: '{"shop": "ftp://x"}' } });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /bad probe targets: .*shop.*http: or https:/);
});

test("--max-streams N / REPUTE_MAX_STREAMS: one subscriber more than N is refused with 503 too-many-streams", async (t) => {
  const out = execFileSync(process.execPath, [CLI, "--help"], { encoding: "utf8" });
  assert.ok(out.includes("--max-streams N") && out.includes("REPUTE_MAX_STREAMS"), "--help lists the flag and its variable");
  const dir = await folder(t);
  for (const [args, env] of [[["--max-streams", "1"], {}], [[], { REPUTE_MAX_STREAMS: "1" }]]) {
    const { url } = await serving(t, ["--data", path.join(dir, String(args.length)), "--port", "0", ...args], env);
    const ac = new AbortController();
    t.after(() => ac.abort());
    const first = await fetch(`${url}/api/events/stream`, { signal: ac.signal });
    assert.equal(first.status, 200);
    const second = await fetch(`${url}/api/events/stream`);
    const res = { status: second.status, headers: second.headers, text: await second.text() };
    res.json = JSON.parse(res.text);
    assertProblem(res, 503, "too-many-streams", JSON.stringify(args.length ? args : env));
    ac.abort();
  }
});
