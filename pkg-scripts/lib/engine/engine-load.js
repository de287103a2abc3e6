// The engine in Node.js, loaded when first asked for: `loadPool()` reads the WebAssembly module
// from disk and instantiates it, synchronously, once, and makes the `Pool` class over it.
// node-engine.js asks at once (the package entry and the Node host need the engine); the remote
// client (`repute/client`) only when `maskValue` is first called, so a process that only talks
// to a server never loads the engine, and the masking rule still has one source (src/redact.rs).
import { readFileSync } from "node:fs";
import { initSync, RawPool, RawRestore } from "../../pkg/repute.js";
import { makePool } from "../pool.js";

let Pool = null;

/** The engine's `Pool` class, its WebAssembly module loaded on the first call. */
export function loadPool() {
  if (Pool === null) {
    initSync({ module: readFileSync(new URL("../../pkg/repute_bg.wasm", import.meta.url)) });
    Pool = makePool(RawPool, RawRestore);
  }
  return Pool;
}
