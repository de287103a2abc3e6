// Drained events as the package's `Pool` hands them out (lib/pool.js): the facade packs them
// into numbers and one string table (src/wasm/packed.rs), unpacked here into `PoolEvent`
// objects.

/** Numbers per event in a packed drain. */
const EVENT_FIELDS = 13;

/**
 * The PoolEvent objects of a packed drain (layout in src/wasm/packed.rs): `[events, strings,
 * then per event seq, at, type, kind, value, context, cause, until, permanent, token, unmasked,
 * group, maxLeases, then the string lengths]`, strings by index into `text` cut at those lengths, -1 for
 * absent (-2: a group of null). Keys in the order of the engine's event JSON; with
 * `resourceId`, an `id` after `value`, from the unmasked value (which no event object holds).
 */
export function unpackEvents(nums, text, resourceId) {
  const count = nums[0];
  const n = nums[1];
  const table = new Array(n);
  for (let i = 0, pos = 0, lens = 2 + count * EVENT_FIELDS; i < n; i++) {
    const end = pos + nums[lens + i];
    table[i] = text.slice(pos, end);
    pos = end;
  }
  const events = new Array(count);
  for (let i = 0, o = 2; i < count; i++, o += EVENT_FIELDS) {
    // Lease events (two of every cycle's) built whole by one literal: no property added one
    // at a time, no second allocation for properties past the literal's.
    if (resourceId === undefined && nums[o + 3] >= 0 && nums[o + 5] >= 0 && nums[o + 6] < 0 && nums[o + 8] !== 1 && nums[o + 9] >= 0) {
      const seq = nums[o];
      const type = table[nums[o + 2]];
      const at = nums[o + 1];
      const kind = table[nums[o + 3]];
      const value = table[nums[o + 4]];
      const context = table[nums[o + 5]];
      events[i] = nums[o + 7] >= 0
        ? { seq, type, at, kind, value, context, until: nums[o + 7], token: nums[o + 9] }
        : { seq, type, at, kind, value, context, token: nums[o + 9] };
      continue;
    }
    const e = { seq: nums[o], type: table[nums[o + 2]], at: nums[o + 1] };
    if (nums[o + 3] >= 0) {
      e.kind = table[nums[o + 3]];
      e.value = table[nums[o + 4]];
      if (resourceId) e.id = resourceId(e.kind, table[nums[o + 10]]);
    }
    if (nums[o + 11] !== -1) e.group = nums[o + 11] === -2 ? null : table[nums[o + 11]];
    if (nums[o + 5] >= 0) e.context = table[nums[o + 5]];
    if (nums[o + 6] >= 0) e.cause = table[nums[o + 6]];
    if (nums[o + 7] >= 0) e.until = nums[o + 7];
    if (nums[o + 8] === 1) e.permanent = true;
    if (nums[o + 9] >= 0) e.token = nums[o + 9];
    if (nums[o + 12] >= 0) e.maxLeases = nums[o + 12];
    events[i] = e;
  }
  return events;
}
