// The process-wide retry and hedging budgets (README "Resilient calls"). RetryBudget: a token
// bucket that keeps retries at most `ratio` × calls (default 0.1) plus the bucket's size. Every
// logical call deposits `ratio` tokens (up to `capacity`); every retry takes one whole token,
// and a retry that finds less than one is refused — the call stops at once with
// RETRY_BUDGET_EXHAUSTED. So under a burst where every attempt fails, attempts ≤ calls × (1 +
// ratio) + capacity. It is also the kill switch: `disable()` turns retries and hedges off at
// runtime. HedgeBudget: see below. JavaScript runs one callback at a time, so a check-and-take
// is atomic here.

import { invalidOption } from "./errors.js";

export class RetryBudget {
  #ratio;
  #capacity;
  #tokens;
  #enabled = true;
  #refused = 0;
  #retries = 0;
  #calls = 0;

  /** @param {{ ratio?: number, capacity?: number }} [options] */
  constructor({ ratio = 0.1, capacity = 10 } = {}) {
    if (!(typeof ratio === "number" && ratio >= 0 && ratio <= 1)) throw invalidOption("budget ratio must be a number in [0, 1]");
    if (!(Number.isFinite(capacity) && capacity >= 0)) throw invalidOption("budget capacity must be a finite number >= 0");
    this.#ratio = ratio;
    this.#capacity = capacity;
    this.#tokens = capacity;
  }

  /** A logical call starts: deposits `ratio` tokens. */
  onCall() {
    this.#calls++;
    this.#tokens = Math.min(this.#capacity, this.#tokens + this.#ratio);
  }

  /** Takes a token for one retry; false (nothing taken) when disabled or short of a token. */
  tryRetry() {
    if (!this.#enabled || this.#tokens < 1) {
      this.#refused++;
      return false;
    }
    this.#tokens -= 1;
    this.#retries++;
    return true;
  }

  /** A retry that could not start after all (no other resource, the deadline, an abort in
   * the backoff) gives its token back. */
  refund() {
    this.#retries--;
    this.#tokens = Math.min(this.#capacity, this.#tokens + 1);
  }

  get enabled() {
    return this.#enabled;
  }

  /** The kill switch: no retry is allowed until `enable()`. */
  disable() {
    this.#enabled = false;
  }

  enable() {
    this.#enabled = true;
  }

  stats() {
    return { calls: this.#calls, retries: this.#retries, refused: this.#refused, tokens: this.#tokens, ratio: this.#ratio, capacity: this.#capacity, enabled: this.#enabled };
  }
}

/** The budget every call shares unless given its own (`options.budget`). */
export const retryBudget = new RetryBudget();

/**
 * The hedging budget: each hedge costs `round(1 / ratio)` tokens (ratio capped at 0.5), each
 * completed hedge-enabled call returns one, up to `capacity`; so hedges stay near `ratio` ×
 * calls. Check-and-take is atomic (one callback at a time).
 */
export class HedgeBudget {
  #cost;
  #capacity;
  #tokens;
  #hedges = 0;
  #refused = 0;

  /** @param {{ ratio?: number, capacity?: number }} [options] */
  constructor({ ratio = 0.1, capacity = 100 } = {}) {
    if (!(typeof ratio === "number" && ratio > 0 && ratio <= 1)) throw invalidOption("hedge budget ratio must be a number in (0, 1]");
    if (!(Number.isFinite(capacity) && capacity >= 0)) throw invalidOption("hedge budget capacity must be a finite number >= 0");
    this.#cost = Math.round(1 / Math.min(ratio, 0.5));
    this.#capacity = capacity;
    this.#tokens = capacity;
  }

  tryHedge() {
    if (this.#tokens < this.#cost) {
      this.#refused++;
      return false;
    }
    this.#tokens -= this.#cost;
    this.#hedges++;
    return true;
  }

  /** A hedge that could not start after all gives its tokens back. */
  refund() {
    this.#hedges--;
    this.#tokens = Math.min(this.#capacity, this.#tokens + this.#cost);
  }

  onCallDone() {
    this.#tokens = Math.min(this.#capacity, this.#tokens + 1);
  }

  stats() {
    return { hedges: this.#hedges, refused: this.#refused, tokens: this.#tokens, cost: this.#cost, capacity: this.#capacity };
  }
}

/** The hedging budget every hedged call shares unless given its own (`hedge.budget`). */
export const hedgeBudget = new HedgeBudget();
