// `GET /api/events` filtered by the server (lib/http/event-query.js), on the Node server and
// (tests/edge/event-query.test.mjs) the edge worker: `type` (one or several, comma-separated),
// `context`, `resource` (an id) and `before`, each alone and together, every match and nothing
// else, keyset pagination over the matches (`next`), and a 400 naming a bad parameter.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, call, assertProblem } from "./_http-support.mjs";

let s;
let ids;
let all;
const get = async (q) => {
  const r = await call(s.url, "GET", `/api/events${q}`);
  assert.equal(r.status, 200, r.text);
  return r.json;
};

before(async () => {
  s = await startServer();
  ids = [];
  for (const value of ["r1.example:1", "r2.example:2"]) ids.push((await call(s.url, "POST", "/api/resources", { body: { kind: "PROXY", value } })).json.id);
  for (let i = 0; i < 3; i++) await call(s.url, "POST", "/api/leases", { body: { context: "shop" } }); // 2 leased, 1 rejected
  for (let i = 0; i < 2; i++) await call(s.url, "POST", "/api/outcomes", { body: { kind: "PROXY", value: "r1.example:1", context: "shop", outcome: { ok: false, failure: "BLOCKED" } } });
  await call(s.url, "POST", "/api/outcomes", { body: { kind: "PROXY", value: "r2.example:2", context: "news", outcome: { ok: false, failure: "TIMEOUT" } } });
  assert.equal((await call(s.url, "POST", `/api/resources/${ids[1]}/block?seconds=60`)).status, 204);
  all = (await get("?limit=1000")).events;
});
after(async () => {
  await s?.close();
});

const seqs = (events) => events.map((e) => e.seq);

test("GET /api/events?type=: only those types, one or several", async () => {
  const cooled = await get("?type=RESOURCE_COOLED");
  assert.deepEqual(seqs(cooled.events), seqs(all.filter((e) => e.type === "RESOURCE_COOLED")));
  assert.equal(cooled.events.length, 1);
  assert.equal(cooled.next, null);
  const two = await get("?type=RESOURCE_COOLED,RESOURCE_BLOCKLISTED,ACQUISITION_REJECTED");
  assert.deepEqual(two.events.map((e) => e.type), ["ACQUISITION_REJECTED", "RESOURCE_COOLED", "RESOURCE_BLOCKLISTED"]);
});

test("GET /api/events?context= and ?resource=: exact matches, also combined with type", async () => {
  assert.deepEqual(seqs((await get("?context=shop")).events), seqs(all.filter((e) => e.context === "shop")));
  assert.ok(all.filter((e) => e.context === "shop").length >= 3);
  assert.deepEqual(seqs((await get(`?resource=${ids[0]}`)).events), seqs(all.filter((e) => e.id === ids[0])));
  const both = await get(`?resource=${ids[1]}&type=RESOURCE_BLOCKLISTED`);
  assert.deepEqual(both.events.map((e) => [e.type, e.id]), [["RESOURCE_BLOCKLISTED", ids[1]]]);
  assert.deepEqual((await get("?context=nowhere")).events, []);
});

test("GET /api/events filtered: keyset pagination over the matches, and before= bounds them", async () => {
  const types = "?type=RESOURCE_REGISTERED,RESOURCE_COOLED,RESOURCE_BLOCKLISTED";
  const want = all.filter((e) => ["RESOURCE_REGISTERED", "RESOURCE_COOLED", "RESOURCE_BLOCKLISTED"].includes(e.type));
  assert.equal(want.length, 4);
  const got = [];
  let after = 0;
  for (;;) {
    const page = await get(`${types}&limit=1&after=${after}`);
    got.push(...page.events);
    if (page.next === null) break;
    assert.equal(page.next, page.events.at(-1).seq);
    after = page.next;
  }
  assert.deepEqual(seqs(got), seqs(want));
  const cut = want[2].seq;
  assert.deepEqual(seqs((await get(`${types}&before=${cut}`)).events), seqs(want.slice(0, 2)));
  assert.equal((await get(`${types}&before=${cut}`)).next, null);
});

test("GET /api/events: a bad filter is a 400 naming it, nothing else read", async () => {
  const r = await call(s.url, "GET", "/api/events?type=LEASED");
  assertProblem(r, 400, "bad-request");
  assert.match(r.json.detail, /^type: "LEASED" is not an event type/);
  assertProblem(await call(s.url, "GET", "/api/events?type=RESOURCE_COOLED&type=LEASE_RELEASED"), 400, "bad-request");
  assertProblem(await call(s.url, "GET", "/api/events?context="), 400, "bad-request");
  assert.match((await call(s.url, "GET", "/api/events?before=x")).json.detail, /^before/);
});
