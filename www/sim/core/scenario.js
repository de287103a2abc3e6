// The simulated world as data: resources in named sets (each set optionally in an engine group:
// a tier or a place), contexts with their workload (acquires per second and, optionally, the
// groups an acquire prefers, in order), a failure profile per set × context (probability per
// failure type, a latency distribution, incidents: an outage or a ban from one time to
// another), the run's length and chart resolution; its checks (each problem names the field, as
// the engine's config errors do) and the ready-made scenarios. Owns no behaviour: world.js
// turns a profile into outcomes, simulate.js runs it.

import { FAILURE_TYPES as FAILURES, KINDS } from "../../vendor/repute/lib/vocabulary.js";

export { FAILURES, KINDS };
/** What each incident type does to every request it covers. */
export const INCIDENTS = { outage: "TIMEOUT", ban: "BLOCKED" };

const LIMITS = { sets: 32, contexts: 32, resources: 100_000, rate: 10_000, durationS: 7 * 86_400, buckets: 10_000, incidents: 16, requests: 50_000_000, groups: 16, groupBytes: 64 };

/** A profile with no failures and a 200 ms median latency. */
export function defaultProfile() {
  return {
    failures: Object.fromEntries(FAILURES.map((f) => [f, 0])),
    latency: { medianMs: 200, p95Ms: 600 },
    incidents: [],
  };
}

/** The profile of `set` in `context`: the scenario's, or the default one when none is given. */
export function profileOf(scenario, set, context) {
  return scenario.profiles?.[set]?.[context] ?? defaultProfile();
}

/** A deep copy of a plain JSON value. */
export const clone = (v) => JSON.parse(JSON.stringify(v));

const isInt = (v) => Number.isSafeInteger(v);
const isNum = (v) => typeof v === "number" && Number.isFinite(v);
const blank = (v) => typeof v !== "string" || v.trim() === "";
const bytes = (v) => new TextEncoder().encode(v).length;
/** A group name as the engine takes it: a non-blank string of at most 64 UTF-8 bytes. */
const isGroup = (v) => !blank(v) && bytes(v) <= LIMITS.groupBytes;

/** How a form writes `null` (the resources without a group) in a preference list. */
export const NO_GROUP_TOKEN = "(none)";

/** A preference list as a form shows it: `datacenter, residential, (none)`; "" when absent. */
export const groupsText = (groups) => (Array.isArray(groups) ? groups.map((g) => (g === null ? NO_GROUP_TOKEN : g)).join(", ") : "");

/** The preference list typed as `text` (comma-separated; "(none)" is null); undefined when blank. */
export function parseGroupsText(text) {
  if (text.trim() === "") return undefined;
  return text.split(",").map((t) => t.trim()).map((t) => (t === NO_GROUP_TOKEN ? null : t));
}

/**
 * A context's group preference as the engine's `acquire(context, { groups })` takes it, or
 * null when the context acquires from the whole pool (`groups` absent).
 */
export const groupsOf = (context) => (Array.isArray(context.groups) ? context.groups : null);

/**
 * Checks a scenario; returns its problems as `{ path, message }` (none: it can run). Paths are
 * those of the JSON (`sets[1].count`, `profiles.dc-a.shop-us.failures.BLOCKED`), so a form can
 * show each problem beside its field.
 */
