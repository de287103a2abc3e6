// The arguments of the package's `Pool` (lib/pool.js) as the engine takes them: JavaScript
// types checked (a wrong type is an `Error` with code `INVALID_ARGUMENT`, thrown before anything
// reaches the engine), kinds, outcomes and groups lists turned into the facade's small codes
// (src/wasm/facade.rs), configs into JSON text, and the pool's options read. Rules on values
// (ranges, name rules, what is registered) are the engine's, checked there once.

import { KINDS, FAILURE_CODE, FAILURE_TYPES, oneOf } from "./vocabulary.js";

const KIND_MESSAGE = `kind must be ${oneOf(KINDS)}`;
const FAILURE_MESSAGE = `outcome.failure must be ${oneOf(FAILURE_TYPES)}`;
const OPTION_KEYS = new Set(["config", "now", "random", "seed", "timers", "maxWaiters"]);

export function fail(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

export const invalid = (message) => fail("INVALID_ARGUMENT", message);

/** The keys `resources(filter)` takes. */
export const RESOURCE_FILTERS = ["context", "state", "group", "after", "limit"];

const [KIND_0, KIND_1, KIND_2] = KINDS;
if (KINDS.length !== 3) throw new Error("kindCode compares three kinds: update it with the vocabulary");

/** The facade's code of a kind: three comparisons (on every hot call; cheaper than a lookup). */
export function kindCode(kind) {
  if (kind === KIND_0) return 0;
  if (kind === KIND_1) return 1;
  if (kind === KIND_2) return 2;
  throw invalid(KIND_MESSAGE);
}

export function text(name, v) {
  if (typeof v !== "string") throw invalid(`${name} must be a string`);
  // A lone surrogate cannot be sent to the engine as UTF-8 (it would become U+FFFD and
  // silently name another resource).
  if (!v.isWellFormed()) throw invalid(`${name} must be well-formed Unicode (no lone surrogates)`);
  return v;
}

/** Writes the string `s` into `buf` (the engine's `textArgs` buffer, src/wasm/facade/text_args.rs)
 * from byte `at` when it is ASCII and fits: its length, else -1 (not a string, a character
 * past ASCII, or too long: the call then passes strings). */
export function putText(buf, at, s) {
  if (typeof s !== "string") return -1;
  const n = s.length;
  if (at + n > buf.length) return -1;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) return -1;
    buf[at + i] = c;
  }
  return n;
}

export function isPlainObject(v) {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Throws unless `v` is a plain object (made by `{}` or `Object.create(null)`, in any realm). */
export function plainObject(v, name) {
  if (!isPlainObject(v)) throw invalid(`${name} must be an object`);
  const proto = Object.getPrototypeOf(v);
  if (proto !== null && Object.getPrototypeOf(proto) !== null) throw invalid(`${name} must be a plain object`);
}

/** An options argument: a plain object holding no key but `key`; returns `options[key]`. */
export function optionOf(options, key) {
  plainObject(options, "options");
  for (const k in options) if (k !== key) throw invalid(`unknown option ${k} (it takes ${key})`);
  return options[key];
}

/** A group option: `undefined` when absent, else a string or null (the engine checks the
 * name's rules). */
export function groupOf(g, name) {
  if (g === undefined || g === null) return g;
  if (typeof g !== "string") throw invalid(`${name} must be a string or null`);
  return text(name, g);
}

/** The length that stands for `null` in a groups list (src/wasm/facade/args.rs). */
const NULL_GROUP = 0xffffffff;

/** A `groups` option as the engine takes it: the names run together and each one's length
 * (`NULL_GROUP` for null); `undefined` when absent. The engine checks the list's rules (1 to
 * 16 distinct entries, each name non-blank and at most 64 bytes). */
export function groupsOf(groups) {
  if (groups === undefined) return undefined;
  if (!Array.isArray(groups)) throw invalid("groups must be an array of group names or null");
  const lens = new Uint32Array(groups.length);
  let names = "";
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i];
    if (g === null) lens[i] = NULL_GROUP;
    else {
      if (typeof g !== "string") throw invalid(`groups[${i}] must be a string or null`);
      names += text(`groups[${i}]`, g);
      lens[i] = g.length;
    }
  }
  return [names, lens];
}

/** A latency in ms: absent (undefined) or a number, which the engine checks is finite and
 * non-negative (`check::latency_arg`, with the message this one shares). */
export function latency(v) {
  if (v !== undefined && typeof v !== "number") throw invalid("latencyMs must be a finite, non-negative number");
  return v;
}

/** The code of an outcome {ok: true, latencyMs?} or {ok: false, failure, latencyMs?}: 0 success,
 * 1..5 the failure types; its latency is `latency(o.latencyMs)`. */
export function outcomeCode(o) {
  if (!isPlainObject(o)) throw invalid("outcome must be an object");
  for (const k in o) {
    // Not quoted: a key sent by a worker may be a value that went astray.
    if (k !== "ok" && k !== "failure" && k !== "latencyMs") throw invalid("outcome has an unknown field (it takes ok, failure, latencyMs)");
  }
  if (o.ok === true) {
    if ("failure" in o) throw invalid("a successful outcome has no failure");
    return 0;
  }
  if (o.ok !== false) throw invalid("outcome.ok must be true or false");
  const code = FAILURE_CODE.get(o.failure);
  if (code === undefined) throw invalid(FAILURE_MESSAGE);
  return code;
}

function leaseNumber(name, v) {
  if (!Number.isSafeInteger(v) || v < 0) throw invalid(`lease.${name} must be a non-negative integer`);
}

