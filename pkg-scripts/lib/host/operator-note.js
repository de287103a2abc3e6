// Who made an operator change and why, on the events it caused: the hosts add `actor` (the
// name of the token that made the call; SPEC §8) and `reason` (optional, given by the caller)
// to the engine's events of an operator action — registration, regrouping, capacity change,
// deregistration, block, unblock, config change — and `changes` (`{field: {from, to}}`, nested
// fields as dotted paths) to CONFIG_CHANGED. The engine's events are not changed: these fields
// are the host's, added as the events are drained, so engine output (and the golden
// scenarios) stays byte-identical. Hot-path events (leases, reports) carry none.

/** The events an operator action causes (expiry events drained with them are not its). */
const OPERATOR_EVENTS = new Set([
  "RESOURCE_REGISTERED", "RESOURCE_REGROUPED", "RESOURCE_RECONFIGURED", "RESOURCE_DEREGISTERED",
  "RESOURCE_BLOCKLISTED", "RESOURCE_UNBLOCKED", "CONFIG_CHANGED",
]);
/** The most changed fields a CONFIG_CHANGED lists (a `minGapMsByContext` may hold 4096). */
export const MAX_CHANGES = 100;
/** The longest reason kept (characters). */
export const MAX_REASON = 500;

/** Adds `note` (`{actor?, reason?, changes?}`, or null) to the operator events among `events`. */
export function annotate(events, note) {
  if (!note) return events;
  for (const e of events) {
    if (!OPERATOR_EVENTS.has(e.type)) continue;
    if (note.actor !== undefined) e.actor = note.actor;
    if (note.reason !== undefined) e.reason = note.reason;
    if (e.type === "CONFIG_CHANGED" && note.changes) {
      e.changes = note.changes.fields;
      if (note.changes.truncated) e.changesTruncated = true;
    }
  }
  return events;
}

/** The fields that differ between two configs, `{fields: {path: {from, to}}, truncated}`
 * (at most MAX_CHANGES fields, in path order; a key added or removed has `from` or `to` null). */
export function configChanges(before, after) {
  const fields = {};
  let count = 0;
  let truncated = false;
  const walk = (a, b, prefix) => {
    const keys = [...new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})])].sort();
    for (const k of keys) {
      const x = a?.[k];
      const y = b?.[k];
      const path = prefix ? `${prefix}.${k}` : k;
      if (isPlain(x) || isPlain(y)) {
        walk(isPlain(x) ? x : {}, isPlain(y) ? y : {}, path);
      } else if (JSON.stringify(x) !== JSON.stringify(y)) {
        if (count === MAX_CHANGES) {
          truncated = true;
          return;
        }
        count++;
        fields[path] = { from: x ?? null, to: y ?? null };
      }
    }
  };
  walk(before, after, "");
  return { fields, truncated };
}

const isPlain = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
