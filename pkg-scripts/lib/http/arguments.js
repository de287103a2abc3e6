// The checks the HTTP handler's routes (handler.js and the routes-*.js beside it) make of what a
// request gives them — its path segments, its query, the fields of its JSON body — each a 400
// problem naming the offending part. Nothing here reads the pool.

import { bad } from "./problems.js";
import { KINDS, isKind, oneOf } from "../vocabulary.js";

export { bad };

/** Path segments, percent-decoded; a bad escape is a 400 naming the segment. */
export function segments(pathname) {
  const parts = pathname.split("/");
  parts.shift(); // before the leading "/"
  if (!pathname.includes("%")) return parts;
  return parts.map((s, i) => {
    try {
      return decodeURIComponent(s);
    } catch {
      throw bad(`path segment ${i + 1} is not valid percent-encoding`);
    }
  });
}

export function kindOf(kind) {
  if (!isKind(kind)) throw bad(`kind must be ${oneOf(KINDS)}`);
  return kind;
}

export function text(name, v) {
  if (typeof v !== "string") throw bad(`${name} must be a string`);
  return v;
}

/** A `group` (SPEC §3, groups): a string or null; the engine checks the string. */
export function groupOf(name, v) {
  if (v !== null && typeof v !== "string") throw bad(`${name} must be a group name (a string) or null`);
  return v;
}

/** A `groups` list: an array of group names or nulls; the engine checks its length, the
 * names and repeats, naming the entry (`groups[2]`). */
export function groupsOf(v, name = "groups") {
  if (!Array.isArray(v)) throw bad(`${name} must be an array of group names (strings) or nulls`);
  v.forEach((g, i) => groupOf(`${name}[${i}]`, g));
  return v;
}

/** A resource's capacity (SPEC §3, capacity): an integer from 1 to 1024. */
export function maxLeasesOf(v) {
  if (!Number.isSafeInteger(v) || v < 1 || v > 1024) throw bad("maxLeases must be an integer from 1 to 1024");
  return v;
}

/** The `next` of a finish: an object of `context`, `groups` and `waitMs`, each optional. */
export function nextOf(v, waitMsOf) {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw bad("next must be an object (of context, groups, waitMs; each optional)");
  for (const k of Object.keys(v)) if (k !== "context" && k !== "groups" && k !== "waitMs") throw bad("unknown field in next (the fields are context, groups, waitMs)");
  const next = {};
  if ("context" in v) next.context = text("next.context", v.context);
  if ("groups" in v) next.groups = groupsOf(v.groups, "next.groups");
  next.waitMs = "waitMs" in v ? waitMsOf("next.waitMs", v.waitMs) : 0;
  return next;
}

/** The query of a request that has none. */
const NO_QUERY = new URLSearchParams();

/**
 * The query of `url` (request-target.js) checked against the parameters a route takes,
 * `allowed`: an unknown one (not quoted back: it may be a value gone astray) or one given twice
 * is a 400. Every route's query is checked here, once, before the route runs.
 */
export function query(url, allowed) {
  if (allowed.length === 0 && !url.hasQuery) return NO_QUERY;
  const seen = new Set();
  for (const k of url.searchParams.keys()) {
    if (!allowed.includes(k)) throw bad(allowed.length ? `unknown query parameter (this route takes ${allowed.join(", ")})` : "this route takes no query parameters");
    if (seen.has(k)) throw bad(`query parameter ${JSON.stringify(k)} is given more than once`);
    seen.add(k);
  }
  return url.searchParams;
}

/** Whether values are shown masked: always for a viewer; for others when `?masked=true`. */
export function maskedFor(role, q) {
  if (!q.has("masked")) return role === "viewer";
  const raw = q.get("masked");
  if (raw !== "true" && raw !== "false") throw bad("masked must be true or false");
  return role === "viewer" || raw === "true";
}

export function nonNegativeInt(name, raw, fallback) {
  if (raw === null) return fallback;
  if (!/^\d{1,16}$/.test(raw)) throw bad(`${name} must be a non-negative integer`);
  return Number(raw);
}

/** `?after=&limit=` of a read in pages (events, outcomes): `after` 0 and `limit` 100 by
 * default, `limit` from 1 to 1000. */
export function pageOf(q) {
  const after = nonNegativeInt("after", q.get("after"), 0);
  const limit = nonNegativeInt("limit", q.get("limit"), 100);
  if (limit < 1 || limit > 1000) throw bad("limit must be in 1..=1000");
  return { after, limit };
}
