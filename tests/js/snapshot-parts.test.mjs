// lib/snapshot-parts.js's row keys (the canonical order of a snapshot's parts, kept by the Node
// host's stepped checkpoint and the edge's SQLite rows): their text, their order, and that a
// long value's key is one flat string — built two characters at a time, a 1 KB value's key was
// a rope a Map kept whole (31 KB a key), and a 381,000-resource pool's checkpoint ran out of heap.

import assert from "node:assert/strict";
import { test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { rowKey } from "../../pkg-scripts/lib/snapshot-parts.js";

const utf8hex = (s) => [...new TextEncoder().encode(s)].map((b) => b.toString(16).padStart(2, "0")).join("");

test("a row key is the kind's code, then the value's UTF-8 bytes in hex", () => {
  assert.equal(rowKey("PROXY", "a:1"), `0${utf8hex("a:1")}`);
  assert.equal(rowKey("ACCOUNT", "é"), "1c3a9");
  assert.equal(rowKey("SESSION", "😀"), "2f09f9880");
});

test("row keys sort as the snapshot orders resources: kind, then UTF-8 bytes (not UTF-16 units)", () => {
  // U+FF5E sorts after U+1F600 in UTF-16 code units (0xFF5E > 0xD83D), before it in UTF-8 bytes.
  const values = [["PROXY", "\u{1F600}"], ["PROXY", "\uFF5E"], ["ACCOUNT", "a"], ["PROXY", "b"], ["SESSION", ""]];
  const sorted = values.map(([k, v]) => rowKey(k, v)).sort();
  assert.deepEqual(sorted, [rowKey("PROXY", "b"), rowKey("PROXY", "\uFF5E"), rowKey("PROXY", "\u{1F600}"), rowKey("ACCOUNT", "a"), rowKey("SESSION", "")]);
});

test("a long value's key is held as one flat string: about its length in heap, not a rope", () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  const pad = "v".repeat(1000);
  const keys = new Map();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 2000; i++) keys.set(rowKey("PROXY", `proxy-${i}.example:8080/${pad}`), i);
  gc();
  const perKey = (process.memoryUsage().heapUsed - before) / keys.size;
  // A flat key of ~2,040 one-byte characters takes about 2 KB; the rope took 31 KB.
  assert.ok(perKey < 4096, `${perKey.toFixed(0)} bytes of heap a key`);
});
