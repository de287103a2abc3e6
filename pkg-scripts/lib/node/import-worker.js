// The other thread of an import in steps (import-steps.js): reads the uploaded snapshot and
// restores it with this thread's own engine — `Pool.restore`, so every check and every error
// is the one-call import's — then hands the restored pool back as its snapshot's parts
// (lib/snapshot-parts.js: the head, then each resource's three lines in canonical order), in
// batches, for the main thread to build its own pool from them in steps. Nothing of this runs
// on the main thread's loop, and the memory it takes (the text, the parsed document, the
// engine's WebAssembly memory, which never shrinks) goes when the thread ends.
//
// Messages in: `{ chunk }` (UTF-8 bytes, in order) then `{ end: true }`, or `workerData.bytes`
// (the whole upload); then `{ more: n }`, asking for n more batches. Out: `{ head, counters,
// kinds }` (kinds: the resources of each kind, for the main thread to make room for),
// then batches `{ sections }` (the batch's parts as `Pool.restoreInParts`'s `add` takes them:
// three Uint8Arrays), then `{ done: true }`; or `{ error: { message, code } }`.

import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { loadPool } from "../engine/engine-load.js";

// The lowest scheduling priority, for this thread only (on Linux a nice value is a thread's):
// on a busy machine the threads that serve the workers come first; the import waits.
if (process.platform === "linux") {
  try {
    setPriority(19);
  } catch {
    // not allowed here: the import runs at the process's priority
  }
}

/** Characters a batch of parts holds, about: the main thread builds one batch a step. */
const BATCH_CHARS = 32 * 1024;
/** Resources a page lists. */
const PAGE = 512;
const encoder = new TextEncoder();

/** The restored pool of the upload `bytes`, or the engine's error. */
function restored(bytes) {
  let json;
  try {
    json = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw Object.assign(new Error("the snapshot is not valid UTF-8"), { code: "INVALID_SNAPSHOT" });
  }
  const { config } = workerData;
  // A clock at 0 reads as the pool's own time (a restored pool's is the snapshot's takenAt, and
  // time never runs backwards): the parts are the document's, as `Pool.restore` holds it.
  return loadPool().restore(json, { seed: 0, now: () => 0, ...(config ? { config } : {}) });
}

/** The pool's parts as `{ sections }` messages: three Uint8Arrays a batch. */
function* batches(pool) {
  let batch = [[], [], []];
  let chars = 0;
  const cut = () => {
    const sections = batch.map((lines) => encoder.encode(lines.join(",")));
    batch = [[], [], []];
    chars = 0;
    return sections;
  };
  for (let after; ;) {
    const page = pool.resources(after === undefined ? { limit: PAGE } : { after, limit: PAGE });
    for (const { kind, value } of page) {
      const part = pool.snapshotPart(kind, value);
      const a = part.indexOf("\n");
      const b = part.indexOf("\n", a + 1);
      batch[0].push(part.slice(0, a));
      if (b > a + 1) batch[1].push(part.slice(a + 1, b));
      if (b + 1 < part.length) batch[2].push(part.slice(b + 1));
      chars += part.length;
      if (chars >= BATCH_CHARS) yield cut();
    }
    if (page.length < PAGE) break;
    after = { kind: page[PAGE - 1].kind, value: page[PAGE - 1].value };
  }
  if (batch[0].length > 0) yield cut();
}

const fail = (e) => {
  parentPort.postMessage({ error: { message: e.message, code: e.code } });
  parentPort.close();
};

/** Restores the upload, sends the head, then batches as the main thread asks for them
 * (`{ more: n }`): it takes each in a step of its own, and messages that pile up on its side
 * would be read in one long turn of its loop. */
function run(bytes) {
  let pool;
  let parts;
  try {
    pool = restored(bytes);
    const { revision, fencingHighWater, nextEventSeq } = pool.stats();
    parentPort.postMessage({ head: pool.snapshotPart(), counters: { revision, fencingHighWater, nextEventSeq }, kinds: pool.registeredByKind() });
    parts = batches(pool);
  } catch (e) {
    fail(e);
    return;
  }
  parentPort.on("message", ({ more }) => {
    try {
      for (let n = 0; n < more; n++) {
        const next = parts.next();
        if (next.done) {
          pool.free();
          parentPort.postMessage({ done: true });
          parentPort.close();
          return;
        }
        // The sections handed over: the main thread keeps them off its heap.
        parentPort.postMessage({ sections: next.value }, next.value.map((b) => b.buffer));
      }
    } catch (e) {
      fail(e);
    }
  });
}

if (workerData.bytes) run(workerData.bytes);
else {
  const chunks = [];
  let size = 0;
  const receive = (m) => {
    if (m.chunk) {
      chunks.push(m.chunk);
      size += m.chunk.byteLength;
      return;
    }
    parentPort.off("message", receive);
    const all = new Uint8Array(size);
    let at = 0;
    for (const c of chunks.splice(0)) {
      all.set(c, at);
      at += c.byteLength;
    }
    run(all);
  };
  parentPort.on("message", receive);
}
