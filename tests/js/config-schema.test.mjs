// The config's JSON Schema (repute.config.schema.json) against the engine's own validation, so
// the two cannot drift: every field of the engine's config (a default pool's `config()`, read
// recursively) is in the schema with the engine's default, and the schema has no field the
// engine lacks; every `examples` entry of the schema and the example file repute.config.json
// are accepted by both; at every range the schema states, both accept the bounds and both refuse
// one step past them, a fraction where an integer is due, a string, null, a boolean; and a list
// of counter-examples for the other rules (unknown fields, sets, context keys, entry counts) is
// refused by both. "Both" is the engine (`new Pool({ config })` and `pool.setConfig`, which
// `repute serve --config` and PUT /api/config use) and Ajv, a real JSON Schema validator. And
// the README's config table has the schema's fields, defaults, types and ranges.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import { Pool } from "repute";

const root = new URL("../../", import.meta.url);
const schema = JSON.parse(readFileSync(new URL("repute.config.schema.json", root), "utf8"));
const exampleFile = JSON.parse(readFileSync(new URL("repute.config.json", root), "utf8"));
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(schema);
const defaults = new Pool({ seed: 1 }).config();

/** What the engine says of `config`: null when it accepts it (in a new pool and as a patch), else the error. */
function engine(config) {
  let created;
  try {
    created = new Pool({ config, seed: 1 });
  } catch (e) {
    assert.equal(e.code, "INVALID_CONFIG", `${JSON.stringify(config)}: ${e.message}`);
    // A patch on a running pool is checked by the same rules.
    const pool = new Pool({ seed: 1 });
    assert.throws(() => pool.setConfig(config), (e2) => e2.code === "INVALID_CONFIG", `setConfig agrees: ${e.message}`);
    assert.deepEqual(pool.config(), defaults, "a refused patch changes nothing");
    return e;
  }
  created.free?.();
  new Pool({ seed: 1 }).setConfig(config); // throws if the patch path disagrees
  return null;
}

/** Asserts the engine and the schema agree on `config`: both accept it (`ok`) or both refuse it. */
function agree(config, ok, why, field) {
  const refused = engine(config);
  const valid = validate(config);
  const shown = JSON.stringify(config)?.slice(0, 120);
  assert.equal(refused === null, ok, `${why}: the engine ${refused ? `refuses (${refused.message})` : "accepts"} ${shown}`);
  assert.equal(valid, ok, `${why}: the schema ${valid ? "accepts" : `refuses (${JSON.stringify(validate.errors)})`} ${shown}`);
  if (!ok && field) assert.ok(refused.message.includes(field), `${why}: the engine's message names ${field}: ${refused.message}`);
}

/** `value` put at `path` (["penalties", "SLOW"]) in an otherwise empty config. */
const at = (path, value) => path.reduceRight((inner, key) => ({ [key]: inner }), value);

/** Every property of the schema, with its path: [path, subschema]. */
function properties(s = schema, path = []) {
  return Object.entries(s.properties ?? {}).flatMap(([k, sub]) => [[[...path, k], sub], ...properties(sub, [...path, k])]);
}

test("the schema compiles in a strict JSON Schema 2020-12 validator", () => {
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
  assert.equal(typeof validate, "function");
});

test("every field of the engine's config is in the schema with the engine's default, and the schema has no other", () => {
  const walk = (value, s, path) => {
    assert.ok(s, `${path.join(".")} (a field of the engine's config) is in the schema`);
    assert.deepEqual(s.default, value, `${path.join(".")}: the schema's default is the engine's`);
    assert.ok(s.description, `${path.join(".")} is described`);
    if (s.properties) {
      assert.deepEqual(Object.keys(s.properties).sort(), Object.keys(value).sort(), `${path.join(".") || "the config"}: the same fields`);
      for (const [k, v] of Object.entries(value)) walk(v, s.properties[k], [...path, k]);
    }
  };
  const { properties: top } = schema;
  assert.deepEqual(Object.keys(top).sort(), Object.keys(defaults).sort(), "the schema's fields are the engine's");
  for (const [k, v] of Object.entries(defaults)) walk(v, top[k], [k]);
  // And the defaults, as one config, are valid for both.
  agree(defaults, true, "the whole default config");
});

