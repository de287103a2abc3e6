// The simulation workspace as data: the scenario (sets, contexts, profiles, workload), the two
// policies A and B, the seed, the snapshot to start from (credentials masked) and the last run;
// how a new one looks, and how one is read back from a file or from storage (checked, so a bad
// file is refused with a message and replaces nothing). IndexedDB is ui/store.js's.
import { SCENARIOS, DEFAULT_SCENARIO } from "./scenario.js";
import { POLICIES } from "./policies.js";

export const FORMAT = "repute-console-workspace";
export const VERSION = 1;

/** A workspace file that cannot be used. */
export class WorkspaceError extends Error {
  code = "INVALID_WORKSPACE";
}

/** A new workspace: the default scenario, engine defaults as A, plain rotation as B. */
export function newWorkspace(defaults) {
  return {
    format: FORMAT,
    version: VERSION,
    scenario: SCENARIOS[DEFAULT_SCENARIO].make(),
    policies: { A: POLICIES.defaults.make(defaults), B: POLICIES["plain-rotation"].make(defaults) },
    seed: 42,
    snapshot: null,
    lastRun: null,
  };
}

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A workspace from its JSON text (a saved file or a stored copy). Policies are completed with
 * `defaults` (the engine's config), so a field the engine gained since the file was saved
 * shows with its default. Throws `WorkspaceError` naming what is wrong.
 */
export function readWorkspace(text, defaults) {
  let doc;
  try {
    doc = typeof text === "string" ? JSON.parse(text) : text;
  } catch {
    throw new WorkspaceError("the workspace file is not valid JSON");
  }
  if (!isObject(doc) || doc.format !== FORMAT) throw new WorkspaceError(`not a console workspace (expected "format": "${FORMAT}")`);
  if (doc.version !== VERSION) throw new WorkspaceError(`workspace version ${doc.version} is not supported (this console reads version ${VERSION})`);
  if (!isObject(doc.scenario)) throw new WorkspaceError("the workspace has no scenario object");
  if (!isObject(doc.policies) || !isObject(doc.policies.A) || !isObject(doc.policies.B)) throw new WorkspaceError("the workspace needs policies A and B (config objects)");
  if (!Number.isSafeInteger(doc.seed) || doc.seed < 0) throw new WorkspaceError("seed must be a non-negative integer");
  if (doc.snapshot !== null && !(isObject(doc.snapshot) && typeof doc.snapshot.json === "string")) throw new WorkspaceError("snapshot must be null or { json, … }");
  if (doc.lastRun !== null && !(isObject(doc.lastRun) && Array.isArray(doc.lastRun.runs))) throw new WorkspaceError("lastRun must be null or { runs, … }");
  const complete = (p) => {
    const out = structuredClone(defaults);
    for (const [k, v] of Object.entries(p)) out[k] = isObject(v) && isObject(out[k]) ? { ...out[k], ...v } : v;
    return out;
  };
  return { ...doc, policies: { A: complete(doc.policies.A), B: complete(doc.policies.B) } };
}

/** The workspace as the JSON text of a file. */
export function workspaceFile(ws) {
  return `${JSON.stringify(ws, null, 2)}\n`;
}
