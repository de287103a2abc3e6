// Live mode's data, without the DOM: the resource × context table built from `GET
// /api/resources`, its filters (context, state, kind, group, paced / held, search) and sort
// orders (the server's canonical order, severity, score), a cell's label, cooldown countdown and
// pacing, whether it is failing, and the API path of a resource. Pure functions over plain objects, so they are cheap
// to run on every refresh.

/** Worst first. A resource's severity is its worst cell's (or BLOCKLISTED when blocked); a
 * failing cell (`isFailing`) ranks above a healthy one whatever its state. */
export const SEVERITY = { BLOCKLISTED: 4, COOLING: 3, RECOVERING: 2, HEALTHY: 1 };
const FAILING_SEVERITY = 1.5;
export { VIEW_STATES as STATES, KINDS } from "../vendor/repute/lib/vocabulary.js";
/** The group filter's value for "resources without a group": a blank name, which no group has. */
export const NO_GROUP = " ";
/** The paced / held / failing filter's choices. */
export const FLAGS = { paced: "paced", held: "held", failing: "failing" };
/** The sort orders; the first is the default. */
export const SORTS = { severity: "severity (worst first)", canonical: "server order", "score-asc": "score (lowest first)", "score-desc": "score (highest first)" };

/** A cell is failing when its last outcome failed or its score is below zero, whatever its
 * state (one BLOCKED leaves a cell HEALTHY at a negative score; `GET /api/contexts` counts the same). */
export const isFailing = (cell) => cell.consecutiveFailures > 0 || cell.score < 0;

/**
 * The API path of a resource: by its opaque `id` when the server gives one (values may be
 * masked for viewers), else by kind and percent-encoded value.
 */
export function resourcePath(r, suffix = "") {
  const name = r.id !== undefined ? encodeURIComponent(r.id) : `${r.kind}/${encodeURIComponent(r.value)}`;
  return `/api/resources/${name}${suffix}`;
}

/** `{kind}/{value}` as people read it. */
export const nameOf = (r) => `${r.kind}/${r.value}`;

/** A resource's group as people read it ("no group" when it has none). */
export const groupText = (group) => group ?? "no group";

/** Whether a cell is paced at server time `now` (`pacedUntil` is in the future). */
export const isPaced = (cell, now) => cell.pacedUntil !== null && cell.pacedUntil !== undefined && now < cell.pacedUntil;

/** An instant as `hh:mm:ss` local time (24 h): a pacing end is seconds to minutes away. */
export const clockTime = (ms) => new Date(ms).toLocaleTimeString("en-GB", { hour12: false });

/**
 * A table of the resources: `rows` (one per resource, in server order) each with `cells` as a
 * Map context → CellView and `causes` as a Map context → the cause of a failing cell (from
 * `failingCells` of `GET /api/contexts`, `[{id, context, cause}]`); `contexts`, every context
 * that has a cell, sorted; `groups`, every group a resource is in, sorted, and `ungrouped`,
 * whether some resource has none.
 */
export function table(resources, failingCells = []) {
  const causeOf = new Map(failingCells.map((f) => [`${f.id}\0${f.context}`, f.cause]));
  const contexts = new Set();
  const groups = new Set();
  let ungrouped = false;
  const rows = resources.map((r, order) => {
    const cells = new Map();
    const causes = new Map();
    for (const c of r.cells) {
      cells.set(c.context, c);
      contexts.add(c.context);
      if (isFailing(c)) causes.set(c.context, causeOf.get(`${r.id}\0${c.context}`) ?? (c.state === "COOLING" ? c.cooldownCause : null));
    }
    // A server before groups sends no `group`: every resource is then ungrouped.
    if (typeof r.group === "string") groups.add(r.group);
    else ungrouped = true;
    return { resource: r, cells, causes, order };
  });
  return { rows, contexts: [...contexts].sort(byCodePoint), groups: [...groups].sort(byCodePoint), ungrouped };
}

function byCodePoint(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The cells of `row` that the view shows (one context, or all). */
function shown(row, context) {
  if (!context) return [...row.cells.values()];
  const c = row.cells.get(context);
  return c ? [c] : [];
}

function severity(row, context) {
  let s = row.resource.blocked ? SEVERITY.BLOCKLISTED : 0;
  for (const c of shown(row, context)) s = Math.max(s, SEVERITY[c.state] ?? 0, isFailing(c) ? FAILING_SEVERITY : 0);
  return s;
}

/** The lowest score shown; a resource without cells counts as the fresh score, 0. */
function lowest(row, context) {
  let s = Infinity;
  for (const c of shown(row, context)) s = Math.min(s, c.score);
  return s === Infinity ? 0 : s;
}

/**
 * The rows that pass `filter` — `{context, state, kind, group, flag, search}`, each optional —
 * in `sort` order (a key of SORTS). `state` keeps resources with a shown cell in that state
 * (BLOCKLISTED: blocked resources); `group` keeps one group's resources (NO_GROUP: those with
 * none); `flag` keeps resources with a shown cell that is paced at server time `now` or held;
 * `search` matches the value (case-insensitive).
 */
export function visibleRows(rows, { context = "", state = "", kind = "", group = "", flag = "", search = "", sort = "severity" } = {}, now = Date.now()) {
  const needle = search.trim().toLowerCase();
  const out = rows.filter((row) => {
    const r = row.resource;
    if (kind && r.kind !== kind) return false;
    if (group === NO_GROUP ? typeof r.group === "string" : group && r.group !== group) return false;
    if (needle && !r.value.toLowerCase().includes(needle)) return false;
    if (flag === FLAGS.paced && !shown(row, context).some((c) => isPaced(c, now))) return false;
    if (flag === FLAGS.held && !shown(row, context).some((c) => c.held === true)) return false;
    if (flag === FLAGS.failing && !shown(row, context).some(isFailing)) return false;
    if (state === "BLOCKLISTED") return Boolean(r.blocked);
    if (state) return shown(row, context).some((c) => c.state === state);
    return true;
  });
  if (sort === "severity") {
    const key = new Map(out.map((row) => [row, [severity(row, context), lowest(row, context)]]));
    out.sort((a, b) => key.get(b)[0] - key.get(a)[0] || key.get(a)[1] - key.get(b)[1] || a.order - b.order);
  } else if (sort === "score-asc" || sort === "score-desc") {
    const sign = sort === "score-asc" ? 1 : -1;
    const key = new Map(out.map((row) => [row, lowest(row, context)]));
    out.sort((a, b) => sign * (key.get(a) - key.get(b)) || a.order - b.order);
  }
  return out;
}

/** `h:mm:ss` or `m:ss` until `until` (server ms) at server time `now`; "" when over. */
export function countdown(until, now) {
  if (until === null || until === undefined || until <= now) return "";
  const s = Math.ceil((until - now) / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`;
}

/** A score as shown: integers as they are, fractions to one decimal. */
export const scoreText = (score) => (Number.isInteger(score) ? String(score) : score.toFixed(1));

/** "1 h", "permanently", or the instant a block ends, for people. */
export function blockText(blocked, now) {
  if (!blocked) return "not blocked";
  if (blocked.permanent) return "blocked permanently";
  const left = countdown(blocked.until, now);
  return left ? `blocked for ${left} more` : "block ending";
}
