// Proxy URLs kept out of the pool (README "Resilient calls", "Crawlee"): resources are
// registered by a name ("proxy-de-1") and `proxyUrls(…)` gives the function that maps a lease
// to its proxy URL, password included, at the moment of use. The URL comes from a map given in
// code, from an environment variable holding a JSON map (read once, when the resolver is made),
// or from a `resolve(lease, signal)` function (a vault, an issuer): its answers are cached per
// resource until shortly before they expire and loaded once for concurrent callers
// (credentials.js). So the secret never lives in a resource's value, and never in events,
// snapshots or the audit log. No message of this module quotes a URL or the variable's text:
// a malformed one could hide its password from any redaction. Owns the lookup; what it is used
// for is proxyFetch's (`resolveProxy`) or repute/crawlee's (`proxyUrl`).

import { credentialCache } from "./credentials.js";
import { invalidOption } from "./errors.js";

/** Proxy URL schemes a crawler's HTTP client may speak. */
const SCHEMES = new Set(["http:", "https:", "socks:", "socks4:", "socks5:"]);

/** Throws unless `url` is a proxy URL; `what` names it (never the URL itself). */
function checked(url, what) {
  let u = null;
  if (typeof url === "string") {
    try {
      u = new URL(url);
    } catch {
      u = null;
    }
  }
  if (!u || !SCHEMES.has(u.protocol) || !u.hostname) throw invalidOption(`${what} is not a proxy URL (http, https or socks, with a host)`);
  return url;
}

/** name → URL from a plain object or a Map, each entry checked. */
function table(map, where) {
  const entries = map instanceof Map ? [...map] : Object.entries(map);
  const out = new Map();
  for (const [name, url] of entries) out.set(String(name), checked(url, `the URL of ${JSON.stringify(String(name))} in ${where}`));
  return out;
}

/** The JSON map of environment variable `name`. */
function fromEnv(name, env) {
  if (typeof name !== "string" || name === "") throw invalidOption("env must name an environment variable");
  const text = env[name];
  if (text === undefined || text === "") throw invalidOption(`the environment variable ${name} is not set`);
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null; // the parser's message may quote the text
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw invalidOption(`the environment variable ${name} must hold a JSON object of resource name → proxy URL`);
  }
  return table(parsed, `the environment variable ${name}`);
}

/**
 * A lease's proxy URL by the resource's value (its name).
 * @param {object} options exactly one of:
 * @param {Record<string, string> | Map<string, string>} [options.map] name → proxy URL
 * @param {string} [options.env] an environment variable holding a JSON object name → proxy URL
 * @param {(lease: object, signal: AbortSignal) => string | { url: string, expiresAt?: number } | Promise<…>} [options.resolve]
 *   loads one resource's URL (cached until `refreshMarginMs` before `expiresAt` on `now`)
 * @param {number} [options.refreshMarginMs] @param {() => number} [options.now] for `resolve`
 * @param {Record<string, string | undefined>} [options.environment=process.env] where `env` is read
 * @returns {((lease: object, options?: { signal?: AbortSignal }) => Promise<string>) & { invalidate(lease: object): void }}
 */
export function proxyUrls({ map, env, resolve, refreshMarginMs, now, environment = process.env } = {}) {
  const given = [map, env, resolve].filter((x) => x !== undefined).length;
  if (given !== 1) throw invalidOption("proxyUrls needs exactly one of map, env or resolve");
  if (resolve !== undefined) {
    if (typeof resolve !== "function") throw invalidOption("resolve must be a function");
    const cache = credentialCache({
      load: async (lease, signal) => {
        const got = await resolve(lease, signal);
        const url = typeof got === "string" ? got : got?.url;
        const where = `the URL resolved for ${JSON.stringify(lease.value)}`;
        return { value: checked(url, where), ...(typeof got === "object" && got?.expiresAt !== undefined ? { expiresAt: got.expiresAt } : {}) };
      },
      ...(refreshMarginMs === undefined ? {} : { refreshMarginMs }),
      ...(now === undefined ? {} : { now }),
    });
    const lookup = (lease, { signal } = {}) => cache.get(lease, signal ? { signal } : {});
    lookup.invalidate = (lease) => cache.invalidate(lease);
    return lookup;
  }
  let urls;
  if (map !== undefined) {
    if (map === null || typeof map !== "object") throw invalidOption("map must be an object or a Map of resource name → proxy URL");
    urls = table(map, "map");
  } else {
    urls = fromEnv(env, environment);
  }
  const source = map !== undefined ? "the map" : `the environment variable ${env}`;
  const lookup = async (lease) => {
    const url = urls.get(lease?.value);
    if (url === undefined) throw invalidOption(`${source} has no proxy URL for the resource ${JSON.stringify(String(lease?.value))}`);
    return url;
  };
  lookup.invalidate = () => {}; // a fixed map has nothing newer to load
  return lookup;
}
