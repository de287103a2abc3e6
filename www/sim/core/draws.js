// Seeded random numbers for the simulated world (the engine has its own seeded PRNG). Two
// kinds: sequential streams (mulberry32, one per purpose: each context's arrivals), and
// counter-based draws — `draw(seed, n)` depends only on the seed and `n`, never on how many
// draws came before — so request i faces the same luck under every policy (common random
// numbers: an A/B difference comes from the policies, not from a reshuffled world).
import { mulberry32 } from "../../vendor/repute/lib/mulberry32.js";

/** The 32-bit finalizer of MurmurHash3: a bijection that spreads every input bit. */
function fmix32(h) {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A seed (a safe non-negative integer, possibly above 2^32) folded to 32 bits. */
function fold(seed) {
  return fmix32((seed >>> 0) ^ fmix32(Math.floor(seed / 4294967296) + 0x9e3779b9));
}

/** A sequential stream of draws in [0, 1) for `seed` and a numeric `label`. */
export function stream(seed, label) {
  return mulberry32(fmix32(fold(seed) ^ fmix32(label + 0x632be5ab)));
}

/** The `n`-th counter-based draw in [0, 1) for `seed` (n a non-negative integer < 2^32). */
export function draw(seed, n) {
  return fmix32(fold(seed) ^ fmix32(n ^ 0x7f4a7c15)) / 4294967296;
}
