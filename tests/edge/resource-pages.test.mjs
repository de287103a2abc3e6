// The Node server's dashboard-paging suite (tests/server/resource-pages.test.mjs) against the
// edge worker in workerd (Miniflare): each test's server is a fresh region.
import { after } from "node:test";
import { disposeWorkers } from "./_edge-support.mjs";

process.env.REPUTE_HTTP_TARGET = "edge";
after(disposeWorkers);
await import("../server/resource-pages.test.mjs");
