// The operator's routes of the HTTP handler (handler.js): deregister, block and unblock a
// resource (an optional `{reason}` body, recorded in the operator event), change the config,
// and export or import the snapshot (one upload read at a time). `note` is `{actor}`: who the
// operator events the call causes name.

import { HttpProblem } from "./problems.js";
import { JSON_TYPE, body, bytes, CONFIG_BODY_LIMIT, configShape, jsonObject, snapshotLimitFor } from "./request-body.js";
import { json } from "./replies.js";
import { bad } from "./arguments.js";
import { MAX_REASON } from "../host/operator-note.js";

/** The operator routes' handlers over `host`. Options as `createHandler`'s: `bodyLimit`,
 * `snapshotLimit`. */
export function operatorRoutes({ host, bodyLimit, snapshotLimit }) {
  /** `{reason}` of an optional JSON body `{reason}` (none: `{}`): a string of 1 to MAX_REASON
   * characters with no control characters. */
  const reasonOf = async (req) => {
    const declared = req.headers.get("content-length");
    if (!req.body || declared === "0" || (declared === null && !req.headers.get("content-type"))) return {};
    const b = await body(req, bodyLimit, [], ["reason"]);
    if (!("reason" in b)) return {};
    if (typeof b.reason !== "string" || b.reason.length === 0 || b.reason.length > MAX_REASON || /[\u0000-\u001f\u007f]/.test(b.reason)) {
      throw bad(`reason must be a string of 1 to ${MAX_REASON} characters, without control characters`);
    }
    return { reason: b.reason };
  };
  // One snapshot upload is read at a time: ten at once could hold ten times the limit.
  let importing = false;

  return {
    async deregister({ kind, value }, note) {
      if (!(await host.deregister(kind, value, note))) throw new HttpProblem(404, "unknown-resource", "the resource is not registered");
      return json(204);
    },
    /** `POST …/block`: how long from the query (`?seconds=N` or `?permanent=true`); an optional
     * JSON body `{reason}` (a reason without a body is none). */
    async block(req, q, { kind, value }, note) {
      let how;
      if (q.has("permanent") && !q.has("seconds")) {
        if (q.get("permanent") !== "true") throw bad("permanent must be true");
        how = { permanent: true };
      } else if (q.has("seconds") && !q.has("permanent")) {
        const raw = q.get("seconds");
        if (!/^\d+(\.\d+)?$/.test(raw)) throw bad("seconds must be a positive number");
        how = { seconds: Number(raw) };
      } else {
        throw bad("give exactly one of ?seconds=N or ?permanent=true");
      }
      await host.block(kind, value, how, { ...note, ...(await reasonOf(req)) });
      return json(204);
    },
    unblock: async (req, { kind, value }, note) =>
      json(200, { unblocked: await host.unblock(kind, value, { ...note, ...(await reasonOf(req)) }) }),
    configUpdate: async (req, note) =>
      json(200, await host.setConfig(await jsonObject(req, Math.max(bodyLimit, CONFIG_BODY_LIMIT), configShape), note)),
    snapshotExport: () => ({ status: 200, headers: { "content-type": JSON_TYPE }, body: host.snapshot() }),
    async snapshotImport(req) {
      const type = (req.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
      if (type !== JSON_TYPE) throw new HttpProblem(415, "unsupported-media-type", "send the snapshot as application/json");
      if (importing) throw new HttpProblem(409, "import-in-progress", "another snapshot is being imported", { "retry-after": "1" });
      importing = true;
      try {
        // The bytes, decoded by the host (the Node host does it off the event loop; a body
        // that is not UTF-8 is its INVALID_SNAPSHOT).
        await host.importSnapshot(await bytes(req, snapshotLimit ?? snapshotLimitFor(host.config()), "the snapshot"));
      } finally {
        importing = false;
      }
      return json(204);
    },
  };
}
