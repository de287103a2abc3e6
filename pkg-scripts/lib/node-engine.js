// The engine in Node.js: loads the WebAssembly module from disk, synchronously, on import, and
// makes the `Pool` class over it. Its own module so that the package entry (node.js) and the
// Node host (lib/host/open-pool.js) both take the engine from here, and neither from the other.
import { readFileSync } from "node:fs";
import { initSync, RawPool } from "../pkg/repute.js";
import { makePool } from "./pool.js";

initSync({ module: readFileSync(new URL("../pkg/repute_bg.wasm", import.meta.url)) });

export const Pool = makePool(RawPool);
