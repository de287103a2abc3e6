// How many entries a `PUT /api/config` body's `minGapMsByContext` holds, counted on its bytes
// before they are decoded or parsed: a body of up to 8 MiB with too many per-context gaps is
// refused at the cost of one pass over its bytes (strings are skipped whole, by `indexOf`),
// not of a JSON.parse that builds thousands of keys (which, on a server holding a big pool,
// also costs a garbage collection over its whole heap). Platform-neutral (Node and the edge).
//
// The count is of the top-level key's object only, as JSON reads it (escaped key spellings
// included); a body that is not JSON gets a count that means nothing, and is refused by the
// parse that follows a count within the limit.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const KEY = "minGapMsByContext";
const decoder = new TextDecoder();

/** Whether the quote at `end` is escaped (an odd run of backslashes before it). */
function escaped(b, end) {
  let n = 0;
  while (b[end - 1 - n] === BACKSLASH) n++;
  return n % 2 === 1;
}

/** Whether the string between `start` and `end` (its quotes excluded) is KEY. */
function isKey(b, start, end) {
  const raw = b.subarray(start, end);
  if (!raw.includes(BACKSLASH)) return raw.length === KEY.length && decoder.decode(raw) === KEY;
  if (raw.length > KEY.length * 6) return false; // longer than KEY with every character escaped
  try {
    return JSON.parse(`"${decoder.decode(raw)}"`) === KEY;
  } catch {
    return false;
  }
}

/** The most entries any top-level `minGapMsByContext` object of the JSON text `b` (bytes) holds. */
export function gapEntries(b) {
  let depth = 0;
  let keyNext = false; // the next string at depth 1 is a key
  let gapsKey = false; // the last key at depth 1 was KEY
  let inGaps = false;
  let count = 0;
  let most = 0;
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c === QUOTE) {
      let end = b.indexOf(QUOTE, i + 1);
      while (end > 0 && escaped(b, end)) end = b.indexOf(QUOTE, end + 1);
      if (end < 0) break;
      if (depth === 1 && keyNext) gapsKey = isKey(b, i + 1, end);
      keyNext = false;
      i = end;
    } else if (c === 0x7b || c === 0x5b) { // { [
      depth++;
      if (depth === 1) keyNext = c === 0x7b;
      else if (depth === 2 && c === 0x7b && gapsKey) {
        inGaps = true;
        count = 0;
      }
    } else if (c === 0x7d || c === 0x5d) { // } ]
      if (depth === 2 && inGaps) {
        inGaps = false;
        if (count > most) most = count;
      }
      depth--;
    } else if (c === 0x2c && depth === 1) { // ,
      keyNext = true;
      gapsKey = false;
    } else if (c === 0x3a && depth === 2 && inGaps) { // :
      count++;
    }
  }
  return inGaps && count > most ? count : most;
}
