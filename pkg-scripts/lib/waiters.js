// Waiting acquires (SPEC §3 "Capacity, waiting and finishing a step"): the queue every host
// puts `acquireWait` on — the embedded `Pool`, `openPool`'s host, the memory and edge hosts —
// platform-neutral (no Node API), on the timers and clock it is given.
//
// - A wait answers at once when a lease can be granted; otherwise it joins the queue of its
//   context and group list and is served first come, first served.
// - A queue is retried only when something may have made a candidate: the host calls `kick()`
//   after a release, a report, a registration, an unblock or a config change, and a single
//   timer fires at the earliest of the waiting lists' `nextChangeAt` (lease and block ends,
//   cooldown and pacing ends) and the waits' deadlines. Never a polling loop.
// - Retries are the host's quiet acquire (no `ACQUISITION_REJECTED`); a wait that ends empty
//   makes one last ordinary acquire, which grants if it can and otherwise emits the one
//   rejection of that wait.
// - An aborted `signal` ends its wait with the signal's reason (an `AbortError` by default); a
//   lease is granted only to a waiter still waiting, so none leaks.
// - At most `max` waits at once: past that, a wait answers as if `waitMs` were 0.
// Owns the queues and the timer; the host owns the pool and what a grant means to it.

/** Timers the waits run on: the platform's, unless a host gives virtual ones (tests). */
const PLATFORM_TIMERS = Object.freeze({
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (t) => globalThis.clearTimeout(t),
});

/** The longest a platform timer waits in one go (setTimeout's limit, 2^31 − 1 ms). */
const MAX_DELAY = 2 ** 31 - 1;

function invalid(message) {
  return Object.assign(new Error(message), { code: "INVALID_ARGUMENT" });
}

/** The reason a wait ends on an aborted signal. */
function abortReason(signal) {
  return signal.reason ?? new DOMException("the wait was aborted", "AbortError");
}

/** Checks `waitMs` (a finite number ≥ 0) and `signal` (an AbortSignal, or absent). */
export function checkWait(waitMs, signal) {
  if (typeof waitMs !== "number" || !Number.isFinite(waitMs) || waitMs < 0) {
    throw invalid("waitMs must be a finite number of milliseconds >= 0");
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalid("signal must be an AbortSignal");
}

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * `acquireWait`'s options `{groups?, waitMs, signal?}`, checked (the engine checks the groups
 * list itself): `[groups, waitMs, signal]`.
 */
export function waitOptions(options) {
  if (!isObject(options)) throw invalid("options must be an object ({waitMs, groups?, signal?})");
  for (const k in options) if (k !== "groups" && k !== "waitMs" && k !== "signal") throw invalid(`unknown option ${k} (it takes groups, waitMs, signal)`);
  const { groups, waitMs, signal } = options;
  if (groups !== undefined && !Array.isArray(groups)) throw invalid("groups must be an array of group names or null");
  checkWait(waitMs, signal);
  return [groups, waitMs, signal];
}

/**
 * `finish`'s options `{next?: {context?, groups?, waitMs?}}` (and `signal`, where `withSignal`:
 * a host's HTTP wait ends with its connection), checked: the next step (`waits`: `waitMs` was
 * given, so the answer is a promise), or undefined. Checked before the step is finished, so
 * that a bad `next` leaves the lease as it was.
 */
export function nextStep(options, withSignal = false) {
  if (options === undefined) return undefined;
  if (!isObject(options)) throw invalid("options must be an object ({next?})");
  for (const k in options) if (k !== "next") throw invalid(`unknown option ${k} (it takes next)`);
  const next = options.next;
  if (next === undefined) return undefined;
  if (!isObject(next)) throw invalid("next must be an object ({context?, groups?, waitMs?})");
  const keys = withSignal ? ["context", "groups", "waitMs", "signal"] : ["context", "groups", "waitMs"];
  for (const k in next) if (!keys.includes(k)) throw invalid(`unknown next option ${k} (it takes ${keys.join(", ")})`);
  if (next.context !== undefined && typeof next.context !== "string") throw invalid("next.context must be a string");
  if (next.groups !== undefined && !Array.isArray(next.groups)) throw invalid("next.groups must be an array of group names or null");
  const waits = next.waitMs !== undefined;
  const waitMs = next.waitMs ?? 0;
  checkWait(waitMs, next.signal);
  return { context: next.context, groups: next.groups, waitMs, waits, signal: next.signal };
}

export class Waiters {
  /** Waits over a pool or host with the methods `acquireQuiet(context, {groups}?)`,
   * `acquire(context, {groups}?)`, `nextChangeAt(context, {groups}?)` and `now()` (`now`
   * given apart for a pool that has none of its own). */
  static over(target, options, now = () => target.now()) {
    const opts = (groups) => (groups === undefined ? undefined : { groups });
    const host = {
      acquireQuiet: (context, groups) => target.acquireQuiet(context, opts(groups)),
      acquire: (context, groups) => target.acquire(context, opts(groups)),
      nextChangeAt: (context, groups) => target.nextChangeAt(context, opts(groups)),
      now,
    };
    return new Waiters(host, options);
  }

  /** Waiting list key → its queue (waiters in arrival order); queues in first-wait order. */
  #queues = new Map();
  #size = 0;
  #max;
  #host;
  #timers;
  #timer = null;
  #timerAt = Infinity;

