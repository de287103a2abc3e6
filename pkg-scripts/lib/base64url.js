// Unpadded base64url (RFC 4648 §5) both ways, with Node's Buffer where there is one and
// `btoa`/`atob` elsewhere (workerd, browsers): the spelling of lease ids (http/lease-id.js) and
// resource ids (resource-id.js). A leaf: it imports nothing.

const NodeBuffer = globalThis.Buffer;

export function b64url(bytes) {
  if (NodeBuffer) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("base64url");
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The bytes of canonical unpadded base64url text (the spelling `b64url` gives), or null. */
export function unb64url(text) {
  if (!/^[A-Za-z0-9_-]+$/.test(text) || text.length % 4 === 1) return null;
  let bytes;
  if (NodeBuffer) {
    const b = NodeBuffer.from(text, "base64url");
    bytes = new Uint8Array(b.buffer, b.byteOffset, b.length);
  } else {
    try {
      const s = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
      bytes = Uint8Array.from(s, (c) => c.charCodeAt(0));
    } catch {
      return null;
    }
  }
  // Spellings that differ only in a last character's unused bits decode alike: one is ours.
  return b64url(bytes) === text ? bytes : null;
}
