//! Where an acquire's random draw comes from (SPEC §3, selection: one draw `u` in [0, 1) per
//! acquire with two or more candidates).
//!
//! [`Randomness`] is either a generator implementing `rand`'s [`Rng`] — any one a Rust user passes;
//! [`Randomness::seeded`] is the deterministic xoshiro256** of every host — converted by `rand`'s
//! `StandardUniform` (the top 53 bits × 2^-53), or a host's own draws in [0, 1) taken as they
//! are ([`Randomness::host`]: a JavaScript `random()`, a scenario's list), so that a draw such as
//! 0.1 picks exactly what it picks in every host. It owns no validation: the pool checks every
//! draw (`check::random_draw`) before it changes anything. It reads no entropy either: seeding
//! a pool nobody seeded is a host's business (the wasm facade's `host.rs`).

use rand::{Rng, RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256StarStar;

/// A pool's source of draws in [0, 1).
pub struct Randomness(Source);

/// The seeded generator is held as itself (every seeded or engine-seeded pool draws from it:
/// no indirect call on acquire's path); anything else behind a box.
enum Source {
    Seeded(Xoshiro256StarStar),
    Other(Box<dyn FnMut() -> f64>),
}

impl Randomness {
    /// `rand_xoshiro`'s xoshiro256** seeded with `seed_from_u64` (SplitMix64). The algorithm is
    /// part of the contract: golden scenarios that give a `seed` expect exactly its draws.
    pub fn seeded(seed: u64) -> Randomness {
        Randomness(Source::Seeded(Xoshiro256StarStar::seed_from_u64(seed)))
    }

    /// A host's draws, used as they are; one outside [0, 1) fails the call that drew it
    /// (`INVALID_ARGUMENT`) and changes nothing.
    pub fn host(draw: impl FnMut() -> f64 + 'static) -> Randomness {
        Randomness(Source::Other(Box::new(draw)))
    }

    /// The next draw, unchecked.
    pub(crate) fn next(&mut self) -> f64 {
        match &mut self.0 {
            Source::Seeded(rng) => rng.random(),
            Source::Other(draw) => draw(),
        }
    }
}

/// Any `rand` generator: each draw is `rng.random::<f64>()`.
impl<R: Rng + 'static> From<R> for Randomness {
    fn from(mut rng: R) -> Randomness {
        Randomness(Source::Other(Box::new(move || rng.random())))
    }
}

impl std::fmt::Debug for Randomness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Randomness")
    }
}
