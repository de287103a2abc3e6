// The `repute` package for browsers and edge runtimes: call `init()` once, then use `Pool`.
// `init` takes the module's URL, its bytes, or a precompiled `WebAssembly.Module` (the only
// form Cloudflare-style runtimes allow); with no argument it fetches the .wasm next to this
// file. Nothing here touches randomness at module scope.
import wasmInit, { initSync, RawPool } from "./pkg/repute.js";
import { makePool } from "./lib/pool.js";

export const Pool = makePool(RawPool);

let ready = null;

/** Loads the engine once; later calls (whatever their input) return the same promise, so
 * two overlapping calls cannot load two engines under the pools already made. */
export function init(input) {
  if (ready) return ready;
  if (input instanceof WebAssembly.Module) {
    initSync({ module: input });
    ready = Promise.resolve();
  } else {
    ready = wasmInit(input === undefined ? undefined : { module_or_path: input }).then(() => {});
  }
  return ready;
}
