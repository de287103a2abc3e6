// Shared by the pool client tests (not a test file): real sockets on 127.0.0.1 between the
// client and a real pool server — a TCP relay that forwards, or drops, each connection and
// records what went through it (and can cut every connection at once); a listener that
// accepts and never answers; a stand-in HTTP server answering what a test tells it (for the
// answers a real pool gives only when its disk fails); and a port nothing listens on.
import http from "node:http";
import net from "node:net";

const listen = (server) => new Promise((r) => server.listen(0, "127.0.0.1", () => r(server.address().port)));

/**
 * A relay to `port` on 127.0.0.1. `relay.drop` (a number) is how many of the next requests
 * (on any connection, new or kept alive) are cut: their connection is destroyed as soon as the
 * request's first bytes reach the relay, so the request never reaches the server. Records the
 * text each connection carried from the client (`relay.sent[i]`) and counts connections;
 * `cutAll()` cuts every connection, `freezeAll()` silences every open one.
 */
export async function startRelay(port) {
  const relay = { drop: 0, connections: 0, dropped: 0, sent: [], sockets: new Set(), pairs: new Set() };
  relay.server = net.createServer((client) => {
    const i = relay.connections++;
    relay.sent[i] = "";
    const upstream = net.connect(port, "127.0.0.1");
    for (const s of [client, upstream]) {
      relay.sockets.add(s);
      s.on("close", () => relay.sockets.delete(s));
      s.on("error", () => {});
    }
    client.on("data", (d) => {
      const text = d.toString("latin1");
      relay.sent[i] += text;
      if (relay.drop > 0 && /^[A-Z]+ \//.test(text)) {
        relay.drop--;
        relay.dropped++;
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(d);
    });
    upstream.pipe(client);
    relay.pairs.add({ client, upstream });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  relay.port = await listen(relay.server);
  relay.url = `http://127.0.0.1:${relay.port}`;
  /** Cuts every connection through the relay (both sides), as a network failure would. */
  relay.cutAll = () => {
    for (const s of relay.sockets) s.destroy();
  };
  /** Stops passing the server's bytes to the client on every open connection (a silent
   * network: nothing is closed, nothing arrives). New connections pass as usual. */
  relay.freezeAll = () => {
    for (const { client, upstream } of relay.pairs) {
      upstream.unpipe(client);
      upstream.pause();
    }
    relay.pairs.clear();
  };
  relay.close = () => new Promise((r) => (relay.cutAll(), relay.server.close(() => r())));
  return relay;
}

/** A listener that accepts connections and never answers. */
export async function startSilent() {
  const silent = { connections: 0, sockets: new Set() };
  silent.server = net.createServer((s) => {
    silent.connections++;
    silent.sockets.add(s);
    s.on("error", () => {});
    s.on("close", () => silent.sockets.delete(s));
  });
  silent.port = await listen(silent.server);
  silent.url = `http://127.0.0.1:${silent.port}`;
  silent.close = () => new Promise((r) => {
    for (const s of silent.sockets) s.destroy();
    silent.server.close(() => r());
  });
  return silent;
}

/** An HTTP server answering every request with `stand.answer` ({ status, headers, body }). */
export async function startStandIn() {
  const stand = { answer: { status: 200, headers: {}, body: "" }, requests: [] };
  stand.server = http.createServer((req, res) => {
    req.resume();
    stand.requests.push({ method: req.method, url: req.url, headers: req.headers });
    const { status, headers, body } = stand.answer;
    res.writeHead(status, headers);
    res.end(body);
  });
  stand.port = await listen(stand.server);
  stand.url = `http://127.0.0.1:${stand.port}`;
  stand.close = () => new Promise((r) => (stand.server.closeAllConnections(), stand.server.close(() => r())));
  return stand;
}

/** A problem+json answer of the pool's shape. */
export const problem = (status, name, headers = {}) => ({
  status,
  headers: { "content-type": "application/problem+json", ...headers },
  body: JSON.stringify({ type: `urn:repute:problem:${name}`, title: "x", status, detail: `a ${name} problem` }),
});

/** A 127.0.0.1 port nothing listens on (one just freed). */
export async function freePort() {
  const server = net.createServer();
  const port = await listen(server);
  await new Promise((r) => server.close(r));
  return port;
}

/** Rejects with `what` unless `promise` settles within `ms` (a hung test fails, it does not hang). */
export function within(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms))),
  ]);
}
