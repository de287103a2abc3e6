// The steps mode of the load test (`pkg-scripts/perf/load --steps`; figures in BENCHMARKS.md, "Pool
// server over HTTP"): a worker's whole step in one request. Each keep-alive connection acquires
// once (POST /api/leases), then finishes each lease with the next in the same call (POST
// /api/leases/{leaseId}/outcome with `"next": {}`), the answer's next lease feeding the next
// request; a finish answered `{"next": null}` (nothing eligible) is followed by an acquire.
// A step is one finish answered 200; the latency of every request is measured from its write to
// the end of its answer.
//
// The requests go over plain sockets with a minimal HTTP/1.1 client (below), not autocannon:
// autocannon's request sequences reset their context at the end of each loop, which loses the
// lease a connection holds, and the generator shares the machine's two cores with the server,
// so the less it spends per request the better (this client: see BENCHMARKS.md for its CPU).
// It reads only what the pool server sends: a status line, headers with content-length, a body.

import net from "node:net";

const JSON_HEAD = "content-type: application/json\r\n";

/**
 * One keep-alive connection sending one request at a time: `send(head, body)` resolves to
 * `{ status, body }` (body as text). Fails on anything but a content-length answer.
 */
function connection(port) {
  const socket = net.connect({ port, host: "127.0.0.1", noDelay: true });
  let buffer = Buffer.alloc(0);
  let pending = null;
  const fail = (error) => {
    if (pending) pending.reject(error);
    pending = null;
  };
  socket.on("error", fail);
  socket.on("close", () => fail(new Error("the server closed the connection")));
  socket.on("data", (chunk) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    const end = buffer.indexOf("\r\n\r\n");
    if (end < 0 || !pending) return;
    const head = buffer.toString("latin1", 0, end);
    const m = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!m) return fail(new Error(`an answer without content-length: ${head.slice(0, 200)}`));
    const total = end + 4 + Number(m[1]);
    if (buffer.length < total) return;
    const status = Number(head.slice(9, 12));
    const body = buffer.toString("utf8", end + 4, total);
    buffer = buffer.subarray(total);
    const p = pending;
    pending = null;
    p.resolve({ status, body });
  });
  const ready = new Promise((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  return {
    ready,
    send(requestLine, body) {
      return new Promise((resolve, reject) => {
        pending = { resolve, reject };
        socket.write(`${requestLine} HTTP/1.1\r\nhost: 127.0.0.1\r\n${JSON_HEAD}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      });
    },
    close: () => socket.destroy(),
  };
}

/**
 * Runs `connections` step loops against the server at `port` for `seconds` (a loop stops after
 * its answer in flight). `contexts`: the contexts, connection i uses contexts[i % n];
 * `outcome()`: the next outcome to report; `record(kind, status, ms)` is called for every
 * answer (kind "acquire" or "finish"). A status other than acquire 201/409 or finish 200
 * rejects. Resolves when every loop has stopped, to the seconds actually run.
 */
export async function runSteps({ port, connections, seconds, contexts, outcome, record }) {
  const conns = Array.from({ length: connections }, () => connection(port));
  await Promise.all(conns.map((c) => c.ready));
  const started = performance.now();
  const until = started + seconds * 1000;
  const loop = async (conn, context) => {
    let lease = null;
    while (performance.now() < until) {
      const t = performance.now();
      if (lease === null) {
        const { status, body } = await conn.send("POST /api/leases", JSON.stringify({ context }));
        record("acquire", status, performance.now() - t);
        if (status === 201) lease = JSON.parse(body);
        else if (status !== 409) throw new Error(`acquire answered ${status}: ${body}`);
      } else {
        const request = JSON.stringify({ outcome: outcome(), next: {} });
        const { status, body } = await conn.send(`POST /api/leases/${lease.leaseId}/outcome`, request);
        record("finish", status, performance.now() - t);
        if (status !== 200) throw new Error(`finish answered ${status}: ${body}`);
        lease = JSON.parse(body).next;
      }
    }
    // The lease still held is left to lapse: the server stops after the run.
  };
  try {
    await Promise.all(conns.map((c, i) => loop(c, contexts[i % contexts.length])));
  } finally {
    for (const c of conns) c.close();
  }
  return (performance.now() - started) / 1000;
}
