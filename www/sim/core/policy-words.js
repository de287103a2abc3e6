// A policy's fields in an operator's words: a label for each config key (the raw key stays
// the field's title), durations typed and shown as "90 s", "5 min", "1 h" rather than
// milliseconds, and the engine's INVALID_CONFIG messages retold ("coolAfter must be an integer
// in 1..=1000" → "Failures in a row before a cell cools must be a whole number between 1 and
// 1,000"). The config itself stays in the engine's units. No DOM.

const UNITS = { ms: 1, s: 1000, sec: 1000, min: 60_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const UNIT_WORDS = { ms: "ms", msec: "ms", millisecond: "ms", milliseconds: "ms", s: "s", sec: "s", second: "s", seconds: "s",
  m: "min", min: "min", mins: "min", minute: "min", minutes: "min", h: "h", hr: "h", hour: "h", hours: "h", d: "d", day: "d", days: "d" };

/** Whether a field (a path of `fieldsOf`) holds a duration in milliseconds. */
export const isDuration = (path) => /Ms$/.test(path.split(".")[0]) && !path.startsWith("minGapMsByContext");

/**
 * Milliseconds from text such as "90 s", "5 min", "1 h 30 min", "250 ms" or "1.5 h"; a bare
 * number is seconds. null when the text is not a duration.
 */
export function parseDuration(text) {
  const s = String(text).trim().toLowerCase();
  if (s === "") return null;
  if (/^-?\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
  const part = /(\d+(?:\.\d+)?)\s*([a-z]+)\s*/y;
  let ms = 0;
  let m;
  let at = 0;
  while (at < s.length && (m = part.exec(s))) {
    const unit = UNIT_WORDS[m[2]];
    if (!unit) return null;
    ms += Number(m[1]) * UNITS[unit];
    at = part.lastIndex;
  }
  return at === s.length ? Math.round(ms) : null;
}

/** Milliseconds in words: "250 ms", "90 s" → "1 min 30 s", "3600000" → "1 h", "1 d 2 h". */
export function durationMsText(ms) {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms === 0) return "0 s";
  const parts = [];
  let rest = Math.round(Math.abs(ms));
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["min", 60_000], ["s", 1000], ["ms", 1]]) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size).toLocaleString("en-US")} ${unit}`);
      rest %= size;
    }
  }
  return `${ms < 0 ? "−" : ""}${parts.join(" ")}`;
}

const KEY_WORDS = {
  successReward: "Score gained on a success",
  penalties: "Score lost on",
  coolAfter: "Failures in a row before a cell cools",
  cooldownBaseMs: "First cooldown after",
  maxBackoffExponent: "Cooldown doublings at most",
  halfOpenCauses: "Causes that cool to a trial request (half-open)",
  recoverAfter: "Successes in a row before a recovering cell is healthy",
  windowSize: "Recent outcomes kept per cell",
  explorationFloor: "Pick weight added to every cell (exploration)",
  maxResources: "Most resources in the pool",
  maxCells: "Most cells (resource × context) in the pool",
  leaseTtlMs: "Lease lifetime",
  eventBufferSize: "Events kept in memory",
  minGapMs: "Least time between two uses of a resource",
  minGapMsByContext: "Least time between uses, per context (JSON, milliseconds)",
  maxCoolingPercent: "Most of the pool cooling at once per context (%)",
};

/** "someKeyName" → "Some key name" (for a key the engine adds later). */
const wordsOfKey = (key) => {
  const w = key.replace(/Ms$/, "").replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  return w.charAt(0).toUpperCase() + w.slice(1);
};

/** The label of a field: words, the unit of a duration, the table's key ("BLOCKED") as is. */
export function labelOf(path) {
  const [key, sub] = path.split(/\.(.*)/s);
  const words = KEY_WORDS[key] ?? wordsOfKey(key);
  const base = sub === undefined ? words : `${words} ${sub}`;
  return isDuration(path) ? `${base} (e.g. 90 s, 5 min, 1 h)` : base;
}

/** A duration bound of a range: exact up to a day, then in days ("24.9 days"). */
const boundText = (ms) => (ms > 86_400_000 ? `${(ms / 86_400_000).toFixed(1)} days` : durationMsText(ms));

const grouped = (n) => Number(n).toLocaleString("en-US", { maximumFractionDigits: 10 });

/**
 * An engine message about the field at `path` (null: none) in words: the path replaced by the
 * field's label (without its unit hint), ranges "between 1 and 1,000", a duration's bounds as
 * durations.
 */
export function errorInWords(message, path) {
  let text = message;
  const bound = (v) => (path && isDuration(path) ? boundText(Number(v)) : grouped(v));
  text = text.replace(/an integer in (-?\d+)\.\.=(-?\d+)/g, (_, lo, hi) => `${path && isDuration(path) ? "" : "a whole number "}between ${bound(lo)} and ${bound(hi)}`);
  text = text.replace(/a finite number in \[([^,\]]+), ([^\]]+)\]/g, (_, lo, hi) =>
    `a number between ${/^-?[\d.]+$/.test(lo) ? bound(lo) : lo} and ${/^-?[\d.]+$/.test(hi) ? bound(hi) : hi}`);
  if (path && text.startsWith(path)) {
    const label = labelOf(path).replace(/ \(e\.g\. .*\)$/, "");
    const rest = text.slice(path.length);
    text = /^[.[]/.test(rest) ? `${label}: ${rest.replace(/^\./, "")}` : `${label}${rest.replace(/^:\s*/, ": ")}`;
  }
  return text;
}
