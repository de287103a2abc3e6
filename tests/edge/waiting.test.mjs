// The Node server's waiting suite (tests/server/waiting.test.mjs: waitMs on POST /api/leases and
// in a finish's next, and a client that leaves mid-wait) against the edge worker in workerd
// (Miniflare). The stand-in host's tests run in Node only.
import { after } from "node:test";
import { disposeWorkers } from "./_edge-support.mjs";

process.env.REPUTE_HTTP_TARGET = "edge";
after(disposeWorkers);
await import("../server/waiting.test.mjs");