export function checkScenario(s) {
  const out = [];
  const bad = (path, message) => out.push({ path, message: `${path} ${message}` });
  const n = (x) => x.toLocaleString("en-US");
  if (typeof s !== "object" || s === null || Array.isArray(s)) return [{ path: "", message: "a scenario must be an object" }];
  if (!isInt(s.durationS) || s.durationS < 1 || s.durationS > LIMITS.durationS) bad("durationS", `must be a whole number of seconds between 1 and ${n(LIMITS.durationS)} (7 days)`);
  if (!isInt(s.bucketS) || s.bucketS < 1 || s.bucketS > 3600) bad("bucketS", "must be a whole number of seconds between 1 and 3,600 (1 hour)");
  else if (isInt(s.durationS) && Math.ceil(s.durationS / s.bucketS) > LIMITS.buckets) bad("bucketS", `gives more than ${LIMITS.buckets} chart points: make it larger`);
  const sets = Array.isArray(s.sets) ? s.sets : [];
  if (!Array.isArray(s.sets) || sets.length < 1 || sets.length > LIMITS.sets) bad("sets", `must list 1 to ${LIMITS.sets} resource sets`);
  const setNames = new Set();
  let total = 0;
  sets.forEach((set, i) => {
    if (blank(set?.name) || set.name.length > 64) bad(`sets[${i}].name`, "must be a non-blank name of at most 64 characters");
    else if (setNames.has(set.name)) bad(`sets[${i}].name`, `repeats the set name ${set.name}`);
    else setNames.add(set.name);
    if (!KINDS.includes(set?.kind)) bad(`sets[${i}].kind`, `must be one of ${KINDS.join(", ")}`);
    if (!isInt(set?.count) || set.count < 1 || set.count > LIMITS.resources) bad(`sets[${i}].count`, `must be a whole number between 1 and ${n(LIMITS.resources)}`);
    else total += set.count;
    if (set?.group !== undefined && set.group !== null && !isGroup(set.group)) bad(`sets[${i}].group`, `must be null (no group) or a non-blank group name of at most ${LIMITS.groupBytes} bytes`);
  });
  if (total > LIMITS.resources) bad("sets", `hold ${total} resources; at most ${LIMITS.resources}`);
  const contexts = Array.isArray(s.contexts) ? s.contexts : [];
  if (!Array.isArray(s.contexts) || contexts.length < 1 || contexts.length > LIMITS.contexts) bad("contexts", `must list 1 to ${LIMITS.contexts} contexts`);
  const ctxNames = new Set();
  contexts.forEach((c, i) => {
    if (blank(c?.name) || new TextEncoder().encode(c.name).length > 256) bad(`contexts[${i}].name`, "must be a non-blank context of at most 256 bytes");
    else if (ctxNames.has(c.name)) bad(`contexts[${i}].name`, `repeats the context ${c.name}`);
    else ctxNames.add(c.name);
    if (!isNum(c?.rate) || c.rate < 0 || c.rate > LIMITS.rate) bad(`contexts[${i}].rate`, `must be between 0 and ${n(LIMITS.rate)} acquires per second`);
    if (c?.groups !== undefined && c.groups !== null) checkGroups(c.groups, `contexts[${i}].groups`, bad);
  });
  const expected = contexts.reduce((sum, c) => sum + (isNum(c?.rate) ? c.rate : 0), 0) * (isInt(s.durationS) ? s.durationS : 0);
  if (expected > LIMITS.requests) bad("durationS", `with these rates asks for about ${Math.round(expected)} acquires; at most ${LIMITS.requests} per run`);
  const profiles = s.profiles ?? {};
  if (typeof profiles !== "object" || Array.isArray(profiles)) bad("profiles", "must be an object by set, then by context");
  for (const [set, byContext] of Object.entries(profiles)) {
    if (!setNames.has(set)) bad(`profiles.${set}`, "names no set of this scenario");
    for (const [ctx, p] of Object.entries(byContext ?? {})) {
      if (!ctxNames.has(ctx)) bad(`profiles.${set}.${ctx}`, "names no context of this scenario");
      checkProfile(p, `profiles.${set}.${ctx}`, s.durationS, bad);
    }
  }
  return out;
}

