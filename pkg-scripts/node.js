// The `repute` package in Node.js: loads the WebAssembly module from disk, synchronously, on
// import, and exports the `Pool` class (SPEC §9).
import { readFileSync } from "node:fs";
import { initSync, RawPool } from "./pkg/repute.js";
import { makePool } from "./lib/pool.js";

initSync({ module: readFileSync(new URL("./pkg/repute_bg.wasm", import.meta.url)) });

export const Pool = makePool(RawPool);

// The durable in-process host (snapshots, audit log, events, prober): see lib/host/open-pool.js.
export { openPool, PoolHost } from "./lib/host/open-pool.js";
// The recovery prober's ready-made HTTP probe through a proxy, and the credential masking the
// host uses in its own messages.
export { httpProbe, redactCredentials, ProbeError } from "./lib/host/prober.js";
