// A large dashboard leaves in pieces as it is built (lib/http/dashboard.js, replies.js `Pieces`):
// its bytes are those of the dashboard built at once — whole, masked, filtered, and a page with
// its `next` — on the Node server and the edge worker (tests/edge/dashboard-pieces.test.mjs);
// a client that stops reading stops its building (the server holds at most a piece or two for
// it, never the whole answer) and is cut after the write timeout; a web `Response` of it builds
// each piece only when its reader asks, and stops when the reader cancels. A large string
// answer (`GET /api/snapshot`) is written in slices that never split a character.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { Pool } from "../../pkg-scripts/node.js";
import { createHandler } from "../../pkg-scripts/lib/http/handler.js";
import { showResources } from "../../pkg-scripts/lib/http/resource-views.js";
import { STEP } from "../../pkg-scripts/lib/http/dashboard.js";
import { slices } from "../../pkg-scripts/lib/node/http-stream.js";
import { startServer, call, edgeSkip, onEdge } from "./_http-support.mjs";

const TOKENS = { operator: "op-token-aaaaaaaaaaaaaaaa", viewer: "vw-token-cccccccccccccccc" };
/** More resources than one step builds, with multi-byte values, groups, cells and a lease. */
const COUNT = STEP * 5 + 7;
let s;

/** A snapshot of `n` resources (`value(i)`), with cells in two contexts. */
function seeded(n, value, config = {}) {
  const pool = new Pool({ seed: 3, config: { maxResources: Math.max(n, 1000), ...config } });
  for (let i = 0; i < n; i++) pool.register(i % 3 ? "PROXY" : "ACCOUNT", value(i), i % 4 ? undefined : { group: "g" });
  for (const c of ["shop", "news"]) for (let i = 0; i < n; i += 2) pool.report(i % 3 ? "PROXY" : "ACCOUNT", value(i), c, i % 5 ? { ok: true, latencyMs: 100 + i } : { ok: false, failure: "BLOCKED" });
  return pool.snapshot();
}

before(async () => {
  s = await startServer({ tokens: Object.entries(TOKENS).map(([role, token]) => ({ token, role })) });
  const snapshot = seeded(COUNT, (i) => `http://u${i}:пароль${i}🔑@p${i}.example:8080`);
  assert.equal((await call(s.url, "PUT", "/api/snapshot", { body: snapshot, token: TOKENS.operator })).status, 204);
  assert.equal((await call(s.url, "POST", "/api/leases", { body: { context: "shop" }, token: TOKENS.operator })).status, 201);
});
after(() => s?.close());

const get = (path, role = "operator") => call(s.url, "GET", path, { token: TOKENS[role] });

/** Every page of `limit` (each one step at most: built at once) joined, following `next`. */
async function joinedPages(query, role) {
  const all = [];
  for (let after = null; ; ) {
    const page = (await get(`/api/resources?limit=${STEP}${query}${after ? `&after=${after}` : ""}`, role)).json;
    all.push(...page.resources);
    if (page.next === null) return all;
    after = page.next;
  }
}

test("a dashboard in pieces is, byte for byte, the dashboard built at once", async () => {
  for (const [query, role] of [["", "operator"], ["", "viewer"], ["&group=g", "operator"], ["&context=shop&masked=true", "operator"]]) {
    const whole = await get(`/api/resources${query.replace("&", "?")}`, role);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get("content-type"), "application/json");
    const resources = await joinedPages(query, role);
    assert.ok(resources.length > STEP, `${query} ${role}: more than one step (${resources.length})`);
    assert.equal(whole.text, JSON.stringify({ resources }), `${query} ${role}`);
  }
  // A page of several steps, with its `next`, then the last page (`next` null).
  const page = await get(`/api/resources?limit=${STEP * 3 + 1}`);
  const firstSteps = await get(`/api/resources?limit=${STEP}`);
  assert.equal(page.json.next, page.json.resources.at(-1).id);
  assert.equal(page.text, JSON.stringify({ resources: page.json.resources, next: page.json.next }));
  assert.equal(page.text.slice(0, firstSteps.text.lastIndexOf("]")), firstSteps.text.slice(0, firstSteps.text.lastIndexOf("]")), "a page begins as the page of one step does");
  const rest = await get(`/api/resources?limit=1000&after=${page.json.next}`);
  assert.equal(rest.json.next, null);
  assert.equal(rest.json.resources.length, COUNT - (STEP * 3 + 1));
  assert.equal(rest.text, JSON.stringify({ resources: rest.json.resources, next: null }));
});