/** A preference list: 1 to 16 distinct entries, each a group name or null (no group). */
function checkGroups(groups, path, bad) {
  if (!Array.isArray(groups) || groups.length < 1 || groups.length > LIMITS.groups) {
    bad(path, `must list 1 to ${LIMITS.groups} groups (a name, or null for the resources without one), or be left out`);
    return;
  }
  const seen = new Set();
  // Problems of an entry are the list's (its form field is the list), naming the entry.
  groups.forEach((g, j) => {
    if (g !== null && !isGroup(g)) bad(path, `entry ${j + 1} must be null (no group) or a non-blank group name of at most ${LIMITS.groupBytes} bytes`);
    else if (seen.has(g)) bad(path, `entry ${j + 1} repeats ${g === null ? "null (no group)" : `the group ${g}`}`);
    else seen.add(g);
  });
}

function checkProfile(p, path, durationS, bad) {
  let sum = 0;
  for (const f of FAILURES) {
    const v = p?.failures?.[f];
    if (!isNum(v) || v < 0 || v > 1) bad(`${path}.failures.${f}`, "must be a probability between 0 and 1");
    else sum += v;
  }
  if (sum > 1 + 1e-9) bad(`${path}.failures`, `add up to ${+sum.toFixed(4)}; at most 1`);
  const { medianMs, p95Ms } = p?.latency ?? {};
  if (!isNum(medianMs) || medianMs <= 0 || medianMs > 600_000) bad(`${path}.latency.medianMs`, "must be a number of ms in (0, 600000]");
  if (!isNum(p95Ms) || p95Ms > 600_000 || !(p95Ms >= medianMs)) bad(`${path}.latency.p95Ms`, "must be a number of ms, at least the median, at most 600000");
  const incidents = p?.incidents ?? [];
  if (!Array.isArray(incidents) || incidents.length > LIMITS.incidents) {
    bad(`${path}.incidents`, `must be a list of at most ${LIMITS.incidents} incidents`);
    return;
  }
  incidents.forEach((inc, i) => {
    const at = `${path}.incidents[${i}]`;
    if (!(inc?.type in INCIDENTS)) bad(`${at}.type`, `must be one of ${Object.keys(INCIDENTS).join(", ")}`);
    if (!isNum(inc?.startS) || inc.startS < 0) bad(`${at}.startS`, "must be a number of seconds from the start, at least 0");
    if (!isNum(inc?.endS) || !(inc.endS > inc.startS)) bad(`${at}.endS`, "must be a number of seconds after startS");
    else if (isInt(durationS) && inc.startS >= durationS) bad(`${at}.startS`, "is after the end of the run");
  });
}

/** A profile with the given failure probabilities (others 0) and latency. */
function profile(failures = {}, medianMs = 200, p95Ms = 600, incidents = []) {
  const p = defaultProfile();
  Object.assign(p.failures, failures);
  p.latency = { medianMs, p95Ms };
  p.incidents = incidents;
  return p;
}

/** Profiles for every set × context from `fn(set, context)`. */
function fill(sets, contexts, fn) {
  const out = {};
  for (const s of sets) {
    out[s.name] = {};
    for (const c of contexts) out[s.name][c.name] = fn(s.name, c.name);
  }
  return out;
}

const NOISE = { TIMEOUT: 0.01, CONNECTION_RESET: 0.005 };

/**
 * A ready-made scenario: by default one simulated hour in 30 s points; PROXY sets `[name,
 * count]` or `[name, count, group]`, contexts `[name, acquires per second]` or `[name, rate,
 * groups]`, and `profileOf(set, context)` for each pair. `extra`: `durationS`, `bucketS`, and
 * `policies` (`{ A, B }`, ids of policies.js's POLICIES) when the scenario is meant as that A/B
 * pair — loading it loads those policies too.
 */
function preset(title, description, sets, contexts, profileFn, { durationS = 3600, bucketS = 30, policies = null } = {}) {
  return {
    title,
    description,
    policies,
    make() {
      const s = sets.map(([name, count, group]) => ({ name, kind: "PROXY", count, ...(group === undefined ? {} : { group }) }));
      const c = contexts.map(([name, rate, groups]) => ({ name, rate, ...(groups === undefined ? {} : { groups: [...groups] }) }));
      return { name: title, durationS, bucketS, sets: s, contexts: c, profiles: fill(s, c, profileFn) };
    },
  };
}

