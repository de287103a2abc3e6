// Lease ids for the HTTP API: opaque, canonical, unforgeable. A lease id encrypts the lease's
// kind, value, context and token with AES-128-GCM under a key made when the handler starts
// (leases do not survive a restart, so neither need their ids). The nonce is derived from the
// token, so one lease always has one id; anything that does not decrypt reads as "no such
// lease". The value (which may hold proxy credentials) never appears in a URL in clear.
//
// Where `node:crypto` exists (Node, and edge runtimes with Node compatibility) sealing is
// synchronous; otherwise WebCrypto does the same AES-GCM asynchronously. Both give the same ids
// for the same key. The last few thousand ids issued decode from memory (a release usually
// follows its acquire closely), older ones through the cipher.

import { KINDS } from "../vocabulary.js";
import { b64url, unb64url } from "../base64url.js";

const TAG = 16;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The token as 8 big-endian bytes (a safe integer: below 2^53). */
function tokenBytes(token) {
  const bytes = new Uint8Array(8);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, Math.floor(token / 2 ** 32));
  view.setUint32(4, token >>> 0);
  return bytes;
}

function nonceOf(token) {
  const iv = new Uint8Array(12);
  iv.set(tokenBytes(token), 4);
  return iv;
}

/** AES-128-GCM through node:crypto (synchronous), or null where there is none. */
export async function nodeCipher(key) {
  let crypto;
  try {
    crypto = await import("node:crypto");
  } catch {
    return null;
  }
  return {
    /** `plain`: bytes, or a string sealed as UTF-8. */
    seal(iv, plain) {
      const c = crypto.createCipheriv("aes-128-gcm", key, iv);
      const body = c.update(plain, typeof plain === "string" ? "utf8" : undefined);
      c.final(); // GCM is a stream cipher: nothing is held back
      const out = Buffer.concat([body, c.getAuthTag()]);
      return new Uint8Array(out.buffer, out.byteOffset, out.length);
    },
    open(iv, sealed) {
      if (sealed.length < TAG) throw new Error("short");
      const d = crypto.createDecipheriv("aes-128-gcm", key, iv);
      d.setAuthTag(sealed.subarray(sealed.length - TAG));
      return Buffer.concat([d.update(sealed.subarray(0, sealed.length - TAG)), d.final()]);
    },
  };
}

/** The same through WebCrypto (asynchronous). */
export async function webCipher(raw) {
  const key = await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
  return {
    seal: async (iv, plain) =>
      new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, typeof plain === "string" ? encoder.encode(plain) : plain)),
    open: async (iv, sealed) => new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv }, key, sealed)),
  };
}

/** How many recently issued ids decode without the cipher (a release follows its acquire):
 * between this many and twice as many, in two generations. */
const RECENT = 4096;

export class LeaseIds {
  #cipher;
  /** id → lease, for ids this instance issued lately: this generation and the one before (a
   * Map dropping its oldest entry one by one cost more than the rest of `encode`). */
  #recent = new Map();
  #older = new Map();

  /** Call `await LeaseIds.create()`: the key comes from the platform's crypto at that moment. */
  static async create() {
    const ids = new LeaseIds();
    const key = crypto.getRandomValues(new Uint8Array(16));
    ids.#cipher = (await nodeCipher(key)) ?? (await webCipher(key));
    return ids;
  }

  /** The id of a lease (a string, or a promise of one where sealing is asynchronous). */
  encode(lease) {
    const plain = JSON.stringify([KINDS.indexOf(lease.kind), lease.token, lease.context, lease.value]);
    const sealed = this.#cipher.seal(nonceOf(lease.token), plain);
    const join = (s) => this.#remember(`${b64url(tokenBytes(lease.token))}.${b64url(s)}`, lease);
    return sealed instanceof Promise ? sealed.then(join) : join(sealed);
  }

  #remember(id, lease) {
    this.#recent.set(id, { kind: lease.kind, value: lease.value, context: lease.context, token: lease.token });
    if (this.#recent.size >= RECENT) {
      this.#older = this.#recent;
      this.#recent = new Map();
    }
    return id;
  }

  /** The lease an id stands for (kind, value, context, token), or null. */
  async decode(id) {
    const known = this.#recent.get(id) ?? this.#older.get(id);
    if (known) return { ...known };
    const [t, sealed, ...rest] = String(id).split(".");
    const tokenPart = t && unb64url(t);
    const body = sealed && unb64url(sealed);
    if (rest.length > 0 || !tokenPart || tokenPart.length !== 8 || !body) return null;
    const view = new DataView(tokenPart.buffer, tokenPart.byteOffset, 8);
    const high = view.getUint32(0);
    // A safe integer (below 2^53), at least 1.
    if (high >= 2 ** 21) return null;
    const token = high * 2 ** 32 + view.getUint32(4);
    if (token < 1) return null;
    try {
      const plain = await this.#cipher.open(nonceOf(token), body);
      const [k, tok, context, value] = JSON.parse(decoder.decode(plain));
      if (tok !== token || !KINDS[k]) return null;
      // Canonical without sealing again: both parts are in their one base64url spelling, the
      // token in the id is the sealed one, and GCM refuses any other ciphertext for this nonce
      // (the plaintext, ours, has one spelling).
      return { kind: KINDS[k], value, context, token: tok };
    } catch {
      return null;
    }
  }
}
