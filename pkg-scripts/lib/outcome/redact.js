// Credentials out of text that may hold a URL, before it is logged or shown: the one JavaScript
// redaction of `scheme://user:pass@host` (the engine masks resource values itself: Pool.maskValue).
// Used by the call layer's errors, the prober's errors and the CLI's log lines.

/**
 * Removes credentials from text that may hold a URL: `scheme://user:pass@host` becomes
 * `scheme://***@host`. Use it before logging a proxy resource's value.
 * @param {string} text
 * @returns {string}
 */
export function redactCredentials(text) {
  // Up to the authority's last '@' (as URL parsers read it): a password may hold a raw '@'.
  return String(text).replace(/([a-z][a-z0-9+.-]*:\/\/)[^/?#\s"'<>{}]*@/gi, "$1***@");
}