/** The tiered fleet's preference: datacenter first, residential where datacenter has nothing. */
const TIERS = ["datacenter", "residential"];

/** The ready-made scenarios, by id: `{ title, description, make() }`. */
export const SCENARIOS = {
  "site-outage": preset("Site-wide outage", "shop-us is down for everyone from 10 to 20 minutes; no resource is to blame.",
    [["dc-a", 20], ["dc-b", 20], ["residential", 10]], [["shop-us", 8], ["search-eu", 8]],
    (set, ctx) => profile(NOISE, 200, 600, ctx === "shop-us" ? [{ type: "outage", startS: 600, endS: 1200 }] : [])),
  "datacenter-ban": preset("One site bans a datacenter range",
    "shop-us blocks every dc-a address from 5 to 45 minutes; dc-b and search-eu are unaffected.",
    [["dc-a", 30], ["dc-b", 30]], [["shop-us", 10], ["search-eu", 6]],
    (set, ctx) => profile(NOISE, 250, 800, set === "dc-a" && ctx === "shop-us" ? [{ type: "ban", startS: 300, endS: 2700 }] : [])),
  "slow-tier": preset("A slow tier", "The budget set answers in seconds and half its answers are too slow; the fast set is fine.",
    [["fast", 20], ["budget", 20]], [["shop-us", 6], ["search-eu", 6]],
    (set) => (set === "budget" ? profile({ ...NOISE, SLOW: 0.5 }, 2500, 6000) : profile(NOISE, 150, 400))),
  "flaky-set": preset("A flaky set among good ones", "One set in five fails a third of its requests everywhere; the others are good.",
    [["good-1", 20], ["good-2", 20], ["flaky", 10]], [["shop-us", 8], ["search-eu", 4]],
    (set) => (set === "flaky" ? profile({ CONNECTION_RESET: 0.15, TIMEOUT: 0.15, TLS_HANDSHAKE: 0.05 }, 400, 2000) : profile(NOISE))),
  "tiered-fleet": preset("A tiered fleet: datacenter first, residential as fallback",
    "Every acquire prefers the datacenter group and falls back to residential. shop-us bans every datacenter address " +
    "from 10 to 30 minutes: its acquires escalate to residential, search-eu stays on datacenter. The banned cells cool " +
    "for 2 h (BLOCKED, twice in a row); when that ends, half-open trials find the ban over and shop-us returns to datacenter.",
    [["dc-a", 30, "datacenter"], ["dc-b", 30, "datacenter"], ["residential", 20, "residential"]],
    [["shop-us", 8, TIERS], ["search-eu", 4, TIERS]],
    (set, ctx) => (set === "residential"
      ? profile(NOISE, 700, 2000)
      : profile(NOISE, 200, 600, ctx === "shop-us" ? [{ type: "ban", startS: 600, endS: 1800 }] : [])),
    { durationS: 3 * 3600, bucketS: 60 }),
  "outage-cooling-cap": preset("Site-wide outage, with and without the cooling cap (A/B)",
    "shop-us is down for everyone from 10 to 20 minutes. Loads policy A without a cap and policy B with a 10 % cooling cap: " +
    "without it the whole pool cools and is parked; with it at most 10 % cools and the rest stays in rotation, held, " +
    "ready when the site comes back.",
    [["dc-a", 20], ["dc-b", 20], ["residential", 10]], [["shop-us", 8], ["search-eu", 8]],
    (set, ctx) => profile(NOISE, 200, 600, ctx === "shop-us" ? [{ type: "outage", startS: 600, endS: 1200 }] : []),
    { policies: { A: "defaults", B: "cooling-cap" } }),
};

/** The scenario a new workspace starts with. */
export const DEFAULT_SCENARIO = "flaky-set";
