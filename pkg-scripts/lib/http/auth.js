// Bearer-token authentication with roles (SPEC §8): `worker` (acquire, renew, release, report,
// register), `operator` (everything), `viewer` (reads, except the snapshot). Tokens are compared
// through their SHA-256 digests in constant time, and never logged or echoed. Each token may
// have a `name` (who holds it: "alice", "deploy-bot"), which operator events carry as their
// `actor`; a token without one is named after its role and place in the file ("operator-2"),
// so token files written before names stay valid.

export const ROLES = ["worker", "operator", "viewer"];

async function digest(text) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

function equalBytes(a, b) {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length && i < b.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/** A token's name: 1 to 64 printable characters (letters, digits, space, and . _ @ + -). */
const NAME = /^[\p{L}\p{N}._@+\- ]{1,64}$/u;

/**
 * What is wrong with `token` as an `Authorization: Bearer` credential, or null: it must be
 * visible ASCII (U+0021–U+007E), what `identify` reads — RFC 6750's b64token is a subset, and no
 * header carries a space inside a credential, a control character or a non-ASCII one. Says
 * which kind of character, never which character.
 */
function unsendable(token) {
  const bad = /[^\x21-\x7e]/.exec(token);
  if (bad === null) return null;
  const c = bad[0].codePointAt(0);
  const what = c === 0x20 ? "a space" : c < 0x20 || c === 0x7f ? "a control character" : "a non-ASCII character";
  return `holds ${what} (character ${bad.index + 1}), which no Authorization: Bearer header can carry: a token is visible ASCII only (RFC 6750)`;
}

/**
 * Validates `{ tokens: [{ token, role, name? }] }`; throws a message naming the bad entry (never
 * the token), with the offending field's path as the error's `path` (`tokens[1].token`). Each
 * entry comes back with its `name` (its own, or `${role}-${n}`: the nth of its role).
 */
export function parseTokens(doc) {
  if (typeof doc !== "object" || doc === null || !Array.isArray(doc.tokens) || Object.keys(doc).length !== 1) {
    throw new Error('tokens must be {"tokens": [{"token": "...", "role": "worker|operator|viewer", "name": "optional"}]}');
  }
  return doc.tokens.map((t, i) => {
    if (typeof t !== "object" || t === null || Object.keys(t).some((k) => k !== "token" && k !== "role" && k !== "name")) {
      throw new Error(`tokens[${i}]: expected {token, role, name?}`);
    }
    const fail = (field, message) => {
      throw Object.assign(new Error(`tokens[${i}].${field}: ${message}`), { path: `tokens[${i}].${field}` });
    };
    if (typeof t.token !== "string" || t.token.length < 16) fail("token", "a string of at least 16 characters");
    const why = unsendable(t.token);
    if (why !== null) fail("token", why);
    if (!ROLES.includes(t.role)) fail("role", `one of ${ROLES.join(", ")}`);
    if ("name" in t && (typeof t.name !== "string" || !NAME.test(t.name))) fail("name", "1 to 64 letters, digits, spaces or . _ @ + -");
    return t;
  }).map(named());
}

/** A mapper that gives a token without a name its default, `${role}-${n}` (the nth of its role). */
function named() {
  const seen = new Map();
  return (t) => {
    seen.set(t.role, (seen.get(t.role) ?? 0) + 1);
    return { ...t, name: t.name ?? `${t.role}-${seen.get(t.role)}` };
  };
}

export class Auth {
  #entries;

  /** `tokens`: the parsed list (empty: no authentication, loopback-only server). */
  static async create(tokens) {
    const auth = new Auth();
    auth.#entries = await Promise.all(tokens.map(named()).map(async (t) => ({ digest: await digest(t.token), role: t.role, name: t.name })));
    return auth;
  }

  get enabled() {
    return this.#entries.length > 0;
  }

  /** `{role, name}` of the request's bearer token, or null (missing or unknown). Checks every
   * configured token so the time taken does not depend on which one matched. */
  async identify(request) {
    const header = request.headers.get("authorization") ?? "";
    // The scheme is case-insensitive (RFC 9110 §11.1).
    const m = /^bearer +([\x21-\x7e]+)$/i.exec(header);
    if (!m) return null;
    const presented = await digest(m[1]);
    let found = null;
    for (const e of this.#entries) if (equalBytes(presented, e.digest) && found === null) found = e;
    return found && { role: found.role, name: found.name };
  }
}
