// The dashboard a page at a time (README "The pool server"): `GET /api/resources?limit=N` and
// `&after=ID` give the resources in canonical order (kind, then value bytes), N at a time, each
// page's `next` the id of its last resource while there may be more (null at the end); pages
// joined are the whole dashboard; filters apply within pages; a viewer's pages are masked like
// its whole dashboard; a bad `limit` or an `after` naming no resource is a 400. One page costs
// the server in proportion to its size, so viewers paging through a large pool leave the
// workers served in between (pkg-scripts/perf/bench-viewers.mjs); the whole dashboard is built a
// page at a time too, with turns of the event loop between pages, so a request that arrives
// meanwhile is answered before it is done. Runs against the edge worker too
// (tests/edge/resource-pages.test.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { Pool } from "../../pkg-scripts/node.js";
import { startServer, call, assertProblem } from "./_http-support.mjs";

const TOKENS = { operator: "op-token-aaaaaaaaaaaaaaaa", viewer: "vw-token-cccccccccccccccc" };
let s;

before(async () => {
  s = await startServer({ tokens: Object.entries(TOKENS).map(([role, token]) => ({ token, role })) });
  const op = (body) => call(s.url, "POST", "/api/resources", { body, token: TOKENS.operator });
  for (let i = 0; i < 7; i++) assert.equal((await op({ kind: "PROXY", value: `http://u${i}:secret${i}@p${i}.example:8080` })).status, 201);
  for (const value of ["acct-b:pw", "acct-a:pw"]) assert.equal((await op({ kind: "ACCOUNT", value, group: "accounts" })).status, 201);
});
after(() => s?.close());

const get = (path, role = "operator") => call(s.url, "GET", path, { token: TOKENS[role] });

/** Every page of `limit` (plus `query`) in turn, following `next`. */
async function pages(limit, query = "", role = "operator") {
  const all = [];
  let after = null;
  for (let n = 0; n < 100; n++) {
    const res = await get(`/api/resources?limit=${limit}${query}${after ? `&after=${after}` : ""}`, role);
    assert.equal(res.status, 200, res.text);
    assert.ok(res.json.resources.length <= limit);
    all.push(...res.json.resources);
    if (res.json.next === null) return all;
    assert.equal(res.json.next, res.json.resources.at(-1).id, "next names the page's last resource");
    after = res.json.next;
  }
  throw new Error("the pages never end");
}

test("pages of any size, joined, are the whole dashboard, in canonical order", async () => {
  const whole = (await get("/api/resources")).json;
  assert.equal(whole.next, undefined, "the whole dashboard has no `next`");
  assert.equal(whole.resources.length, 9);
  for (const limit of [1, 2, 4, 9, 10, 1000]) assert.deepEqual(await pages(limit), whole.resources, `limit ${limit}`);
  const first = (await get("/api/resources?limit=3")).json;
  assert.deepEqual(first.resources.map((r) => r.kind), ["PROXY", "PROXY", "PROXY"]);
  const accounts = (await get("/api/resources?group=accounts&limit=1")).json;
  assert.equal(accounts.resources[0].value, "acct-a:pw", "filters apply within a page (ACCOUNT a before b)");
  assert.deepEqual(await pages(1, "&group=accounts"), (await get("/api/resources?group=accounts")).json.resources);
});

test("a viewer's pages are masked like its whole dashboard", async () => {
  const whole = (await get("/api/resources", "viewer")).json.resources;
  assert.ok(!JSON.stringify(whole).includes("secret"));
  assert.deepEqual(await pages(2, "", "viewer"), whole);
});

test("a bad limit, or an after naming no resource, is a 400 naming it", async () => {
  for (const q of ["limit=0", "limit=1001", "limit=x", "limit=-1", "limit=1&limit=2"]) {
    const res = await get(`/api/resources?${q}`);
    assertProblem(res, 400, "bad-request", q);
    assert.match(res.json.detail, /limit/, q);
  }
  const res = await get("/api/resources?limit=2&after=AAAAAAAAAAAAAAAAAAAAAA");
  assertProblem(res, 400, "bad-request");
  assert.match(res.json.detail, /after/);
});

test("while a large whole dashboard is being built, or an unknown id looked for, a request that arrives meanwhile is answered first", async () => {
  // 4,000 resources with a cell in each of 3 contexts, imported as a snapshot.
  const big = new Pool({ seed: 1 });
  for (let i = 0; i < 4000; i++) big.register("PROXY", `proxy-${i}.example.net:8080`);
  for (const c of ["a", "b", "c"]) for (let i = 0; i < 4000; i++) big.report("PROXY", `proxy-${i}.example.net:8080`, c, { ok: true });
  const own = await startServer({ tokens: [{ token: TOKENS.operator, role: "operator" }] });
  try {
    const headers = { authorization: `Bearer ${TOKENS.operator}` };
    assert.equal((await call(own.url, "PUT", "/api/snapshot", { body: big.snapshot(), token: TOKENS.operator })).status, 204);
    const order = [];
    const get = (path, name) =>
      new Promise((resolve, reject) => {
        http.get(`${own.url}${path}`, { headers, agent: false }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (d) => (text += d));
          // In the order the answers are complete: a dashboard's head leaves with its first piece.
          res.on("end", () => {
            order.push(name);
            resolve({ status: res.statusCode, text });
          });
        }).on("error", reject);
      });
    // An id nobody made is looked for among every resource: a page at a time, too.
    order.length = 0;
    const [unknown, st] = await Promise.all([get("/api/resources/AAAAAAAAAAAAAAAAAAAAAA", "unknown id"), get("/api/stats", "stats")]);
    assert.equal(unknown.status, 404);
    assert.equal(st.status, 200);
    assert.deepEqual(order, ["stats", "unknown id"], "the stats waited for the scan for an unknown id");
    for (let attempt = 0; attempt < 3; attempt++) {
      order.length = 0;
      const dashboard = get("/api/resources", "dashboard");
      const stats = get("/api/stats", "stats");
      const [d, st] = await Promise.all([dashboard, stats]);
      assert.equal(d.status, 200);
      assert.equal(JSON.parse(d.text).resources.length, 4000);
      assert.equal(st.status, 200);
      assert.deepEqual(order, ["stats", "dashboard"], `attempt ${attempt + 1}: the stats waited for the whole dashboard`);
    }
  } finally {
    await own.close();
  }
});
