// The off-hot-path calls across the wasm boundary: per call, the whole call as the package makes
// it, and for those that cross as JSON text the share that is `JSON.parse` of the text (parsing
// the same text again); `config()` and `stats()` cross as structured values (serde-wasm-bindgen,
// src/wasm/views_value.rs), so they have no parse share. Prints a table and one BOUNDARY line
// per call:  node pkg-scripts/perf/bench-boundary.mjs [resources]  (after pkg-scripts/build).
import { Pool } from "repute";
import { CONTEXTS, cyclingPool } from "./bench-workload.mjs";

const n = Number(process.argv[2] ?? 1000);
const { pool, cycle } = cyclingPool(Pool, n);
for (let i = 0; i < 20_000; i++) cycle(i);
const first = pool.resources()[0];

/** The calls that cross as values; the rest cross as JSON text. */
const VALUES = new Set(["config()", "stats()"]);

const calls = {
  "config()": () => pool.config(),
  "stats()": () => pool.stats(),
  "dueForRecoveryProbe()": () => pool.dueForRecoveryProbe(),
  "resource(kind, value)": () => pool.resource(first.kind, first.value),
  "resources({context})": () => pool.resources({ context: CONTEXTS[0] }),
  "resources()": () => pool.resources(),
};

/** Median ns per call of `f` over 7 rounds, each of as many calls as took 20 ms or more once. */
function median(f) {
  let k = 1;
  for (let t0 = performance.now(); performance.now() - t0 < 20; k *= 2) for (let i = 0; i < k; i++) f();
  const rounds = [];
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now();
    for (let i = 0; i < k; i++) f();
    rounds.push(((performance.now() - t0) * 1e6) / k);
  }
  return rounds.sort((a, b) => a - b)[3];
}

console.log(`${n} resources x 10 contexts; ns per call, median of 7 rounds`);
console.log(`${"call".padEnd(24)} ${"call".padStart(12)} ${"JSON.parse".padStart(12)} ${"bytes".padStart(9)}`);
for (const [name, f] of Object.entries(calls)) {
  const text = JSON.stringify(f());
  const call = median(f);
  const parse = VALUES.has(name) ? null : median(() => JSON.parse(text));
  const parseText = parse === null ? "value" : parse.toFixed(0);
  console.log(`${name.padEnd(24)} ${call.toFixed(0).padStart(12)} ${parseText.padStart(12)} ${String(text.length).padStart(9)}`);
  const parseNs = parse === null ? null : Math.round(parse);
  console.log(`BOUNDARY ${JSON.stringify({ size: n, call: name, callNs: Math.round(call), parseNs, bytes: text.length })}`);
}
