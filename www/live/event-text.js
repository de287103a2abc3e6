// How a pool event reads in live mode's event list, without the DOM: its resource, group, context
// and details as one line (a regroup names the group moved to, a suppressed cooldown says the
// cooling cap held the cell in rotation, a reconfiguration its new capacity, a config change its
// fields old → new), who made an operator change and why (`actor`, `reason`), and the text the
// list's filter searches.

import { when } from "./dom.js";

/** A config value as the list shows it (lists and maps as JSON, nothing as "none"). */
const show = (v) => (v === null ? "none" : typeof v === "object" ? JSON.stringify(v) : String(v));

/** What an event's `group` says, by event type (null: it carries none). */
function groupPart(e) {
  if (e.group === undefined) return null;
  if (e.type === "RESOURCE_REGROUPED") return e.group === null ? "moved out of its group (now no group)" : `moved to group ${e.group}`;
  return e.group === null ? "no group" : `group ${e.group}`;
}

/** The event's details after its type: `PROXY/p-1 · moved to group dc`, `… · in shop · cooldown suppressed …`. */
export function describe(e) {
  const parts = [];
  if (e.kind) parts.push(`${e.kind}/${e.value}`);
  const group = groupPart(e);
  if (group) parts.push(group);
  if (e.context !== undefined) parts.push(`in ${e.context}`);
  if (e.type === "COOLDOWN_SUPPRESSED") parts.push("cooldown suppressed by the cooling cap: held in rotation");
  if (e.cause) parts.push(`cause ${e.cause}`);
  if (e.permanent) parts.push("permanently");
  if (e.until !== undefined) parts.push(`until ${when(e.until)}`);
  if (e.token !== undefined) parts.push(`token ${e.token}`);
  if (e.maxLeases !== undefined) parts.push(e.maxLeases === 1 ? "now one lease at a time" : `now up to ${e.maxLeases} leases at once`);
  if (e.changes) {
    const list = Object.entries(e.changes).map(([field, { from, to }]) => `${field} ${show(from)} → ${show(to)}`);
    parts.push(list.join(", ") + (e.changesTruncated ? ", and more" : ""));
  }
  if (e.actor !== undefined) parts.push(`by ${e.actor}`);
  if (e.reason !== undefined) parts.push(`reason: “${e.reason}”`);
  return parts.join(" · ");
}

/** What the list's filter matches an event on (lower case): its type and its line as shown. */
export const searchable = (e) => `${e.type} ${describe(e)}`.toLowerCase();
