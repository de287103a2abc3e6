// Real local servers for the Crawlee tests (not a test file), all on the loopback range:
// target sites under made-up `.test` names, and forward proxies that resolve those names
// themselves (so nothing is ever looked up or reached off this machine: an unknown name is a
// 502), check their Basic credentials, and connect to a site from an address of their own in
// 127.0.0.0/8, the way a real proxy exit has its own IP. A site sees which proxy a request came
// through by that source address alone — as a real site does — and may refuse some. Also: a
// Crawlee set-up whose storage lives in a temporary folder and whose log lines are captured,
// and a second copy of Crawlee's packages (a symlinked or workspace install).
import http from "node:http";
import { after, before, beforeEach } from "node:test";
import net from "node:net";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const listen = (server, host = "127.0.0.1") => new Promise((r) => server.listen(0, host, () => r(server.address().port)));

/** Tracks a server's sockets so that close() ends keep-alive ones too. */
function closer(server) {
  const all = new Set();
  server.on("connection", (s) => {
    all.add(s);
    s.on("close", () => all.delete(s));
  });
  return () => new Promise((r) => {
    for (const s of all) s.destroy();
    server.close(() => r());
  });
}

/**
 * A target site. `handle(req, res, from)` answers (default: a small HTML page linking nowhere);
 * `from` is the name of the proxy whose exit address the request came from (or the address).
 * Every request is recorded as { path, from, seq, at } with a sequence number shared by all
 * sites and `at` on the monotonic clock.
 */
let seq = 0;
export async function startSite(name, exits) {
  const site = { name, hits: [], handle: null };
  site.server = http.createServer((req, res) => {
    const from = exits.get(req.socket.remoteAddress) ?? req.socket.remoteAddress;
    site.hits.push({ path: req.url, from, seq: ++seq, at: performance.now() });
    if (site.handle) return site.handle(req, res, from);
    res.setHeader("content-type", "text/html; charset=utf-8");
    res.end(`<html><head><title>${name} ${req.url}</title></head><body><p>${name}</p></body></html>`);
  });
  site.port = await listen(site.server);
  site.url = (path) => `http://${name}${path}`;
  site.close = closer(site.server);
  return site;
}

/**
 * A forward proxy named `name` that sends its traffic from `exit` (an address in 127.0.0.0/8),
 * requires `Proxy-Authorization: Basic user:password`, and reaches a site only through
 * `resolve(hostname)` → a port on 127.0.0.1. Records { method, target, auth } per request and
 * the most requests it carried at once (`maxInFlight`). `mode`: "forward", "reset" (destroys
 * the client's connection), "hang" (never answers).
 */