test("every example of the schema, and repute.config.json, is accepted by both", () => {
  const examples = [
    ...schema.examples.map((c, i) => [`examples[${i}]`, c]),
    ...properties().flatMap(([path, s]) => (s.examples ?? []).map((v, i) => [`${path.join(".")}.examples[${i}]`, at(path, v)])),
    ["repute.config.json", exampleFile],
  ];
  assert.ok(examples.length >= 20, `examples for the fields (${examples.length})`);
  for (const [why, config] of examples) agree(config, true, why);
  // Each field has one: a reader sees a value of each kind.
  for (const [path, s] of properties()) if (path.length === 1) assert.ok(s.examples?.length, `${path[0]} has an example`);
});

test("at every range of the schema, both take the bounds and refuse one step past, fractions, strings, null and booleans", () => {
  const ranged = [
    ...properties().filter(([, s]) => s.type === "integer" || s.type === "number"),
    // The map's values are ranged too (under a valid key).
    [["minGapMsByContext", "checkout-us"], schema.properties.minGapMsByContext.additionalProperties],
  ];
  assert.ok(ranged.length >= 23, `every number of the config (${ranged.length})`);
  for (const [path, s] of ranged) {
    const name = path.join(".");
    assert.ok(Number.isFinite(s.minimum) && Number.isFinite(s.maximum), `${name} has a range`);
    const step = s.type === "integer" ? 1 : Math.max(s.minimum * 0.01, 1e-3);
    agree(at(path, s.minimum), true, `${name} at its minimum`);
    agree(at(path, s.maximum), true, `${name} at its maximum`);
    agree(at(path, s.minimum - step), false, `${name} below its minimum`, path[0]);
    agree(at(path, s.maximum + step), false, `${name} above its maximum`, path[0]);
    if (s.type === "integer") agree(at(path, s.minimum + 0.5), false, `${name} not an integer`, path[0]);
    for (const wrong of [String(s.default ?? s.minimum), null, true]) agree(at(path, wrong), false, `${name} as ${JSON.stringify(wrong)}`, path[0]);
  }
});

test("counter-examples of the other rules: both refuse each, and the engine names the field", () => {
  const many = (n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`site-${i}`, 1000]));
  const cases = [
    [{ coolAfterMs: 2 }, "an unknown field", "coolAfterMs"],
    [{ $schema: "./repute.config.schema.json" }, "a $schema key: the engine reads nothing it does not know", "$schema"],
    [{ penalties: { BLOCKED: 30, blocked: 30 } }, "an unknown failure type in penalties", "blocked"],
    [{ cooldownBaseMs: { SLOWER: 1 } }, "an unknown failure type in cooldownBaseMs", "SLOWER"],
    [{ penalties: [30] }, "penalties as an array", "penalties"],
    [{ penalties: null }, "penalties as null", "penalties"],
    [{ cooldownBaseMs: 60000 }, "cooldownBaseMs as a number", "cooldownBaseMs"],
    [{ halfOpenCauses: ["BLOCKED", "BLOCKED"] }, "halfOpenCauses repeating a type (it is a set)", "halfOpenCauses"],
    [{ halfOpenCauses: ["blocked"] }, "halfOpenCauses with a lower-case type", "halfOpenCauses"],
    [{ halfOpenCauses: ["BANNED"] }, "halfOpenCauses with an unknown type", "halfOpenCauses"],
    [{ halfOpenCauses: "BLOCKED" }, "halfOpenCauses as a string", "halfOpenCauses"],
    [{ halfOpenCauses: [1] }, "halfOpenCauses with a number", "halfOpenCauses"],
    [{ minGapMsByContext: [] }, "minGapMsByContext as an array", "minGapMsByContext"],
    [{ minGapMsByContext: { "": 1000 } }, "an empty context key", "minGapMsByContext"],
    [{ minGapMsByContext: { "   ": 1000 } }, "a blank context key", "minGapMsByContext"],
    [{ minGapMsByContext: { "\u3000\u00a0": 1000 } }, "a key of Unicode spaces only", "minGapMsByContext"],
    [{ minGapMsByContext: { "shop\nexample": 1000 } }, "a key with a line feed", "minGapMsByContext"],
    [{ minGapMsByContext: { "shop\u0000": 1000 } }, "a key with NUL", "minGapMsByContext"],
    [{ minGapMsByContext: { "shop\u200bexample": 1000 } }, "a key with a zero-width space (a format character)", "minGapMsByContext"],
    [{ minGapMsByContext: { "shop\u202eexample": 1000 } }, "a key with a bidi override", "minGapMsByContext"],
    [{ minGapMsByContext: { "shop\u2028example": 1000 } }, "a key with a line separator", "minGapMsByContext"],
    [{ minGapMsByContext: { ["a".repeat(257)]: 1000 } }, "a key of 257 bytes", "minGapMsByContext"],
    [{ minGapMsByContext: many(4097) }, "4097 entries", "minGapMsByContext"],
    [[], "a config that is an array", "config"],
    [null, "a config that is null", "config"],
    ["leaseTtlMs=60000", "a config that is a string", "config"],
  ];
  for (const [config, why, field] of cases) agree(config, false, why, field);
  // The edges of the same rules, accepted by both.
  const accepted = [
    [{ halfOpenCauses: [] }, "no half-open cause (every due cell waits for a prober)"],
    [{ halfOpenCauses: ["SLOW", "BLOCKED"] }, "causes in any order"],
    [{ minGapMsByContext: many(4096) }, "4096 entries"],
    [{ minGapMsByContext: { ["a".repeat(256)]: 1000 } }, "a key of 256 bytes"],
    [{ minGapMsByContext: { "shop example/é": 1000, "x": 0 } }, "keys with a space and a non-ASCII letter"],
    [{ penalties: {}, cooldownBaseMs: {} }, "empty tables (nothing changed)"],
  ];
  for (const [config, why] of accepted) agree(config, true, why);
});

