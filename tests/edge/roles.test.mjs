// The Node server's roles suite (tests/server/roles.test.mjs) against the edge worker in workerd
// (Miniflare), with the same expected statuses and bodies: `startServer` gives each test a fresh
// region (tests/server/_http-support.mjs, tests/edge/_edge-support.mjs). The few tests that
// cannot hold on the edge are skipped there, each with its reason (`edgeSkip`).
import { after } from "node:test";
import { disposeWorkers } from "./_edge-support.mjs";

process.env.REPUTE_HTTP_TARGET = "edge";
after(disposeWorkers);
await import("../server/roles.test.mjs");
