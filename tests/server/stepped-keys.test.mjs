// The stepped checkpoint's part keys (pkg-scripts/lib/node/stepped-snapshot.js `keyCompare`):
// a key is the kind's code and the value as it is, and keys compare as the snapshot orders
// resources — kind, then the value's UTF-8 bytes — which JavaScript's own string order does
// not where a character above U+FFFF meets one from U+E000 to U+FFFF. Checked against the
// UTF-8 bytes on random values drawn from every range that matters.

import { test } from "node:test";
import assert from "node:assert/strict";
import { keyCompare } from "../../pkg-scripts/lib/node/stepped-snapshot.js";
import { mulberry32 } from "../../pkg-scripts/lib/mulberry32.js";

const encoder = new TextEncoder();
/** UTF-8 byte order, the reference. */
function bytesCompare(a, b) {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}
const sign = (n) => Math.sign(n);

test("keys compare by UTF-8 bytes where UTF-16 units disagree", () => {
  // U+FF5E is the greater unit (0xFF5E > 0xD83D) but the smaller code point.
  assert.ok("0\u{1F600}" < "0\uFF5E", "JavaScript's own order, which the keys must not use");
  assert.equal(sign(keyCompare("0\u{1F600}", "0\uFF5E")), 1);
  assert.equal(sign(keyCompare("0\uFF5E", "0\u{1F600}")), -1);
  assert.equal(sign(keyCompare("0\uE000", "0\u{10000}")), -1);
  assert.equal(sign(keyCompare("0\uD7FF", "0\u{10000}")), -1);
  assert.equal(keyCompare("1abc", "1abc"), 0);
  assert.equal(sign(keyCompare("0zzz", "1aaa")), -1, "the kind first");
  assert.equal(sign(keyCompare("0ab", "0abc")), -1, "a prefix first");
});

test("on random values from every range, keys compare as their UTF-8 bytes", () => {
  const rnd = mulberry32(7);
  const pools = [
    [0x20, 0x7e],
    [0x80, 0x7ff],
    [0x800, 0xd7ff],
    [0xe000, 0xffff],
    [0x10000, 0x10ffff],
  ];
  const char = () => {
    const [lo, hi] = pools[Math.floor(rnd() * pools.length)];
    return String.fromCodePoint(lo + Math.floor(rnd() * (hi - lo + 1)));
  };
  const value = () => Array.from({ length: 1 + Math.floor(rnd() * 4) }, char).join("");
  const keys = Array.from({ length: 400 }, () => `${Math.floor(rnd() * 3)}${value()}`);
  // Shared prefixes, so that later characters decide too.
  for (let i = 0; i < 100; i++) keys.push(keys[i] + value());
  for (let i = 0; i < keys.length; i++) {
    for (let j = 0; j < keys.length; j += 7) {
      assert.equal(sign(keyCompare(keys[i], keys[j])), sign(bytesCompare(keys[i], keys[j])), `${JSON.stringify(keys[i])} vs ${JSON.stringify(keys[j])}`);
    }
  }
  assert.deepEqual([...keys].sort(keyCompare), [...keys].sort(bytesCompare));
});
