// `Pool.reinstate(part)` through the package (the wasm build): a resource deregistered and put
// back from its `snapshotPart` has its registration, block and cells as before, not its lease
// (ended: release and renew find nothing, the next token is new); a resource registered already
// is left alone (false); a part that is not one is INVALID_SNAPSHOT, a non-string
// INVALID_ARGUMENT, and neither changes anything.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "repute";

const T0 = 1_700_000_000_000;

test("a resource put back from its part is as it was, without its lease", () => {
  let t = T0;
  const pool = new Pool({ now: () => t, seed: 3, config: { coolAfter: 2 } });
  pool.register("PROXY", "http://u:p@p1.example:8080", { group: "eu", maxLeases: 2 });
  pool.register("PROXY", "p2");
  for (const [context, ok] of [["shop", true], ["shop", false], ["news", false], ["news", false]]) {
    t += 1000;
    pool.report("PROXY", "http://u:p@p1.example:8080", context, ok ? { ok: true, latencyMs: 20 } : { ok: false, failure: "TIMEOUT" });
  }
  pool.block("PROXY", "http://u:p@p1.example:8080", { seconds: 600 });
  pool.unblock("PROXY", "http://u:p@p1.example:8080");
  const lease = pool.acquireResource("PROXY", "http://u:p@p1.example:8080", "shop");
  assert.ok(lease);
  pool.block("PROXY", "http://u:p@p1.example:8080", { permanent: true });
  const before = pool.resource("PROXY", "http://u:p@p1.example:8080");
  const part = pool.snapshotPart("PROXY", "http://u:p@p1.example:8080");
  const revision = pool.stats().revision;
  assert.equal(pool.deregister("PROXY", "http://u:p@p1.example:8080"), true);
  pool.drainEvents();
  assert.equal(pool.reinstate(part), true);
  assert.deepEqual(pool.drainEvents().map((e) => e.type), ["RESOURCE_REGISTERED"]);
  assert.equal(pool.stats().revision, revision + 2, "the deregistration and the reinstatement: two changes");
  const after = pool.resource("PROXY", "http://u:p@p1.example:8080");
  assert.deepEqual(after.cells, before.cells);
  assert.deepEqual([after.group, after.maxLeases, after.blocked], [before.group, before.maxLeases, before.blocked]);
  assert.deepEqual(after.leases, []);
  assert.equal(pool.snapshotPart("PROXY", "http://u:p@p1.example:8080"), part);
  assert.equal(pool.release(lease), false, "its lease ended with the deregistration");
  assert.equal(pool.renew(lease), null);
  pool.unblock("PROXY", "http://u:p@p1.example:8080");
  assert.ok(pool.acquireResource("PROXY", "http://u:p@p1.example:8080", "shop").token > lease.token);

  const snapshot = pool.snapshot();
  assert.equal(pool.reinstate(pool.snapshotPart("PROXY", "p2")), false, "registered already");
  for (const bad of ["", "{}\n\n", part.replaceAll("\n", " "), part.replace('"score":', '"score":"x","s":')]) {
    assert.throws(() => pool.reinstate(bad), { code: "INVALID_SNAPSHOT" });
  }
  assert.throws(() => pool.reinstate(null), { code: "INVALID_ARGUMENT" });
  assert.equal(pool.snapshot().replace(/"takenAt":\d+/, ""), snapshot.replace(/"takenAt":\d+/, ""), "refusals change nothing");
  pool.free();
});
