#!/usr/bin/env node
// The `repute` command: `repute serve` runs the pool server (HTTP API of SPEC §8) on one
// pool kept in a data folder; `repute edge-dev` serves the edge worker (edge/) locally under
// Miniflare. `repute --help` lists every flag and environment variable.

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { parseTokens } from "../lib/http/auth.js";
import { lineOfKey } from "../lib/http/strict-json.js";
import { jsonProblem } from "../lib/node/json-problem.js";

// The engine and the server are loaded after the arguments are read, so `--help` and argument
// errors answer without the built WebAssembly module.

const HELP = `repute — a reputation pool for crawler fleets

Usage:
  repute serve [options]     serve one pool over HTTP (the API of the README)
  repute edge-dev [options]  serve the edge worker (one pool per region, in Durable Objects)
                             locally under Miniflare, which runs real workerd
  repute --help              this text

Options of serve (each also read from the environment variable in brackets):
  --host ADDRESS        address to listen on                       [REPUTE_HOST] default 127.0.0.1
  --port PORT           TCP port (0 picks a free one)              [REPUTE_PORT] default 8787
  --data DIR            folder of the snapshot, backup, audit log  [REPUTE_DATA] default ./data
  --tokens FILE         JSON file {"tokens":[{"token":"...","role":"worker|operator|viewer"}]}
                        (each may add "name": who holds it, the actor of its operator events)
                        [REPUTE_TOKENS holds the same JSON inline]; without tokens the server
                        refuses any address but loopback, serves only a loopback Host
                        (localhost, 127.0.0.0/8, [::1]) and no page of another origin, and every
                        route is open to them; with tokens, a cross-origin request needs a token
  --checkpoint-ms MS    snapshot interval                          [REPUTE_CHECKPOINT_MS] default 30000
  --body-limit BYTES    largest request body (PUT /api/config: at least 8 MiB)
                                                                   [REPUTE_BODY_LIMIT] default 65536
  --max-streams N       concurrent event-stream subscribers; one more is refused with 503
                        (too-many-streams, Retry-After)            [REPUTE_MAX_STREAMS] default 32
  --max-wait-ms MS      the longest "waitMs" a request may ask for (POST /api/leases, a
                        finish's next); more is refused with 400   [REPUTE_MAX_WAIT_MS] default 30000
  --max-waiting N       requests waiting at once; past it, one that cannot be served at once is
                        answered 503 (too-many-waiting, Retry-After) [REPUTE_MAX_WAITING] default 1000
  --snapshot-limit BYTES  largest PUT /api/snapshot, refused as soon as it is seen to be larger
                        [REPUTE_SNAPSHOT_LIMIT] default 1 MiB + maxCells × (640 + 40 × windowSize)
                        of the pool's config (496 MiB for the defaults)
  --config FILE         JSON file of a partial pool config ({"leaseTtlMs": 60000, "penalties":
                        {"SLOW": 1}, ...}: every field, default and range in the README's
                        "Configuration" and in repute.config.schema.json; repute.config.json is
                        an example) [REPUTE_CONFIG holds the same JSON inline]; checked by the
                        engine before the server starts; on a restart it overrides those fields
                        of the snapshot's config
  --from-backup         start from the previous good snapshot (after a damaged one)
  --record-outcomes     also record every reported outcome (credentials masked) in DATA/outcomes/,
                        served by GET /api/outcomes, for the console's Replay
                        [REPUTE_RECORD_OUTCOMES=1]

Recovery prober (tests PROXY cells whose cooldown ended, through the proxy, holding a lease):
  --probe-targets FILE  JSON file {"context": "http(s) URL to fetch through the proxy", ...}
                        [REPUTE_PROBE_TARGETS holds the same JSON inline]; without it no
                        prober runs. With it, halfOpenCauses defaults to ["BLOCKED"]
  --probe-interval-ms MS  time between probe rounds              [REPUTE_PROBE_INTERVAL_MS] default 5000
  --probe-timeout-ms MS   one probe's deadline                   [REPUTE_PROBE_TIMEOUT_MS] default 10000

The operator console (the package's www/, or the repository's) is served at / : its files need no
token; the calls it makes to the API carry the token you give it.

Signals: SIGTERM or SIGINT stop accepting requests, let the ones in flight finish, write a
final snapshot, close the audit log and exit. Tokens are never logged.

Options of edge-dev (the API is under /regions/{region}/api/..., one pool per region):
  --host ADDRESS        address to listen on                       default 127.0.0.1
  --port PORT           TCP port (0 picks a free one)              default 8787
  --persist DIR         folder of the Durable Objects' SQLite storage (required)
  --tokens FILE         as for serve; given to the worker as its REPUTE_TOKENS secret;
                        without tokens only a loopback address is allowed
  --config FILE         as for serve (the worker's REPUTE_CONFIG)
  --checkpoint-ms MS    delay of the alarm that stores reports      default 10000
Needs the miniflare package (a devDependency of the repository's pkg-scripts/).
SIGTERM or SIGINT stop it; what the last alarm has not stored is lost, as after a crash.
`;

