// The Node server's operator-events suite (tests/server/operator-events.test.mjs: actor, reason, changes) against
// the edge worker in workerd (Miniflare): the shared handler serves it from the Durable Object's
// host (a MemoryHost) with the same bodies.
import { after } from "node:test";
import { disposeWorkers } from "./_edge-support.mjs";

process.env.REPUTE_HTTP_TARGET = "edge";
after(disposeWorkers);
await import("../server/operator-events.test.mjs");