test("the schema's one looseness, said in its description: it counts a key's characters, the engine its UTF-8 bytes", () => {
  assert.match(schema.properties.minGapMsByContext.propertyNames.description, /UTF-8 bytes/);
  const key = "é".repeat(129); // 129 characters, 258 bytes
  assert.ok(engine({ minGapMsByContext: { [key]: 1000 } }), "the engine refuses a key over 256 bytes");
  assert.equal(validate({ minGapMsByContext: { [key]: 1000 } }), true, "JSON Schema cannot count bytes: if this fails, tighten the description");
});

test("the README's config table lists every field of the schema, with its default, type and range", () => {
  const readme = readFileSync(new URL("README.md", root), "utf8");
  const section = readme.slice(readme.indexOf("\n## Configuration\n"), readme.indexOf("\n## ", readme.indexOf("\n## Configuration\n") + 1));
  const rows = new Map([...section.matchAll(/^\| `([\w.]+)` \| ([^|]+) \| ([^|]+) \|/gm)].map((m) => [m[1], { def: m[2].trim(), allowed: m[3].trim() }]));
  // The table's fields: every top-level field, and each key of the two per-failure tables.
  const fields = properties().filter(([path, s]) => path.length === 2 || (path.length === 1 && !s.properties));
  assert.deepEqual([...rows.keys()].sort(), fields.map(([path]) => path.join(".")).sort(), "the table's fields are the schema's");
  /** "2^31", "10^7", "2^-20", "1000" as numbers. */
  const num = (t) => (/^(\d+)\^(-?\d+)$/.test(t) ? Number(t.split("^")[0]) ** Number(t.split("^")[1]) : Number(t));
  for (const [path, s] of fields) {
    const row = rows.get(path.join("."));
    if (s.type !== "integer" && s.type !== "number") continue;
    assert.equal(Number(/^[\d.]+/.exec(row.def)?.[0]), s.default, `${path.join(".")}: the README's default is the schema's`);
    const m = /^(integer|number) (\S+) ?– ?(\S+)/.exec(row.allowed);
    assert.ok(m, `${path.join(".")}: the README gives a type and range (${row.allowed})`);
    assert.deepEqual([m[1], num(m[2]), num(m[3])], [s.type, s.minimum, s.maximum], `${path.join(".")}: the README's range is the schema's`);
  }
});
