#!/usr/bin/env node
// The `repute` command: `repute serve` runs the pool server (HTTP API of SPEC §8) on one
// pool kept in a data folder. `repute --help` lists every flag and environment variable.

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { openPool } from "../lib/host/open-pool.js";
import { serve } from "../lib/http/node-server.js";
import { parseTokens } from "../lib/http/auth.js";

const HELP = `repute — a reputation pool for crawler fleets

Usage:
  repute serve [options]     serve one pool over HTTP (the API of the README)
  repute --help              this text

Options of serve (each also read from the environment variable in brackets):
  --host ADDRESS        address to listen on                       [REPUTE_HOST] default 127.0.0.1
  --port PORT           TCP port (0 picks a free one)              [REPUTE_PORT] default 8787
  --data DIR            folder of the snapshot, backup, audit log  [REPUTE_DATA] default ./data
  --tokens FILE         JSON file {"tokens":[{"token":"...","role":"worker|operator|viewer"}]}
                        [REPUTE_TOKENS holds the same JSON inline]; without tokens the server
                        refuses any address but loopback and every route is open to it
  --checkpoint-ms MS    snapshot interval                          [REPUTE_CHECKPOINT_MS] default 30000
  --body-limit BYTES    largest request body                       [REPUTE_BODY_LIMIT] default 65536
  --from-backup         start from the previous good snapshot (after a damaged one)

Signals: SIGTERM or SIGINT stop accepting requests, let the ones in flight finish, write a
final snapshot, close the audit log and exit. Tokens are never logged.
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
    fail(`bad tokens ${where}: ${e.message}`);
  }
  if (tokens.length === 0) fail(`bad tokens ${where}: the list is empty (to serve without tokens on loopback, leave tokens out)`);
  return tokens;
}

function integer(name, raw) {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) fail(`${name} must be a non-negative integer`);
  return n;
}

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
        "from-backup": { type: "boolean" },
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
  if (positionals[0] !== "serve" || positionals.length > 1) fail(`unknown command ${positionals.join(" ")}\n\n${HELP}`);
  const env = process.env;
  const host = v.host ?? env.REPUTE_HOST ?? "127.0.0.1";
  const port = integer("--port", v.port ?? env.REPUTE_PORT ?? "8787");
  const dir = v.data ?? env.REPUTE_DATA ?? "./data";
  const tokens = tokensFrom(v.tokens, v.tokens ? undefined : env.REPUTE_TOKENS);
  const checkpointMs = integer("--checkpoint-ms", v["checkpoint-ms"] ?? env.REPUTE_CHECKPOINT_MS ?? "30000");
  const bodyLimit = integer("--body-limit", v["body-limit"] ?? env.REPUTE_BODY_LIMIT ?? "65536");

  // Listen first and restore behind it: /healthz answers and /readyz says 503 until the pool
  // is open.
  const opening = openPool({ dir, checkpointMs, fromBackup: Boolean(v["from-backup"]), handleSignals: false });
  let server;
  try {
    server = await serve(opening, { host, port, tokens, bodyLimit });
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
    await opened?.close();
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

await main(process.argv.slice(2));
