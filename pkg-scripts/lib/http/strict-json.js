// JSON request bodies read as strictly as snapshots and configs are: `JSON.parse` lets the last
// of two equal keys win, silently; the engine's parser refuses a duplicate key naming its path
// (`outcome.ok: duplicate field`). This finds the first duplicate in text that `JSON.parse`
// has already accepted, so the handler can refuse it the same way; and the line a key's path is
// on, so a message about a file (the tokens file) can name its line without quoting it.

/**
 * Walks the object keys of valid JSON `text` in order: `visit(stack, at)` for each, with the
 * key as the innermost object's `key` (`pathOf(stack)` its path) and `at` the offset of its
 * opening quote. The first value `visit` returns other than undefined ends the walk and is
 * returned (undefined if none).
 */
function eachKey(text, visit) {
  // One frame per open object ({ keys, key, expectKey }) or array ({ index }).
  const stack = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let j = i + 1;
      let escaped = false;
      for (let d = text.charCodeAt(j); d !== 0x22; d = text.charCodeAt(j)) {
        if (d === 0x5c) {
          escaped = true;
          j += 2;
        } else j += 1;
      }
      const top = stack[stack.length - 1];
      if (top?.keys && top.expectKey) {
        top.key = escaped ? JSON.parse(text.slice(i, j + 1)) : text.slice(i + 1, j);
        top.expectKey = false;
        const result = visit(stack, i);
        if (result !== undefined) return result;
        top.keys.add(top.key);
      }
      i = j;
    } else if (c === 0x7b) stack.push({ keys: new Set(), key: null, expectKey: true });
    else if (c === 0x5b) stack.push({ index: 0 });
    else if (c === 0x7d || c === 0x5d) stack.pop();
    else if (c === 0x2c) {
      const top = stack[stack.length - 1];
      if (top.keys) top.expectKey = true;
      else top.index++;
    }
  }
  return undefined;
}

/** The path of the first duplicated key in valid JSON `text` (`outcome.ok`, `a[2].b`), or null. */
export function duplicateKeyPath(text) {
  return eachKey(text, (stack) => {
    const top = stack[stack.length - 1];
    return top.keys.has(top.key) ? pathOf(stack) : undefined;
  }) ?? null;
}

/** The line (from 1) of the key at `path` (`tokens[1].token`) in valid JSON `text`, or null. */
export function lineOfKey(text, path) {
  const at = eachKey(text, (stack, i) => (pathOf(stack) === path ? i : undefined));
  if (at === undefined) return null;
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < at; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

function pathOf(stack) {
  let path = "";
  for (const frame of stack) {
    if (frame.keys) path += path === "" ? frame.key : `.${frame.key}`;
    else path += `[${frame.index}]`;
  }
  return path;
}
