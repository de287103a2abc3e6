// Faults an operator of the edge worker would meet, in real workerd (Miniflare) with storage in
// a temporary folder: a resource row whose chunk boundary falls inside a character outside the
// BMP (stored byte for byte); a malformed REPUTE_CONFIG or REPUTE_TOKENS (every request answers
// a 500 problem naming the binding, never its text, instead of a crash); REPUTE_REGIONS (a region
// not listed is a 404 and no object is made for it).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { readdir, rm } from "node:fs/promises";
import { startEdge, tempDir } from "./_edge-support.mjs";
import { Pool } from "../../pkg-scripts/node.js";
import { CHUNK } from "../../pkg-scripts/lib/edge/sql-store.js";

const T0 = 1_700_000_000_000;
const dirs = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function folder() {
  const d = await tempDir("edge-faults");
  dirs.push(d);
  return d;
}

async function edge(dir, bindings = {}) {
  return startEdge({ persist: dir, bindings: { REPUTE_TEST_HOOKS: "1", REPUTE_TEST_NOW: String(T0), ...bindings } });
}

async function call(e, region, method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    init.headers["content-type"] = "application/json";
  }
  const res = await fetch(`${e.url}/regions/${region}${path}`, init);
  return { status: res.status, text: await res.text(), headers: res.headers };
}

test("a resource row whose chunk boundary falls inside an emoji is stored byte for byte", async () => {
  const e = await edge(await folder());
  try {
    // Contexts of 4-byte characters only; the value's length moves the first chunk boundary
    // (CHUNK characters) onto the first half of a surrogate pair.
    let json;
    for (let pad = 0; json === undefined; pad++) {
      const value = `login:${"x".repeat(pad)}`;
      let t = T0 - 100_000;
      const pool = new Pool({ seed: 5, now: () => t });
      pool.register("ACCOUNT", value);
      for (let c = 0; c < 2000; c++) pool.report("ACCOUNT", value, `${"😀".repeat(60)}${c}`, { ok: true, latencyMs: 5 });
      t = T0 - 1;
      const code = pool.snapshotPart("ACCOUNT", value).charCodeAt(CHUNK - 1);
      if (code >= 0xd800 && code < 0xdc00) json = pool.snapshot();
      pool.free();
    }
    const put = await call(e, "wide", "PUT", "/api/snapshot", json);
    assert.equal(put.status, 204, put.text);
    const stored = JSON.parse((await call(e, "wide", "GET", "/__test/stored?full=1")).text);
    assert.ok(stored.size.resourceRows >= 2, `stored in ${stored.size.resourceRows} chunks`);
    const live = (await call(e, "wide", "GET", "/api/snapshot")).text;
    assert.ok(stored.snapshot === live, `the stored rows join into the live snapshot's exact bytes (${stored.snapshot.length} vs ${live.length} characters)`);
  } finally {
    await e.close();
  }
});

test("a malformed REPUTE_CONFIG or REPUTE_TOKENS answers every request a 500 problem naming the binding, never its text", async () => {
  const SECRET = "sekrit-token-value-0123456789";
  const cases = [
    [{ REPUTE_CONFIG: "{coolAfter: 2" }, /REPUTE_CONFIG.*not valid JSON/],
    [{ REPUTE_CONFIG: '{"coolAfter": -5}' }, /REPUTE_CONFIG.*coolAfter/],
    [{ REPUTE_TOKENS: `${SECRET} not json` }, /REPUTE_TOKENS.*not valid JSON/],
    [{ REPUTE_TOKENS: JSON.stringify({ tokens: [{ token: SECRET, role: "admin" }] }) }, /REPUTE_TOKENS.*role/],
    [{ REPUTE_TOKENS: JSON.stringify({ tokens: [{ token: `${SECRET} é`, role: "worker" }] }) }, /REPUTE_TOKENS.*tokens\[0\]\.token.*a space/],
  ];
  for (const [bindings, detail] of cases) {
    const e = await edge(await folder(), bindings);
    try {
      for (const path of ["/api/stats", "/healthz"]) {
        const r = await call(e, "eu", "GET", path);
        assert.equal(r.status, 500, `${JSON.stringify(bindings)} ${path}: ${r.text.slice(0, 300)}`);
        assert.equal(r.headers.get("content-type"), "application/problem+json");
        const body = JSON.parse(r.text);
        assert.equal(body.type, "urn:repute:problem:misconfigured");
        assert.match(body.detail, detail);
        assert.ok(!r.text.includes(SECRET) && !r.text.includes("sekrit"), "the secret is never echoed");
      }
    } finally {
      await e.close();
    }
  }
});

