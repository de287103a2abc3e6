// Timers a test drives. `manualTimers`: pass `setTimer`/`clearTimer` where a host module takes
// its timer functions, then `fire(ms)` runs what is pending at that delay. `VirtualTimers`: the
// Node runtime's `openPool({ timers })`; time moves only when a test calls `advance(ms)`, which
// fires every timer due by then in order (intervals again each period), so tests of the
// snapshot interval and the burst gap say "nothing started at 49 ms, a write started at 50 ms"
// instead of bounding wall-clock time (what a fired timer began, a file write, the test then
// awaits by its effect). Not a test file.

export function manualTimers() {
  const pending = new Set();
  return {
    pending,
    setTimer(cb, ms) {
      const timer = { cb, ms };
      pending.add(timer);
      return timer;
    },
    clearTimer(timer) {
      pending.delete(timer);
    },
    /** Runs (once) every pending timer of delay `ms`; returns how many ran. */
    fire(ms) {
      const due = [...pending].filter((x) => x.ms === ms);
      for (const x of due) {
        pending.delete(x);
        x.cb();
      }
      return due.length;
    },
  };
}

export class VirtualTimers {
  #now = 0;
  #next = 1;
  /** id → {at, fn, every} */
  #timers = new Map();

  monotonicMs = () => this.#now;
  setTimeout = (fn, ms) => this.#add(fn, ms, 0);
  setInterval = (fn, ms) => this.#add(fn, ms, Math.max(1, ms));
  clearTimeout = (id) => void this.#timers.delete(id);
  clearInterval = (id) => void this.#timers.delete(id);

  /** Timers waiting (intervals included). */
  get pending() {
    return this.#timers.size;
  }

  #add(fn, ms, every) {
    const id = this.#next++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fn, every });
    return id;
  }

  /** Moves the clock `ms` forward, firing what falls due on the way, in order. */
  async advance(ms) {
    const end = this.#now + ms;
    for (;;) {
      let due = null;
      for (const [id, t] of this.#timers) if (t.at <= end && (due === null || t.at < due[1].at)) due = [id, t];
      if (due === null) break;
      const [id, t] = due;
      this.#now = t.at;
      if (t.every > 0) t.at += t.every;
      else this.#timers.delete(id);
      t.fn();
      await Promise.resolve();
    }
    this.#now = end;
  }
}
