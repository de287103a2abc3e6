// What is wrong with text that `JSON.parse` refused, said without quoting the text. V8's
// messages quote it ("Unexpected token 'h', "hunter2" is not valid JSON"), and the text may be a
// snapshot, a tokens file or a config holding credentials: only V8's fixed wording and the
// position are kept.

/** E.g. "not valid JSON (Unterminated string at position 13)". */
export function jsonProblem(error) {
  const msg = String(error?.message ?? "");
  if (/^Unexpected end of JSON input/.test(msg)) return "not valid JSON (it ends too soon)";
  const at = /at position (\d+)/.exec(msg);
  const where = at ? ` at position ${at[1]}` : "";
  // "Unexpected token X…" names a character of the text; other wordings with a position are
  // V8's own ("Bad control character in string literal", "Expected ',' or '}' after …").
  const what = /^(.*?) in JSON at position \d+/.exec(msg)?.[1];
  if (what && !/^Unexpected token/.test(what) && !what.includes('"')) return `not valid JSON (${what}${where})`;
  return `not valid JSON (an unexpected character${where})`;
}
