// `repute/client`'s options arguments (SPEC §9: an options argument that is not a plain object,
// or one with a key the method does not take, is INVALID_ARGUMENT and changes nothing), as the
// embedded pool refuses them: `register(kind, value, { group })`, `acquire` / `tryAcquire(context,
// { groups })` and the `resources({ context, state, group })` filter. A mistyped key must not be
// dropped on the way to the server: `acquire("shop", { group: ["dc"] })` leasing from the whole
// pool, the pricey tier included, or `register(kind, value, "dc")` registering outside the group
// asked for. Against a real pool server on 127.0.0.1; the pool's snapshot shows nothing changed.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "repute";
import { connectPool, PoolClientError } from "repute/client";
import { startServer } from "../server/_http-support.mjs";

let server;
let client;
before(async () => {
  server = await startServer({});
  client = connectPool({ url: server.url });
  await client.register("PROXY", "dc-1", { group: "dc" });
  await client.register("PROXY", "res-1", { group: "residential" });
});
after(async () => {
  await client?.close();
  await server?.close();
});

const BAD_OPTIONS = [null, [], "dc", 7, true, new Map()];

/** `fn()` (a client call) and the embedded pool's same call both fail with INVALID_ARGUMENT; the
 * server's pool is unchanged (its snapshot, revision included, is the same bytes). */
async function refused(fn, embedded, what) {
  const before = await client.snapshot();
  let error;
  try {
    await fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof PoolClientError, `${what}: a PoolClientError, got ${error}`);
  assert.equal(error.code, "INVALID_ARGUMENT", `${what}: ${error.message}`);
  assert.equal(await client.snapshot(), before, `${what}: nothing changed on the server`);
  const pool = new Pool({ seed: 1 });
  pool.register("PROXY", "dc-1", { group: "dc" });
  assert.throws(() => embedded(pool), (e) => e.code === "INVALID_ARGUMENT", `${what}: the embedded pool refuses it too`);
  pool.free();
}

test("register: an options argument that is not a plain object, or holds another key, is INVALID_ARGUMENT", async () => {
  for (const o of BAD_OPTIONS) {
    await refused(() => client.register("PROXY", "new-1", o), (p) => p.register("PROXY", "new-1", o), `register options ${String(o)}`);
  }
  await refused(() => client.register("PROXY", "new-1", { groups: ["dc"] }), (p) => p.register("PROXY", "new-1", { groups: ["dc"] }), "register { groups }");
  await refused(() => client.register("PROXY", "dc-1", { group: "residential", extra: 1 }), (p) => p.register("PROXY", "dc-1", { group: "residential", extra: 1 }), "register an extra key");
  // Good forms still work: absent, {}, { group: undefined } leave the group; null ungroups.
  assert.equal(await client.register("PROXY", "dc-1", {}), false);
  assert.equal(await client.register("PROXY", "dc-1", { group: undefined }), false);
  assert.equal((await client.resources({ group: "dc" })).length, 1);
});

test("acquire and tryAcquire: a mistyped or malformed options argument is refused, not dropped (no lease from the whole pool)", async () => {
  for (const o of [...BAD_OPTIONS, { group: ["dc"] }, { groups: ["dc"], extra: true }]) {
    await refused(() => client.acquire("shop", o), (p) => p.acquire("shop", o), `acquire options ${JSON.stringify(o) ?? String(o)}`);
    await refused(() => client.tryAcquire("shop", o), (p) => p.acquire("shop", o), `tryAcquire options ${JSON.stringify(o) ?? String(o)}`);
  }
  // Good forms: absent, {}, { groups: undefined }, a list.
  for (const o of [undefined, {}, { groups: undefined }, { groups: ["dc"] }]) {
    const lease = await client.acquire("shop", o);
    assert.ok(lease, `acquire with ${JSON.stringify(o)}`);
    await client.release(lease);
  }
});

test("resources: a filter that is not a plain object, has an unknown key or a group that is not a name or null is refused", async () => {
  for (const f of [null, [], "dc", 7]) {
    await refused(() => client.resources(f), (p) => p.resources(f), `resources filter ${String(f)}`);
  }
  for (const f of [{ grop: "dc" }, { group: 5 }, { group: ["dc"] }, { context: 5 }, { state: 1 }]) {
    await refused(() => client.resources(f), (p) => p.resources(f), `resources filter ${JSON.stringify(f)}`);
  }
  assert.deepEqual((await client.resources({ group: "dc" })).map((r) => r.value), ["dc-1"]);
  assert.deepEqual((await client.resources({ group: undefined })).length, 2);
  assert.deepEqual(await client.resources({ group: null }), []);
});
