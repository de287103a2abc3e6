// The edge worker (pkg-scripts/lib/edge/worker.js) under Miniflare, which runs it in real workerd,
// its Durable Objects' SQLite storage persisted in a temporary folder. `edgeServer` is what the
// Node server's HTTP suites get from `startServer` on the edge (tests/server/_http-support.mjs):
// a fresh region of a worker shared by every test with the same tokens and config. Not a test
// file itself.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { startEdge } from "../../pkg-scripts/lib/edge/dev.js";

export { startEdge };
export const tempDir = (prefix) => mkdtemp(path.join(os.tmpdir(), `repute-${prefix}-`));

/** The suites' fixed instant: every region's pool starts there (REPUTE_TEST_NOW). */
const T0 = 1_700_000_000_000;

/** Each region's clock, by its URL: `call` sends its reading (x-repute-test-now, a test hook). */
const clocks = new Map();
function clockOf(url, now) {
  const clock = { now };
  clocks.set(url, clock);
  return clock;
}

/** The header that sets the pool's clock for a request to `base`, or none. */
export function clockHeader(base) {
  const clock = clocks.get(base);
  return clock ? { "x-repute-test-now": String(clock.now) } : {};
}

/** Workers by tokens and config, each started once and disposed after the file's tests. */
const workers = new Map();
let regions = 0;

async function shared(tokens, config) {
  const key = JSON.stringify([tokens, config ?? null]);
  if (!workers.has(key)) {
    workers.set(key, (async () => {
      const dir = await tempDir("edge");
      const edge = await startEdge({ persist: dir, tokens, config, bindings: { REPUTE_TEST_HOOKS: "1", REPUTE_TEST_NOW: String(T0) } });
      return { ...edge, dir };
    })());
  }
  return workers.get(key);
}

/** Disposes the shared workers and removes their folders (a test file's root `after`). */
export async function disposeWorkers() {
  for (const w of workers.values()) {
    const { close, dir } = await w;
    await close();
    await rm(dir, { recursive: true, force: true });
  }
  workers.clear();
}

/** A fresh region of the shared worker for these tokens and config, shaped like startServer's. */
export async function edgeServer({ config, tokens = [], serveOptions = {}, poolOptions = {}, now = T0 }) {
  const extra = [...Object.keys(serveOptions).filter((k) => k !== "host" && k !== "port"), ...Object.keys(poolOptions)];
  if (extra.length > 0) throw new Error(`the edge worker takes no ${extra.join(", ")} (mark the test edgeSkip)`);
  const worker = await shared(tokens, config);
  const url = `${worker.url}/regions/r${++regions}-${process.pid}`;
  return {
    pool: null,
    // `server.server`: the suites close a Node server's connections; a worker has none of its own.
    server: { url, port: Number(new URL(worker.url).port), server: { closeAllConnections() {} } },
    url,
    dir: worker.dir,
    clock: clockOf(url, now),
    async close() {},
  };
}