function fail(message) {
  process.stderr.write(`repute: ${message}\n`);
  process.exit(2);
}

function tokensFrom(file, inline) {
  let text;
  try {
    text = file ? readFileSync(file, "utf8") : inline;
  } catch (e) {
    fail(`cannot read the tokens file ${file}: ${e.code ?? e.message}`);
  }
  const where = file ? `in ${file}` : "in REPUTE_TOKENS";
  // An unset or empty REPUTE_TOKENS means no authentication; a --tokens file asked for it, so
  // an empty one is refused rather than serving every route open.
  if (!file && !text) return [];
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text, which here is a secret.
    fail(`bad tokens ${where}: not valid JSON`);
  }
  let tokens;
  try {
    tokens = parseTokens(doc);
  } catch (e) {
    const line = file && e.path ? lineOfKey(text, e.path) : null;
    fail(`bad tokens ${where}${line === null ? "" : `, line ${line}`}: ${e.message}`);
  }
  if (tokens.length === 0) fail(`bad tokens ${where}: the list is empty (to serve without tokens on loopback, leave tokens out)`);
  return tokens;
}

/** A JSON document from `--NAME FILE` or, without the flag, the environment variable `env`
 * (inline JSON); undefined when neither is given. A parse error does not quote the text (a
 * probe target's URL may hold a token). */
