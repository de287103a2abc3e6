// The `Pool` class of the `repute` package (SPEC §9), shared by the Node and web entries.
//
// A thin wrapper over the WebAssembly `RawPool`: arguments checked and coded as the engine takes
// them (`pool-args.js`), result objects built from scalars on the hot path (acquire, report,
// renew, release, finish), drained events unpacked (`pool-events.js`) and JSON text parsed for
// other bulk results. Every rule lives in the engine, and every call reads the clock once and
// hands the reading to it. A grant answers its resource's id: calls that name the last grant
// (its lease, or a report on its resource in its context) pass that id and the lease's token
// back, other calls pass the names — written into a buffer the engine keeps (`textArgs`) when
// they are ASCII, so that no call allocates for them; no table maps names to ids here.
// Waiting acquires queue in `waiters.js`, which this class kicks after each call that may make
// a candidate.

import { KINDS } from "./vocabulary.js";
import { Waiters, nextStep, waitOptions } from "./waiters.js";
import {
  RESOURCE_FILTERS, atLeastOf, clock, configJson, countArg, fail, groupOf, groupsOf, invalid, isPlainObject, kindCode,
  latency, leaseKind, optionOf, optionsOf, outcomeCode, plainObject, putText, registration, text,
} from "./pool-args.js";
import { unpackEvents } from "./pool-events.js";

/** A section of `restoreInParts`: UTF-8 bytes. */
function bytesOf(v) {
  if (!(v instanceof Uint8Array)) throw invalid("a section must be a Uint8Array of UTF-8");
  return v;
}

/** A resource id's low 32 bits are its slot plus one (src/ids.rs): `h >>> 0` (ToUint32, exact
 * for an integer below 2^53, where `h % 2 ** 32` is a floating-point remainder). */
const slotOf = (h) => h >>> 0;
/** What a call by a lease's id answers when that lease is not held any more: call by name. */
const BY_NAME = -1;

