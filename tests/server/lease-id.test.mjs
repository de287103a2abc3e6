// Lease ids seal with node:crypto where it exists and with WebCrypto elsewhere (edge runtimes
// without Node compatibility). The two must be the same AES-128-GCM: what one seals the other
// opens, byte for byte, and both refuse anything altered. Then LeaseIds itself: one id per
// lease, and ids that do not decode (altered, truncated, foreign) read as no lease.
import { test } from "node:test";
import assert from "node:assert/strict";
import { LeaseIds, nodeCipher, webCipher } from "../../pkg-scripts/lib/http/lease-id.js";

const key = crypto.getRandomValues(new Uint8Array(16));
const iv = crypto.getRandomValues(new Uint8Array(12));
const plain = new TextEncoder().encode('[0,42,"ctx","http://user:pass@proxy:8080"]');

test("node:crypto and WebCrypto seal the same bytes and open each other's", async () => {
  const [n, w] = [await nodeCipher(key), await webCipher(key)];
  const byNode = n.seal(iv, plain);
  const byWeb = await w.seal(iv, plain);
  assert.deepEqual([...byNode], [...byWeb]);
  assert.deepEqual([...(await w.open(iv, byNode))], [...plain]);
  assert.deepEqual([...n.open(iv, byWeb)], [...plain]);
});

test("both refuse a sealed text with one bit flipped, or cut short", async () => {
  const [n, w] = [await nodeCipher(key), await webCipher(key)];
  const sealed = n.seal(iv, plain);
  for (const bad of [sealed.map((b, i) => (i === 3 ? b ^ 1 : b)), sealed.subarray(0, sealed.length - 1), sealed.subarray(0, 4)]) {
    assert.throws(() => n.open(iv, bad));
    await assert.rejects(w.open(iv, bad));
  }
});

test("a lease has one id; altered, truncated or another pool's ids are no lease", async () => {
  const ids = await LeaseIds.create();
  const lease = { kind: "PROXY", value: "http://user:pass@proxy:8080", context: "shop.example", token: 7 };
  const id = await ids.encode(lease);
  assert.equal(await ids.encode(lease), id);
  assert.ok(!id.includes("pass") && !id.includes("proxy"), "the value is not readable in the id");
  assert.deepEqual(await ids.decode(id), lease);
  const other = await LeaseIds.create();
  const flip = (s, i) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
  // Another spelling of the same bytes: the token part (8 bytes, 11 characters) has 2 unused
  // bits in its last character, so the next character of the alphabet decodes alike.
  const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const [t, sealed] = id.split(".");
  const respelled = `${t.slice(0, -1)}${ALPHABET[ALPHABET.indexOf(t.at(-1)) + 1]}.${sealed}`;
  assert.deepEqual([...Buffer.from(respelled.split(".")[0], "base64url")], [...Buffer.from(t, "base64url")]);
  for (const bad of [flip(id, id.length - 2), flip(id, 3), id.slice(0, -4), `${id}AA`, respelled, "", ".", "x.y", await other.encode(lease)]) {
    assert.equal(await ids.decode(bad), null, bad);
  }
});

test("ids issued long ago (past the recent-ids memory) still decode, through the cipher", async () => {
  const ids = await LeaseIds.create();
  const first = { kind: "SESSION", value: "s-0", context: "c", token: 1 };
  const firstId = await ids.encode(first);
  // A token above 2^32 (its high word in the id too), near the largest safe integer.
  const large = { kind: "PROXY", value: "p", context: "c", token: 2 ** 52 + 3 };
  const largeId = await ids.encode(large);
  // Past the memory's two generations of 4096 (lease-id.js RECENT).
  for (let token = 2; token <= 9000; token++) await ids.encode({ kind: "SESSION", value: `s-${token}`, context: "c", token });
  assert.deepEqual(await ids.decode(firstId), first);
  assert.deepEqual(await ids.decode(largeId), large);
  // A decoded lease is a copy: changing it changes nothing for the next decode.
  const again = await ids.decode(firstId);
  again.value = "changed";
  assert.deepEqual(await ids.decode(firstId), first);
  const recent = await ids.decode(await ids.encode({ kind: "SESSION", value: "s-9001", context: "c", token: 9001 }));
  recent.value = "changed";
  assert.equal((await ids.decode(await ids.encode({ kind: "SESSION", value: "s-9001", context: "c", token: 9001 }))).value, "s-9001");
});