test("REPUTE_MAX_WAIT_MS and REPUTE_MAX_WAITING bound the waits as the server's options do; a malformed one is a 500 naming it", async () => {
  const e = await edge(await folder(), { REPUTE_MAX_WAIT_MS: "1000", REPUTE_MAX_WAITING: "0" });
  try {
    assert.equal((await call(e, "eu", "POST", "/api/resources", { kind: "PROXY", value: "p1" })).status, 201);
    const over = await call(e, "eu", "POST", "/api/leases", { context: "shop", waitMs: 1001 });
    assert.equal(over.status, 400, over.text);
    assert.match(JSON.parse(over.text).detail, /waitMs is over this server's limit of 1000 ms/);
    assert.equal((await call(e, "eu", "POST", "/api/leases", { context: "shop", waitMs: 1000 })).status, 201, "within the limit, served at once");
    // None may wait: a request that cannot be served at once is 503 too-many-waiting.
    const full = await call(e, "eu", "POST", "/api/leases", { context: "shop", waitMs: 1000 });
    assert.equal(full.status, 503, full.text);
    assert.equal(JSON.parse(full.text).type, "urn:repute:problem:too-many-waiting");
  } finally {
    await e.close();
  }
  const bad = await edge(await folder(), { REPUTE_MAX_WAITING: "-1" });
  try {
    const r = await call(bad, "eu", "GET", "/api/stats");
    assert.equal(r.status, 500);
    assert.match(JSON.parse(r.text).detail, /REPUTE_MAX_WAITING binding must be an integer of at least 0/);
  } finally {
    await bad.close();
  }
});

test("the audit log keeps its newest REPUTE_EVENTS_KEPT events across restarts, though seqs jump past the reservation", async () => {
  const dir = await folder();
  const bindings = { REPUTE_EVENTS_KEPT: "100" };
  const seqs = [];
  for (let round = 0; round < 2; round++) {
    const e = await edge(dir, bindings);
    try {
      for (let i = 0; i < 3; i++) assert.equal((await call(e, "eu", "POST", "/api/resources", { kind: "PROXY", value: `p${round}-${i}` })).status, 201);
      const page = JSON.parse((await call(e, "eu", "GET", "/api/events?limit=100")).text);
      seqs.push(page.events.map((ev) => ev.seq));
    } finally {
      await e.close();
    }
  }
  assert.equal(seqs[0].length, 3);
  assert.equal(seqs[1].length, 6, `6 events stored, fewer than 100: none deleted (${JSON.stringify(seqs)})`);
  assert.deepEqual(seqs[1].slice(0, 3), seqs[0]);
  assert.ok(seqs[1][3] > seqs[1][2] + 100, "the restart started above the reservation");
});

test("a REPUTE_EVENTS_KEPT, REPUTE_CHECKPOINT_MS or REPUTE_STREAM_MS that is not a count answers a 500 problem naming it", async () => {
  for (const [name, value] of [["REPUTE_EVENTS_KEPT", "0"], ["REPUTE_EVENTS_KEPT", "lots"], ["REPUTE_CHECKPOINT_MS", "-5"], ["REPUTE_STREAM_MS", "10s"]]) {
    const e = await edge(await folder(), { [name]: value });
    try {
      const r = await call(e, "eu", "GET", "/api/stats");
      assert.equal(r.status, 500, `${name}=${value}: ${r.text.slice(0, 300)}`);
      const body = JSON.parse(r.text);
      assert.equal(body.type, "urn:repute:problem:misconfigured");
      assert.match(body.detail, new RegExp(name));
    } finally {
      await e.close();
    }
  }
});

test("while the reservation cannot be raised, requests within it are served and none is half-applied", async () => {
  const e = await edge(await folder(), { REPUTE_TEST_RESERVE_STEP: "8" });
  try {
    assert.equal((await call(e, "eu", "POST", "/api/resources", { kind: "PROXY", value: "a:1" })).status, 201);
    await call(e, "eu", "GET", "/__test/fail-reserve?on=1");
    const reserve = JSON.parse((await call(e, "eu", "GET", "/__test/pending")).text).reserve;
    // Three acquire/release pairs: seqs 2..7 and tokens 1..3, all below what is reserved.
    for (let i = 0; i < 3; i++) {
      const l = await call(e, "eu", "POST", "/api/leases", { context: "c" });
      assert.equal(l.status, 201, `acquire ${i}: ${l.text}`);
      const r = await call(e, "eu", "DELETE", `/api/leases/${JSON.parse(l.text).leaseId}`);
      assert.equal(r.status, 204, `release ${i}: ${r.text}`);
    }
    await call(e, "eu", "GET", "/__test/fail-reserve?on=0");
    const seqs = JSON.parse((await call(e, "eu", "GET", "/api/events?limit=100")).text).events.map((ev) => ev.seq);
    assert.deepEqual(seqs, [1, 2, 3, 4, 5, 6, 7], `no event lost (reserved up to ${JSON.stringify(reserve)})`);
    assert.equal(JSON.parse((await call(e, "eu", "GET", "/api/stats")).text).leased, 0);
  } finally {
    await e.close();
  }
});

test("an operator action refused while storage cannot even be read back is never applied later", async () => {
  const e = await edge(await folder());
  try {
    assert.equal((await call(e, "eu", "POST", "/api/resources", { kind: "PROXY", value: "kept:1" })).status, 201);
    await call(e, "eu", "GET", "/__test/fail-checkpoint?after=0");
    await call(e, "eu", "GET", "/__test/fail-load?on=1");
    const refused = await call(e, "eu", "POST", "/api/resources", { kind: "PROXY", value: "refused:1" });
    assert.equal(refused.status, 503, refused.text);
    const during = await call(e, "eu", "GET", "/api/resources");
    assert.equal(during.status, 503, `while storage is unreadable the object answers 503: ${during.text}`);
    await call(e, "eu", "GET", "/__test/fail-load?on=0");
    const values = JSON.parse((await call(e, "eu", "GET", "/api/resources")).text).resources.map((r) => r.value);
    assert.deepEqual(values, ["kept:1"], "the refused registration is not in the pool");
    await call(e, "eu", "GET", "/__test/checkpoint");
    const stored = JSON.parse(JSON.parse((await call(e, "eu", "GET", "/__test/stored?full=1")).text).snapshot);
    assert.deepEqual(stored.registered.map((r) => r.value), ["kept:1"], "nor in storage");
  } finally {
    await e.close();
  }
});

test("REPUTE_REGIONS: only the listed regions are served; another is a 404 before any object is made; a bad list is a 500 naming the entry", async () => {
  const dir = await folder();
  const e = await edge(dir, { REPUTE_REGIONS: "eu, us-east" });
  try {
    assert.equal((await call(e, "eu", "POST", "/api/resources", { kind: "PROXY", value: "a:1" })).status, 201);
    assert.equal((await call(e, "us-east", "GET", "/api/resources")).status, 200);
    const other = await call(e, "ap", "GET", "/healthz");
    assert.equal(other.status, 404);
    assert.match(other.text, /no-such-region/);
  } finally {
    await e.close();
  }
  // No object was made for "ap": two objects' databases, the two served regions'.
  const databases = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith(".sqlite"));
  assert.equal(databases.length, 2, databases.join(", "));
  const bad = await edge(await folder(), { REPUTE_REGIONS: "eu,Not A Region" });
  try {
    const r = await call(bad, "eu", "GET", "/api/resources");
    assert.equal(r.status, 500);
    assert.match(r.text, /misconfigured/);
    assert.match(r.text, /REPUTE_REGIONS: entry 2 is not a region name/);
  } finally {
    await bad.close();
  }
});
