// The engine in Node.js, loaded on import (engine-load.js): its own module so that the package
// entry (node.js) and the Node host (lib/node/open-pool.js) both take the engine from here, and
// neither from the other.
import { loadPool } from "./engine-load.js";

export const Pool = loadPool();