export async function startProxy(name, { exit, user, password, resolve }) {
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
  const p = { name, exit, seen: [], inFlight: 0, maxInFlight: 0, mode: "forward" };
  const begin = () => {
    p.inFlight++;
    p.maxInFlight = Math.max(p.maxInFlight, p.inFlight);
    let done = false;
    return () => done || ((done = true), p.inFlight--);
  };
  const target = (host) => {
    const local = resolve(host);
    return local === undefined ? null : { host: "127.0.0.1", port: local };
  };
  p.server = http.createServer((req, res) => {
    const auth = req.headers["proxy-authorization"] ?? null;
    p.seen.push({ method: req.method, target: req.url, auth: auth === expected });
    if (p.mode === "reset") return req.socket.destroy();
    if (p.mode === "hang") return;
    if (auth !== expected) {
      res.writeHead(407, { "proxy-authenticate": 'Basic realm="test"' });
      return res.end();
    }
    let u;
    try {
      u = new URL(req.url);
    } catch {
      res.writeHead(400);
      return res.end();
    }
    const to = target(u.hostname);
    if (!to) {
      res.writeHead(502);
      return res.end();
    }
    const end = begin();
    const headers = { ...req.headers };
    delete headers["proxy-authorization"];
    delete headers["proxy-connection"];
    const up = http.request({ host: to.host, port: to.port, localAddress: exit, path: u.pathname + u.search, method: req.method, headers, agent: false }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on("error", () => (end(), res.destroy()));
    res.on("close", () => (end(), up.destroy()));
    req.pipe(up);
  });
  // CONNECT tunnels (https targets, or clients that tunnel plain HTTP too).
  p.server.on("connect", (req, socket) => {
    const auth = req.headers["proxy-authorization"] ?? null;
    p.seen.push({ method: "CONNECT", target: req.url, auth: auth === expected });
    socket.on("error", () => {});
    if (p.mode === "reset") return socket.destroy();
    if (p.mode === "hang") return;
    if (auth !== expected) return socket.end("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\n\r\n");
    const [host] = req.url.split(":");
    const to = target(host);
    if (!to) return socket.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
    const end = begin();
    const up = net.connect({ host: to.host, port: to.port, localAddress: exit }, () => {
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on("error", () => socket.destroy());
    socket.on("close", () => (end(), up.destroy()));
  });
  p.port = await listen(p.server);
  /** The proxy's URL with its credentials (what a resolver hands to Crawlee). */
  p.url = (pass = password) => `http://${user}:${encodeURIComponent(pass)}@127.0.0.1:${p.port}`;
  p.close = closer(p.server);
  return p;
}

/**
 * Sites and proxies: by default two sites, `sites.a` / `sites.b` (site-a.test, site-b.test), and
 * three proxies; `{ sites: ["a", …, "e"], proxies: 8 }` for more. `proxies` are named
 * proxy-1…n with exits 127.0.0.11… and passwords `secret-<n>-…` (distinctive, so a leak is found
 * by a plain search). `exits`: exit address → proxy name.
 */
export async function startWorld({ sites: siteKeys = ["a", "b"], proxies: count = 3 } = {}) {
  const exits = new Map();
  const names = new Map();
  const sites = {};
  for (const k of siteKeys) sites[k] = await startSite(`site-${k}.test`, exits);
  for (const s of Object.values(sites)) names.set(s.name, s.port);
  const proxies = [];
  const passwords = [];
  for (let n = 1; n <= count; n++) {
    const exit = `127.0.0.${10 + n}`;
    const password = `secret-${n}-Zq7!pW`;
    const p = await startProxy(`proxy-${n}`, { exit, user: `user${n}`, password, resolve: (host) => names.get(host) });
    exits.set(exit, p.name);
    proxies.push(p);
    passwords.push(password);
  }
  return {
    sites,
    proxies,
    /** name → proxy URL with password, as an environment-provided map would hold it. */
    urlMap: () => Object.fromEntries(proxies.map((p) => [p.name, p.url()])),
    passwords,
    async close() {
      await Promise.all([...Object.values(sites), ...proxies].map((s) => s.close()));
    },
  };
}

/**
 * A test file's shared world (`startWorld()`) and Crawlee set-up (`crawleeSetup()`): started
 * before its tests and given to `use(world, crawlee)`, closed after them. Before each test, with
 * `reset` (the default), every site's handler and hits are cleared, and with `forward` every
 * proxy goes back to forwarding. A file's own `beforeEach` runs after this one.
 */
export function worldPerFile(use, { reset = true, forward = false } = {}) {
  let world;
  let crawlee;
  before(async () => {
    world = await startWorld();
    crawlee = await crawleeSetup();
    use(world, crawlee);
  });
  after(async () => {
    await world.close();
    crawlee.close();
  });
  if (!reset) return;
  beforeEach(() => {
    for (const s of Object.values(world.sites)) {
      s.handle = null;
      s.hits.length = 0;
    }
    if (forward) for (const p of world.proxies) p.mode = "forward";
  });
}

/**
 * Crawlee, quiet and leaving nothing behind: storage in a temporary folder (CRAWLEE_STORAGE_DIR,
 * persistStorage off), log lines captured in `lines` instead of printed. `config()` gives a fresh
 * Configuration per crawler; `close()` removes the folder.
 */
export async function crawleeSetup() {
  const dir = mkdtempSync(join(tmpdir(), "repute-crawlee-"));
  process.env.CRAWLEE_STORAGE_DIR = dir;
  const { Configuration, log, LoggerText } = await import("@crawlee/core");
  const lines = [];
  class Capture extends LoggerText {
    _outputWithConsole(_level, line) {
      lines.push(line);
    }
  }
  log.setOptions({ logger: new Capture(), level: log.LEVELS.INFO });
  return {
    dir,
    lines,
    config: () => new Configuration({ persistStorage: false }),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A genuine second copy of Crawlee, as a symlinked or workspace install loads one: every
 * `@crawlee/*` package copied into a temporary `node_modules`, the other dependencies linked
 * to the installed ones. A crawler imported from it (`load("@crawlee/cheerio")`) runs on that
 * copy of `@crawlee/core` — its own `SessionError`, `Request` and `Session` classes — while
 * repute/crawlee keeps importing the installed one. `close()` removes the tree.
 */
export function secondCrawleeCopy() {
  const installed = fileURLToPath(new URL("../../pkg-scripts/node_modules/", import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), "repute-crawlee-copy-"));
  const modules = join(dir, "node_modules");
  mkdirSync(join(modules, "@crawlee"), { recursive: true });
  for (const name of readdirSync(installed)) {
    if (name === "@crawlee" || name.startsWith(".")) continue;
    symlinkSync(join(installed, name), join(modules, name));
  }
  for (const name of readdirSync(join(installed, "@crawlee"))) {
    cpSync(join(installed, "@crawlee", name), join(modules, "@crawlee", name), { recursive: true });
  }
  return {
    dir,
    load: (name) => import(pathToFileURL(join(modules, name, "index.mjs")).href),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
