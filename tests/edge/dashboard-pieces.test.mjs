// The Node server's dashboard-in-pieces suite (tests/server/dashboard-pieces.test.mjs) against
// the edge worker in workerd (Miniflare): the dashboard, sent as a stream there, has the bytes
// of the one built at once.
import { after } from "node:test";
import { disposeWorkers } from "./_edge-support.mjs";

process.env.REPUTE_HTTP_TARGET = "edge";
after(disposeWorkers);
await import("../server/dashboard-pieces.test.mjs");
