// A snapshot as the console keeps it: credentials masked in every resource value (by the
// engine's own rule, `Pool.maskValue`, passed in) before it is stored in the workspace, shown or
// run, so no proxy password reaches IndexedDB or an exported file. Two values that mask alike
// stay apart with a `#2`, `#3` suffix. The engine still reads it: values are opaque to it.

/** Bad snapshot text: not JSON, or not a repute snapshot. */
export class SnapshotError extends Error {
  code = "INVALID_SNAPSHOT";
}

/**
 * `text` (a snapshot's JSON) with its values masked by `mask(kind, value)` (the engine's
 * `Pool.maskValue`), and facts about it: `{ json, takenAt, resources, cells, contexts }`. The
 * engine checks the rest when a run restores it.
 */
export function maskSnapshot(text, mask) {
  const maskValue = (kind, value) => {
    try {
      return mask(kind, String(value));
    } catch (e) {
      throw new SnapshotError(`a resource the engine cannot name: ${e.message}`);
    }
  };
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new SnapshotError("the snapshot is not valid JSON");
  }
  if (doc?.format !== "repute-snapshot" || !Array.isArray(doc.registered) || !Number.isSafeInteger(doc.takenAt)) {
    throw new SnapshotError('not a repute snapshot (expected "format": "repute-snapshot", registered, takenAt)');
  }
  const names = new Map(); // `kind value` → masked value
  const taken = new Set();
  for (const r of doc.registered) {
    let masked = maskValue(r.kind, r.value);
    const base = masked;
    for (let n = 2; taken.has(`${r.kind} ${masked}`); n++) masked = `${base} #${n}`;
    taken.add(`${r.kind} ${masked}`);
    names.set(`${r.kind} ${r.value}`, masked);
  }
  const rename = (e) => ({ ...e, value: names.get(`${e.kind} ${e.value}`) ?? maskValue(e.kind, e.value) });
  doc.registered = doc.registered.map(rename);
  for (const key of ["blocklist", "cells"]) if (Array.isArray(doc[key])) doc[key] = doc[key].map(rename);
  const contexts = [...new Set((doc.cells ?? []).map((c) => c.context))].sort();
  return { json: JSON.stringify(doc), takenAt: doc.takenAt, resources: doc.registered.length, cells: doc.cells?.length ?? 0, contexts };
}