/** Builds the `Pool` class over a loaded `RawPool` (and `RawRestore`, for `restoreInParts`). */
export function makePool(RawPool, RawRestore = null) {
  const RESTORING = Symbol("restoring");

  class Pool {
    #raw;
    #now;
    /** The value strings of the resources leases have named, as `[id, value]` at 2 × (the
     * id's slot plus one): read from the engine once per id (its value never changes), and
     * never taken for another resource's (the id is compared; a re-registered slot has a new
     * one). Nothing here maps a name to an id. */
    #values = [];
    /** The last grant: its resource's id, kind code, value, context and token. A report on
     * that resource in that context, or a call with that lease, passes the id and token. */
    #grantId = 0;
    #grantKind = -1;
    #grantValue = undefined;
    #grantContext = undefined;
    #grantToken = 0;
    /** The engine's view of the last lease's numbers (`leaseFields`); empty until asked for
     * and once the module's memory has grown. */
    #fields = new Float64Array(0);
    /** The engine's buffer for a call's strings (`textArgs`, src/wasm/facade/text_args.rs); empty
     * until asked for and once the module's memory has grown. */
    #text = new Uint8Array(0);
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

    /**
     * A restore fed a snapshot's parts and built in steps, for a host whose import must not
     * hold its loop (lib/node/import-steps.js): `head` is the snapshot's `snapshotPart()`,
     * options as `restore`'s but `atLeast`. `reserve(byKind)`, before the first part: room
     * for the resources to come (`registeredByKind()` of the pool whose parts these are: a
     * count off the mark costs only room or time). `add(registered, blocklist, cells)`: the next
     * resources' parts (`snapshotPart(kind, value)`, in canonical order) as the three sections
     * their lines make, each the UTF-8 bytes (a `Uint8Array`) of its entries comma-separated
     * (kept off the JavaScript heap by a host that holds many); `step()`: one bounded
     * piece of the build once all are in, true when it is complete; `raise(atLeast)`; `head()`:
     * the head, counters as raised; `finish()`: the `Pool`; `free()`: abandons it. The result
     * is `restore` of the joined document's (src/pool/snapshot/session.rs).
     */
    static restoreInParts(head, options) {
      if (!RawRestore) throw invalid("this build of the engine has no restore in parts");
      text("head", head);
      const [config, now, random, s, wait] = optionsOf(options);
      let raw = new RawRestore(head, config);
      const open = () => {
        if (raw === null) throw invalid("this restore is finished or freed");
        return raw;
      };
      return {
        reserve: (byKind) => {
          plainObject(byKind, "byKind");
          for (const k in byKind) if (!KINDS.includes(k)) throw invalid(`byKind.${k} is not a kind (${KINDS.join(", ")})`);
          open().reserve(...KINDS.map((k) => countArg(`byKind.${k}`, byKind[k] ?? 0)));
        },
        add: (registered, blocklist, cells) => open().add(bytesOf(registered), bytesOf(blocklist), bytesOf(cells)),
        step: () => open().step(),
        raise: (atLeast) => open().raiseTo(...atLeastOf(atLeast)),
        head: () => open().head(),
        finish: () => {
          const r = open();
          raw = null; // consumed by the engine, also when it throws
          return new Pool(RESTORING, [r.finish(random, s), clock(now), wait]);
        },
        free: () => {
          raw?.free();
          raw = null;
        },
      };
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
      if (h > 0) this.#remember(h, value);
      this.#kick(); // a new resource, or a raised maxLeases, may serve a wait
      return h > 0;
    }

    /** Keeps `value` as resource `h`'s value string. */
    #remember(h, value) {
      const values = this.#values;
      const i = 2 * slotOf(h);
      while (values.length <= i) values.push(undefined, undefined); // grows without holes
      values[i] = h;
      values[i + 1] = value;
    }

    /** The value of resource `h`, read from the engine when not kept yet. */
    #valueOf(h) {
      const i = 2 * slotOf(h);
      if (this.#values[i] === h) return this.#values[i + 1];
      const value = this.#raw.resourceValue(h);
      this.#remember(h, value);
      return value;
    }

    deregister(kind, value) {
      const k = kindCode(kind);
      return this.#raw.deregister(this.#now(), k, text("value", value));
    }

    acquire(context, options) {
      const groups = options === undefined ? undefined : groupsOf(optionOf(options, "groups"));
      return this.#acquire(this.#now(), context, groups, false);
    }

    /** `acquire` that emits no ACQUISITION_REJECTED when it grants nothing: for a host that
     * waits for a candidate itself and retries (SPEC §3, waiting; `waiters.js`). */
    acquireQuiet(context, options) {
      const groups = options === undefined ? undefined : groupsOf(optionOf(options, "groups"));
      return this.#acquire(this.#now(), context, groups, true);
    }

    /** An acquire at the clock reading `now` with `groups` as `groupsOf` gives them (or
     * undefined); `quiet`: no rejection event. */
    #acquire(now, context, groups, quiet) {
      if (groups !== undefined) {
        text("context", context);
        const h = this.#raw.acquireIn(now, context, groups[0], groups[1], quiet);
        return h === 0 ? null : this.#lease(h, context);
      }
      const h = putText(this.#buf(), 0, context) >= 0
        ? this.#raw.acquireText(now, context.length, quiet)
        : this.#raw.acquire(now, text("context", context), quiet);
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
      const grant = this.#isGrant(k, value, context, token);
      if (!grant) {
        text("lease.value", value);
        text("lease.context", context);
      }
      const code = outcomeCode(outcome);
      const ms = latency(outcome.latencyMs);
      const n = nextStep(options);
      if (n?.context !== undefined) text("next.context", n.context);
      const groups = n === undefined ? undefined : groupsOf(n.groups);
      const to = n?.context ?? context;
      const now = this.#now();
      const step = (next, quiet) => {
        const names = groups?.[0];
        const lens = groups?.[1];
        let h = BY_NAME;
        if (grant) h = this.#raw.finishLease(now, this.#grantId, token, code, ms, next, n?.context, names, lens, quiet);
        if (h === BY_NAME) h = this.#raw.finish(now, k, value, context, token, code, ms, next, n?.context, names, lens, quiet);
        return h === h ? h : this.#fail();
      };
      const wait = (lease) => {
        if (lease !== null || n.waitMs === 0) return Promise.resolve(lease);
        return this.acquireWait(to, groups === undefined ? { waitMs: n.waitMs } : { groups: n.groups, waitMs: n.waitMs });
      };
      if (n === undefined || this.waiting > 0) {
        // Report and release first, so that waits queued before this step are served first.
        step(false, false);
        this.#kick();
        if (n === undefined) return null;
        if (n.waits) return n.waitMs > 0 ? wait(null) : Promise.resolve(this.#acquire(now, to, groups, false));
        return this.#acquire(now, to, groups, false);
      }
      // Nobody waits: the whole step in one call into the engine (its next lease quiet when a
      // wait may follow).
      const got = step(true, n.waitMs > 0);
      const leased = got === 0 ? null : this.#lease(got, to);
      return n.waits ? wait(leased) : leased;
    }

    /** Whether a lease's fields are the last grant's (`k` its kind code). */
    #isGrant(k, value, context, token) {
      return token === this.#grantToken && k === this.#grantKind && value === this.#grantValue && context === this.#grantContext;
    }

    acquireResource(kind, value, context) {
      const k = kindCode(kind);
      text("value", value);
      text("context", context);
      const h = this.#raw.acquireResource(this.#now(), k, value, context);
      return h === 0 ? null : this.#lease(h, context);
    }

    /** The lease just granted (`h` its resource's id), remembered as the last grant. */
    #lease(h, context) {
      let f = this.#fields;
      if (f.length === 0) f = this.#fields = this.#raw.leaseFields(); // first lease, or memory grew
      // Read before anything else calls into the module (resourceValue allocates there).
      const kind = f[0];
      const token = f[1];
      const leasedAt = f[2];
      const expiresAt = f[3];
      const grouped = f[4];
      const value = this.#valueOf(h);
      const group = grouped === 0 ? null : (this.#raw.resourceGroup(h) ?? null);
      this.#grantId = h;
      this.#grantKind = kind;
      this.#grantValue = value;
      this.#grantContext = context;
      this.#grantToken = token;
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

    report(kind, value, context, outcome) {
      const k = kindCode(kind);
      const grant = k === this.#grantKind && value === this.#grantValue && context === this.#grantContext;
      if (!grant) {
        text("value", value);
        text("context", context);
      }
      const code = outcomeCode(outcome);
      const ms = latency(outcome.latencyMs);
      const now = this.#now();
      let done = BY_NAME;
      if (grant) done = this.#raw.reportLease(now, this.#grantId, this.#grantToken, code, ms);
      if (done === BY_NAME) {
        done = this.#putNamed(value, context)
          ? this.#raw.reportText(now, k, value.length, context.length, code, ms)
          : this.#raw.report(now, k, value, context, code, ms);
      }
      if (done !== 0) this.#fail();
      this.#kick(); // a probe's success ends a cooldown
    }

    /** The engine's buffer for a call's strings (asked for again once memory growth emptied
     * the view). */
    #buf() {
      const b = this.#text;
      return b.length === 0 ? (this.#text = this.#raw.textArgs()) : b;
    }

    /** Writes a call's value and context into the engine's buffer, one after the other: true
     * when both went (ASCII, so their lengths in bytes are their `length`s). */
    #putNamed(value, context) {
      const b = this.#buf();
      const v = putText(b, 0, value);
      return v >= 0 && putText(b, v, context) >= 0;
    }

    /** Throws the error of the hot-path call that just answered NaN (src/wasm/facade.rs,
     * `answer`: those calls return a number, not a Result). */
    #fail() {
      throw this.#raw.takeError();
    }

    renew(lease) {
      const k = leaseKind(lease);
      const { value, context, token } = lease;
      const now = this.#now();
      const h = this.#isGrant(k, value, context, token)
        ? this.#raw.renewLease(now, this.#grantId, token)
        : this.#putNamed(value, context)
          ? this.#raw.renewText(now, k, value.length, context.length, token)
          : this.#raw.renew(now, k, text("lease.value", value), text("lease.context", context), token);
      if (h === 0) return null;
      if (h !== h) this.#fail();
      let f = this.#fields;
      if (f.length === 0) f = this.#fields = this.#raw.leaseFields();
      const leasedAt = f[2];
      const expiresAt = f[3];
      const group = f[4] === 0 ? null : (this.#raw.resourceGroup(h) ?? null);
      return { kind: lease.kind, value, group, context, token, leasedAt, expiresAt };
    }

    release(lease) {
      const k = leaseKind(lease);
      const { value, context, token } = lease;
      const now = this.#now();
      const released = this.#isGrant(k, value, context, token)
        ? this.#raw.releaseLease(now, this.#grantId, token)
        : this.#putNamed(value, context)
          ? this.#raw.releaseText(now, k, value.length, context.length, token)
          : this.#raw.release(now, k, text("lease.value", value), text("lease.context", context), token);
      if (released === 1) {
        this.#kick();
        return true;
      }
      return released !== 0 && this.#fail();
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

    /** Puts back a resource from its part (`snapshotPart(kind, value)`, taken before it was
     * deregistered): its registration, block and cells with their history; not its leases
     * (they ended). True when put back, false when that resource is registered. One revision
     * step and a RESOURCE_REGISTERED event, as a registration. */
    reinstate(part) {
      return this.#raw.reinstate(this.#now(), text("part", part));
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

    /** Registered resources of each kind: `{ PROXY, ACCOUNT, SESSION }`. */
    registeredByKind() {
      const n = this.#raw.registeredByKind();
      return Object.fromEntries(KINDS.map((k, i) => [k, n[i]]));
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
