// The bulkhead (README "Resilient calls"): at most `maxConcurrent` calls run at once, at most
// `maxQueue` more wait (first come, first served), and a call that finds the queue full fails
// at once with CAPACITY_EXCEEDED instead of waiting behind a surge. Waiting counts against the
// call's deadline: a call whose deadline passes (or whose caller aborts) while queued leaves
// the queue. Unlike the pool's leases this limits the caller's own concurrency (sockets,
// memory), whatever resources are free. Owns the permits and the queue only.

import { CallError, invalidOption } from "./errors.js";

export class Bulkhead {
  #max;
  #maxQueue;
  #active = 0;
  /** Waiting calls: { grant, signal, onAbort }. */
  #queue = [];
  #rejected = 0;

  /** @param {{ maxConcurrent: number, maxQueue?: number }} options */
  constructor({ maxConcurrent, maxQueue = 0 } = {}) {
    if (!(Number.isInteger(maxConcurrent) && maxConcurrent >= 1)) throw invalidOption("bulkhead maxConcurrent must be an integer >= 1");
    if (!(Number.isInteger(maxQueue) && maxQueue >= 0)) throw invalidOption("bulkhead maxQueue must be an integer >= 0");
    this.#max = maxConcurrent;
    this.#maxQueue = maxQueue;
  }

  /**
   * A permit: resolves with its `release` function once the call may run; rejects with
   * CAPACITY_EXCEEDED when the queue is full, or with `signal`'s reason if it aborts first.
   * @param {AbortSignal} signal the call's (deadline and caller)
   */
  enter(signal) {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#active < this.#max) {
      this.#active++;
      return Promise.resolve(this.#releaser());
    }
    if (this.#queue.length >= this.#maxQueue) {
      this.#rejected++;
      return Promise.reject(new CallError("CAPACITY_EXCEEDED", `${this.#max} calls are running and ${this.#queue.length} waiting`, { retryable: true, stopReason: "capacity" }));
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener("abort", waiter.onAbort);
          resolve(this.#releaser());
        },
        onAbort: () => {
          const i = this.#queue.indexOf(waiter);
          if (i >= 0) this.#queue.splice(i, 1);
          reject(signal.reason);
        },
      };
      signal.addEventListener("abort", waiter.onAbort, { once: true });
      this.#queue.push(waiter);
    });
  }

  #releaser() {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.#queue.shift();
      if (next) next.grant(); // the permit passes on
      else this.#active--;
    };
  }

  stats() {
    return { active: this.#active, queued: this.#queue.length, rejected: this.#rejected, maxConcurrent: this.#max, maxQueue: this.#maxQueue };
  }
}
