// Resource ids: the opaque, stable name of a resource (kind, value) that the HTTP API puts in
// views, events and URLs instead of a value that may hold credentials.
//
// An id is HMAC-SHA-256 under a secret key of "repute resource id\0<kind>\0<value>", cut to 128
// bits, in base64url (22 characters). Keyed, because a plain hash of a short password can be
// searched by brute force; the same key gives the same ids (the Node host keeps it in the data
// folder, `key-file.js`; the edge worker supplies its own), and ids made under another key do
// not resolve. This module knows nothing of where the key lives or which resources exist: it
// makes ids and remembers the last ones it made, so that a URL naming an id the server has shown
// resolves without a scan.
//
// Needs `node:crypto` (Node; edge runtimes with Node compatibility): ids are made while events
// are drained, synchronously.

import { b64url } from "./base64url.js";
import { stepLater } from "./next-turn.js";

const encoder = new TextEncoder();
/** Ids remembered both ways, at most (the oldest is forgotten first). */
const REMEMBER = 1 << 17;

export class ResourceIds {
  #createHmac;
  #key;
  /** "kind\0value" → id and id → {kind, value}, for the ids made lately (insertion order). */
  #byResource = new Map();
  #byId = new Map();

  /** @param {Uint8Array} key at least 16 bytes from a cryptographic random source */
  static async create(key) {
    if (!(key instanceof Uint8Array) || key.length < 16) throw new TypeError("ResourceIds: the key must be at least 16 bytes");
    let crypto;
    try {
      crypto = await import("node:crypto");
    } catch {
      throw new Error("ResourceIds needs node:crypto (on an edge runtime, enable Node.js compatibility)");
    }
    const ids = new ResourceIds();
    ids.#createHmac = crypto.createHmac;
    ids.#key = key;
    return ids;
  }

  /** The id of (kind, value). */
  of(kind, value) {
    const k = `${kind}\0${value}`;
    const known = this.#byResource.get(k);
    if (known !== undefined) return known;
    const mac = this.#createHmac("sha256", this.#key).update(encoder.encode(`repute resource id\0${k}`)).digest();
    const id = b64url(new Uint8Array(mac.buffer, mac.byteOffset, 16));
    this.#byResource.set(k, id);
    this.#byId.set(id, { kind, value });
    if (this.#byResource.size > REMEMBER) {
      const [oldKey, oldId] = this.#byResource.entries().next().value;
      this.#byResource.delete(oldKey);
      this.#byId.delete(oldId);
    }
    return id;
  }

  /**
   * `find` for a pool that may be large: the resources are listed a page at a time
   * (`page(after)`: up to a page of `{kind, value}` after `after` in canonical order, from the
   * first when `after` is undefined; fewer at the end), a page a step in the event loop's
   * turns (next-turn.js `stepLater`), so that an id nobody made lately (a scan of every resource: a second at 126k cells)
   * does not hold up every other request meanwhile.
   * @param {string} id
   * @param {(after?: {kind: string, value: string}) => Array<{kind: string, value: string}>} page
   */
  async findInPages(id, page) {
    const known = this.#byId.get(id);
    if (known) return { ...known };
    if (typeof id !== "string" || !/^[A-Za-z0-9_-]{22}$/.test(id)) return null;
    let after;
    // A page a step, in the loop's turns shared with every other work in steps (dashboards).
    const step = () => {
      const list = page(after);
      for (const { kind, value } of list) if (this.of(kind, value) === id) return { found: { kind, value } };
      if (list.length === 0) return { found: null };
      after = { kind: list[list.length - 1].kind, value: list[list.length - 1].value };
      return null;
    };
    for (;;) {
      const done = await stepLater(step);
      if (done) return done.found;
    }
  }

  /**
   * The resource an id names, or null: from the ids made lately, else by making the id of each
   * of `candidates()` (the resources that exist) until one matches. The answer says only that
   * the id is this resource's; whether it is still registered is the caller's to check.
   * @param {string} id
   * @param {() => Iterable<{kind: string, value: string}>} candidates
   */
  find(id, candidates) {
    const known = this.#byId.get(id);
    if (known) return { ...known };
    if (typeof id !== "string" || !/^[A-Za-z0-9_-]{22}$/.test(id)) return null;
    for (const { kind, value } of candidates()) {
      if (this.of(kind, value) === id) return { kind, value };
    }
    return null;
  }
}
