// Shared helpers of the HTTP server tests (http-api, roles, bad-input, sse, restart): an
// in-process pool served on 127.0.0.1 port 0 from a temporary folder, a small `fetch` wrapper,
// problem+json assertions, a Server-Sent Events reader, raw HTTP/1.1 on a socket (for requests
// fetch refuses to send) and a child-process `repute serve`.
// Not a test file itself (no `.test.` in the name).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openPool } from "../../pkg-scripts/lib/node/open-pool.js";
import { serve } from "../../pkg-scripts/lib/node/http-server.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CLI = path.join(ROOT, "pkg-scripts/bin/repute.js");
/** A fixed instant for pools whose clock must not move. */
export const T0 = 1_700_000_000_000;

export const tempDir = (prefix) => mkdtemp(path.join(os.tmpdir(), `repute-${prefix}-`));

/**
 * Which server the HTTP suites (http-api, roles, bad-input) run against: the Node server (the
 * default), or with REPUTE_HTTP_TARGET=edge the edge worker in workerd (tests/edge/ sets it),
 * each server a fresh region's pool. A test that cannot hold on the edge says why with
 * `edgeSkip(reason)` as its options.
 */
export const onEdge = process.env.REPUTE_HTTP_TARGET === "edge";
export const edgeSkip = (reason) => ({ skip: onEdge ? `edge worker: ${reason}` : false });

/**
 * An in-process pool (openPool) served by `serve` on 127.0.0.1, port 0 — or, on the edge, a new
 * region of the edge worker (`url` ends in `/regions/{region}`; no `pool`; the clock is real). `clock` is a mutable
 * clock (`clock.now`, epoch ms) the pool reads; `close()` stops the server, closes the pool and
 * removes the folder.
 */
