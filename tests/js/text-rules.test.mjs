// The engine's rules about the text of values, as the package exposes them: which characters a
// value or context may not hold (Cc, Cf, U+2028/2029 — src/check.rs keeps Cf as a table, checked
// here against the platform's Unicode data), `Pool.maskValue` (the engine's masking rule,
// src/redact.rs), and events drained with a `resourceId` function, which names each event's
// resource by its value as registered while the event shows it masked.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Pool } from "repute";

const HIDDEN = /^[\p{Cc}\p{Cf}\u2028\u2029]$/u;

test("every control and format character, and no other, is refused in a value and a context", () => {
  const pool = new Pool({ seed: 1 });
  const wrong = [];
  for (let c = 0; c <= 0x10ffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue; // lone surrogates: refused before the engine
    const ch = String.fromCodePoint(c);
    const value = `a${ch}b`;
    let refused;
    try {
      pool.nextChangeAt(value);
      refused = false;
    } catch (e) {
      assert.equal(e.code, "INVALID_ARGUMENT");
      // `a@b` reads as `token@host`: a context holding a credential (tests/js/api.test.mjs).
      if (ch === "@" && /^context must not hold a credential/.test(e.message)) continue;
      assert.match(e.message, new RegExp(`^context must not contain control or format characters \\(found U\\+${c.toString(16).toUpperCase().padStart(4, "0")}\\)$`));
      refused = true;
    }
    if (refused !== HIDDEN.test(ch)) wrong.push(c.toString(16));
  }
  assert.deepEqual(wrong, [], `code points the engine judges differently from \\p{Cc}\\p{Cf} (Unicode ${process.versions.unicode})`);
  for (const v of ["\u200b", "p\r\nq", "x\u202e", "\u0000", "\u{e0041}"]) {
    assert.throws(() => pool.register("PROXY", v), (e) => e.code === "INVALID_ARGUMENT" && /^value must not contain/.test(e.message), JSON.stringify(v));
  }
  assert.equal(pool.stats().registered, 0);
});

test("Pool.maskValue is the engine's masking rule, the one events and errors use", () => {
  const cases = [
    ["PROXY", "proxy-c.example:8080:carol:Secret", "proxy-c.example:8080:carol:***"],
    ["PROXY", "carol:Secret:proxy-c.example:8080", "carol:***:proxy-c.example:8080"],
    ["PROXY", "http://carol:Secret@proxy-c.example:8080", "http://carol:***@proxy-c.example:8080"],
    ["PROXY", "https://gw.example:443/?password=Secret", "https://gw.example:443/?password=***"],
    ["ACCOUNT", "carol:Secret", "carol:***"],
    ["SESSION", "sid=Secret", "***"],
    ["PROXY", "proxy-1.example.net:8080", "proxy-1.example.net:8080"],
  ];
  const pool = new Pool({ seed: 1 });
  for (const [kind, value, shown] of cases) {
    assert.equal(Pool.maskValue(kind, value), shown, value);
    pool.register(kind, value);
    const [e] = pool.drainEvents();
    assert.equal(e.value, shown, `the event shows ${value} as maskValue does`);
    assert.throws(() => pool.report(kind, `${value}x`, "c", { ok: true }), (err) => err.code === "UNKNOWN_RESOURCE" && !err.message.includes("Secret"));
  }
  assert.throws(() => Pool.maskValue("proxy", "x"), { code: "INVALID_ARGUMENT" });
  assert.throws(() => Pool.maskValue("PROXY", 1), { code: "INVALID_ARGUMENT" });
});

test("drainEvents({resourceId}) names each resource by its value as registered; events hold only the masked one", () => {
  const pool = new Pool({ seed: 1 });
  const values = ["h.example:1:u:Secret", "plain.example:2"];
  for (const v of values) pool.register("PROXY", v);
  pool.register("SESSION", "cookie=Secret");
  pool.acquire("c");
  pool.acquire("nowhere-left");
  pool.acquire("nowhere-left");
  pool.acquire("nowhere-left");
  const seen = [];
  const events = pool.drainEvents({ resourceId: (kind, value) => (seen.push([kind, value]), `${kind}#${value.length}`) });
  assert.deepEqual(seen.slice(0, 3), [["PROXY", values[0]], ["PROXY", values[1]], ["SESSION", "cookie=Secret"]]);
  for (const e of events) {
    if (e.kind) assert.equal(e.id, `${e.kind}#${seen.find(([k, v]) => Pool.maskValue(k, v) === e.value)[1].length}`);
    else assert.equal("id" in e, false, "an event about no resource has no id");
    assert.ok(!JSON.stringify(e).includes("Secret"), JSON.stringify(e));
    assert.deepEqual(Object.keys(e).slice(0, 6).filter((k) => ["kind", "value", "id"].includes(k)), e.kind ? ["kind", "value", "id"] : []);
  }
  assert.ok(events.some((e) => e.type === "ACQUISITION_REJECTED"));
  // Without the option, no id and no other change.
  pool.register("PROXY", "third.example:3");
  assert.deepEqual(Object.keys(pool.drainEvents()[0]), ["seq", "type", "at", "kind", "value", "group"]);
  assert.throws(() => pool.drainEvents({ resourceId: 1 }), { code: "INVALID_ARGUMENT" });
  assert.throws(() => pool.drainEvents({ other: 1 }), { code: "INVALID_ARGUMENT" });
});
