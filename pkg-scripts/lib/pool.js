// The `Pool` class of the `repute` package (SPEC §9), shared by the Node and web entries.
//
// A thin wrapper over the WebAssembly `RawPool`: it checks JavaScript types (a wrong type is
// an `Error` with code `INVALID_ARGUMENT`, thrown before anything reaches the engine), turns
// kinds and outcomes into small codes, builds result objects from scalars on the hot path
// (acquire, report, renew, release), unpacks drained events (numbers plus a string table) and
// parses JSON text for other bulk results. Every rule lives in the engine; waiting acquires
// queue in `waiters.js`, which this class kicks after each call that may make a candidate.

import { KINDS, KIND_CODE, FAILURE_CODE, FAILURE_TYPES, oneOf } from "./vocabulary.js";
import { Waiters, nextStep, waitOptions } from "./waiters.js";

const KIND_MESSAGE = `kind must be ${oneOf(KINDS)}`;
const FAILURE_MESSAGE = `outcome.failure must be ${oneOf(FAILURE_TYPES)}`;
const OPTION_KEYS = new Set(["config", "now", "random", "seed", "timers", "maxWaiters"]);

function fail(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

const invalid = (message) => fail("INVALID_ARGUMENT", message);

/** The keys `resources(filter)` takes. */
const RESOURCE_FILTERS = ["context", "state", "group", "after", "limit"];

function kindCode(kind) {
  const c = KIND_CODE.get(kind);
  if (c === undefined) throw invalid(KIND_MESSAGE);
  return c;
}

function text(name, v) {
  if (typeof v !== "string") throw invalid(`${name} must be a string`);
  // A lone surrogate cannot be sent to the engine as UTF-8 (it would become U+FFFD and
  // silently name another resource).
  if (!v.isWellFormed()) throw invalid(`${name} must be well-formed Unicode (no lone surrogates)`);
  return v;
}

function isPlainObject(v) {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Throws unless `v` is a plain object (made by `{}` or `Object.create(null)`, in any realm). */
function plainObject(v, name) {
  if (!isPlainObject(v)) throw invalid(`${name} must be an object`);
  const proto = Object.getPrototypeOf(v);
  if (proto !== null && Object.getPrototypeOf(proto) !== null) throw invalid(`${name} must be a plain object`);
}

/** An options argument: a plain object holding no key but `key`; returns `options[key]`. */
function optionOf(options, key) {
  plainObject(options, "options");
  for (const k in options) if (k !== key) throw invalid(`unknown option ${k} (it takes ${key})`);
  return options[key];
}

/** A group option: `undefined` when absent, else a string or null (the engine checks the
 * name's rules). */
function groupOf(g, name) {
  if (g === undefined || g === null) return g;
  if (typeof g !== "string") throw invalid(`${name} must be a string or null`);
  return text(name, g);
}

/** The length that stands for `null` in a groups list (src/wasm/facade.rs). */
const NULL_GROUP = 0xffffffff;

/** A `groups` option as the engine takes it: the names run together and each one's length
 * (`NULL_GROUP` for null); `undefined` when absent. The engine checks the list's rules (1 to
 * 16 distinct entries, each name non-blank and at most 64 bytes). */
function groupsOf(groups) {
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

/** A latency in ms: absent (NaN to the engine) or a finite number >= 0. */
function latency(v) {
  if (v === undefined) return NaN;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
    throw invalid("latencyMs must be a finite, non-negative number");
  }
  return v;
}

/** Numbers per event in a packed drain. */
const EVENT_FIELDS = 13;

/**
 * The PoolEvent objects of a packed drain (layout in src/wasm/packed.rs): `[events, strings,
 * then per event seq, at, type, kind, value, context, cause, until, permanent, token, unmasked,
 * group, maxLeases, then the string lengths]`, strings by index into `text` cut at those lengths, -1 for
 * absent (-2: a group of null). Keys in the order of the engine's event JSON; with
 * `resourceId`, an `id` after `value`, from the unmasked value (which no event object holds).
 */
function unpackEvents(nums, text, resourceId) {
  const count = nums[0];
  const n = nums[1];
  const table = new Array(n);
  for (let i = 0, pos = 0, lens = 2 + count * EVENT_FIELDS; i < n; i++) {
    const end = pos + nums[lens + i];
    table[i] = text.slice(pos, end);
    pos = end;
  }
  const events = new Array(count);
  for (let i = 0, o = 2; i < count; i++, o += EVENT_FIELDS) {
    // Lease events (two of every cycle's) built whole by one literal: no property added one
    // at a time, no second allocation for properties past the literal's.
    if (resourceId === undefined && nums[o + 3] >= 0 && nums[o + 5] >= 0 && nums[o + 6] < 0 && nums[o + 8] !== 1 && nums[o + 9] >= 0) {
      const seq = nums[o];
      const type = table[nums[o + 2]];
      const at = nums[o + 1];
      const kind = table[nums[o + 3]];
      const value = table[nums[o + 4]];
      const context = table[nums[o + 5]];
      events[i] = nums[o + 7] >= 0
        ? { seq, type, at, kind, value, context, until: nums[o + 7], token: nums[o + 9] }
        : { seq, type, at, kind, value, context, token: nums[o + 9] };
      continue;
    }
    const e = { seq: nums[o], type: table[nums[o + 2]], at: nums[o + 1] };
    if (nums[o + 3] >= 0) {
      e.kind = table[nums[o + 3]];
      e.value = table[nums[o + 4]];
      if (resourceId) e.id = resourceId(e.kind, table[nums[o + 10]]);
    }
    if (nums[o + 11] !== -1) e.group = nums[o + 11] === -2 ? null : table[nums[o + 11]];
    if (nums[o + 5] >= 0) e.context = table[nums[o + 5]];
    if (nums[o + 6] >= 0) e.cause = table[nums[o + 6]];
    if (nums[o + 7] >= 0) e.until = nums[o + 7];
    if (nums[o + 8] === 1) e.permanent = true;
    if (nums[o + 9] >= 0) e.token = nums[o + 9];
    if (nums[o + 12] >= 0) e.maxLeases = nums[o + 12];
    events[i] = e;
  }
  return events;
}

/** The code of an outcome {ok: true, latencyMs?} or {ok: false, failure, latencyMs?}: 0 success,
 * 1..5 the failure types; its latency is `latency(o.latencyMs)`. */
function outcomeCode(o) {
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
function leaseKind(lease) {
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
function configJson(config) {
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
function optionsOf(options) {
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
function registration(options) {
  plainObject(options, "options");
  for (const k in options) if (k !== "group" && k !== "maxLeases") throw invalid(`unknown option ${k} (it takes group, maxLeases)`);
  const group = groupOf(options.group, "group");
  const m = options.maxLeases;
  if (m !== undefined && !(Number.isInteger(m) && m >= 1 && m <= 1024)) throw invalid("maxLeases must be an integer in 1..=1024");
  return [group !== undefined, group ?? undefined, m ?? NaN];
}

const FLOOR_KEYS = ["revision", "fencingHighWater", "nextEventSeq"];

/** `atLeast` as the facade's three optional numbers (the engine checks their range). */
function atLeastOf(atLeast) {
  if (atLeast === undefined) return [undefined, undefined, undefined];
  if (!isPlainObject(atLeast)) throw invalid("atLeast must be an object");
  for (const k in atLeast) if (!FLOOR_KEYS.includes(k)) throw invalid(`unknown atLeast field ${k}`);
  return FLOOR_KEYS.map((k) => {
    const v = atLeast[k];
    if (v !== undefined && typeof v !== "number") throw invalid(`atLeast.${k} must be a number`);
    return v;
  });
}

/** A resource id's low 32 bits are its slot plus one (src/ids.rs). */
const SLOTS = 0x100000000;
/** Equal to no argument a caller can pass. */
const NOT_A_NAME = Symbol("no context yet");

/** The host clock as the engine reads it: a reading that is not a number is NaN, which the
 * engine refuses (INVALID_ARGUMENT), rather than a string coerced to a number. */
function clock(now = Date.now) {
  return () => {
    const t = now();
    return typeof t === "number" ? t : NaN;
  };
}

/** Builds the `Pool` class over a loaded `RawPool`. */
export function makePool(RawPool) {
  const RESTORING = Symbol("restoring");

  class Pool {
    #raw;
    #now;
    /** Context name → the engine's id for it (`Pool::context_id`; the hot path passes
     * numbers, not strings). As bounded as the engine's table: cleared when it forgets. */
    #contexts = new Map();
    /** Resource id → its value string (by the id's low 32 bits, its slot plus one: a dense
     * array), and per kind value → id. A resource's entries go when it is deregistered (the
     * engine refuses its id; its slot may hold another resource). */
    #values = [];
    #handles = [new Map(), new Map(), new Map()];
    /** Group names by the number the engine gives a lease's group (`leaseFields`); numbers are
     * never taken back. */
    #groupNames = [];
    /** The last lease's kind code, value and handle: report and release usually name it. */
    #lastKind = -1;
    #lastValue = undefined;
    #lastHandle = 0;
    /** The context name last found interned, and its id (forgotten with `#contexts`). */
    #lastContext = NOT_A_NAME;
    #lastContextId = 0;
    /** The engine's view of the last lease's numbers (`leaseFields`); empty until asked for
     * and once the module's memory has grown. */
    #fields = new Float64Array(0);
    /** Waiting acquires (`waiters.js`), made on the first wait; and its options. */
    #waiters = null;
    #waitOptions;

    constructor(options, raw) {
      if (options === RESTORING) {
        [this.#raw, this.#now, this.#waitOptions] = raw;
        return;
      }
      const [config, now, random, s, wait] = optionsOf(options);
      this.#raw = new RawPool(config, random, s);
      this.#now = clock(now);
      this.#waitOptions = wait;
    }

    static maskValue(kind, value) {
      return RawPool.maskValue(kindCode(kind), text("value", value));
    }

    static restore(snapshotJson, options) {
      text("snapshotJson", snapshotJson);
      let atLeast;
      if (isPlainObject(options) && "atLeast" in options) ({ atLeast, ...options } = options);
      const [config, now, random, s, wait] = optionsOf(options);
      const floor = atLeastOf(atLeast);
      return new Pool(RESTORING, [RawPool.restore(snapshotJson, config, random, s, ...floor), clock(now), wait]);
    }

    /** The engine's id of a well-formed context name (the engine checks its rules once). A
     * negative answer: the engine forgot the names of contexts holding nothing to make room
     * (src/pool/context_names.rs), so the ids cached here may name nothing now. */
    #context(name) {
      let id = this.#contexts.get(name);
      if (id === undefined) {
        id = this.#raw.context(name);
        if (id < 0) {
          id = -id;
          this.#contexts.clear();
          this.#lastContext = NOT_A_NAME;
        }
        this.#contexts.set(name, id);
      }
      return id;
    }

    register(kind, value, options) {
      const k = kindCode(kind);
      text("value", value);
      let h;
      if (options === undefined) h = this.#raw.register(this.#now(), k, value);
      else {
        const [hasGroup, group, maxLeases] = registration(options);
        h = this.#raw.registerWith(this.#now(), k, value, hasGroup, group, maxLeases);
      }
      if (h > 0) this.#remember(h, k, value);
      this.#kick(); // a new resource, or a raised maxLeases, may serve a wait
      return h > 0;
    }

    /** Keeps `value` as handle `h`'s value string (from register, or read once from a lease). */
    #remember(h, k, value) {
      const values = this.#values;
      const i = h % SLOTS;
      while (values.length <= i) values.push(undefined); // grows without holes
      values[i] = value;
      this.#handles[k].set(value, h);
    }

    deregister(kind, value) {
      const k = kindCode(kind);
      const removed = this.#raw.deregister(this.#now(), k, text("value", value));
      if (removed) {
        // Its id is refused from now on, and its slot may hold the next resource registered.
        const h = this.#handles[k].get(value);
        if (h !== undefined) {
          this.#handles[k].delete(value);
          this.#values[h % SLOTS] = undefined;
        }
        if (h === this.#lastHandle) this.#lastKind = -1;
      }
      return removed;
    }

    acquire(context, options) {
      return this.#acquire(context, options === undefined ? undefined : groupsOf(optionOf(options, "groups")), false);
    }

    /** `acquire` that emits no ACQUISITION_REJECTED when it grants nothing: for a host that
     * waits for a candidate itself and retries (SPEC §3, waiting; `waiters.js`). */
    acquireQuiet(context, options) {
      return this.#acquire(context, options === undefined ? undefined : groupsOf(optionOf(options, "groups")), true);
    }

    /** An acquire with `groups` as `groupsOf` gives them (or undefined); `quiet`: no rejection
     * event. */
    #acquire(context, groups, quiet) {
      if (groups !== undefined) {
        text("context", context);
        const h = this.#raw.acquireIn(this.#now(), context, groups[0], groups[1], quiet);
        return h === 0 ? null : this.#lease(h, context);
      }
      const id = this.#contextOf(context, "context") ?? this.#context(context);
      const h = this.#raw.acquire(this.#now(), id, quiet);
      if (h === 0) return null;
      return h === h ? this.#lease(h, context) : this.#fail();
    }

    /**
     * A lease for `context` within `waitMs`, or null (SPEC §3, waiting): at once when one can
     * be granted, else when a release, an expiry, an unblock, a cooldown or pacing end, a
     * registration or a config change makes one, first come first served per context and
     * group list. An aborted `signal` rejects with its reason (an AbortError). Past
     * `maxWaiters` waits at once, it answers as if `waitMs` were 0.
     */
    acquireWait(context, options) {
      try {
        const [groups, waitMs, signal] = waitOptions(options);
        text("context", context);
        groupsOf(groups); // checked before anything waits
        this.#waiters ??= Waiters.over(this, this.#waitOptions, () => this.#now());
        return this.#waiters.wait(context, groups, waitMs, signal);
      } catch (e) {
        return Promise.reject(e);
      }
    }

    /** Serves waiting acquires after a call that may have made a candidate. */
    #kick() {
      if (this.#waiters !== null && this.#waiters.size > 0) this.#waiters.kick();
    }

    /** Waits now (`acquireWait`s not yet answered). */
    get waiting() {
      return this.#waiters === null ? 0 : this.#waiters.size;
    }

    /**
     * Finishes a worker's step (SPEC §3): reports `outcome` on the lease's cell (also when the
     * lease lapsed), releases it, and with `next: {context?, groups?, waitMs?}` leases the next
     * one (in `next.context`, default the lease's) — a `Lease` or null, or with `waitMs` given
     * a promise of one. A second finish of one lease throws LEASE_FINISHED and reports nothing.
     */
    finish(lease, outcome, options) {
      const k = leaseKind(lease);
      const { value, context, token } = lease;
      let h = this.#handleOf(k, value, "lease.value");
      const id = this.#contextOf(context, "lease.context") ?? this.#context(context);
      const code = outcomeCode(outcome);
      const ms = latency(outcome.latencyMs);
      const n = nextStep(options);
      if (n?.context !== undefined) text("next.context", n.context);
      const groups = n === undefined ? undefined : groupsOf(n.groups);
      if (h === undefined) h = this.#resolve(k, value, false); // 0: not registered any more
      const to = n?.context ?? context;
      const wait = (lease) => {
        if (lease !== null || n.waitMs === 0) return Promise.resolve(lease);
        return this.acquireWait(to, groups === undefined ? { waitMs: n.waitMs } : { groups: n.groups, waitMs: n.waitMs });
      };
      if (n === undefined || this.waiting > 0) {
        // Report and release first, so that waits queued before this step are served first.
        if (this.#raw.finish(this.#now(), h, id, token, code, ms, -1, false) !== 0) this.#fail();
        this.#kick();
        if (n === undefined) return null;
        if (n.waits) return n.waitMs > 0 ? wait(null) : Promise.resolve(this.#acquire(to, groups, false));
        return this.#acquire(to, groups, false);
      }
      // Nobody waits: the whole step in one call into the engine (its next lease quiet when a
      // wait may follow).
      const quiet = n.waitMs > 0;
      let got;
      if (groups === undefined) {
        const toId = n.context === undefined ? 0 : (this.#contextOf(to, "next.context") ?? this.#context(to));
        got = this.#raw.finish(this.#now(), h, id, token, code, ms, toId, quiet);
        if (got !== got) this.#fail();
      } else {
        got = this.#raw.finishIn(this.#now(), h, id, token, code, ms, n.context, groups[0], groups[1], quiet);
      }
      const leased = got === 0 ? null : this.#lease(got, to);
      return n.waits ? wait(leased) : leased;
    }

    acquireResource(kind, value, context) {
      const k = kindCode(kind);
      text("value", value);
      text("context", context);
      const h = this.#raw.acquireResource(this.#now(), k, value, context);
      return h === 0 ? null : this.#lease(h, context);
    }

    /** The lease just granted, its value string read once per resource. */
    #lease(h, context) {
      const r = this.#raw;
      let f = this.#fields;
      if (f.length === 0) f = this.#fields = r.leaseFields(); // first lease, or memory grew
      // Read before anything else calls into the module (resourceValue allocates there).
      const kind = f[0];
      const token = f[1];
      const leasedAt = f[2];
      const expiresAt = f[3];
      const g = f[4];
      let value = this.#values[h % SLOTS];
      if (value === undefined) {
        value = r.resourceValue(h);
        this.#remember(h, kind, value);
      }
      const group = g === 0 ? null : (this.#groupNames[g] ?? this.#groupName(g, h));
      this.#lastKind = kind;
      this.#lastValue = value;
      this.#lastHandle = h;
      return {
        kind: KINDS[kind],
        value,
        group,
        context,
        token,
        leasedAt,
        expiresAt,
      };
    }

    /** The last lease's group name, learnt once per number (`g` -1: not numbered, read each
     * time). Calls into the module: the lease's numbers are read first. */
    #groupName(g, h) {
      const name = this.#raw.resourceGroup(h) ?? null;
      if (g > 0) this.#groupNames[g] = name;
      return name;
    }

    report(kind, value, context, outcome) {
      const k = kindCode(kind);
      let h = this.#handleOf(k, value, "value");
      const id = this.#contextOf(context, "context") ?? this.#context(context);
      const code = outcomeCode(outcome);
      const ms = latency(outcome.latencyMs);
      if (h === undefined) h = this.#resolve(k, value, true);
      if (this.#raw.report(this.#now(), h, id, code, ms) !== 0) this.#fail();
      this.#kick(); // a probe's success ends a cooldown
    }

    /** Throws the error of the hot-path call that just answered NaN (src/wasm/facade.rs,
     * `answer`: those calls return a number, not a Result). */
    #fail() {
      throw this.#raw.takeError();
    }

    renew(lease) {
      const k = leaseKind(lease);
      const { value, context, token } = lease;
      let h = this.#handleOf(k, value, "lease.value");
      const id = this.#contextOf(context, "lease.context") ?? this.#context(context);
      // 0: a resource no longer registered — the engine answers null (nothing to renew), and
      // the call's clock reading still counts there (SPEC §5).
      if (h === undefined) h = this.#resolve(k, value, false);
      const renewed = this.#raw.renew(this.#now(), h, id, token);
      if (renewed !== 1) return renewed === 0 ? null : this.#fail();
      let f = this.#fields;
      if (f.length === 0) f = this.#fields = this.#raw.leaseFields();
      const leasedAt = f[2];
      const expiresAt = f[3];
      const g = f[4];
      const group = g === 0 ? null : (this.#groupNames[g] ?? this.#groupName(g, h));
      return { kind: lease.kind, value, group, context, token, leasedAt, expiresAt };
    }

    release(lease) {
      const k = leaseKind(lease);
      const { value, context, token } = lease;
      let h = this.#handleOf(k, value, "lease.value");
      const id = this.#contextOf(context, "lease.context") ?? this.#context(context);
      if (h === undefined) h = this.#resolve(k, value, false); // 0: not registered (false)
      const released = this.#raw.release(this.#now(), h, id, token);
      if (released === 1) {
        this.#kick();
        return true;
      }
      return released !== 0 && this.#fail();
    }

    /** The engine's id of a resource this Pool has no id of yet (registered before a restore,
     * or since a deregistration), kept for the next call; 0 when not registered (unless
     * `required`: then the engine's UNKNOWN_RESOURCE). The engine checks the value. */
    #resolve(k, value, required) {
      const h = this.#raw.resourceId(k, value, required);
      if (h > 0) this.#remember(h, k, value);
      return h;
    }

    /** `value`'s handle when a lease has named it (so it is a well-formed string already),
     * else `undefined` once `value` is checked to be one. */
    #handleOf(k, value, name) {
      if (k === this.#lastKind && value === this.#lastValue) return this.#lastHandle;
      const h = this.#handles[k].get(value);
      if (h === undefined) text(name, value);
      return h;
    }

    /** The context's id when interned (a well-formed string already), else `undefined` once
     * `context` is checked to be one. */
    #contextOf(context, name) {
      // A lease's report and release name the context its acquire just looked up.
      if (context === this.#lastContext) return this.#lastContextId;
      const id = this.#contexts.get(context);
      if (id === undefined) text(name, context);
      else {
        this.#lastContext = context;
        this.#lastContextId = id;
      }
      return id;
    }

    block(kind, value, how) {
      const k = kindCode(kind);
      text("value", value);
      if (!isPlainObject(how)) throw invalid("block needs {seconds} or {permanent: true}");
      const keys = Object.keys(how);
      let seconds;
      if (keys.length === 1 && how.permanent === true) seconds = NaN;
      else if (keys.length === 1 && typeof how.seconds === "number" && !Number.isNaN(how.seconds)) seconds = how.seconds;
      else throw invalid("block needs exactly one of {seconds: number} or {permanent: true}");
      this.#raw.block(this.#now(), k, value, seconds);
    }

    unblock(kind, value) {
      const unblocked = this.#raw.unblock(this.#now(), kindCode(kind), text("value", value));
      if (unblocked) this.#kick();
      return unblocked;
    }

    snapshot() {
      return this.#raw.snapshot(this.#now());
    }

    /** The snapshot in parts, for a host that stores each resource on its own: with no
     * argument the head (every field before `registered`); with a resource its `registered`
     * entry, its `blocklist` entry (or "") and its cells, comma-separated, as three lines — or
     * null when it is not registered. Joined as `pkg-scripts/lib/snapshot-parts.js` joins them,
     * they are the bytes of `snapshot()`. */
    snapshotPart(kind, value) {
      if (kind === undefined && value === undefined) return this.#raw.snapshotPart(this.#now(), 0, undefined);
      return this.#raw.snapshotPart(this.#now(), kindCode(kind), text("value", value)) ?? null;
    }

    drainEvents(options) {
      let resourceId;
      if (options !== undefined) {
        if (!isPlainObject(options)) throw invalid("options must be an object");
        for (const k in options) if (k !== "resourceId") throw invalid(`unknown option ${k}`);
        resourceId = options.resourceId;
        if (resourceId !== undefined && typeof resourceId !== "function") throw invalid("resourceId must be a function");
      }
      // A view into the module's memory, valid until the next call into it: the strings are
      // taken first (that call allocates nothing), and a copy is made when `resourceId`, a
      // caller's function, runs in between.
      const view = this.#raw.drainEvents(this.#now());
      const strings = this.#raw.drainedStrings();
      return unpackEvents(resourceId === undefined ? view : view.slice(), strings, resourceId);
    }

    /** The dashboard; `filter.after` ({kind, value}, registered or not) and `filter.limit` (an
     * integer ≥ 0) make it a page: at most `limit` of the resources after `after` in canonical
     * order. */
    resources(filter) {
      if (filter === undefined) return JSON.parse(this.#raw.resources(this.#now(), undefined, undefined, false, undefined));
      plainObject(filter, "filter");
      for (const k in filter) if (!RESOURCE_FILTERS.includes(k)) throw invalid(`unknown filter ${k}`);
      const { context, state, after, limit } = filter;
      if (context !== undefined) text("filter.context", context);
      if (state !== undefined) text("filter.state", state);
      const group = groupOf(filter.group, "filter.group");
      if (after === undefined && limit === undefined) {
        return JSON.parse(this.#raw.resources(this.#now(), context, state, group !== undefined, group ?? undefined));
      }
      if (after !== undefined) plainObject(after, "filter.after");
      if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 0 && limit <= 2 ** 32 - 1)) throw invalid("filter.limit must be an integer from 0");
      const afterKind = after === undefined ? undefined : kindCode(after.kind);
      const afterValue = after === undefined ? undefined : text("filter.after.value", after.value);
      return JSON.parse(this.#raw.resourcesPage(this.#now(), context, state, group !== undefined, group ?? undefined, afterKind, afterValue, limit ?? 2 ** 32 - 1));
    }

    /** One resource with every cell and its `window` (recent outcomes, oldest first). */
    resource(kind, value) {
      return JSON.parse(this.#raw.resource(this.#now(), kindCode(kind), text("value", value)));
    }

    dueForRecoveryProbe() {
      return JSON.parse(this.#raw.dueForRecoveryProbe(this.#now()));
    }

    nextChangeAt(context, options) {
      text("context", context);
      const groups = options === undefined ? undefined : groupsOf(optionOf(options, "groups"));
      const t = groups === undefined
        ? this.#raw.nextChangeAt(this.#now(), context)
        : this.#raw.nextChangeAtIn(this.#now(), context, groups[0], groups[1]);
      return t < 0 ? null : t;
    }

    stats() {
      return this.#raw.stats(this.#now());
    }

    config() {
      return this.#raw.config();
    }

    /** Applies a partial config over the one in force (validated by the engine; nothing
     * changes on an error); true when it changed (one revision step, `CONFIG_CHANGED`). */
    setConfig(patch) {
      if (patch === undefined) throw fail("INVALID_CONFIG", "config must be an object");
      const changed = this.#raw.setConfig(this.#now(), configJson(patch));
      if (changed) this.#kick();
      return changed;
    }

    /** Frees the engine's memory now rather than when the garbage collector gets to it; ends
     * every wait (rejected). */
    free() {
      this.#waiters?.close();
      this.#raw.free();
    }
  }

  return Pool;
}
