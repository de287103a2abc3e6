// Credentials in a resource value, masked exactly as the engine masks them in its events
// (src/redact.rs): userinfo runs to the last `@` after `scheme://`; `user:pass@` shows as
// `user:***@`, a lone token in a URL (`scheme://token@`) as `***@`; a scheme-less `name@host`
// (an e-mail used as an account id) and an `@` after a path are left alone. Hosts use it where
// they record a value next to the engine's events (the outcome log), so the two match; the
// console uses it on snapshots before it keeps them.

const MASK = "***";

/** `value` with its credentials masked (the same string when there are none). */
export function maskValue(value) {
  const scheme = value.indexOf("://");
  const start = scheme >= 0 ? scheme + 3 : 0;
  const at = value.lastIndexOf("@");
  if (at < start) return value;
  const userinfo = value.slice(start, at);
  const colon = userinfo.indexOf(":");
  let masked;
  if (colon >= 0) masked = `${userinfo.slice(0, colon)}:${MASK}`;
  else if (scheme >= 0 && !/[/?#]/.test(userinfo)) masked = MASK;
  else return value;
  return value.slice(0, start) + masked + value.slice(at);
}
