// Who did it and why (lib/host/operator-note.js), on the Node server and (tests/edge/
// operator-events.test.mjs) the edge worker: every event of an operator action carries its
// `actor` (the token's name from the tokens file, or `${role}-${n}` for a token without one, so
// old files stay valid); a block carries the `reason` given in its body; CONFIG_CHANGED carries
// the changed fields (old → new, nested ones as dotted paths); hot-path events carry neither;
// a bad reason is a 400 and changes nothing; on Node the audit log on disk keeps them.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { startServer, call, assertProblem, onEdge } from "./_http-support.mjs";
import { parseTokens } from "../../pkg-scripts/lib/http/auth.js";

const TOKENS = [
  { token: "opr-evt-0000-unnamed-1111", role: "operator" },
  { token: "opr-evt-2222-alice-333333", role: "operator", name: "alice" },
  { token: "wkr-evt-4444-bot-55555555", role: "worker", name: "deploy-bot" },
];
const [UNNAMED, ALICE, BOT] = TOKENS.map((t) => t.token);

let s;
const as = (token, method, p, options = {}) => call(s.url, method, p, { ...options, token });
const events = async () => (await as(ALICE, "GET", "/api/events?limit=1000")).json.events;

before(async () => {
  s = await startServer({ tokens: TOKENS });
});
after(async () => {
  await s?.close();
});

test("tokens files: a name is optional (old files stay valid), checked, and defaults to role-n", () => {
  const parsed = parseTokens({ tokens: [{ token: "a".repeat(16), role: "operator" }, { token: "b".repeat(16), role: "viewer" }, { token: "c".repeat(16), role: "operator", name: "bob smith" }, { token: "d".repeat(16), role: "operator" }] });
  assert.deepEqual(parsed.map((t) => t.name), ["operator-1", "viewer-1", "bob smith", "operator-3"]);
  assert.throws(() => parseTokens({ tokens: [{ token: "a".repeat(16), role: "operator", name: "" }] }), /tokens\[0\]\.name/);
  assert.throws(() => parseTokens({ tokens: [{ token: "a".repeat(16), role: "operator", name: "a\nb" }] }), /tokens\[0\]\.name/);
  assert.throws(() => parseTokens({ tokens: [{ token: "a".repeat(16), role: "operator", name: 7 }] }), /tokens\[0\]\.name/);
});

test("operator events carry their actor and reason; CONFIG_CHANGED its changes; the hot path carries none", async () => {
  const reg = await as(BOT, "POST", "/api/resources", { body: { kind: "PROXY", value: "p1.example:8080" } });
  assert.equal(reg.status, 201);
  const id = reg.json.id;
  assert.equal((await as(BOT, "POST", "/api/leases", { body: { context: "shop" } })).status, 201);
  const blocked = await as(ALICE, "POST", `/api/resources/${id}/block?seconds=600`, { body: { reason: "banned on shop: ticket #42" } });
  assert.equal(blocked.status, 204, blocked.text);
  assert.equal((await as(UNNAMED, "DELETE", `/api/resources/${id}/block`)).status, 200);
  assert.equal((await as(UNNAMED, "POST", `/api/resources/${id}/block?permanent=true`)).status, 204); // no body: no reason
  const config = await as(ALICE, "PUT", "/api/config", { body: { coolAfter: 3, penalties: { SLOW: 7 } } });
  assert.equal(config.status, 200, config.text);

  const list = await events();
  const pick = (e) => ({ type: e.type, actor: e.actor, reason: e.reason, changes: e.changes });
  const strip = (o) => JSON.parse(JSON.stringify(o));
  assert.deepEqual(list.map((e) => strip(pick(e))), [
    { type: "RESOURCE_REGISTERED", actor: "deploy-bot" },
    { type: "RESOURCE_LEASED" },
    { type: "RESOURCE_BLOCKLISTED", actor: "alice", reason: "banned on shop: ticket #42" },
    { type: "RESOURCE_UNBLOCKED", actor: "operator-1" },
    { type: "RESOURCE_BLOCKLISTED", actor: "operator-1" },
    { type: "CONFIG_CHANGED", actor: "alice", changes: { coolAfter: { from: 2, to: 3 }, "penalties.SLOW": { from: 2, to: 7 } } },
  ].map(strip));

  if (!onEdge) {
    // The audit log on disk keeps them.
    const dir = path.join(s.dir, "audit");
    const lines = (await Promise.all((await readdir(dir)).sort().map((f) => readFile(path.join(dir, f), "utf8")))).join("").trim().split("\n").map((l) => JSON.parse(l));
    const onDisk = lines.find((e) => e.type === "RESOURCE_BLOCKLISTED" && e.reason);
    assert.equal(onDisk.actor, "alice");
    assert.equal(onDisk.reason, "banned on shop: ticket #42");
    assert.deepEqual(lines.find((e) => e.type === "CONFIG_CHANGED").changes.coolAfter, { from: 2, to: 3 });
  }
});

test("a bad reason is a 400 naming it, and the resource stays as it was", async () => {
  const id = (await as(ALICE, "POST", "/api/resources", { body: { kind: "PROXY", value: "p2.example:8080" } })).json.id;
  const before = (await events()).length;
  for (const body of [{ reason: "" }, { reason: "x".repeat(501) }, { reason: "a\u0007b" }, { reason: 5 }, { why: "no" }]) {
    const r = await as(ALICE, "POST", `/api/resources/${id}/block?seconds=60`, { body });
    assertProblem(r, 400, "bad-request", JSON.stringify(body));
  }
  assert.equal((await events()).length, before, "no event");
  const view = (await as(ALICE, "GET", `/api/resources/${id}`)).json;
  assert.equal(view.blocked, null);
});

test("GET /api/session names the token's role and name; ?masked=true masks values for an operator too", async () => {
  const viewer = { token: "vwr-evt-6666-carol-777777", role: "viewer", name: "carol" };
  const me = async (token) => (await call(s.url, "GET", "/api/session", { token })).json;
  assert.deepEqual(await me(ALICE), { role: "operator", name: "alice", tokens: true });
  assert.deepEqual(await me(UNNAMED), { role: "operator", name: "operator-1", tokens: true });
  assert.deepEqual(await me(BOT), { role: "worker", name: "deploy-bot", tokens: true });
  assertProblem(await call(s.url, "GET", "/api/session", { token: viewer.token }), 401, "unauthorized");
  const secret = "http://user:hunter2-pass@proxy-9.example:8080";
  const id = (await as(ALICE, "POST", "/api/resources", { body: { kind: "PROXY", value: secret } })).json.id;
  const plain = (await as(ALICE, "GET", `/api/resources/${id}`)).json.value;
  const masked = (await as(ALICE, "GET", `/api/resources/${id}?masked=true`)).json.value;
  assert.equal(plain, secret);
  assert.ok(!masked.includes("hunter2"), masked);
  const list = (await as(ALICE, "GET", "/api/resources?masked=true")).json.resources;
  assert.ok(!JSON.stringify(list).includes("hunter2"));
  assertProblem(await as(ALICE, "GET", "/api/resources?masked=yes"), 400, "bad-request");
});
