// Lease ids for the HTTP API: opaque, canonical, unforgeable. A lease id encrypts the lease's
// kind, value, context and token with AES-GCM under a key made when the handler starts (leases
// do not survive a restart, so neither need their ids). The nonce is derived from the token, so
// one lease always has one id; anything that does not decrypt reads as "no such lease". The
// value (which may hold proxy credentials) never appears in a URL in clear.

const KINDS = ["PROXY", "ACCOUNT", "SESSION"];
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

function b64url(bytes) {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function unb64url(text) {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return null;
  try {
    const s = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    return Uint8Array.from(s, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

function nonceOf(token) {
  const iv = new Uint8Array(12);
  new DataView(iv.buffer).setBigUint64(4, BigInt(token));
  return iv;
}

export class LeaseIds {
  #key;

  /** Call `await LeaseIds.create()`: the key comes from the platform's crypto at that moment. */
  static async create() {
    const ids = new LeaseIds();
    ids.#key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 128 }, false, ["encrypt", "decrypt"]);
    return ids;
  }

  async encode(lease) {
    const plain = encoder.encode(JSON.stringify([KINDS.indexOf(lease.kind), lease.token, lease.context, lease.value]));
    const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv: nonceOf(lease.token) }, this.#key, plain);
    const token = new Uint8Array(8);
    new DataView(token.buffer).setBigUint64(0, BigInt(lease.token));
    return `${b64url(token)}.${b64url(new Uint8Array(sealed))}`;
  }

  /** The lease an id stands for (kind, value, context, token), or null. */
  async decode(id) {
    const [t, sealed, ...rest] = String(id).split(".");
    const tokenBytes = t && unb64url(t);
    const body = sealed && unb64url(sealed);
    if (rest.length > 0 || !tokenBytes || tokenBytes.length !== 8 || !body) return null;
    const token = new DataView(tokenBytes.buffer).getBigUint64(0);
    if (token < 1n || token > BigInt(Number.MAX_SAFE_INTEGER)) return null;
    try {
      const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: nonceOf(token) }, this.#key, body);
      const [k, tok, context, value] = JSON.parse(decoder.decode(plain));
      if (tok !== Number(token) || !KINDS[k]) return null;
      const lease = { kind: KINDS[k], value, context, token: tok };
      // Canonical: exactly one spelling of an id is accepted.
      return (await this.encode(lease)) === id ? lease : null;
    } catch {
      return null;
    }
  }
}
