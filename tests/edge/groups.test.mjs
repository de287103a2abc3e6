// The Node server's groups suite (tests/server/groups.test.mjs: SPEC v2's groups, pacing and
// cooling cap over HTTP, their events and metrics) against the edge worker in workerd
// (Miniflare), with the same expected statuses, bodies and metric samples — the edge's metrics
// are lib/host/metrics.js, as on Node. `startServer` gives each test a fresh region.
import { after } from "node:test";
import { disposeWorkers } from "./_edge-support.mjs";

process.env.REPUTE_HTTP_TARGET = "edge";
after(disposeWorkers);
await import("../server/groups.test.mjs");
