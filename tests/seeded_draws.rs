//! The seeded generator's draws are part of the contract: golden scenarios that give a `seed`
//! expect exactly these picks in every host. The generator is `rand_xoshiro`'s
//! `Xoshiro256StarStar` seeded with `seed_from_u64` (SplitMix64), a draw `rand`'s
//! `StandardUniform` f64 (the top 53 bits × 2^-53), as `Randomness::seeded` draws them. Before
//! `random.rs` (the engine's own xoshiro256**) went, a test here compared the two draw for
//! draw over these seeds (commit c3d0a98); what stays pins the draws it recorded: the first
//! draws of a few seeds bit for bit, and a digest of many draws for many seeds.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256StarStar;

/// Seeds spread over the whole range (SplitMix64's own increments), plus the edges.
fn seeds() -> Vec<u64> {
    let mut s = 0u64;
    let mut out = vec![0, 1, 2, 7, 42, (1 << 53) - 1, u64::MAX];
    for _ in 0..249 {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        out.push(s);
    }
    out
}

/// Draws per seed in the digest.
const DRAWS: usize = 4096;

/// A digest of `DRAWS` draws: every draw's bits, folded in order (a changed, dropped or
/// reordered draw changes it).
fn digest(seed: u64) -> u64 {
    let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
    (0..DRAWS).fold(0u64, |h, _| {
        let u: f64 = rng.random();
        assert!((0.0..1.0).contains(&u), "seed {seed}: draw {u} outside [0, 1)");
        (h ^ u.to_bits()).wrapping_mul(0x0000_0100_0000_01B3).rotate_left(5)
    })
}

/// All seeds' digests folded into one.
fn digest_of_all() -> u64 {
    seeds().into_iter().fold(0u64, |h, s| (h ^ digest(s)).wrapping_mul(0x0000_0100_0000_01B3))
}

/// The first four draws of a few seeds, recorded from `random.rs`'s `SeededRandom` (bits of
/// the f64).
const FIRST_DRAWS: [(u64, [u64; 4]); 4] = [
    (0, [0x3fe33d8be6d96ebe, 0x3fe7edc3ef092ac8, 0x3fba5f849d4933e0, 0x3fdaa9653c498b4a]),
    (1, [0x3fe67e55eda1f8e2, 0x3fe0a76ab2c8e6c9, 0x3fe25f12eac10548, 0x3fd90b871ef099a8]),
    (42, [0x3fb5780b2e0c2ec0, 0x3fd84136619b444e, 0x3fe5c2ea66473c93, 0x3fed9715a8e0766c]),
    ((1 << 53) - 1, [0x3fcc6d794d8f5df0, 0x3feb6505c92b6370, 0x3fbb5b097bad6150, 0x3fe78c1a7a0bba22]),
];

/// `digest_of_all()` over `random.rs`'s `SeededRandom`: 256 seeds × 4,096 draws.
const ALL_DIGEST: u64 = 0x6b64_10d8_0cd0_4006;

#[test]
fn the_first_draws_of_a_few_seeds_are_the_recorded_ones() {
    for (seed, want) in FIRST_DRAWS {
        let mut rng = Xoshiro256StarStar::seed_from_u64(seed);
        let got: Vec<u64> = (0..4).map(|_| rng.random::<f64>().to_bits()).collect();
        assert_eq!(got, want, "seed {seed}");
    }
}

#[test]
fn many_draws_of_many_seeds_are_the_recorded_ones() {
    assert_eq!(digest_of_all(), ALL_DIGEST, "{:#018x}", digest_of_all());
}

#[test]
fn a_seeded_pool_picks_by_the_recorded_draws_as_does_one_given_the_generator() {
    use repute::{Config, Kind, Pool};
    let now = 1_700_000_000_000.0;
    for (seed, want) in FIRST_DRAWS {
        let seeded = Pool::with_seed(Config::default(), seed).unwrap();
        let given = Pool::new(Config::default(), Xoshiro256StarStar::seed_from_u64(seed)).unwrap();
        for mut pool in [seeded, given] {
            for i in 0..10 {
                pool.register(now, Kind::Proxy, &format!("r{i}")).unwrap();
            }
            for bits in want {
                // Ten candidates of weight 1 in canonical order: the draw u picks r⌊10u⌋.
                let pick = (f64::from_bits(bits) * 10.0).floor();
                let lease = pool.acquire(now, "ctx").unwrap().unwrap();
                assert_eq!(*lease.value, format!("r{pick}"), "seed {seed}");
                assert!(pool.release(now, &lease).unwrap());
            }
        }
    }
}
