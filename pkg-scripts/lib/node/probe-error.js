// The recovery prober's error (a stable `code`, like the package's own errors) and the option
// checks that the prober (prober.js) and the HTTP probe (http-probe.js) both make.

/** An `Error` with a stable `code`, like the package's own errors. */
export class ProbeError extends Error {
  /**
   * @param {string} message
   * @param {string} code
   * @param {object} [fields] extra fields (such as `status`)
   */
  constructor(message, code, fields) {
    super(message);
    this.name = "ProbeError";
    this.code = code;
    if (fields) Object.assign(this, fields);
  }
}

export const invalid = (message) => new ProbeError(message, "INVALID_ARGUMENT");

export function positive(name, v, { integer = false, zero = false } = {}) {
  const ok = typeof v === "number" && Number.isFinite(v) && (zero ? v >= 0 : v > 0) && (!integer || Number.isInteger(v));
  if (!ok) throw invalid(`${name} must be a finite ${integer ? "integer" : "number"} ${zero ? ">= 0" : "> 0"}`);
  return v;
}

export function fn(name, v) {
  if (typeof v !== "function") throw invalid(`${name} must be a function`);
  return v;
}
