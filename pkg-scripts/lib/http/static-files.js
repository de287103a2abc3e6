// The operator console's files (www/) for the Node server: GET and HEAD of files under one
// folder, with their content types and a Content-Security-Policy that forbids inline scripts
// and styles but lets the engine's WebAssembly compile and Web Workers start from the same
// origin. No token is needed (the files hold no data; API calls carry the token). No
// directory listing (a folder answers its index.html or nothing); no way out of the folder:
// a path with a `.` or `..` segment (escaped or not), an empty segment, a dotfile, a NUL or a
// backslash is not looked up, and a symbolic link that leads outside is refused.
// It answers only for paths outside the API (`/api/…`, `/metrics`, `/healthz`, `/readyz`) and
// only when the file exists; otherwise it returns null and the API handler answers (404).

import { readFile, realpath, stat } from "node:fs/promises";
import { extname, join, sep } from "node:path";
import { HttpProblem, problemReply } from "./problems.js";

/** Sent with every console file. `connect-src 'self'`: the console talks to the server that
 * served it. `'wasm-unsafe-eval'` allows compiling WebAssembly, not `eval`. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
};

/** First path segments that belong to the API, never to files. */
const API = new Set(["api", "metrics", "healthz", "readyz"]);
const API_TARGET = /^\/(?:api|metrics|healthz|readyz)(?:[/?#]|$)/;

/** True for a target plainly in the API (`/api/…`, `/metrics`, …): the server need not look
 * for a file (a spelling with escapes is looked at, and refused, by `reply`). */
export function isApiTarget(target) {
  return API_TARGET.test(target);
}

/** The decoded segments of a request target's path, or null when one may not name a file. */
function fileSegments(target) {
  const path = target.split(/[?#]/, 1)[0];
  if (!path.startsWith("/")) return null;
  const raw = path.slice(1).split("/");
  const out = [];
  for (let i = 0; i < raw.length; i++) {
    let s;
    try {
      s = decodeURIComponent(raw[i]);
    } catch {
      return null;
    }
    // A trailing "/" names a folder's index; any other empty segment names nothing.
    if (s === "" && i === raw.length - 1) break;
    if (s === "" || s.startsWith(".") || /[\\/\0]/.test(s)) return null;
    out.push(s);
  }
  return out;
}

/**
 * Serves the files of `dir`. Returns `reply(method, target)` → `{status, headers, body}` (body
 * a Buffer, or null for HEAD) or null when it has nothing for that path.
 */
export async function staticFiles(dir) {
  const root = await realpath(dir);
  const inside = (p) => p === root || p.startsWith(root + sep);

  /** The real path of the file `segments` names (a folder: its index.html), or null. */
  async function find(segments) {
    let path = join(root, ...segments);
    try {
      path = await realpath(path);
      if (!inside(path)) return null;
      let info = await stat(path);
      if (info.isDirectory()) {
        path = await realpath(join(path, "index.html"));
        if (!inside(path)) return null;
        info = await stat(path);
      }
      return info.isFile() ? path : null;
    } catch {
      return null;
    }
  }

  return async function reply(method, target) {
    const segments = fileSegments(target);
    if (segments === null || API.has(segments[0])) return null;
    const file = await find(segments);
    if (file === null) return null;
    if (method !== "GET" && method !== "HEAD") {
      return problemReply(new HttpProblem(405, "method-not-allowed", `${method} is not allowed here`, { allow: "GET, HEAD" }));
    }
    const body = await readFile(file);
    const headers = {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "content-security-policy": CONTENT_SECURITY_POLICY,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "cache-control": "no-cache",
    };
    if (method === "HEAD") return { status: 200, headers: { ...headers, "content-length": String(body.byteLength) }, body: null };
    return { status: 200, headers, body };
  };
}
