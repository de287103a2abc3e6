// The edge worker (pkg-scripts/edge/worker.js) under Miniflare, which runs it in real workerd,
// with its Durable Objects' SQLite storage persisted in a folder. Not a test file itself.
import { Miniflare } from "miniflare";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const PKG = path.join(ROOT, "pkg-scripts");

/** The Miniflare options of the worker (shared with `repute edge-dev`: pkg-scripts/edge/dev.js). */
export { workerOptions } from "../../pkg-scripts/edge/dev.js";

export const tempDir = (prefix) => mkdtemp(path.join(os.tmpdir(), `repute-${prefix}-`));
export { rm };