/** Checks a lease's object and numbers; returns its kind code (strings are checked by the caller). */
export function leaseKind(lease) {
  if (!isPlainObject(lease)) throw invalid("lease must be an object");
  const { kind, token, leasedAt, expiresAt } = lease;
  leaseNumber("token", token);
  leaseNumber("leasedAt", leasedAt);
  leaseNumber("expiresAt", expiresAt);
  if (token < 1) throw invalid("lease.token must be a positive integer");
  return kindCode(kind);
}

/** How deep a config may nest (objects and arrays below the config itself): no field needs
 * more than 2 (`penalties.BLOCKED`); the check below recurses, so it stops here rather than at
 * the stack's end (a 5,000-deep config was a RangeError, a 500 over HTTP). */
const MAX_CONFIG_DEPTH = 32;

/** A config (partial) as JSON text for the engine, or undefined. Values JSON cannot carry
 * (NaN, Infinity, functions, bigints) are refused here, naming the field, rather than turned
 * into null or dropped by `JSON.stringify`; so is nesting deeper than MAX_CONFIG_DEPTH. */
export function configJson(config) {
  if (config === undefined) return undefined;
  if (!isPlainObject(config)) throw fail("INVALID_CONFIG", "config must be an object");
  const check = (v, path, level) => {
    if (typeof v === "number" && !Number.isFinite(v)) throw fail("INVALID_CONFIG", `${path} must be a finite number`);
    if (typeof v === "function" || typeof v === "bigint" || typeof v === "symbol") {
      throw fail("INVALID_CONFIG", `${path} must be a JSON value`);
    }
    if (typeof v === "object" && v !== null) {
      if (level > MAX_CONFIG_DEPTH) throw fail("INVALID_CONFIG", `${path}: nested deeper than ${MAX_CONFIG_DEPTH} levels (the most a config may nest)`);
      const array = Array.isArray(v);
      for (const [k, x] of Object.entries(v)) check(x, array ? `${path}[${k}]` : path ? `${path}.${k}` : k, level + 1);
    }
  };
  check(config, "", 0);
  return JSON.stringify(config);
}

/**
 * Reads pool options: `{config?, now?, random?, seed?, timers?, maxWaiters?}`. With neither
 * `random` nor `seed`, the engine seeds the pool itself when it is made (getrandom:
 * `crypto.getRandomValues`, never at module scope). The last entry is the waiting options
 * (`waiters.js`).
 */
export function optionsOf(options) {
  if (options === undefined) options = {};
  if (!isPlainObject(options)) throw invalid("options must be an object");
  for (const k in options) if (!OPTION_KEYS.has(k)) throw invalid(`unknown option ${k}`);
  const { config, now, random, timers, maxWaiters = 10_000 } = options;
  if (now !== undefined && typeof now !== "function") throw invalid("now must be a function");
  if (random !== undefined && typeof random !== "function") throw invalid("random must be a function");
  if (random !== undefined && options.seed !== undefined) throw invalid("give either random or seed, not both");
  if (timers !== undefined && !(isPlainObject(timers) && typeof timers.setTimeout === "function" && typeof timers.clearTimeout === "function")) {
    throw invalid("timers must be an object with setTimeout and clearTimeout functions");
  }
  if (!(Number.isSafeInteger(maxWaiters) && maxWaiters >= 0)) throw invalid("maxWaiters must be a non-negative integer");
  const s = options.seed;
  if (s !== undefined && !(Number.isSafeInteger(s) && s >= 0)) throw invalid("seed must be a non-negative safe integer");
  return [configJson(config), now, random, s, { ...(timers ? { timers } : {}), max: maxWaiters }];
}

/** `register`'s options: `{group?, maxLeases?}` as `[hasGroup, group, maxLeases]` (NaN: not
 * given; the engine checks the range). */
export function registration(options) {
  plainObject(options, "options");
  for (const k in options) if (k !== "group" && k !== "maxLeases") throw invalid(`unknown option ${k} (it takes group, maxLeases)`);
  const group = groupOf(options.group, "group");
  const m = options.maxLeases;
  if (m !== undefined && !(Number.isInteger(m) && m >= 1 && m <= 1024)) throw invalid("maxLeases must be an integer in 1..=1024");
  return [group !== undefined, group ?? undefined, m ?? NaN];
}

const FLOOR_KEYS = ["revision", "fencingHighWater", "nextEventSeq"];

/** `atLeast` as the facade's three optional numbers (the engine checks their range). */
export function atLeastOf(atLeast) {
  if (atLeast === undefined) return [undefined, undefined, undefined];
  if (!isPlainObject(atLeast)) throw invalid("atLeast must be an object");
  for (const k in atLeast) if (!FLOOR_KEYS.includes(k)) throw invalid(`unknown atLeast field ${k}`);
  return FLOOR_KEYS.map((k) => {
    const v = atLeast[k];
    if (v !== undefined && typeof v !== "number") throw invalid(`atLeast.${k} must be a number`);
    return v;
  });
}

/** The host clock as the engine reads it: a reading that is not a number is NaN, which the
 * engine refuses (INVALID_ARGUMENT), rather than a string coerced to a number. */
export function clock(now = Date.now) {
  return () => {
    const t = now();
    return typeof t === "number" ? t : NaN;
  };
}

/** A count of resources (a restore's `reserve`): an integer from 0 to 2^32 − 1. */
export function countArg(name, v) {
  if (!Number.isInteger(v) || v < 0 || v > 2 ** 32 - 1) throw invalid(`${name} must be an integer from 0 to 4294967295`);
  return v;
}
