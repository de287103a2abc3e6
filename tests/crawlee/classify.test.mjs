// The verdicts of pkg-scripts/lib/crawlee/outcome.js on what Crawlee's hooks hand over: an
// answer's head, and the errors Crawlee's HTTP crawler throws — often rewrapped into a
// SessionError whose message only quotes the transport's error (the messages below are the
// ones @crawlee/http and @crawlee/basic 3.18 write, built with Crawlee's own error classes).
// The real crawls of outcomes.test.mjs reach most of these; this table pins the rest.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SessionError } from "@crawlee/core";
import { classifyAnswer, classifyCrawleeError, headOf } from "../../pkg-scripts/lib/crawlee/outcome.js";
import { STATUS_CASES } from "../calls/_classification.mjs";

const coded = (message, code) => Object.assign(new Error(message), { code });

test("Crawlee's errors: the proxy refusing us, blocks, timeouts, transport codes; bugs are nobody's failure", () => {
  const table = [
    [new SessionError("Proxy responded with 407 Proxy Authentication Required: 0 bytes."), "CONNECTION_RESET", 407],
    [new SessionError("Proxy responded with 502 Bad Gateway: 0 bytes."), "CONNECTION_RESET", 502],
    [new SessionError("Request blocked - received 429 status code."), "BLOCKED", 429],
    [new SessionError("Blocked by status code 403"), "BLOCKED", 403],
    [new SessionError('Found selectors: iframe[src*="_Incapsula_Resource"]'), "BLOCKED"],
    [new Error("request timed out after 30 seconds."), "TIMEOUT"],
    [new Error("requestHandler timed out after 100 seconds (a1b2c3)."), "TIMEOUT"],
    [coded("socket hang up", "ECONNRESET"), "CONNECTION_RESET"],
    [new SessionError("read ECONNRESET"), "CONNECTION_RESET"],
    [new SessionError("connect ECONNREFUSED 127.0.0.1:9"), "CONNECTION_RESET"],
    [new SessionError("ERR_TUNNEL_CONNECTION_FAILED"), "CONNECTION_RESET"],
    [new Error("connect ETIMEDOUT 10.0.0.1:8080"), "TIMEOUT"],
    [coded("Parse Error: Expected HTTP/", "HPE_INVALID_CONSTANT"), "CONNECTION_RESET"],
    // A browser crawler's navigation (Playwright quoting Chromium's network error).
    [new Error("page.goto: net::ERR_TUNNEL_CONNECTION_FAILED at https://a.test/"), "CONNECTION_RESET"],
    [new Error("page.goto: net::ERR_EMPTY_RESPONSE at http://a.test/"), "CONNECTION_RESET"],
    [new Error("page.goto: net::ERR_TIMED_OUT at http://a.test/"), "TIMEOUT"],
    [Object.assign(new Error("page.goto: Timeout 30000ms exceeded."), { name: "TimeoutError" }), "TIMEOUT"],
    [new TypeError("Cannot read properties of undefined (reading 'text')"), null],
    [new Error("Resource http://a.test/x.pdf served Content-Type application/pdf, but only text/html are allowed. Skipping resource."), null],
    [new Error("500 - Internal Server Error: oops"), null],
  ];
  for (const [error, report, status] of table) {
    const v = classifyCrawleeError(error);
    assert.equal(v.report, report, error.message);
    if (status !== undefined) assert.equal(v.status, status, error.message);
  }
  assert.equal(classifyCrawleeError(table[0][0]).credentials, true, "the proxy refused our credentials: they are loaded again");
  // A rewrapped message is believed only when the error has no code of its own to go on.
  assert.equal(classifyCrawleeError(coded("connect ETIMEDOUT but really refused", "ECONNREFUSED")).report, "CONNECTION_RESET");
});

test("the contract's status rows, from the Crawlee drop-in (its default blocked list)", async () => {
  for (const [status, report] of STATUS_CASES) {
    assert.equal((await classifyAnswer({ statusCode: status, headers: {} })).report, report, String(status));
  }
});

test("an answer's head: blocked codes (and the user's list), Retry-After, the proxy's own refusals, the rest as the classification", async () => {
  const head = (statusCode, headers = {}) => ({ statusCode, headers });
  assert.equal((await classifyAnswer(head(200))).report, "ok");
  assert.equal((await classifyAnswer(head(302, { location: "/" }))).report, "ok");
  assert.equal((await classifyAnswer(head(404))).report, null);
  assert.equal((await classifyAnswer(head(503))).report, null);
  assert.equal((await classifyAnswer(head(502))).report, "CONNECTION_RESET");
  assert.equal((await classifyAnswer(head(504))).report, "TIMEOUT");
  for (const s of [401, 403, 429, 451]) assert.equal((await classifyAnswer(head(s))).report, "BLOCKED", String(s));
  // The proxy's own 407 (our credentials refused) is not a site block, whatever the list says.
  for (const list of [undefined, [407, 403]]) {
    const v = await classifyAnswer(head(407), { blockedStatusCodes: list });
    assert.deepEqual([v.report, v.proxy, v.credentials], ["CONNECTION_RESET", true, true]);
  }
  const limited = await classifyAnswer(head(429, { "retry-after": "120" }));
  assert.deepEqual([limited.report, limited.status, limited.retryAfterMs], ["BLOCKED", 429, 120_000]);
  // The user's list replaces the default one: 403 is then a page, 418 a block.
  const mine = { blockedStatusCodes: [418, 429] };
  assert.equal((await classifyAnswer(head(403), mine)).report, null);
  assert.equal((await classifyAnswer(head(418), mine)).report, "BLOCKED");
  // A proxy-chain relay's own statuses (a browser crawler's, many proxy services'): the proxy
  // failed, whatever the user's blocked list says; 597 is the upstream proxy's 407.
  for (const s of [590, 594, 595, 597, 599]) {
    const v = await classifyAnswer(head(s), mine);
    assert.deepEqual([v.report, v.proxy, v.credentials], ["CONNECTION_RESET", true, s === 597], String(s));
  }
  assert.equal((await classifyAnswer(head(598))).proxy, undefined, "598 is no relay's");
  // A browser's response: Playwright's status() and headers() are methods.
  const pw = { status: () => 429, headers: () => ({ "retry-after": "60" }), url: () => "http://a.test/" };
  const v = await classifyAnswer(pw);
  assert.deepEqual([v.report, v.status, v.retryAfterMs], ["BLOCKED", 429, 60_000]);
  assert.deepEqual(headOf(pw), { status: 429, headers: { "retry-after": "60" }, url: "http://a.test/" });
});
