// The Node server's import suite (tests/server/import-steps.test.mjs) against the edge worker in
// workerd (Miniflare): the refusals of a bad, stale or non-UTF-8 snapshot are the same there
// (the edge imports in one call; the tests of the import in steps are skipped, with the reason).
import { after } from "node:test";
import { disposeWorkers } from "./_edge-support.mjs";

process.env.REPUTE_HTTP_TARGET = "edge";
after(disposeWorkers);
await import("../server/import-steps.test.mjs");
