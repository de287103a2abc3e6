// Request bodies as the HTTP API reads them (handler.js): bytes up to a limit, refused with a
// 413 as soon as the limit is known to be passed; JSON objects read strictly (UTF-8, duplicate
// keys refused, a cheap shape check first where a body may be large); the fields a route takes.

import { HttpProblem, bad } from "./problems.js";
import { duplicateKeyPath } from "./strict-json.js";
import { gapEntries } from "./gap-count.js";

export const JSON_TYPE = "application/json";

/**
 * The body's bytes, refused with a 413 as soon as it is known to exceed `limit`: by its
 * `content-length` before anything is read, or while streaming (a chunked body) once more has
 * arrived — never read whole first. A body of declared length is read into one buffer of that
 * length as it arrives (a 400 MiB snapshot is held once, not as chunks and then their copy).
 */
export async function bytes(request, limit, what = "the body") {
  const tooLarge = () => new HttpProblem(413, "body-too-large", `${what} is larger than ${limit} bytes`);
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limit) throw tooLarge();
  if (!request.body) return new Uint8Array(0);
  if (Number.isSafeInteger(declared) && declared > 0) return intoOne(request.body, declared);
  const chunks = [];
  let size = 0;
  for await (const chunk of request.body) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge();
    chunks.push(chunk);
  }
  return concat(chunks, size);
}

/** A body of `length` declared bytes, read into one buffer; a body that is not that long (the
 * platform checks it too) is a 400. */
async function intoOne(chunks, length) {
  let out = null;
  let at = 0;
  for await (const chunk of chunks) {
    if (at + chunk.byteLength > length) throw bad("the body is longer than its content-length");
    // A body in one chunk is that chunk: no copy.
    if (out === null && chunk.byteLength === length) out = chunk;
    else (out ??= new Uint8Array(length)).set(chunk, at);
    at += chunk.byteLength;
  }
  if (at !== length) throw bad("the body is shorter than its content-length");
  return out;
}

/** The largest snapshot a pool with this config writes, with room to spare: 1 MiB plus, for
 * each of `maxCells`, 640 bytes and 40 per window entry. A full 500 000-cell pool with
 * 10-outcome windows writes 373 bytes a cell (BENCHMARKS.md); this allows 1 040 (496 MiB). */
export function snapshotLimitFor(config) {
  return 2 ** 20 + config.maxCells * (640 + 40 * config.windowSize);
}

/** The largest `PUT /api/config` body read (operator only): a config is small but for
 * `minGapMsByContext`, up to 4096 contexts of up to 256 UTF-8 bytes — about 1 MB as hostnames,
 * 6 MiB with every character of every key `\u`-escaped — so it gets 8 MiB (or `bodyLimit`, if
 * larger), where the other routes' bodies stay within `bodyLimit`. */
export const CONFIG_BODY_LIMIT = 8 * 2 ** 20;

/** The most `minGapMsByContext` entries a config holds (the engine's limit, checked there too:
 * src/config/by_context.rs). */
const MAX_CONTEXT_GAPS = 4096;

const tooManyGaps = (n) => new HttpProblem(400, "invalid-config", `minGapMsByContext must have at most ${MAX_CONTEXT_GAPS} entries (got ${n})`);

/** Refuses a config too large by its shape before any costly work: more per-context gaps than
 * the engine holds. `configShape.bytes` counts them on the body's bytes, before it is decoded
 * or parsed (gap-count.js); the shape check after the parse is the same limit, read again. */
export function configShape(patch) {
  const gaps = patch.minGapMsByContext;
  if (typeof gaps !== "object" || gaps === null) return;
  let n = 0;
  for (const _ in gaps) n++;
  if (n > MAX_CONTEXT_GAPS) throw tooManyGaps(n);
}
configShape.bytes = (raw) => {
  const n = gapEntries(raw);
  if (n > MAX_CONTEXT_GAPS) throw tooManyGaps(n);
};

/** Reads a JSON object body of at most `limit` bytes (any fields: the caller checks them);
 * duplicate keys are refused — after `shape`, when given, has had its say: a cheap check that
 * refuses a body by its shape before the scan for duplicates, which costs in proportion to the
 * text (`shape.bytes(raw)`, if it has one, on the bytes before they are decoded and parsed;
 * `shape(value)` on the parsed value). */
export async function jsonObject(request, limit, shape) {
  const type = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  if (type !== JSON_TYPE) throw new HttpProblem(415, "unsupported-media-type", "send a JSON body (content-type: application/json)");
  const raw = await bytes(request, limit);
  shape?.bytes?.(raw);
  let value;
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(raw);
    value = JSON.parse(text);
  } catch {
    throw bad("the body is not valid UTF-8 JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw bad("the body must be a JSON object");
  shape?.(value);
  const duplicate = duplicateKeyPath(text);
  if (duplicate !== null) throw bad(`${duplicate}: duplicate field`);
  return value;
}

/** Reads a JSON object body of at most `limit` bytes with the `fields` required and the
 * `optional` ones allowed, nothing else. */
export async function body(request, limit, fields, optional = []) {
  const value = await jsonObject(request, limit);
  // An unknown key is not quoted: it may be a value that went astray.
  for (const k of Object.keys(value)) {
    if (!fields.includes(k) && !optional.includes(k)) throw bad(`unknown field (the fields are ${fields.concat(optional).join(", ")})`);
  }
  for (const k of fields) if (!(k in value)) throw bad(`missing field ${JSON.stringify(k)}`);
  return value;
}

function concat(chunks, size) {
  if (chunks.length === 1) return chunks[0]; // a small body: one chunk, no copy
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
