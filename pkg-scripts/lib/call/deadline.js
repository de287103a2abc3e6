// One deadline per logical call (README "Resilient calls"): every attempt, backoff and wait of
// the call fits in it. Built from `deadlineMs` and/or the caller's `AbortSignal` — whichever
// ends first ends the call; the deadline is never extended. Time is the injected monotonic
// clock and timers (virtual in tests). Owns the call's AbortSignal and nothing else.

import { CallError } from "./errors.js";

export class Deadline {
  #now;
  #timers;
  #controller = new AbortController();
  #timer = null;
  #onAbort = null;
  #callerSignal;
  /** Monotonic instant the call must end by (Infinity: none). */
  at;

  /**
   * @param {{ now: () => number, timers: { setTimeout: Function, clearTimeout: Function },
   *           deadlineMs?: number, signal?: AbortSignal }} options
   */
  constructor({ now, timers, deadlineMs, signal }) {
    this.#now = now;
    this.#timers = timers;
    this.#callerSignal = signal ?? null;
    this.at = deadlineMs === undefined || deadlineMs === Infinity ? Infinity : now() + deadlineMs;
    if (signal?.aborted) {
      this.#controller.abort(aborted(signal));
      return;
    }
    if (signal) {
      this.#onAbort = () => this.#controller.abort(aborted(signal));
      signal.addEventListener("abort", this.#onAbort, { once: true });
    }
    if (this.at !== Infinity) {
      this.#timer = timers.setTimeout(() => this.#controller.abort(deadlineError()), this.at - now());
      this.#timer?.unref?.();
    }
  }

  /** Aborts when the caller aborts or the deadline passes; its reason is a CallError. */
  get signal() {
    return this.#controller.signal;
  }

  /** Did the caller (not the deadline) end the call? */
  get callerAborted() {
    return this.#callerSignal?.aborted === true;
  }

  remaining() {
    return this.at === Infinity ? Infinity : Math.max(0, this.at - this.#now());
  }

  /**
   * An attempt's timeout: `min(attemptTimeoutMs, remaining − reservedMs)`, or 0 when no attempt
   * may start (the deadline passed, the caller aborted, or nothing is left after the reserve).
   */
  attemptTimeout(attemptTimeoutMs, reservedMs = 0) {
    if (this.signal.aborted) return 0;
    return Math.max(0, Math.min(attemptTimeoutMs, this.remaining() - reservedMs));
  }

  /** Waits `ms` (never past the deadline: rejects with the deadline's reason instead). */
  sleep(ms) {
    const signal = this.signal;
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const done = () => {
        signal.removeEventListener("abort", stop);
        resolve();
      };
      const t = this.#timers.setTimeout(done, ms);
      const stop = () => {
        this.#timers.clearTimeout(t);
        reject(signal.reason);
      };
      signal.addEventListener("abort", stop, { once: true });
    });
  }

  dispose() {
    if (this.#timer !== null) this.#timers.clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#onAbort) this.#callerSignal.removeEventListener("abort", this.#onAbort);
  }
}

const deadlineError = () => new CallError("DEADLINE_EXCEEDED", "the call's deadline passed", { retryable: true, stopReason: "deadline" });

function aborted(signal) {
  const e = new CallError("ABORTED", "the caller aborted the call", { stopReason: "aborted" });
  Object.defineProperty(e, "callerReason", { value: signal.reason, enumerable: false });
  return e;
}
