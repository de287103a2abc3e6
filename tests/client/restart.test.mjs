// `repute/client` across a restart of a real `repute serve` child process (kill -9, then the same
// port and data folder): leases do not survive a restart (SPEC §6), so a lease taken before it
// is gone after it. While the server is down every call fails at once and cleanly
// (CONNECTION_FAILED, never sent, no hang); after it, the old lease renews to null and releases
// to false — it cannot touch the resource's new lease, so nothing is leased twice — the client's
// kept-alive connection to the dead process is not a failure of its next acquire, new tokens
// are above the old one, and the live event iterator carries on without a duplicate.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { connectPool, PoolClientError } from "repute/client";
import { spawnServe } from "../server/_http-support.mjs";
import { freePort, within } from "./_support.mjs";

const TOKEN = "worker-token-restart-5e1f0a";
const env = { REPUTE_TOKENS: JSON.stringify({ tokens: [{ token: TOKEN, role: "operator" }] }) };

async function failure(promise) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof PoolClientError, `a PoolClientError: ${e}`);
    assert.ok(!inspect(e, { depth: 8 }).includes(TOKEN), "no token in the error");
    return e;
  }
  assert.fail("it should have failed");
}

test("a server restart in the middle of a lease: calls fail cleanly while it is down; after it the old lease is no lease and nothing is leased twice", async () => {
  const dir = mkdtempSync(join(tmpdir(), "repute-client-restart-"));
  const port = await freePort();
  const args = ["--port", String(port), "--data", dir, "--checkpoint-ms", "0"];
  let server = spawnServe(args, { env });
  const holder = connectPool({ url: `http://127.0.0.1:${port}`, token: TOKEN, retryDelayMs: 5 });
  const other = connectPool({ url: `http://127.0.0.1:${port}`, token: TOKEN });
  const controller = new AbortController();
  let seen = [];
  let reading = null;
  try {
    await server.ready;
    assert.equal(await holder.register("PROXY", "solo"), true);
    const start = (await holder.stats()).nextEventSeq - 1;
    // The live events, read through the restart.
    reading = (async () => {
      for await (const e of other.events({ after: start, signal: controller.signal, reconnectForMs: 60_000 })) seen.push(e);
    })().catch((e) => e);
    const lease = await holder.acquire("shop");
    assert.equal(lease.value, "solo");
    assert.equal(await other.acquire("shop"), null, "held: nobody else gets it");
    await within((async () => {
      while (!seen.some((e) => e.type === "RESOURCE_LEASED")) await new Promise((r) => setTimeout(r, 5));
    })(), 10_000, "the lease event");

    server.child.kill("SIGKILL");
    await server.exited;
    // Down: each call fails at once, its request never sent (so even acquire and report were
    // retried, boundedly), with the network's code — no hang, no answer made up.
    for (const [name, call] of [
      ["renew", () => holder.renew(lease)],
      ["release", () => holder.release(lease)],
      ["acquire", () => holder.acquire("shop")],
      ["report", () => holder.report("PROXY", "solo", "shop", { ok: true })],
    ]) {
      const e = await within(failure(call()), 10_000, name);
      assert.equal(e.code, "CONNECTION_FAILED", name);
      assert.equal(e.reached, false, `${name}: never sent`);
      assert.equal(e.attempts, 3, `${name}: 1 + 2 retries`);
      assert.equal(e.retryable, true);
    }

    server = spawnServe(args, { env });
    await server.ready;
    // The resource is free again: the other worker leases it, with a larger token.
    const fresh = await other.acquire("shop");
    assert.equal(fresh.value, "solo");
    assert.ok(fresh.token > lease.token, `fencing token ${fresh.token} > ${lease.token}`);
    assert.notEqual(fresh.leaseId, lease.leaseId);
    // The old holder's lease is gone: it can neither renew nor release — so it cannot take the
    // resource back from the new holder or free it under them.
    assert.equal(await holder.renew(lease), null);
    assert.equal(await holder.release(lease), false);
    const view = await holder.resource("PROXY", "solo");
    assert.equal(view.lease?.token, fresh.token, "the new lease stands");
    assert.equal((await holder.stats()).leased, 1);
    assert.equal(await holder.acquire("shop"), null, "still nobody else");
    // The new holder's lease works as any.
    const renewed = await other.renew(fresh);
    assert.equal(renewed.token, fresh.token);
    assert.equal(await other.release(renewed), true);
    const again = await holder.acquire("shop");
    assert.equal(again.value, "solo");
    assert.equal(await holder.release(again), true);

    // The event iterator went on: no seq twice, in order, and it saw the leases after the restart.
    await within((async () => {
      while (seen.filter((e) => e.type === "LEASE_RELEASED").length < 2) await new Promise((r) => setTimeout(r, 5));
    })(), 20_000, "the events after the restart");
    const seqs = seen.map((e) => e.seq);
    assert.deepEqual(seqs, [...new Set(seqs)].sort((a, b) => a - b), "each once, in seq order");
    assert.deepEqual(seen.filter((e) => e.type === "RESOURCE_LEASED").map((e) => e.token), [lease.token, fresh.token, again.token]);
  } finally {
    controller.abort();
    const ended = await reading;
    await holder.close();
    await other.close();
    server.child.kill("SIGKILL");
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
    if (ended !== undefined) assert.equal(ended.code, "ABORTED", String(ended));
  }
});
