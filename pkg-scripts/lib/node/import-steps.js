// An operator's snapshot import on the Node host that does not hold the event loop (issue 26,
// point 9: a 370 MiB upload held it for 20–40 s in one call). The document is read and
// restored on a worker thread (import-worker.js: `Pool.restore`, so today's checks and exact
// errors), which sends the restored pool back as its snapshot's parts; this thread builds its
// own pool from them with the engine's restore in parts (`Pool.restoreInParts`,
// src/pool/snapshot/session.rs), about STEP_BUDGET_MS of batches a step, in the turns all
// stepped work shares (`stepLater`, lib/next-turn.js), and finishes the build in steps too. The
// parts received are kept, as UTF-8 bytes outside the JavaScript heap (a heap of 370 MB of
// strings makes every full collection long), to store the import (`pieces`): it is not
// serialized a second time.
//
// Owns: the worker thread, the restore in parts, the parts received. Does not own: the checks
// against the live pool (`onHead`), the file, the swap (open-pool.js).

import { Worker } from "node:worker_threads";
import { STEP_BUDGET_MS, stepLater } from "../next-turn.js";

/** Batches the thread sends ahead of those taken (it sends them as they are asked for). */
const AHEAD = 8;
/** Characters of a text import encoded (and sent to the thread) a step. */
const TEXT_CHUNK = 256 * 1024;
/** Bytes of an upload copied (and sent) a step, when its buffer cannot be handed over whole. */
const BYTES_CHUNK = 1 << 20;

const poolClosed = () => Object.assign(new Error("the pool is closing"), { code: "POOL_CLOSED" });

/** Whether `u` is the whole of a buffer that can be handed over to another thread. */
const whole = (u) => u.byteOffset === 0 && u.byteLength === u.buffer.byteLength && u.buffer instanceof ArrayBuffer;

/**
 * Restores `input` — the snapshot as UTF-8 bytes (a `Uint8Array` that is its buffer's whole
 * is handed over to the thread: detached here), or its text — off the loop, and builds the
 * pool in steps. `config`: the host's config overrides (the thread's restore applies them);
 * `options`: `Pool.restore`'s options for the pool built here; `onHead(counters)`: when the
 * restore succeeded, its revision, fencing high-water mark and next event seq (throw to refuse
 * the import); `signal`: aborted when the host closes (the import stops with POOL_CLOSED, its
 * thread ended). Resolves to
 * a `BuiltImport`; rejects with the restore's error (nothing of it is kept).
 */
export async function buildImport(Pool, input, { config, options, onHead, signal }) {
  const handOver = input instanceof Uint8Array && whole(input);
  const worker = new Worker(new URL("./import-worker.js", import.meta.url), {
    workerData: { config, bytes: handOver ? input : null },
    transferList: handOver ? [input.buffer] : [],
  });
  const inbox = [];
  let wake = null;
  const deliver = (m) => {
    inbox.push(m);
    wake?.();
    wake = null;
  };
  worker.on("message", deliver);
  worker.on("error", (e) => deliver({ error: { message: `the import thread failed: ${e.message}`, code: e.code } }));
  worker.on("exit", (code) => deliver({ error: { message: `the import thread stopped (exit code ${code})` } }));
  const stop = () => deliver({ closed: true });
  signal.addEventListener("abort", stop);
  const received = () => (inbox.length > 0 ? Promise.resolve() : new Promise((r) => (wake = r)));
  let restore = null;
  try {
    if (!handOver) await send(worker, input, signal);
    const batches = [];
    for (let building = true; building; ) {
      await received();
      // A step takes what has come, batch by batch, for about STEP_BUDGET_MS.
      building = await stepLater(() => {
        const until = performance.now() + STEP_BUDGET_MS;
        while (inbox.length > 0) {
          const m = inbox.shift();
          if (m.closed || signal.aborted) throw poolClosed();
          if (m.error) throw Object.assign(new Error(m.error.message), m.error.code ? { code: m.error.code } : {});
          if (m.head !== undefined) {
            onHead(m.counters);
            restore = Pool.restoreInParts(m.head, options);
            restore.reserve(m.kinds); // no registry table doubled (and rehashed) on the way
            worker.postMessage({ more: AHEAD });
          } else if (m.sections) {
            batches.push(m.sections);
            restore.add(...m.sections);
            worker.postMessage({ more: 1 });
          } else if (m.done) return false;
          if (performance.now() >= until) break;
        }
        return true;
      });
    }
    while (!(await stepLater(() => restore.step()))) {
      if (signal.aborted) throw poolClosed();
    }
    return new BuiltImport(restore, batches);
  } catch (e) {
    restore?.free();
    throw e;
  } finally {
    signal.removeEventListener("abort", stop);
    worker.removeAllListeners("exit");
    worker.terminate();
  }
}

/** Sends `input` (text, or bytes whose buffer cannot be handed over) to the thread as UTF-8
 * chunks, a chunk a step. */
async function send(worker, input, signal) {
  const encoder = new TextEncoder();
  const text = typeof input === "string";
  const size = text ? input.length : input.byteLength;
  for (let at = 0; at < size; ) {
    if (signal.aborted) throw poolClosed();
    at = await stepLater(() => {
      let end = Math.min(size, at + (text ? TEXT_CHUNK : BYTES_CHUNK));
      // A surrogate pair is encoded whole: never cut between its halves.
      if (text && end < size && (input.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
      const chunk = text ? encoder.encode(input.slice(at, end)) : input.slice(at, end);
      worker.postMessage({ chunk }, [chunk.buffer]);
      return end;
    });
  }
  worker.postMessage({ end: true });
}

/** A pool built from an import's parts, not yet live: counters to raise, the snapshot to store
 * (its head and pieces), then `finish()` for the pool, or `free()`. */
class BuiltImport {
  #restore;
  #batches;

  constructor(restore, batches) {
    this.#restore = restore;
    this.#batches = batches;
  }

  /** Raises the counters to at least `floor`'s (`{revision?, fencingHighWater?, nextEventSeq?}`). */
  raise(floor) {
    this.#restore.raise(floor);
  }

  /** The head of the snapshot built, counters as raised. */
  head() {
    return this.#restore.head();
  }

  /** The snapshot under `head` in pieces (strings and UTF-8 bytes), as snapshot-parts.js
   * joins parts: the stored import. */
  *pieces(head) {
    yield `${head},"registered":[`;
    yield* this.#section(0);
    yield `],"blocklist":[`;
    yield* this.#section(1);
    yield `],"cells":[`;
    yield* this.#section(2);
    yield "]}";
  }

  /** Section `i` of every batch that has entries, comma-separated. */
  *#section(i) {
    let first = true;
    for (const batch of this.#batches) {
      const bytes = batch[i];
      if (bytes.byteLength === 0) continue;
      if (!first) yield ",";
      first = false;
      yield bytes;
    }
  }

  /** The pool (the parts are let go). */
  finish() {
    this.#batches = [];
    return this.#restore.finish();
  }

  free() {
    this.#batches = [];
    this.#restore.free();
  }
}
