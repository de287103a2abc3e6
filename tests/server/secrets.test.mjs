// The secrets scan: a real `repute serve` (tokens for the three roles, the recovery prober on)
// gets a resource in every common credential-bearing format, and is driven through
// registrations, leases, reports that cool cells, unknown-resource and bad-input errors, blocks
// and unblocks by id and by value, deregistration, a bad snapshot upload, views for each role,
// the audit log, the live event stream, metrics, and a restart on a damaged snapshot. Every
// secret part carries the marker `SeKrit` at both ends, so a leak of any stretch of one shows;
// every output a role other than the value's owner sees — events, SSE, audit files, errors,
// logs (stdout and stderr), metrics, a viewer's views — is searched for the marker and for the
// bearer tokens. Outputs that must hold values (a worker's lease, an operator's view, the
// snapshot) are searched too, as a positive control: the scan can see a secret where one is.
// Also here: the files that hold events or keys are readable by their owner only, and values
// with control or format characters are refused over HTTP naming the field.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Pool } from "repute";
import { AuditLog } from "../../pkg-scripts/lib/node/audit-log.js";
import { openPool } from "../../pkg-scripts/lib/node/open-pool.js";
import { assertProblem, call, openStream, runServeToExit, spawnServe, startServer, tempDir } from "./_http-support.mjs";

const MARK = "SeKrit";
const secret = (n) => `${MARK}${n}q${MARK}`;

/** Every format the masking rule recognises, with a secret in each secret part. */
const FORMATS = [
  ["PROXY", `http://alice:${secret(1)}@127.0.0.1:9`],
  ["PROXY", `bob:${secret(2)}@127.0.0.1:9`],
  ["PROXY", `proxy-c.example:8080:carol:${secret(3)}`],
  ["PROXY", `dave:${secret(4)}:proxy-d.example:8080`],
  ["PROXY", `proxy-e.example:8080@erin:${secret(5)}`],
  ["PROXY", `https://gw.example:8443/?user=frank&password=${secret(6)}&token=${secret(7)}`],
  ["PROXY", `socks5://${secret(8)}@127.0.0.1:9`],
  ["PROXY", `http://${secret(9)}:@proxy-z.example:8001`],
  ["PROXY", `http://grace:${secret(10)}@gw.example:8080/${secret(11)}?key=${secret(12)}#${secret(13)}`],
  ["PROXY", `1.2.3.4:8080:heidi:${secret(14)}:with:colons`],
  ["ACCOUNT", `ivan:${secret(15)}`],
  ["ACCOUNT", `judy@example.com:${secret(16)}`],
  ["ACCOUNT", `mallory|${secret(17)}`],
  // Short, with a separator the rule did not know (issue 26: shown in clear everywhere).
  ["ACCOUNT", `nina/${MARK}21q`],
  ["ACCOUNT", `oscar=${MARK}22q`],
  ["ACCOUNT", `peggy\\${MARK}23q`],
  ["SESSION", `sid=${secret(18)}; csrftoken=${secret(19)}`],
  ["SESSION", secret(20)],
];
/** The same forms with other secrets: never registered. */
const UNKNOWN = FORMATS.map(([kind, value]) => [kind, value.replaceAll(/SeKrit(\d+)q/g, (_, n) => `${MARK}${Number(n) + 100}q`)]);

const TOKENS = { worker: "worker-token-aaaaaaaaaaaa", operator: "operator-token-bbbbbbbbbb", viewer: "viewer-token-cccccccccccc" };

const kindPath = (kind, value, suffix = "") => `/api/resources/${kind}/${encodeURIComponent(value)}${suffix}`;

