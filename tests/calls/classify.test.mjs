// The classification (pkg-scripts/lib/outcome/classify.js) as the resilient call layer uses it,
// row by row, on the shapes real clients produce: undici / Node error codes (with their `cause`
// chains) and HTTP answers; the contract's rows (_classification.mjs) from this user. The same
// rows are met on real sockets in sockets.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { classifyError, classifyResult, retryAfterMs } from "../../pkg-scripts/lib/outcome/classify.js";
import { PROXY_REFUSALS, STATUS_CASES } from "./_classification.mjs";

const err = (code, message = code, cause) => Object.assign(new Error(message, cause ? { cause } : undefined), { code });
const pick = (v) => ({ report: v.report, deliver: v.deliver, retryable: v.retryable, reached: v.reached, phase: v.phase });

test("transport errors: refused / DNS are connect-phase CONNECTION_RESET that never reached the server", () => {
  for (const code of ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH"]) {
    const v = classifyError(new TypeError("fetch failed", { cause: err(code) }), { phase: "connect" });
    assert.deepEqual(pick(v), { report: "CONNECTION_RESET", deliver: false, retryable: true, reached: false, phase: "connect" }, code);
  }
});

test("reset / pipe / socket closed after the request went out: CONNECTION_RESET, may have reached", () => {
  for (const code of ["ECONNRESET", "EPIPE", "UND_ERR_SOCKET"]) {
    const v = classifyError(err(code), { phase: "send" });
    assert.deepEqual(pick(v), { report: "CONNECTION_RESET", deliver: false, retryable: true, reached: true, phase: "send" }, code);
  }
  assert.equal(classifyError(err("ECONNRESET"), { phase: "receive" }).phase, "receive");
});

test("timeouts by phase: connect (not reached), headers (send), body (receive), our own attempt timer", () => {
  assert.deepEqual(pick(classifyError(err("UND_ERR_CONNECT_TIMEOUT"))), { report: "TIMEOUT", deliver: false, retryable: true, reached: false, phase: "connect" });
  assert.deepEqual(pick(classifyError(err("UND_ERR_HEADERS_TIMEOUT"))), { report: "TIMEOUT", deliver: false, retryable: true, reached: true, phase: "send" });
  assert.deepEqual(pick(classifyError(err("UND_ERR_BODY_TIMEOUT"))), { report: "TIMEOUT", deliver: false, retryable: true, reached: true, phase: "receive" });
  assert.deepEqual(pick(classifyError(new Error("aborted"), { phase: "receive", timedOut: true })), { report: "TIMEOUT", deliver: false, retryable: true, reached: true, phase: "receive" });
  assert.equal(classifyError(new Error("aborted"), { phase: "connect", timedOut: true }).reached, false);
});

test("TLS and certificate errors: TLS_HANDSHAKE, not retried", () => {
  for (const e of [err("CERT_HAS_EXPIRED"), err("DEPTH_ZERO_SELF_SIGNED_CERT"), err("ERR_TLS_CERT_ALTNAME_INVALID"), new Error("x", { cause: err("ERR_SSL_WRONG_VERSION_NUMBER") })]) {
    assert.deepEqual(pick(classifyError(e, { phase: "connect" })), { report: "TLS_HANDSHAKE", deliver: false, retryable: false, reached: false, phase: "tls" });
  }
});

test("the proxy refusing the request (its 407 included): CONNECTION_RESET before reaching the server, credentials flagged on a 407", () => {
  for (const [message, status] of PROXY_REFUSALS) {
    const v = classifyError(err("UND_ERR_ABORTED", message));
    assert.deepEqual([v.report, v.reached, v.phase, v.status, v.credentials], ["CONNECTION_RESET", false, "connect", status, status === 407], message);
  }
});

test("the contract's status rows, from the call layer", async () => {
  for (const [status, report] of STATUS_CASES) {
    assert.equal((await classifyResult({ status, headers: new Headers() }, { latencyMs: 10 })).report, report, String(status));
  }
});