export async function startServer({ config, tokens = [], serveOptions = {}, poolOptions = {}, now = T0 } = {}) {
  if (onEdge) {
    const { edgeServer } = await import("../edge/_edge-support.mjs");
    return edgeServer({ config, tokens, serveOptions, poolOptions });
  }
  const dir = await tempDir("http");
  const clock = { now };
  const pool = await openPool({
    dir,
    config,
    now: () => clock.now,
    seed: 7,
    checkpointMs: 0,
    handleSignals: false,
    onError: () => {},
    ...poolOptions,
  });
  let server;
  try {
    server = await serve(pool, { host: "127.0.0.1", port: 0, tokens, ...serveOptions });
  } catch (e) {
    await pool.close();
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  let closed = false;
  return {
    pool,
    server,
    url: server.url,
    dir,
    clock,
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
      await pool.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `fn(server)` against a fresh `startServer(options)` and always closes it. */
export async function withServer(options, fn) {
  const s = await startServer(options);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

/**
 * One request. `body`: an object (sent as JSON) or a string (sent as is, with content-type
 * application/json unless `headers` says otherwise). Resolves to
 * `{status, headers, text, json}` (`json` is the parsed body or undefined).
 */
export async function call(base, method, pathAndQuery, { body, token, headers = {} } = {}) {
  const h = { ...(onEdge ? (await import("../edge/_edge-support.mjs")).clockHeader(base) : {}), ...headers };
  if (token !== undefined) h.authorization = `Bearer ${token}`;
  let payload;
  if (body !== undefined) {
    payload = typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body);
    if (!Object.keys(h).some((k) => k.toLowerCase() === "content-type")) h["content-type"] = "application/json";
  }
  const res = await fetch(base + pathAndQuery, { method, headers: h, body: payload });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Reads a node:http response to its end: `{status, headers, text, json}` like `call`. */
export function readResponse(res) {
  return new Promise((resolve, reject) => {
    let text = "";
    res.setEncoding("utf8");
    res.on("data", (d) => (text += d));
    res.on("error", reject);
    res.on("end", () => {
      let json;
      try {
        json = JSON.parse(text);
      } catch {}
      resolve({ status: res.statusCode, headers: new Headers(res.headers), text, json });
    });
  });
}

/** Asserts a problem+json response with this status (and problem name, when given). */
export function assertProblem(res, status, name, message = "") {
  const where = `${message}${message ? ": " : ""}${res.status} ${res.text.slice(0, 300)}`;
  assert.equal(res.status, status, where);
  assert.equal(res.headers.get("content-type"), "application/problem+json", where);
  assert.ok(res.json && typeof res.json === "object", `problem body is JSON: ${where}`);
  assert.match(res.json.type, /^urn:repute:problem:[a-z-]+$/, where);
  if (name !== undefined) assert.equal(res.json.type, `urn:repute:problem:${name}`, where);
  assert.equal(res.json.status, status, where);
  assert.equal(typeof res.json.title, "string", where);
  assert.equal(typeof res.json.detail, "string", where);
}

/** `/api/resources/{kind}/{value}` with the value percent-encoded. */
export const resourcePath = (kind, value, suffix = "") =>
  `/api/resources/${encodeURIComponent(kind)}/${encodeURIComponent(value)}${suffix}`;

/** Parses one SSE block (the text between blank lines). */
function parseFrame(block) {
  const frame = { comments: [] };
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) frame.comments.push(line.slice(1).trim());
    else {
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      frame[field] = frame[field] === undefined ? value : `${frame[field]}\n${value}`;
    }
  }
  return frame;
}

/**
 * Opens `GET /api/events/stream` (plus `query`) with `headers`, and reads it in the background.
 * `frames` are every block received (comments included); `events()` the parsed events;
 * `waitFor(pred)` resolves once `pred(client)` holds (rejects after `ms`); `close()` aborts.
 */
export async function openStream(base, { query = "", headers = {} } = {}) {
  const ac = new AbortController();
  const res = await fetch(`${base}/api/events/stream${query}`, { headers, signal: ac.signal });
  const client = {
    res,
    frames: [],
    ended: false,
    events() {
      return this.frames.filter((f) => f.data !== undefined).map((f) => ({ ...JSON.parse(f.data), _id: f.id, _event: f.event }));
    },
    async waitFor(pred, ms = 5000, what = "stream condition") {
      const deadline = Date.now() + ms;
      while (!pred(client)) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    close() {
      ac.abort();
    },
  };
  if (res.status !== 200 || !res.body) {
    client.ended = true;
    return client;
  }
  (async () => {
    const dec = new TextDecoder();
    let buf = "";
    try {
      for await (const chunk of res.body) {
        buf += dec.decode(chunk, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          client.frames.push(parseFrame(buf.slice(0, i)));
          buf = buf.slice(i + 2);
        }
      }
    } catch {
      // aborted
    }
    client.ended = true;
  })();
  return client;
}

/** Raw HTTP/1.1 on one socket: returns { write(text), next(ms) → one response or null, state }. */
export async function rawConnection(port) {
  const sock = net.connect(port, "127.0.0.1");
  await new Promise((r, j) => sock.once("connect", r).once("error", j));
  let buf = Buffer.alloc(0);
  const state = { closed: false };
  sock.on("data", (d) => (buf = Buffer.concat([buf, d])));
  sock.on("close", () => (state.closed = true));
  sock.on("error", () => {});
  /** Length of the first complete response in `buf` (content-length or chunked), or -1. */
  const complete = () => {
    const headEnd = buf.indexOf("\r\n\r\n");
    if (headEnd < 0) return -1;
    const head = buf.subarray(0, headEnd).toString("latin1");
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (length) {
      const total = headEnd + 4 + Number(length[1]);
      return buf.length >= total ? total : -1;
    }
    if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      const end = buf.indexOf("\r\n0\r\n\r\n", headEnd);
      return end < 0 ? -1 : end + 7;
    }
    return headEnd + 4; // no body
  };
  return {
    state,
    write: (t) => sock.write(t),
    /** Waits for a complete response or the socket's close. */
    async next(ms) {
      const deadline = Date.now() + ms;
      for (;;) {
        const end = complete();
        if (end >= 0) {
          const res = buf.subarray(0, end).toString("utf8");
          buf = buf.subarray(end);
          return res;
        }
        if (state.closed || Date.now() > deadline) return null;
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    destroy: () => sock.destroy(),
  };
}

/**
 * Sends `text` (bytes as written: a malformed request fetch would refuse to send) on a fresh
 * connection and parses the one response: `{status, headers, text, json, head}` (headers with
 * lower-case names; `json` undefined unless the body parses). Throws if none comes within `ms`.
 */
export async function rawRequest(port, text, ms = 5000) {
  const c = await rawConnection(port);
  try {
    c.write(text);
    const res = await c.next(ms);
    if (res === null) throw new Error(`no response to ${JSON.stringify(text.slice(0, 80))}`);
    const headEnd = res.indexOf("\r\n\r\n");
    const [statusLine, ...lines] = res.slice(0, headEnd).split("\r\n");
    const headers = new Headers(lines.map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()]));
    const body = res.slice(headEnd + 4);
    let json;
    try {
      json = JSON.parse(body);
    } catch {}
    return { status: Number(statusLine.split(" ")[1]), headers, text: body, json, head: statusLine };
  } finally {
    c.destroy();
  }
}

/**
 * A child `node pkg-scripts/bin/repute.js serve ...args`. Resolves once it prints its URL
 * (`repute: serving http://...`), or rejects with its output if it exits first.
 */
export function spawnServe(args, { env = {} } = {}) {
  const child = spawn(process.execPath, [CLI, "serve", ...args], {
    cwd: ROOT,
    env: { ...process.env, REPUTE_TOKENS: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stdout.on("data", (d) => (out.stdout += d));
  child.stderr.on("data", (d) => (out.stderr += d));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, ...out })));
  const ready = new Promise((resolve, reject) => {
    const onData = () => {
      const m = /repute: serving (http:\/\/\S+)/.exec(out.stdout);
      if (m) {
        child.stdout.off("data", onData);
        resolve(m[1]);
      }
    };
    child.stdout.on("data", onData);
    exited.then((r) => reject(new Error(`repute serve exited (${r.code ?? r.signal}) before serving:\n${r.stdout}\n${r.stderr}`)));
  });
  ready.catch(() => {});
  return { child, out, ready, exited };
}

/** Runs `repute serve ...args` expecting it to exit by itself (within `ms`). */
export async function runServeToExit(args, { env = {}, ms = 10000 } = {}) {
  const p = spawnServe(args, { env });
  const timer = setTimeout(() => p.child.kill("SIGKILL"), ms);
  const r = await p.exited;
  clearTimeout(timer);
  return r;
}
