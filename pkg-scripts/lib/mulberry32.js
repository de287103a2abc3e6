// mulberry32: a tiny seeded PRNG (32-bit state, uniform doubles in [0, 1)) for reproducible
// test inputs and load sequences. Not for anything secret; the engine has its own seeded PRNG.

/** A function returning the next draw in [0, 1) of the sequence seeded by `seed`. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