  /**
   * `host`: `{ acquireQuiet(context, groups) → lease | null` (no rejection event),
   * `acquire(context, groups) → lease | null` (an ordinary acquire), `nextChangeAt(context,
   * groups) → ms | null`, `now() → ms` (the clock `nextChangeAt` answers on) }`; `groups` is
   * the list or undefined. A retry that throws (a host refusing calls, say) ends that wait
   * with its error. `timers`: `{setTimeout, clearTimeout}`. `max`: the
   * most waits at once.
   */
  constructor(host, { timers = PLATFORM_TIMERS, max = 10_000 } = {}) {
    this.#host = host;
    this.#timers = timers;
    this.#max = max;
  }

  /** Waits now. */
  get size() {
    return this.#size;
  }

  /**
   * A lease for `context` (from `groups`, when given) within `waitMs`, or null: see the header.
   * The arguments are the host's to check (`checkWait`); a call that fails at once (a bad
   * context, say) throws rather than returning a rejected promise.
   */
  wait(context, groups, waitMs, signal) {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const key = keyOf(context, groups);
    const queue = this.#queues.get(key);
    if (queue) this.#serve(queue);
    if (waitMs <= 0 || this.#size >= this.#max) return Promise.resolve(this.#host.acquire(context, groups));
    if (!this.#queues.has(key)) {
      const lease = this.#host.acquireQuiet(context, groups);
      if (lease) return Promise.resolve(lease);
    }
    return new Promise((resolve, reject) => {
      const w = { key, context, groups, deadline: this.#host.now() + waitMs, resolve, reject, signal, onAbort: null };
      if (signal) {
        w.onAbort = () => {
          if (this.#remove(w)) reject(abortReason(signal));
        };
        signal.addEventListener("abort", w.onAbort, { once: true });
      }
      let q = this.#queues.get(key);
      if (!q) this.#queues.set(key, (q = { context, groups, waiters: [], changeAt: null, deadline: Infinity }));
      q.waiters.push(w);
      if (w.deadline < q.deadline) q.deadline = w.deadline;
      this.#size++;
      this.#noteChange(q);
      this.#schedule();
    });
  }

  /** Something may have made a candidate: serve each queue's waiters in order while they get
   * leases. Cheap when nobody waits. */
  kick() {
    if (this.#size === 0) return;
    for (const q of this.#queues.values()) this.#serve(q);
    this.#schedule();
  }

  /** Ends every wait with `reason` (the host is closing). */
  close(reason = new Error("the pool was closed")) {
    for (const q of [...this.#queues.values()]) {
      for (const w of [...q.waiters]) if (this.#remove(w)) w.reject(reason);
    }
    this.#unschedule();
  }

  /** Grants to `q`'s waiters in order until one gets nothing; notes when to try again. */
  #serve(q) {
    while (q.waiters.length > 0) {
      const w = q.waiters[0];
      let lease;
      try {
        lease = this.#host.acquireQuiet(w.context, w.groups);
      } catch (e) {
        this.#remove(w);
        w.reject(e);
        continue;
      }
      if (!lease) {
        this.#noteChange(q);
        return;
      }
      this.#remove(w);
      w.resolve(lease);
    }
  }

  /** When `q` may next have a candidate by time alone. */
  #noteChange(q) {
    try {
      q.changeAt = this.#host.nextChangeAt(q.context, q.groups);
    } catch {
      q.changeAt = null; // the deadlines and the next kick still serve it
    }
  }

  /** Takes `w` out of its queue (false when it was not waiting any more). */
  #remove(w) {
    const q = this.#queues.get(w.key);
    const i = q ? q.waiters.indexOf(w) : -1;
    if (i < 0) return false;
    q.waiters.splice(i, 1);
    if (q.waiters.length === 0) this.#queues.delete(w.key);
    else if (w.deadline === q.deadline) q.deadline = Math.min(...q.waiters.map((x) => x.deadline));
    this.#size--;
    if (w.onAbort) w.signal.removeEventListener("abort", w.onAbort);
    return true;
  }

  /** One timer, at the earliest deadline or next change of anything waiting (each queue
   * keeps its earliest deadline: O(queues), not O(waits)). */
  #schedule() {
    let at = Infinity;
    for (const q of this.#queues.values()) {
      if (q.changeAt !== null && q.changeAt < at) at = q.changeAt;
      if (q.deadline < at) at = q.deadline;
    }
    if (at === this.#timerAt) return;
    this.#unschedule();
    if (at === Infinity) return;
    this.#timerAt = at;
    // At least 1 ms: a next change "now" that did not grant must not spin.
    const delay = Math.min(MAX_DELAY, Math.max(1, at - this.#host.now()));
    this.#timer = this.#timers.setTimeout(() => this.#fire(), delay);
  }

  #unschedule() {
    if (this.#timer !== null) this.#timers.clearTimeout(this.#timer);
    this.#timer = null;
    this.#timerAt = Infinity;
  }

  /** The timer: serve every queue, then end the waits whose time is up. */
  #fire() {
    this.#timer = null;
    this.#timerAt = Infinity;
    for (const q of [...this.#queues.values()]) this.#serve(q);
    const now = this.#host.now();
    for (const q of [...this.#queues.values()]) {
      if (q.deadline > now) continue;
      for (const w of [...q.waiters]) {
        if (w.deadline > now) continue;
        this.#remove(w);
        let lease;
        try {
          lease = this.#host.acquire(w.context, w.groups);
        } catch (e) {
          w.reject(e);
          continue;
        }
        w.resolve(lease);
      }
    }
    this.#schedule();
  }
}

/** The key of a waiting list: the context and the group list. */
function keyOf(context, groups) {
  return groups === undefined ? `${context}` : `${context}\u0000${JSON.stringify(groups)}`;
}
