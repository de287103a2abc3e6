// Region names and the worker's two region bindings, read and checked: `REPUTE_REGIONS` (the
// regions served) and `REPUTE_LOCATION_HINTS` (where each region's Durable Object is made).
// No engine here, so Node can import it too (the tests read LOCATION_HINTS).

/** A region name: 1 to 63 characters of a–z, 0–9 and "-", starting with a letter or digit. */
export const REGION_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** `REPUTE_REGIONS` as a set of names, `null` when unset (every region), or a string saying
 * what is wrong with it. */
export function allowedRegions(value) {
  if (value === undefined || value === null || value === "") return null;
  const names = String(value).split(",").map((n) => n.trim());
  const bad = names.findIndex((n) => !REGION_NAME.test(n));
  if (bad >= 0) return `REPUTE_REGIONS: entry ${bad + 1} is not a region name (1 to 63 characters of a-z, 0-9 and -)`;
  return new Set(names);
}

/** The places a Durable Object may be asked to start in (Cloudflare's location hints). */
export const LOCATION_HINTS = Object.freeze({
  wnam: "Western North America",
  enam: "Eastern North America",
  sam: "South America",
  weur: "Western Europe",
  eeur: "Eastern Europe",
  apac: "Asia-Pacific",
  oc: "Oceania",
  afr: "Africa",
  me: "Middle East",
});

/** `REPUTE_LOCATION_HINTS` (an object, or its JSON text) as a Map from region to hint, `null`
 * when unset, or a string saying what is wrong with it (never quoting a value). */
export function locationHints(value) {
  if (value === undefined || value === null || value === "") return null;
  let map = value;
  if (typeof value === "string") {
    try {
      map = JSON.parse(value);
    } catch {
      return "REPUTE_LOCATION_HINTS: not JSON (an object from region name to location hint)";
    }
  }
  if (typeof map !== "object" || map === null || Array.isArray(map)) return "REPUTE_LOCATION_HINTS: not an object from region name to location hint";
  const hints = new Map();
  for (const [i, [region, hint]] of Object.entries(map).entries()) {
    if (!REGION_NAME.test(region)) return `REPUTE_LOCATION_HINTS: entry ${i + 1} is not a region name (1 to 63 characters of a-z, 0-9 and -)`;
    if (!Object.hasOwn(LOCATION_HINTS, hint)) return `REPUTE_LOCATION_HINTS.${region} is not a location hint (one of ${Object.keys(LOCATION_HINTS).join(", ")})`;
    hints.set(region, hint);
  }
  return hints;
}
