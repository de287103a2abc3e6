// The `repute` package in Node.js: the `Pool` class (SPEC §9) over the WebAssembly module, loaded
// from disk on import (lib/engine/node-engine.js), and the Node runtime around it.
export { Pool } from "./lib/engine/node-engine.js";

// The durable in-process host (snapshots, audit log, events, prober): see lib/node/open-pool.js.
export { openPool, PoolHost } from "./lib/node/open-pool.js";
// The recovery prober's ready-made HTTP probe through a proxy, and the credential masking the
// host uses in its own messages.
export { httpProbe } from "./lib/node/http-probe.js";
export { ProbeError } from "./lib/node/probe-error.js";
export { redactCredentials } from "./lib/outcome/redact.js";
// Resilient calls through the pool (`host.call`): their errors, the process-wide retry budget
// (and kill switch) and hedging budget, the bulkhead, single-flight credentials, and a ready fetch through PROXY resources. See lib/call/.
export { CallError } from "./lib/call/errors.js";
export { HedgeBudget, RetryBudget, hedgeBudget, retryBudget } from "./lib/call/budget.js";
export { proxyFetch } from "./lib/call/proxy-fetch.js";
export { Bulkhead } from "./lib/call/bulkhead.js";
export { credentialCache } from "./lib/call/credentials.js";
// Proxy URLs (passwords included) looked up by a resource's name, from a map, an environment
// variable or a resolver, so secrets stay out of values, events and snapshots.
export { proxyUrls } from "./lib/call/proxy-urls.js";
