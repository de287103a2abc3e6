//! Where randomness comes from: the host, or a seeded PRNG. The engine never reads entropy.
//!
//! [`RandomSource`] yields draws in [0, 1). Two implementations: [`SeededRandom`]
//! (deterministic; the same seed gives the same draws on every platform) and any
//! `FnMut() -> f64` (the wasm facade passes `Math.random` or a user function). Draws are
//! validated by the pool, not here.

/// A source of uniform draws in [0, 1).
pub trait RandomSource {
    fn next_f64(&mut self) -> f64;
}

impl<F: FnMut() -> f64> RandomSource for F {
    fn next_f64(&mut self) -> f64 {
        self()
    }
}

/// xoshiro256** seeded through SplitMix64; a draw is the top 53 bits scaled to [0, 1).
///
/// The algorithm is part of the contract: golden scenarios that give a `seed` expect exactly
/// these draws in every host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeededRandom {
    s: [u64; 4],
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl SeededRandom {
    pub fn new(seed: u64) -> SeededRandom {
        let mut sm = seed;
        SeededRandom { s: [0; 4].map(|_| splitmix64(&mut sm)) }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
}

impl RandomSource for SeededRandom {
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_draws_are_reproducible_and_in_range() {
        let mut a = SeededRandom::new(42);
        let mut b = SeededRandom::new(42);
        for _ in 0..10_000 {
            let x = a.next_f64();
            assert_eq!(x.to_bits(), b.next_f64().to_bits());
            assert!((0.0..1.0).contains(&x));
        }
        assert_ne!(SeededRandom::new(1).next_u64(), SeededRandom::new(2).next_u64());
    }

    #[test]
    fn seeded_sequence_is_pinned() {
        // Pinned so that a change of algorithm (which would break seeded golden scenarios in
        // every host) fails here first.
        let mut r = SeededRandom::new(0);
        let first: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(first, vec![0x99EC5F36CB75F2B4, 0xBF6E1F784956452A, 0x1A5F849D4933E6E0]);
    }
}
