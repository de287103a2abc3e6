// `repute/handler`: the HTTP API as one web-standard handler (handler.js) for any runtime with
// Request/Response, and `MemoryHost` (host/memory-host.js), a host that keeps its pool in
// memory — what a worker runtime serves when it has no folder to keep the pool in. Types:
// handler.d.ts.
export { createHandler } from "./handler.js";
export { MemoryHost } from "../host/memory-host.js";
