// Timers the test fires by hand: pass `setTimer`/`clearTimer` where a host module takes its
// timer functions, then `fire(ms)` runs what is pending at that delay. Not a test file.

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
