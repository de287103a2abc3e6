// `repute edge-dev`: the edge worker (worker.js) served locally under Miniflare — real workerd —
// on a host and port, its Durable Objects' storage persisted in a folder. Also the one place
// that says how the worker is run locally (the tests and bench-edge use `workerOptions`).

import { fileURLToPath } from "node:url";
import path from "node:path";

const PKG = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Miniflare options for the worker: `persist` (folder of the Durable Objects' SQLite files),
 * `tokens` (the parsed token list, or none), `config` (a partial pool config), `host`, `port`,
 * `bindings` (more variables: REPUTE_CHECKPOINT_MS, REPUTE_EVENTS_KEPT, REPUTE_TEST_HOOKS).
 */
export function workerOptions({ persist, tokens = [], config, host = "127.0.0.1", port = 0, bindings = {} }) {
  const vars = { ...bindings };
  if (tokens.length > 0) vars.REPUTE_TOKENS = JSON.stringify({ tokens });
  if (config !== undefined) vars.REPUTE_CONFIG = JSON.stringify(config);
  return {
    host,
    port,
    modules: true,
    scriptPath: path.join(PKG, "lib/edge/worker.js"),
    modulesRoot: PKG,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: "2025-09-01",
    compatibilityFlags: ["nodejs_compat"],
    durableObjects: { POOL: { className: "PoolObject", useSQLite: true } },
    durableObjectsPersist: persist,
    bindings: vars,
  };
}

/** Starts the worker: `{ url, mf, close() }`. */
export async function startEdge(options) {
  const { Miniflare } = await import("miniflare");
  const mf = new Miniflare(workerOptions(options));
  const url = (await mf.ready).toString().replace(/\/$/, "");
  return { url, mf, close: () => mf.dispose() };
}
