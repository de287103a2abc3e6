// Real local servers for the resilient-call socket tests (not a test file), all on 127.0.0.1:
// an origin whose behaviour a test sets per request, forward proxies that record which client
// connection carried which request and credentials (and can hold or refuse a CONNECT), an
// HTTPS origin with an expired certificate made by the `openssl` CLI, and waiting helpers.
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const listen = (server) => new Promise((r) => server.listen(0, "127.0.0.1", () => r(server.address().port)));

/** Tracks a server's sockets: how many are open, and a promise per socket for its close. */
function sockets(server) {
  const all = new Set();
  let next = 0;
  server.on("connection", (s) => {
    s.id = ++next;
    all.add(s);
    s.on("close", () => all.delete(s));
  });
  return {
    get open() { return all.size; },
    /** The ids of the sockets open now. */
    ids: () => new Set([...all].map((s) => s.id)),
    destroyAll: () => { for (const s of all) s.destroy(); },
  };
}

/** The origin: `handle(req, res, body)` is set by each test; every request is recorded. */
export async function startOrigin() {
  const o = { requests: [], handle: (req, res) => res.end("ok") };
  o.server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      o.requests.push({ method: req.method, url: req.url, headers: req.headers, body, socket: req.socket });
      o.handle(req, res, body);
    });
  });
  o.sockets = sockets(o.server);
  o.port = await listen(o.server);
  o.url = (path = "/") => `http://127.0.0.1:${o.port}${path}`;
  o.close = () => new Promise((r) => (o.sockets.destroyAll(), o.server.close(() => r())));
  return o;
}

/**
 * A forward proxy. `mode`: "forward" (absolute-URI requests and CONNECT tunnels), "hold"
 * (accepts, never answers a CONNECT). Records { method, url, auth, conn } per request.
 */
export async function startProxy(mode = "forward") {
  const p = { mode, seen: [] };
  p.server = http.createServer((req, res) => {
    p.seen.push({ method: req.method, url: req.url, auth: req.headers["proxy-authorization"] ?? null, conn: req.socket.id });
    const u = new URL(req.url);
    const headers = { ...req.headers };
    delete headers["proxy-authorization"];
    const up = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method: req.method, headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on("error", () => res.destroy());
    res.on("close", () => up.destroy());
    req.pipe(up);
  });
  p.server.on("connect", (req, socket) => {
    p.seen.push({ method: "CONNECT", url: req.url, auth: req.headers["proxy-authorization"] ?? null, conn: socket.id });
    socket.on("end", () => socket.destroy()); // the client hung up (the server allows half-open sockets)
    if (p.mode === "hold") return; // never answers: the client is stuck connecting
    const [host, port] = req.url.split(":");
    const up = net.connect(Number(port), host, () => {
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on("error", () => socket.destroy());
    socket.on("error", () => up.destroy());
    socket.on("close", () => up.destroy());
  });
  p.sockets = sockets(p.server);
  p.port = await listen(p.server);
  p.url = (auth = "") => `http://${auth ? `${auth}@` : ""}127.0.0.1:${p.port}`;
  p.close = () => new Promise((r) => (p.sockets.destroyAll(), p.server.close(() => r())));
  return p;
}

/** An HTTPS origin whose certificate (for 127.0.0.1) expired in 2020; null when `openssl` is
 * missing. Returns { port, ca, close }. */
export async function startExpiredTlsOrigin() {
  const dir = mkdtempSync(join(tmpdir(), "repute-tls-"));
  try {
    writeFileSync(join(dir, "ca.cnf"), [
      "[ca]", "default_ca = x", "[x]", "database = index.txt", "new_certs_dir = .", "serial = serial", "default_md = sha256",
      "policy = p", "copy_extensions = copy", "[p]", "commonName = supplied", "[req]", "distinguished_name = dn", "prompt = no",
      "req_extensions = ext", "[dn]", "CN = 127.0.0.1", "[ext]", "subjectAltName = IP:127.0.0.1", "",
    ].join("\n"));
    writeFileSync(join(dir, "index.txt"), "");
    writeFileSync(join(dir, "serial"), "01\n");
    const run = (args) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
    run(["req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out", "csr.pem", "-config", "ca.cnf"]);
    run(["ca", "-batch", "-config", "ca.cnf", "-selfsign", "-keyfile", "key.pem", "-in", "csr.pem", "-out", "cert.pem",
      "-startdate", "20200101000000Z", "-enddate", "20200201000000Z", "-notext"]);
    const key = readFileSync(join(dir, "key.pem"));
    const cert = readFileSync(join(dir, "cert.pem"));
    const server = https.createServer({ key, cert }, (req, res) => res.end("secret"));
    server.on("tlsClientError", () => {});
    const port = await listen(server);
    return { port, ca: cert, close: () => new Promise((r) => server.close(() => r())) };
  } catch (e) {
    if (e.code === "ENOENT") return null; // no openssl
    throw e;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Waits (real I/O turns) until `check()` holds; gives up after 10 s (a slow machine). */
export async function until(check, what = "condition") {
  const end = Date.now() + 10_000;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 1));
  if (!check()) throw new Error(`${what} never became true`);
}
