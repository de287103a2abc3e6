// The snapshot in parts, joined back: every host that stores or keeps a pool's snapshot one
// resource at a time (the edge's SQLite rows, lib/edge/sql-store.js; the Node host's stepped
// checkpoints, lib/node/stepped-snapshot.js) joins the parts here, so there is one join.
//
// `Pool.snapshotPart()` is the head (every field before `registered`); `Pool.snapshotPart(kind,
// value)` is one resource's `registered` entry, `blocklist` entry (or "") and cells
// (comma-separated, or ""), as three lines. The head, then each section's entries of every
// resource in canonical order — kind code, then the value's UTF-8 bytes (`rowKey` sorts so) —
// are the very bytes of `Pool.snapshot()` (tests/snapshot_parts.rs). Platform-neutral.

import { KIND_CODE } from "./vocabulary.js";

const encoder = new TextEncoder();
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** A resource's key in canonical order: its kind's code, then its value's UTF-8 bytes in hex
 * (comparing two keys as strings compares the resources as the snapshot orders them). Joined
 * from an array, so that it is one flat string: appended two characters at a time, a 1 KB
 * value's key was a rope of 1,000 pieces that a Map kept whole — 31 KB a key, which ran the
 * final checkpoint of a 381,000-resource pool out of heap — and took 11x as long to make. */
export function rowKey(kind, value) {
  const bytes = encoder.encode(value);
  const out = new Array(bytes.length + 1);
  out[0] = String(KIND_CODE.get(kind));
  for (let i = 0; i < bytes.length; i++) out[i + 1] = HEX[bytes[i]];
  return out.join("");
}

/** Line `i` (0: registered, 1: blocklist or "", 2: cells or "") of one resource's part. */
function line(part, i) {
  const a = part.indexOf("\n");
  if (i === 0) return part.slice(0, a);
  const b = part.indexOf("\n", a + 1);
  return i === 1 ? part.slice(a + 1, b) : part.slice(b + 1);
}

/** Characters a piece holds, about (an entry is never split): joining and writing one is short. */
const PIECE_CHARS = 128 * 1024;

/**
 * The snapshot as pieces of text, in order: `head`, then the sections of `parts` (the
 * resources' parts, in canonical order; iterated once a section). Joined, they are
 * `Pool.snapshot()`'s text; a caller may write them one by one (the loop is free between
 * pieces) rather than join 35 MB at once. `cells(part)`, when given, gives the part whose
 * cells line is written instead (a change of every cell, made one resource at a time).
 */
export function* snapshotPieces(head, parts, cells = (part) => part) {
  yield `${head},"registered":[`;
  yield* section(parts, 0);
  yield `],"blocklist":[`;
  yield* section(parts, 1);
  yield `],"cells":[`;
  yield* section(parts, 2, cells);
  yield "]}";
}

/** Line `i` of every resource that has one (of `of(part)`), comma-separated, in pieces. */
function* section(parts, i, of = (part) => part) {
  let batch = [];
  let chars = 0;
  let first = true;
  for (const part of parts) {
    const text = line(of(part), i);
    if (text === "") continue;
    batch.push(text);
    chars += text.length;
    if (chars < PIECE_CHARS) continue;
    yield (first ? "" : ",") + batch.join(",");
    first = false;
    batch = [];
    chars = 0;
  }
  if (batch.length > 0) yield (first ? "" : ",") + batch.join(",");
}

/** Joins a head and the resources' parts (in canonical order) into the snapshot's text. */
export function compose(head, parts) {
  let text = "";
  for (const piece of snapshotPieces(head, parts)) text += piece;
  return text;
}