test("anything else thrown (decode errors, bugs): nothing reported, not retried", () => {
  for (const e of [new SyntaxError("Unexpected token < in JSON"), new Error("bug"), "a string"]) {
    assert.deepEqual(pick(classifyError(e)), { report: null, deliver: false, retryable: false, reached: true, phase: "send" });
  }
});

test("HTTP answers: 2xx/3xx ok, slow 2xx SLOW but returned, refusals BLOCKED, 407/502, 504/408, 500/503, other 4xx", async () => {
  const row = async (status, extra = {}) => pick(await classifyResult({ status, headers: new Headers() }, { latencyMs: 10, ...extra }));
  assert.deepEqual(await row(200), { report: "ok", deliver: true, retryable: false, reached: true, phase: "receive" });
  assert.deepEqual(await row(304), { report: "ok", deliver: true, retryable: false, reached: true, phase: "receive" });
  assert.deepEqual(await row(200, { latencyMs: 2000 }), { report: "SLOW", deliver: true, retryable: false, reached: true, phase: "receive" });
  assert.deepEqual(await row(200, { latencyMs: 1999 }), { report: "ok", deliver: true, retryable: false, reached: true, phase: "receive" });
  for (const s of [401, 403, 429, 451]) assert.deepEqual(await row(s), { report: "BLOCKED", deliver: false, retryable: true, reached: true, phase: "receive" }, String(s));
  for (const s of [407, 502]) assert.deepEqual(await row(s), { report: "CONNECTION_RESET", deliver: false, retryable: true, reached: true, phase: "receive" }, String(s));
  for (const s of [504, 408]) assert.deepEqual(await row(s), { report: "TIMEOUT", deliver: false, retryable: true, reached: true, phase: "receive" }, String(s));
  for (const s of [500, 503]) assert.deepEqual(await row(s), { report: null, deliver: false, retryable: true, reached: true, phase: "receive" });
  for (const s of [400, 404, 410, 422, 501]) assert.deepEqual(await row(s), { report: null, deliver: true, retryable: false, reached: true, phase: "receive" }, String(s));
  // undici.request's shape (statusCode, plain headers) and non-HTTP results.
  assert.equal((await classifyResult({ statusCode: 403, headers: {} }, { latencyMs: 1 })).report, "BLOCKED");
  assert.equal((await classifyResult({ rows: 3 }, { latencyMs: 1 })).report, "ok");
});

test("a soft ban: a 200 the block-page predicate recognises is BLOCKED, and the predicate sees it first", async () => {
  const seen = [];
  const isBlocked = async (r) => (seen.push(r.status), r.text.includes("captcha"));
  const v = await classifyResult({ status: 200, headers: new Headers(), text: "<h1>captcha</h1>" }, { latencyMs: 5, isBlocked });
  assert.deepEqual([v.report, v.deliver, v.retryable], ["BLOCKED", false, true]);
  assert.equal((await classifyResult({ status: 200, headers: new Headers(), text: "ok" }, { latencyMs: 5, isBlocked })).report, "ok");
  assert.deepEqual(seen, [200, 200]);
});

test("Retry-After: delay-seconds and HTTP dates; garbage ignored", async () => {
  const wall = Date.parse("2026-12-01T12:00:00Z");
  assert.equal(retryAfterMs("3", wall), 3000);
  assert.equal(retryAfterMs("Tue, 01 Dec 2026 12:00:05 GMT", wall), 5000);
  assert.equal(retryAfterMs("Tue, 01 Dec 2026 11:00:00 GMT", wall), 0);
  assert.equal(retryAfterMs("soon", wall), null);
  assert.equal(retryAfterMs(null, wall), null);
  const v = await classifyResult({ status: 429, headers: new Headers({ "retry-after": "2" }) }, { latencyMs: 1, wallNow: wall });
  assert.equal(v.retryAfterMs, 2000);
});