function jsonOption(flag, file, env, inline) {
  if (!file && !inline) return undefined;
  const where = file ? `${flag} ${file}` : env;
  let text;
  try {
    text = file ? readFileSync(file, "utf8") : inline;
  } catch (e) {
    fail(`cannot read ${where}: ${e.code ?? e.message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    fail(`${where} is ${jsonProblem(e)}`);
  }
}

function integer(name, raw) {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) fail(`${name} must be a non-negative integer`);
  return n;
}

/** The operator console: in the installed package (www/, put there by prepack), else beside it
 * in a checkout of the repository; none if neither is there. */
const CONSOLE = (() => {
  for (const rel of ["../www/", "../../www/"]) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(new URL("index.html", pathToFileURL(dir)))) return dir;
  }
  return undefined;
})();

async function main(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        help: { type: "boolean", short: "h" },
        host: { type: "string" },
        port: { type: "string" },
        data: { type: "string" },
        tokens: { type: "string" },
        "checkpoint-ms": { type: "string" },
        "body-limit": { type: "string" },
        "max-streams": { type: "string" },
        "max-wait-ms": { type: "string" },
        "max-waiting": { type: "string" },
        "snapshot-limit": { type: "string" },
        "from-backup": { type: "boolean" },
        "record-outcomes": { type: "boolean" },
        config: { type: "string" },
        "probe-targets": { type: "string" },
        "probe-interval-ms": { type: "string" },
        "probe-timeout-ms": { type: "string" },
        persist: { type: "string" },
      },
    });
  } catch (e) {
    fail(`${e.message}\n\n${HELP}`);
  }
  const { values: v, positionals } = parsed;
  if (v.help || positionals.length === 0) {
    process.stdout.write(HELP);
    return;
  }
  if (!["serve", "edge-dev"].includes(positionals[0]) || positionals.length > 1) fail(`unknown command ${positionals.join(" ")}\n\n${HELP}`);
  if (positionals[0] === "edge-dev") return edgeDev(v);
  const env = process.env;
  const host = v.host ?? env.REPUTE_HOST ?? "127.0.0.1";
  const port = integer("--port", v.port ?? env.REPUTE_PORT ?? "8787");
  const dir = v.data ?? env.REPUTE_DATA ?? "./data";
  const tokens = tokensFrom(v.tokens, v.tokens ? undefined : env.REPUTE_TOKENS);
  const checkpointMs = integer("--checkpoint-ms", v["checkpoint-ms"] ?? env.REPUTE_CHECKPOINT_MS ?? "30000");
  const bodyLimit = integer("--body-limit", v["body-limit"] ?? env.REPUTE_BODY_LIMIT ?? "65536");
  const maxStreams = integer("--max-streams", v["max-streams"] ?? env.REPUTE_MAX_STREAMS ?? "32");
  const maxWaitMs = integer("--max-wait-ms", v["max-wait-ms"] ?? env.REPUTE_MAX_WAIT_MS ?? "30000");
  const maxWaiting = integer("--max-waiting", v["max-waiting"] ?? env.REPUTE_MAX_WAITING ?? "1000");
  const rawSnapshotLimit = v["snapshot-limit"] ?? env.REPUTE_SNAPSHOT_LIMIT;
  const snapshotLimit = rawSnapshotLimit === undefined ? undefined : integer("--snapshot-limit", rawSnapshotLimit);
  const recordOutcomes = Boolean(v["record-outcomes"]) || ["1", "true"].includes(env.REPUTE_RECORD_OUTCOMES ?? "");
  const config = jsonOption("--config", v.config, "REPUTE_CONFIG", v.config ? undefined : env.REPUTE_CONFIG);
  const targets = jsonOption("--probe-targets", v["probe-targets"], "REPUTE_PROBE_TARGETS", v["probe-targets"] ? undefined : env.REPUTE_PROBE_TARGETS);
  const intervalMs = integer("--probe-interval-ms", v["probe-interval-ms"] ?? env.REPUTE_PROBE_INTERVAL_MS ?? "5000");
  const timeoutMs = integer("--probe-timeout-ms", v["probe-timeout-ms"] ?? env.REPUTE_PROBE_TIMEOUT_MS ?? "10000");

  const [{ Pool, openPool, httpProbe, redactCredentials }, { serve }] = await Promise.all([
    import("../node.js"),
    import("../lib/node/http-server.js"),
  ]);
  // The engine checks the config before anything listens: a bad field stops here, named.
  if (config !== undefined) {
    try {
      new Pool({ config, seed: 0 }).free();
    } catch (e) {
      fail(`bad config in ${v.config ? `--config ${v.config}` : "REPUTE_CONFIG"}: ${e.message}`);
    }
  }
  let prober;
  if (targets !== undefined) {
    let probe;
    try {
      probe = httpProbe({ targets, timeoutMs });
    } catch (e) {
      fail(`bad probe targets: ${e.message}`);
    }
    prober = {
      probes: { PROXY: probe },
      intervalMs: Math.max(1, intervalMs),
      onError: (e, entry) =>
        process.stderr.write(`repute: probe${entry ? ` of ${Pool.maskValue(entry.kind, entry.value)} in ${entry.context}` : ""}: ${redactCredentials(e?.message ?? e)}\n`),
    };
  }

  // Listen first and restore behind it: /healthz answers and /readyz says 503 until the pool
  // is open.
  const opening = openPool({ dir, checkpointMs, config, prober, fromBackup: Boolean(v["from-backup"]), recordOutcomes, handleSignals: false });
  let server;
  try {
    server = await serve(opening, { host, port, tokens, bodyLimit, maxStreams, maxWaitMs, maxWaiting, snapshotLimit, www: CONSOLE });
  } catch (e) {
    await opening.then((p) => p.close(), () => {});
    fail(e.message);
  }
  process.stdout.write(`repute: listening on ${server.url}; opening ${dir}\n`);
  let stopping = false;
  const stop = async (signal) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`repute: ${signal}: draining\n`);
    await server.close();
    const opened = await opening.catch(() => null); // a stop during the restore waits for it
    try {
      await opened?.close();
    } catch (e) {
      // A full disk at the last moment: say so and exit non-zero (the reservation on disk still
      // covers everything handed out, so the next start skips ahead safely).
      process.stderr.write(`repute: stopped without the final snapshot: ${e.message}\n`);
      process.exit(1);
    }
    process.stdout.write("repute: stopped\n");
    process.exit(0);
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  let pool;
  try {
    pool = await opening;
    await server.ready;
  } catch (e) {
    await server.close();
    fail(e.message);
  }
  if (stopping) return;
  const stats = pool.stats();
  process.stdout.write(
    `repute: serving ${server.url} (data ${dir}, ${stats.registered} resources, revision ${stats.revision}, ` +
      `${tokens.length ? `${tokens.length} tokens` : "no tokens: loopback only, all routes open"})\n`,
  );
}

/** Fails (exit 2) unless `host:port` can be listened on now. */
async function portFree(host, port) {
  const { createServer } = await import("node:net");
  const probe = createServer();
  const error = await new Promise((resolve) => {
    probe.once("error", resolve);
    probe.listen(port, host, () => probe.close(() => resolve(null)));
  });
  if (error) fail(error.code === "EADDRINUSE" ? `${host}:${port} is in use: stop what serves it, or give another --port` : `cannot listen on ${host}:${port}: ${error.code ?? error.message}`);
}

/** `repute edge-dev`: the edge worker under Miniflare (lib/edge/dev.js) until SIGTERM / SIGINT. */
async function edgeDev(v) {
  const host = v.host ?? "127.0.0.1";
  const port = integer("--port", v.port ?? "8787");
  if (!v.persist) fail("edge-dev needs --persist DIR (the folder of the Durable Objects' storage)");
  const tokens = v.tokens ? tokensFrom(v.tokens) : [];
  const config = jsonOption("--config", v.config, "REPUTE_CONFIG", undefined);
  const checkpointMs = integer("--checkpoint-ms", v["checkpoint-ms"] ?? "10000");
  // As `serve`: the engine checks the config before anything listens (the worker would answer
  // every request 500 misconfigured).
  if (config !== undefined) {
    const { Pool } = await import("../node.js");
    try {
      new Pool({ config, seed: 0 }).free();
    } catch (e) {
      fail(`bad config in ${v.config ? `--config ${v.config}` : "REPUTE_CONFIG"}: ${e.message}`);
    }
  }
  const { isLoopback } = await import("../lib/node/http-server.js");
  if (tokens.length === 0 && !isLoopback(host)) fail(`refusing to serve ${host} without tokens: give --tokens FILE, or a loopback address`);
  if (port > 65535) fail("--port must be at most 65535");
  // workerd dies with a crash dump on a taken port: try the address first, and say so plainly.
  if (port !== 0) await portFree(host, port);
  let edge;
  try {
    const { startEdge } = await import("../lib/edge/dev.js");
    edge = await startEdge({ host, port, persist: v.persist, tokens, config, bindings: { REPUTE_CHECKPOINT_MS: String(checkpointMs) } });
  } catch (e) {
    fail(e.code === "ERR_MODULE_NOT_FOUND" ? "edge-dev runs from a checkout of the repository, with its development packages (npm install in pkg-scripts/): to deploy the worker, see the README's \"Edge worker\"" : e.message);
  }
  process.stdout.write(
    `repute: edge worker serving ${edge.url}/regions/{region}/api/ (storage in ${v.persist}, ` +
      `${tokens.length ? `${tokens.length} tokens` : "no tokens: loopback only, all routes open"})\n`,
  );
  const stop = async (signal) => {
    process.stdout.write(`repute: ${signal}: stopping\n`);
    await edge.close();
    process.stdout.write("repute: stopped\n");
    process.exit(0);
  };
  // Miniflare's own exit hook would exit at once (143) without disposing: ours disposes first.
  for (const signal of ["SIGTERM", "SIGINT"]) {
    process.removeAllListeners(signal);
    process.on(signal, () => stop(signal));
  }
}

await main(process.argv.slice(2));
