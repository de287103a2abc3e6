// The resilient calls' Prometheus metrics (README "Resilient calls"), recorded into the host's
// metrics (lib/host/metrics.js makes them, and lib/host/metric-families.js defines their
// families, so they come out of the same `/metrics`): logical calls apart from their attempts
// (counts and durations), retries, hedges, budget exhaustion, attempt outcomes by failure type
// and phase, bulkhead rejections. call.js calls these hooks through a guard: a failing metric
// never affects a call. Context labels go through the host's cap; phases are the closed set of
// lib/outcome/classify.js (unknown names: `other`). No label ever holds a resource's value.

import { phaseName } from "../outcome/classify.js";

export class CallMetrics {
  #into;
  #label;

  /**
   * @param {{inc(name: string, labels?: object): void, observe(name: string, labels: object, v: number): void}} into
   *   the host's metrics
   * @param {(context: string) => string} label the host's capped context label
   */
  constructor(into, label) {
    this.#into = into;
    this.#label = label;
  }

  call(context, result, seconds) {
    const c = this.#label(context);
    this.#into.inc("repute_calls_total", { context: c, result });
    this.#into.observe("repute_call_duration_seconds", { context: c }, seconds);
  }

  attempt(context, outcome, phase, seconds) {
    const c = this.#label(context);
    this.#into.inc("repute_call_attempts_total", { context: c, outcome, phase: phaseName(phase) });
    this.#into.observe("repute_call_attempt_duration_seconds", { context: c }, seconds);
  }

  retry(context) {
    this.#into.inc("repute_call_retries_total", { context: this.#label(context) });
  }

  hedge(context, result) {
    this.#into.inc("repute_call_hedges_total", { context: this.#label(context), result });
  }

  budgetExhausted(reason) {
    this.#into.inc("repute_call_budget_exhausted_total", { reason });
  }

  bulkheadRejected() {
    this.#into.inc("repute_call_bulkhead_rejections_total");
  }
}
