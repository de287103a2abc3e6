// Policies (engine configs) as the console edits them: the form's fields come from the config
// the engine reports (`pool.config()`), never from a list kept here, so fields the engine adds
// later appear by themselves; text typed in a field becomes a config value; the engine's
// INVALID_CONFIG message is matched to the field it names. Also the ready-made policies
// (engine defaults, plain rotation, a cooling cap) and the file a policy is exported as.

/**
 * The form fields of a config, in the engine's order: `{ path, type, value }` where type is
 * "number", "boolean", "list" (an array, edited as comma-separated text) or "json" (anything
 * else, e.g. a map whose keys the user chooses). An object whose values are all numbers (the
 * per-failure tables) becomes one number field per key, `penalties.BLOCKED`.
 */
export function fieldsOf(config) {
  const out = [];
  for (const [key, value] of Object.entries(config)) {
    if (isNumberTable(value)) {
      for (const [sub, v] of Object.entries(value)) out.push({ path: `${key}.${sub}`, type: "number", value: v });
    } else {
      out.push({ path: key, type: typeOf(value), value });
    }
  }
  return out;
}

function isNumberTable(v) {
  return typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length > 0 &&
    Object.values(v).every((x) => typeof x === "number");
}

function typeOf(v) {
  if (typeof v === "number") return "number";
  if (typeof v === "boolean") return "boolean";
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return "list";
  return "json";
}

/** A field's value as the text of its input. */
export function textOf(field, value = field.value) {
  if (field.type === "list") return value.join(", ");
  if (field.type === "json") return JSON.stringify(value);
  return String(value);
}

const NUMBER = /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/**
 * The config value typed as `text` in a field of `type`. Text that is not of the field's type
 * is passed on as the string it is, so that the engine refuses it naming the field.
 */
export function parseText(type, text) {
  if (type === "number") return NUMBER.test(text) ? Number(text) : text;
  if (type === "boolean") return text === true || text === "true";
  if (type === "list") return text.split(",").map((s) => s.trim()).filter((s) => s !== "");
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `config` with the field at `path` (`a` or `a.b`) set to `value`; `config` is not changed. */
export function withField(config, path, value) {
  const out = structuredClone(config);
  const [key, sub] = splitPath(path);
  if (sub === undefined) out[key] = value;
  else out[key] = { ...out[key], [sub]: value };
  return out;
}

/** The value at `path` of a config. */
export function fieldValue(config, path) {
  const [key, sub] = splitPath(path);
  return sub === undefined ? config[key] : config[key]?.[sub];
}

function splitPath(path) {
  const dot = path.indexOf(".");
  return dot < 0 ? [path] : [path.slice(0, dot), path.slice(dot + 1)];
}

/**
 * The field an engine error names: its message starts with the field's path, then a space, a
 * colon, a dot or a bracket (`coolAfter must be…`, `penalties.BLOCKED must be…`,
 * `halfOpenCauses[0] must be…`, `minGapMsByContext.shop-us.example must be…` — a map's key is
 * any context, dots and spaces included — `coolAfter: invalid type…`). Returns the longest such
 * path of `paths`; else, for a key the form does not show (`penalties.NOPE`), a field of that
 * table; else null (the error is about the whole policy).
 */
export function fieldOfError(message, paths) {
  const text = message ?? "";
  const ends = (c) => c === undefined || c === " " || c === ":" || c === "." || c === "[";
  let best = null;
  for (const p of paths) if (text.startsWith(p) && ends(text[p.length]) && (best === null || p.length > best.length)) best = p;
  if (best !== null) return best;
  const key = /^([A-Za-z0-9_]+)[.[]/.exec(text)?.[1];
  return key === undefined ? null : (paths.find((p) => p.startsWith(`${key}.`)) ?? null);
}

/**
 * Checks a policy with the engine: `null` when it takes it, else `{ message, path }` with the
 * engine's message and the form field it names (null: none). `Pool` is the engine's class. The
 * fields are those of the engine's default config, as the form shows them: a map whose keys
 * the user chooses (`minGapMsByContext`) is one field, whatever keys the policy gives it.
 */
export function checkPolicy(Pool, config) {
  try {
    new Pool({ config, seed: 0 }).free();
    return null;
  } catch (e) {
    const probe = new Pool({ seed: 0 });
    const defaults = probe.config();
    probe.free();
    return { message: e.message, path: fieldOfError(e.message, fieldsOf(defaults).map((f) => f.path)) };
  }
}

/**
 * Plain rotation, as a config: every score stays 0 (no reward, no penalty), so every pick is
 * uniform; a cell cools only after 1000 failures in a row, and then for 1 ms. What the pool
 * does with reputation turned off — the baseline that shows what reputation buys.
 */
export function plainRotation(defaults) {
  const zero = (table, v) => Object.fromEntries(Object.keys(table).map((k) => [k, v]));
  return {
    ...structuredClone(defaults),
    successReward: 0,
    penalties: zero(defaults.penalties, 0),
    coolAfter: 1000,
    cooldownBaseMs: zero(defaults.cooldownBaseMs, 1),
    maxBackoffExponent: 0,
  };
}

/** The cooling cap in the ready-made "cooling cap" policy (percent of the pool). */
export const COOLING_CAP_PERCENT = 10;

/** The ready-made policies, by id: `{ title, make(defaults) }` (`defaults`: the engine's config). */
export const POLICIES = {
  defaults: { title: "Engine defaults", make: (defaults) => structuredClone(defaults) },
  "plain-rotation": { title: "Plain rotation (baseline: uniform picks, nothing cools)", make: plainRotation },
  "cooling-cap": {
    title: `Cooling cap: at most ${COOLING_CAP_PERCENT} % of the pool cools per context (a site outage keeps the rest in rotation)`,
    make: (defaults) => ({ ...structuredClone(defaults), maxCoolingPercent: COOLING_CAP_PERCENT }),
  },
};

/** The fields whose values differ between two configs: `{ path, a, b }[]`. */
export function diffConfigs(a, b) {
  const paths = new Set([...fieldsOf(a), ...fieldsOf(b)].map((f) => f.path));
  const out = [];
  for (const path of paths) {
    const x = fieldValue(a, path);
    const y = fieldValue(b, path);
    if (JSON.stringify(x) !== JSON.stringify(y)) out.push({ path, a: x, b: y });
  }
  return out;
}

/** A policy as the config file `repute serve --config FILE` reads (every field, as simulated). */
export function policyFile(config) {
  return `${JSON.stringify(config, null, 2)}\n`;
}
