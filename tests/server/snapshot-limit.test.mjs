// The size limit of `PUT /api/snapshot` (pkg-scripts/lib/http/handler.js): refused by its
// content-length before any of the body is read, and while streaming a chunked body once it
// passes the limit — in both cases without waiting for the rest, which the client here never
// sends (a server that reads first and checks after would never answer). The default limit is
// sized from the pool's config (maxCells, windowSize), exact to the byte; `--snapshot-limit` and
// `REPUTE_SNAPSHOT_LIMIT` set it; one upload is read at a time. Real sockets on 127.0.0.1 (but
// for a body that disagrees with its content-length, which only an adapter can pass on).
import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { rm } from "node:fs/promises";
import path from "node:path";
import { call, assertProblem, withServer, spawnServe, runServeToExit, tempDir } from "./_http-support.mjs";
import { snapshotLimitFor } from "../../pkg-scripts/lib/http/handler.js";

const GiB = 2 ** 30;

/**
 * Opens a raw connection to `url`, sends `head` (the request line and headers, without the
 * blank line) and then each of `parts` as it is, and resolves to the status and body of the
 * response — which must come while the request is still unfinished — or rejects after 5 s.
 */
async function unfinished(url, head, parts = []) {
  const { port } = new URL(url);
  const sock = net.connect(Number(port), "127.0.0.1");
  sock.on("error", () => {});
  let text = "";
  sock.on("data", (d) => (text += d.toString("latin1")));
  try {
    sock.write(`${head}Host: 127.0.0.1\r\n\r\n`);
    for (const p of parts) sock.write(p);
    const deadline = Date.now() + 5000;
    for (;;) {
      const m = /^HTTP\/1\.1 (\d+)[^]*?\r\n\r\n/.exec(text);
      const length = m && /\r\ncontent-length: *(\d+)/i.exec(m[0]);
      if (m && length && text.length >= m[0].length + Number(length[1])) {
        return { status: Number(m[1]), head: m[0], json: JSON.parse(text.slice(m[0].length)) };
      }
      if (Date.now() > deadline) throw new Error(`no answer within 5 s while the body was unfinished; got: ${JSON.stringify(text)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    sock.destroy();
  }
}

const put = (headers) => `PUT /api/snapshot HTTP/1.1\r\nContent-Type: application/json\r\n${headers}`;
const chunk = (n) => `${n.toString(16)}\r\n${" ".repeat(n)}\r\n`;

/** The pool's own export, padded with JSON whitespace to exactly `size` bytes. */
async function exportOf(url, size) {
  const text = (await call(url, "GET", "/api/snapshot")).text;
  assert.ok(text.length <= size, `the export (${text.length} bytes) fits in ${size}`);
  return text + " ".repeat(size - text.length);
}

test("a content-length over the limit is refused with 413 before the body is read", async () => {
  await withServer({ serveOptions: { snapshotLimit: 4096 } }, async ({ url, pool }) => {
    const before = pool.snapshot();
    for (const length of [4097, GiB, 400 * 2 ** 20]) {
      const res = await unfinished(url, put(`Content-Length: ${length}\r\n`), ["{"]);
      assert.equal(res.status, 413, `content-length ${length}`);
      assert.equal(res.json.type, "urn:repute:problem:body-too-large");
      assert.match(res.json.detail, /the snapshot is larger than 4096 bytes/);
    }
    assert.equal(pool.snapshot(), before, "nothing imported");
  });
});

test("a chunked upload is refused with 413 as soon as it passes the limit, before it ends", async () => {
  await withServer({ serveOptions: { snapshotLimit: 4096 } }, async ({ url }) => {
    // 4 096 bytes are within the limit; one more byte is not. The terminating chunk never comes.
    const res = await unfinished(url, put("Transfer-Encoding: chunked\r\n"), [chunk(4000), chunk(96), chunk(1)]);
    assert.equal(res.status, 413);
    assert.equal(res.json.type, "urn:repute:problem:body-too-large");
    // At the limit exactly, the server waits for the rest: a whole snapshot of 4 096 bytes is taken.
    const body = await exportOf(url, 4096);
    const ok = await call(url, "PUT", "/api/snapshot", { body });
    assert.equal(ok.status, 204, ok.text);
  });
});

test("the default limit is sized from the pool's maxCells and windowSize, to the byte", async () => {
  const config = { maxCells: 20, windowSize: 5 };
  const limit = 2 ** 20 + 20 * (640 + 40 * 5);
  assert.equal(snapshotLimitFor({ maxCells: 20, windowSize: 5 }), limit);
  assert.equal(snapshotLimitFor({ maxCells: 500_000, windowSize: 10 }), 521_048_576, "496.9 MiB for the defaults");
  await withServer({ config }, async ({ url }) => {
    const over = await unfinished(url, put(`Content-Length: ${limit + 1}\r\n`));
    assert.equal(over.status, 413);
    assert.match(over.json.detail, new RegExp(`larger than ${limit} bytes`));
    const res = await call(url, "PUT", "/api/snapshot", { body: await exportOf(url, limit) });
    assert.equal(res.status, 204, res.text);
  });
});

test("one snapshot upload at a time: a second one meanwhile gets 409 import-in-progress", async () => {
  await withServer({}, async ({ url }) => {
    const { port } = new URL(url);
    const first = net.connect(Number(port), "127.0.0.1");
    first.on("error", () => {});
    try {
      await new Promise((r) => first.once("connect", r));
      first.write(`${put("Transfer-Encoding: chunked\r\n")}Host: 127.0.0.1\r\n\r\n${chunk(10)}`);
      let second;
      // The first upload is being read once the server has its headers: retry until it is.
      for (let i = 0; i < 100; i++) {
        second = await call(url, "PUT", "/api/snapshot", { body: "{}" });
        if (second.status === 409) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      assertProblem(second, 409, "import-in-progress");
      assert.equal(second.headers.get("retry-after"), "1");
    } finally {
      first.destroy();
    }
    // The first one is gone: uploads are read again.
    let third;
    for (let i = 0; i < 100; i++) {
      third = await call(url, "PUT", "/api/snapshot", { body: (await call(url, "GET", "/api/snapshot")).text });
      if (third.status !== 409) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(third.status, 204, third.text);
  });
});

test("repute serve: --snapshot-limit and REPUTE_SNAPSHOT_LIMIT set the limit; a bad value stops start-up", async (t) => {
  const dir = await tempDir("snapshot-limit");
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const [args, env] of [
    [["--snapshot-limit", "3000"], {}],
    [[], { REPUTE_SNAPSHOT_LIMIT: "3000" }],
  ]) {
    const p = spawnServe(["--data", path.join(dir, "data"), "--port", "0", ...args], { env });
    try {
      const url = await p.ready;
      const over = await unfinished(url, put("Content-Length: 3001\r\n"));
      assert.equal(over.status, 413, JSON.stringify(args));
      const res = await call(url, "PUT", "/api/snapshot", { body: await exportOf(url, 3000) });
      assert.equal(res.status, 204, res.text);
    } finally {
      p.child.kill("SIGTERM");
      await p.exited;
    }
  }
  const bad = await runServeToExit(["--data", path.join(dir, "data"), "--port", "0", "--snapshot-limit", "lots"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--snapshot-limit must be a non-negative integer/);
});

test("an upload is read into one buffer of its declared length: the snapshot arrives whole, in many chunks or one; a body of another length than declared is a 400", async () => {
  // Through the handler with a request of the shape it reads (an adapter's), so that the body
  // can disagree with its content-length: node:http and workerd refuse that before the handler.
  const { MemoryHost } = await import("../../pkg-scripts/lib/host/memory-host.js");
  const { createHandler } = await import("../../pkg-scripts/lib/http/handler.js");
  const { Pool } = await import("../../pkg-scripts/node.js");
  const source = new Pool({ seed: 1 });
  for (let i = 0; i < 50; i++) source.register("PROXY", `proxy-${i}.example:8080`);
  const text = source.snapshot();
  const bytes = new TextEncoder().encode(text);
  const upload = (declared, chunks) => ({
    method: "PUT",
    url: "http://127.0.0.1/api/snapshot",
    headers: new Headers({ "content-type": "application/json", "content-length": String(declared) }),
    body: (async function* () {
      yield* chunks;
    })(),
    signal: new AbortController().signal,
  });
  const split = (n) => Array.from({ length: Math.ceil(bytes.length / n) }, (_, i) => bytes.subarray(i * n, (i + 1) * n));
  for (const chunks of [[bytes], split(1000), split(7)]) {
    const host = await MemoryHost.create({ Pool, seed: 1 });
    const handle = await createHandler(host);
    const res = await handle.reply(upload(bytes.length, chunks));
    assert.equal(res.status, 204, `${chunks.length} chunks: ${res.body}`);
    assert.equal(host.stats().registered, 50, `${chunks.length} chunks`);
  }
  const host = await MemoryHost.create({ Pool, seed: 1 });
  const handle = await createHandler(host);
  for (const [declared, what] of [[bytes.length + 5, /shorter than its content-length/], [bytes.length - 5, /longer than its content-length/]]) {
    const res = await handle.reply(upload(declared, split(1000)));
    assert.equal(res.status, 400, res.body);
    assert.match(JSON.parse(res.body).detail, what);
    assert.equal(host.stats().registered, 0, "nothing imported");
  }
});