test("no secret part of any value format reaches events, SSE, audit files, errors, logs, metrics or a viewer's views", async (t) => {
  const dir = await tempDir("secrets");
  t.after(() => rm(dir, { recursive: true, force: true }));
  const data = path.join(dir, "data");
  const tokensFile = path.join(dir, "tokens.json");
  await writeFile(tokensFile, JSON.stringify({ tokens: Object.entries(TOKENS).map(([role, token]) => ({ token, role })) }));
  const args = ["--data", data, "--port", "0", "--tokens", tokensFile, "--probe-interval-ms", "20", "--probe-timeout-ms", "500"];
  const env = {
    REPUTE_CONFIG: JSON.stringify({ cooldownBaseMs: { TIMEOUT: 1 } }),
    REPUTE_PROBE_TARGETS: JSON.stringify({ shop: "http://127.0.0.1:9/health" }),
  };
  const server = spawnServe(args, { env });
  t.after(() => server.child.exitCode === null && server.child.kill("SIGKILL"));
  const url = await server.ready;

  const shown = []; // [what, text]: outputs that must hold no secret
  const owned = []; // outputs that hold values by design (the positive control)
  const as = (role) => ({ token: TOKENS[role] });
  const req = async (list, what, role, method, route, options = {}) => {
    const res = await call(url, method, route, { ...as(role), ...options });
    list.push([`${what}: ${method} ${route.slice(0, 60)} as ${role} → ${res.status}`, [...res.headers].join("\n") + res.text]);
    return res;
  };

  const stream = await openStream(url, { headers: { authorization: `Bearer ${TOKENS.viewer}` } });
  t.after(() => stream.close());
  assert.equal(stream.res.status, 200);

  // Register every format; a worker gets its own value back, and everyone the id.
  const ids = [];
  for (const [kind, value] of FORMATS) {
    const res = await req(owned, "register", "worker", "POST", "/api/resources", { body: { kind, value } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.value, value);
    assert.match(res.json.id, /^[A-Za-z0-9_-]{22}$/);
    ids.push(res.json.id);
  }

  // Leases (a worker needs the value), reports, failures that cool cells for the prober.
  const leases = [];
  for (;;) {
    const res = await req(owned, "acquire", "worker", "POST", "/api/leases", { body: { context: "search" } });
    if (res.status !== 201) {
      assertProblem(res, 409, "nothing-eligible");
      shown.push(["acquire refused", res.text]);
      break;
    }
    leases.push(res.json);
  }
  assert.equal(leases.length, FORMATS.length);
  assert.ok(owned.some(([, text]) => text.includes(MARK)), "positive control: a worker's leases hold the values");
  for (const lease of leases) {
    await req(owned, "renew", "worker", "POST", `/api/leases/${lease.leaseId}/renewal`);
    await req(shown, "release", "worker", "DELETE", `/api/leases/${lease.leaseId}`);
  }
  for (const [kind, value] of FORMATS) {
    const report = (outcome, context = "shop") => req(shown, "report", "worker", "POST", "/api/outcomes", { body: { kind, value, context, outcome } });
    assert.equal((await report({ ok: true, latencyMs: 12 }, "search")).status, 204);
    assert.equal((await report({ ok: false, failure: "TIMEOUT" })).status, 204);
    assert.equal((await report({ ok: false, failure: "TIMEOUT", latencyMs: 900 })).status, 204);
  }

  // Errors naming a value: unknown resources by every route, bad characters, bad bodies.
  for (const [kind, value] of UNKNOWN) {
    const body = { kind, value, context: "shop", outcome: { ok: true } };
    assertProblem(await req(shown, "unknown", "worker", "POST", "/api/outcomes", { body }), 404, "unknown-resource");
    assertProblem(await req(shown, "unknown", "operator", "POST", kindPath(kind, value, "/block?seconds=5")), 404, "unknown-resource");
    assertProblem(await req(shown, "unknown", "operator", "DELETE", kindPath(kind, value, "/block")), 404, "unknown-resource");
    assertProblem(await req(shown, "unknown", "operator", "DELETE", kindPath(kind, value)), 404, "unknown-resource");
    assertProblem(await req(shown, "bad value", "worker", "POST", "/api/resources", { body: { kind, value: `${value}\r\nX` } }), 400, "invalid-argument");
    assertProblem(await req(shown, "bad value", "worker", "POST", "/api/outcomes", { body: { ...body, value: `\u202e${value}` } }), 400, "invalid-argument");
    assertProblem(await req(shown, "bad JSON", "worker", "POST", "/api/resources", { body: `{"kind":"${kind}","value":"${value}` }), 400);
    assertProblem(await req(shown, "bad field", "worker", "POST", "/api/resources", { body: { kind, value, [value]: 1 } }), 400);
    assertProblem(await req(shown, "bad outcome", "worker", "POST", "/api/outcomes", { body: { ...body, outcome: { ok: true, [value]: 1 } } }), 400);
    assertProblem(await req(shown, "bad query", "viewer", "GET", `/api/resources?${encodeURIComponent(value)}=1`), 400);
  }
  assertProblem(await req(shown, "unknown id", "operator", "DELETE", `/api/resources/${"A".repeat(22)}/block`), 404, "unknown-resource");

  // Blocks and unblocks, by id and by value; one deregistration of each kind of path.
  for (const [i, [kind, value]] of FORMATS.entries()) {
    const blocked = i % 2 === 0
      ? await req(shown, "block", "operator", "POST", `/api/resources/${ids[i]}/block?seconds=60`)
      : await req(shown, "block", "operator", "POST", kindPath(kind, value, "/block?permanent=true"));
    assert.equal(blocked.status, 204, blocked.text);
    assert.equal((await req(shown, "unblock", "operator", "DELETE", `/api/resources/${ids[i]}/block`)).json?.unblocked, true);
  }
  assert.equal((await req(shown, "deregister", "operator", "DELETE", `/api/resources/${ids[1]}`)).status, 204);
  assert.equal((await req(shown, "deregister", "operator", "DELETE", kindPath(...FORMATS[4]))).status, 204);
  // A damaged snapshot upload, at a secret: the engine's message names the place only.
  const exported = (await req(owned, "export", "operator", "GET", "/api/snapshot")).text;
  const broken = JSON.parse(exported);
  broken.registered[0][FORMATS[0][1]] = FORMATS[1][1]; // an unknown key that is a value
  broken.cells[0].score = FORMATS[2][1];
  for (const body of [JSON.stringify(broken), exported.replace(`"value":"${FORMATS[3][1]}"`, `"value":${FORMATS[3][1]}"`)]) {
    assertProblem(await req(shown, "bad snapshot", "operator", "PUT", "/api/snapshot", { body }), 400);
  }

  // Views for each role, the audit log, metrics, config.
  const viewer = await req(shown, "views", "viewer", "GET", "/api/resources");
  assert.equal(viewer.json.resources.length, FORMATS.length - 2);
  for (const r of viewer.json.resources) {
    const [kind, value] = FORMATS[ids.indexOf(r.id)];
    assert.equal(r.value, Pool.maskValue(kind, value), "a viewer sees the engine's masking");
  }
  assertProblem(await req(shown, "views", "worker", "GET", "/api/resources"), 403, "forbidden");
  const operator = await req(owned, "views", "operator", "GET", "/api/resources?context=shop");
  assert.ok(operator.text.includes(MARK), "positive control: an operator's view holds the values");
  for (const role of ["viewer", "operator"]) {
    const events = await req(shown, "events", role, "GET", "/api/events?limit=1000");
    assert.ok(events.json.events.length > 50);
    const registered = events.json.events.filter((e) => e.type === "RESOURCE_REGISTERED");
    assert.deepEqual(registered.map((e) => e.id), ids, "events name resources by the ids the views show");
    assert.deepEqual(registered.map((e) => e.value), FORMATS.map(([k, v]) => Pool.maskValue(k, v)));
  }
  await req(shown, "metrics", "viewer", "GET", "/metrics");
  await req(shown, "config", "viewer", "GET", "/api/config");
  await req(shown, "unauthorized", "viewer", "PUT", "/api/snapshot", { body: exported });

  // The prober logs what it cannot probe (not an http: proxy URL): with the value masked.
  const probeLines = () => server.out.stderr.split("\n").filter((l) => l.startsWith("repute: probe of "));
  for (let i = 0; i < 500 && new Set(probeLines()).size < 4; i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(probeLines().some((l) => l.includes("proxy-c.example:8080:carol:***")), server.out.stderr.slice(0, 2000));

  await stream.waitFor((c) => c.events().length > 50, 5000, "events on the stream");
  stream.close();
  shown.push(["SSE", stream.frames.map((f) => JSON.stringify(f)).join("\n")]);
  server.child.kill("SIGTERM");
  const exit = await server.exited;
  assert.equal(exit.code, 0, exit.stderr);
  shown.push(["stdout", exit.stdout], ["stderr", exit.stderr]);

  // Files: the audit log and the key are the owner's; the snapshot holds values (control).
  const auditDir = path.join(data, "audit");
  for (const name of await readdir(auditDir)) {
    const file = path.join(auditDir, name);
    assert.equal((await stat(file)).mode & 0o777, 0o600, name);
    shown.push([`audit ${name}`, await readFile(file, "utf8")]);
  }
  assert.equal((await stat(path.join(data, "resource-id.key"))).mode & 0o777, 0o600);
  assert.equal((await stat(path.join(data, "snapshot.json"))).mode & 0o777, 0o600);
  const snapshot = await readFile(path.join(data, "snapshot.json"), "utf8");
  assert.ok(snapshot.includes(MARK), "positive control: the snapshot holds the values");

  // Restarts on damaged snapshots: a JSON error at a value, then an engine error at one.
  const session = FORMATS.at(-1)[1]; // the secret itself: V8 quotes the text after a fault
  assert.ok(snapshot.includes(`"value":"${session}"`));
  for (const damaged of [
    snapshot.replace(`"value":"${session}"`, `"value":${session}"`),
    snapshot.replace(`"value":"${session}"`, `"value":"${session}","${FORMATS[3][1]}":1`),
  ]) {
    await writeFile(path.join(data, "snapshot.json"), damaged);
    const r = await runServeToExit(args, { env });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /snapshot/);
    shown.push(["damaged snapshot: stdout", r.stdout], ["damaged snapshot: stderr", r.stderr]);
  }

  // The scan.
  assert.ok(shown.length > 200, `${shown.length} outputs scanned`);
  const leaks = [];
  for (const [what, text] of shown) {
    for (const needle of [MARK, ...Object.values(TOKENS)]) {
      const at = text.indexOf(needle);
      if (at >= 0) leaks.push(`${what}: …${text.slice(Math.max(0, at - 60), at + 40)}…`);
    }
  }
  assert.deepEqual(leaks, []);
});

test("audit files are the owner's alone: created 0600, older ones narrowed when the log opens", async (t) => {
  const dir = await tempDir("audit-mode");
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(path.join(dir, "audit"));
  const old = path.join(dir, "audit", `audit-${"1".padStart(16, "0")}.jsonl`);
  await writeFile(old, '{"seq":1,"type":"RESOURCE_REGISTERED","at":1}\n', { mode: 0o644 });
  await chmod(old, 0o644);
  const log = await AuditLog.open(dir);
  assert.equal((await stat(old)).mode & 0o777, 0o600, "an older file is narrowed");
  log.append([{ seq: 2, type: "T", at: 2 }]);
  await log.flush();
  log.append([{ seq: 3, type: "T", at: 3 }]);
  await log.close();
  const reopened = await AuditLog.open(dir, { maxFileBytes: 10 });
  reopened.append([{ seq: 4, type: "T", at: 4 }, { seq: 5, type: "T", at: 5 }]); // rotates
  await reopened.close();
  const names = await readdir(path.join(dir, "audit"));
  assert.ok(names.length >= 2, names.join());
  for (const name of names) assert.equal((await stat(path.join(dir, "audit", name))).mode & 0o777, 0o600, name);
});

test("audit lines written before ids (by an older version) are masked by today's rule when read", async (t) => {
  const dir = await tempDir("audit-old");
  t.after(() => rm(dir, { recursive: true, force: true }));
  const options = { dir, now: () => 1_700_000_000_000, seed: 1, checkpointMs: 0, handleSignals: false, onError: () => {} };
  let pool = await openPool(options);
  await pool.register("PROXY", "p1");
  const id = pool.resourceId("PROXY", "p1");
  await pool.close();
  // An older version's lines: a host:port:user:pass value in clear, and a SESSION.
  const file = path.join(dir, "audit", (await readdir(path.join(dir, "audit")))[0]);
  const old = [
    { seq: 2, type: "RESOURCE_REGISTERED", at: 1, kind: "PROXY", value: `h.example:1:carol:${secret(1)}` },
    { seq: 3, type: "RESOURCE_REGISTERED", at: 1, kind: "SESSION", value: secret(2) },
    { seq: 4, type: "RESOURCE_REGISTERED", at: 1, kind: "NOT_A_KIND", value: secret(3) },
  ];
  await writeFile(file, `${await readFile(file, "utf8")}${old.map((e) => JSON.stringify(e)).join("\n")}\n`);
  pool = await openPool(options);
  const { events } = await pool.readEvents({ after: 0 });
  await pool.close();
  assert.deepEqual(events.map((e) => [e.seq, e.value, e.id]), [
    [1, "p1", id],
    [2, "h.example:1:carol:***", undefined],
    [3, "***", undefined],
    [4, "***", undefined],
  ]);
});

test("values and contexts holding control or format characters are refused over HTTP, naming the field", async (t) => {
  const s = await startServer({});
  t.after(() => s.close());
  const cases = [
    ["POST", "/api/resources", { kind: "PROXY", value: "\u200b\u200b" }, "value"],
    ["POST", "/api/resources", { kind: "PROXY", value: "p1\r\nRESOURCE_UNBLOCKED" }, "value"],
    ["POST", "/api/resources", { kind: "ACCOUNT", value: "a\u0000b" }, "value"],
    ["POST", "/api/resources", { kind: "SESSION", value: "evil\u202etxt" }, "value"],
    ["POST", "/api/leases", { context: "shop\n" }, "context"],
    ["POST", "/api/leases", { context: "\u2066shop\u2069" }, "context"],
    ["POST", "/api/outcomes", { kind: "PROXY", value: "p1", context: "a\u00adb", outcome: { ok: true } }, "context"],
    ["POST", "/api/outcomes", { kind: "PROXY", value: "p\u0085", context: "shop", outcome: { ok: true } }, "value"],
  ];
  for (const [method, route, body, field] of cases) {
    const res = await call(s.url, method, route, { body });
    assertProblem(res, 400, "invalid-argument", JSON.stringify(body));
    assert.match(res.json.detail, new RegExp(`^${field} must not contain control or format characters \\(found U\\+[0-9A-F]{4,5}\\)$`));
  }
  assertProblem(await call(s.url, "GET", `/api/resources?context=${encodeURIComponent("a\u200bb")}`), 400, "invalid-argument");
  assertProblem(await call(s.url, "DELETE", `/api/resources/PROXY/${encodeURIComponent("p\u200b")}`), 400, "invalid-argument");
  assert.deepEqual((await call(s.url, "GET", "/api/resources")).json.resources, []);
  assert.deepEqual((await call(s.url, "GET", "/api/events")).json.events, []);
});
