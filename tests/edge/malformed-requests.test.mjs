// What the edge worker cannot answer itself (README "Edge worker", limits): workerd parses the
// request line and Host into a URL before any worker code runs, and answers those it cannot —
// a malformed or repeated Host, an absolute-form, authority-form or asterisk target — with its
// own plain-text 400 or 500. This holds the README to what workerd does (a newer workerd that
// passes them on would fail here, and the README would change with it), and checks that such a
// request never reaches a route: `Host: 127.0.0.1/api/snapshot?` exports nothing. What does
// reach the worker is answered as problem+json (tests/edge/bad-input.test.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { rawRequest } from "../server/_http-support.mjs";
import { startEdge, tempDir } from "./_edge-support.mjs";

let edge;
let dir;
before(async () => {
  dir = await tempDir("edge-malformed");
  edge = await startEdge({ persist: dir });
});
after(async () => {
  await edge?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const get = (target, host = "Host: 127.0.0.1\r\n") => `GET ${target} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`;

test("requests workerd cannot parse get its own plain-text 400/500, before the worker runs, and export nothing", async () => {
  const port = Number(new URL(edge.url).port);
  const cases = [
    ["a Host with a path", get("/regions/eu/healthz", "Host: 127.0.0.1/api/snapshot?\r\n")],
    ["a Host with a space", get("/regions/eu/api/snapshot", "Host: a b\r\n")],
    ["a Host with user info", get("/regions/eu/api/snapshot", "Host: 127.0.0.1:8787@evil\r\n")],
    ["a Host with a bad port", get("/regions/eu/api/snapshot", "Host: 127.0.0.1:80x\r\n")],
    ["two Host headers", get("/regions/eu/api/snapshot", "Host: 127.0.0.1\r\nHost: evil.example\r\n")],
    ["no Host", get("/regions/eu/api/snapshot", "")],
    ["an absolute-form target", get("http://127.0.0.1/regions/eu/api/snapshot")],
    ["an authority-form target", get("127.0.0.1:80")],
    ["an asterisk target", get("*")],
  ];
  for (const [name, request] of cases) {
    const res = await rawRequest(port, request);
    assert.ok(res.status === 400 || res.status === 500, `${name}: ${res.status} ${res.text.slice(0, 200)}`);
    assert.notEqual(res.headers.get("content-type"), "application/problem+json", `${name}: the worker answered it (update the README)`);
    assert.doesNotMatch(res.text, /"format"|repute-snapshot/, `${name}: a snapshot was exported`);
  }
  // What reaches the worker is the worker's to answer, as problem+json.
  const rebound = await rawRequest(port, get("/regions/eu/api/snapshot", "Host: evil.example\r\n"));
  assert.equal(rebound.status, 403, rebound.text);
  assert.equal(rebound.headers.get("content-type"), "application/problem+json");
});
