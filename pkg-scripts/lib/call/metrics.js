// The resilient calls' Prometheus metrics (README "Resilient calls"), in the host's registry
// (lib/host/metrics.js creates them, so they come out of the same `/metrics`): logical calls
// apart from their attempts (counts and durations), retries, hedges, budget exhaustion,
// attempt outcomes by failure type and phase, bulkhead rejections. call.js calls these hooks
// through a guard: a failing metric never affects a call. Context labels go through the
// host's cap; phases are the closed set of lib/outcome/classify.js (unknown names: `other`). No label ever
// holds a resource's value.

import client from "prom-client";
import { phaseName } from "../outcome/classify.js";

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class CallMetrics {
  #label;
  #calls;
  #callSeconds;
  #attempts;
  #attemptSeconds;
  #retries;
  #hedges;
  #budget;
  #bulkhead;

  /**
   * @param {client.Registry[]} registers
   * @param {(context: string) => string} label the host's capped context label
   */
  constructor(registers, label) {
    this.#label = label;
    this.#calls = new client.Counter({ name: "repute_calls_total", help: "Logical calls by context and result (ok, or the CallError code).", labelNames: ["context", "result"], registers });
    this.#callSeconds = new client.Histogram({ name: "repute_call_duration_seconds", help: "Logical call durations (every attempt, backoff and wait).", labelNames: ["context"], buckets: BUCKETS, registers });
    this.#attempts = new client.Counter({
      name: "repute_call_attempts_total",
      help: "Attempts by context, what was reported (ok, a failure type, none) or cancelled, and phase.",
      labelNames: ["context", "outcome", "phase"],
      registers,
    });
    this.#attemptSeconds = new client.Histogram({ name: "repute_call_attempt_duration_seconds", help: "Attempt durations.", labelNames: ["context"], buckets: BUCKETS, registers });
    this.#retries = new client.Counter({ name: "repute_call_retries_total", help: "Retries started.", labelNames: ["context"], registers });
    this.#hedges = new client.Counter({ name: "repute_call_hedges_total", help: "Hedges by result: won, lost, refused (budget).", labelNames: ["context", "result"], registers });
    this.#budget = new client.Counter({ name: "repute_call_budget_exhausted_total", help: "Retries refused by the retry budget or the kill switch.", labelNames: ["reason"], registers });
    this.#bulkhead = new client.Counter({ name: "repute_call_bulkhead_rejections_total", help: "Calls turned away by a full bulkhead.", registers });
  }

  call(context, result, seconds) {
    const c = this.#label(context);
    this.#calls.inc({ context: c, result });
    this.#callSeconds.observe({ context: c }, seconds);
  }

  attempt(context, outcome, phase, seconds) {
    const c = this.#label(context);
    this.#attempts.inc({ context: c, outcome, phase: phaseName(phase) });
    this.#attemptSeconds.observe({ context: c }, seconds);
  }

  retry(context) {
    this.#retries.inc({ context: this.#label(context) });
  }

  hedge(context, result) {
    this.#hedges.inc({ context: this.#label(context), result });
  }

  budgetExhausted(reason) {
    this.#budget.inc({ reason });
  }

  bulkheadRejected() {
    this.#bulkhead.inc();
  }
}
