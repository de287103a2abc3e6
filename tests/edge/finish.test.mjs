// The Node server's finish suite (tests/server/finish.test.mjs: POST /api/leases/{leaseId}/outcome
// and maxLeases on POST /api/resources) against the edge worker in workerd (Miniflare): the
// same handler, so the same statuses and bodies, each test in a fresh region.
import { after } from "node:test";
import { disposeWorkers } from "./_edge-support.mjs";

process.env.REPUTE_HTTP_TARGET = "edge";
after(disposeWorkers);
await import("../server/finish.test.mjs");