test("in process: the bytes are JSON.stringify of the host's views, masked or not", edgeSkip("no pool in this process"), async () => {
  for (const masked of [false, true]) {
    const res = await get(`/api/resources?masked=${masked}`);
    assert.equal(res.text, JSON.stringify({ resources: showResources(s.pool, s.pool.resources(), { masked }) }), `masked ${masked}`);
  }
  const snap = await fetch(`${s.url}/api/snapshot`, { headers: { authorization: `Bearer ${TOKENS.operator}` } });
  assert.ok(Buffer.from(await snap.arrayBuffer()).equals(Buffer.from(s.pool.snapshot())), "the snapshot, written in slices, byte for byte");
});

test("slices of a string never split a surrogate pair, and join to the string", () => {
  const text = `a${"🔑".repeat(40)}b${"é".repeat(7)}🔑`;
  for (const size of [1, 2, 3, 5, 8, 64]) {
    const parts = [...slices(text, size)];
    assert.equal(parts.join(""), text, `size ${size}`);
    for (const p of parts) assert.ok(p.isWellFormed(), `size ${size}: ${JSON.stringify(p)}`);
    assert.ok(parts.every((p) => p.length <= size || (size === 1 && p.length === 2)), `size ${size}`);
  }
});

test("a client that stops reading a 30 MB dashboard holds a piece or two of it, not the whole, and is cut after the write timeout", edgeSkip("what workerd buffers for a client is its own"), async () => {
  const big = await startServer({ config: { maxResources: 30_000 }, serveOptions: { streamWriteTimeoutMs: 3000 } });
  try {
    const pad = "x".repeat(980);
    const pool = new Pool({ config: { maxResources: 30_000 } });
    for (let i = 0; i < 30_000; i++) pool.register("PROXY", `proxy-${i}.example.net:8080/${pad}`);
    assert.equal((await call(big.url, "PUT", "/api/snapshot", { body: pool.snapshot() })).status, 204);
    const responses = [];
    big.server.server.on("request", (req, res) => responses.push(res));
    const socket = net.connect(big.port ?? new URL(big.url).port, "127.0.0.1");
    let received = 0;
    socket.on("data", (d) => {
      received += d.length;
      socket.pause(); // the first bytes, then nothing more is read
    });
    socket.on("error", () => {});
    const closed = new Promise((r) => socket.once("close", r));
    socket.write("GET /api/resources HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
    while (responses.length === 0 || received === 0) await new Promise((r) => setTimeout(r, 20));
    const res = responses[0];
    // Let the server go as far as it will: until what it has sent stops growing.
    let sent = -1;
    for (;;) {
      await new Promise((r) => setTimeout(r, 200));
      const now = res.socket?.bytesWritten ?? sent;
      if (now === sent) break;
      sent = now;
    }
    assert.ok(res.writableLength < 1024 * 1024, `the server holds ${res.writableLength} bytes of the answer for the client`);
    assert.ok(sent < 20e6, `the server sent ${sent} bytes of a ~30 MB answer to a client that does not read`);
    // The write timeout (3 s here) cuts the client that takes nothing: reading on, it gets
    // what the sockets held, then the connection's end, the answer unfinished.
    await new Promise((r) => setTimeout(r, 3500));
    socket.removeAllListeners("data");
    socket.on("data", (d) => (received += d.length));
    socket.resume();
    await closed;
    assert.ok(!res.writableFinished, "the answer was never finished");
    assert.ok(received < 20e6, `the client got ${received} bytes`);
    assert.ok(res.destroyed);
  } finally {
    await big.close();
  }
});

test("a web Response of a large dashboard builds a piece only when its reader asks, and stops when it cancels", edgeSkip("in process"), async () => {
  let built = 0;
  const host = new Proxy(s.pool, {
    get(target, key) {
      const v = Reflect.get(target, key, target);
      if (key === "resources") return (...a) => (built++, v.apply(target, a));
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  const handle = await createHandler(host);
  const res = await handle(new Request("http://127.0.0.1/api/resources"));
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  const first = await reader.read();
  assert.ok(!first.done && first.value.length > 0);
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(built <= 2, `${built} steps built after one read`);
  const chunks = [first.value];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  assert.equal(Buffer.concat(chunks).toString("utf8"), (await get("/api/resources")).text);
  const steps = Math.ceil((COUNT + 1) / STEP);
  assert.equal(built, steps, "one step a piece, each once");
  built = 0;
  const again = (await handle(new Request("http://127.0.0.1/api/resources"))).body.getReader();
  await again.read();
  await again.cancel();
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(built <= 2, `${built} steps built for a reader that cancelled after one piece`);
});

if (onEdge) test("(the edge runs the byte-for-byte cases above)", () => {});
