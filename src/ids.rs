//! A small copyable id for the hot path: `ResourceId`, a registered resource's registry slot
//! with that slot's generation (`slab.rs`), so that an id held across a deregistration is
//! refused rather than taken for whatever resource the slot holds next. A grant gives it
//! (`Lease::id`); hosts carry it as one JavaScript-safe number (`to_f64` / `from_f64`). It
//! knows nothing of the registry.

use crate::slab::GENERATIONS;

/// A registered resource by slot and generation (`Pool::resource_id`). Calls by id refuse an
/// id whose resource was deregistered (`UNKNOWN_RESOURCE`), even when the slot holds another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResourceId {
    pub slot: u32,
    pub generation: u32,
}

const LOW: f64 = 4_294_967_296.0;

/// `(slot, generation)` as one number: `generation · 2^32 + slot + 1` (never 0, at most
/// 2^53 − 1).
#[inline]
fn pack(slot: u32, generation: u32) -> f64 {
    f64::from(generation) * LOW + f64::from(slot) + 1.0
}

/// The `(slot, generation)` that `pack` gave `n`; `None` for a number `pack` never gives.
#[inline]
fn unpack(n: f64) -> Option<(u32, u32)> {
    if !(n >= 1.0 && n < f64::from(GENERATIONS) * LOW && n.fract() == 0.0) {
        return None;
    }
    let n = n as u64;
    let low = (n & 0xffff_ffff) as u32;
    Some((low.checked_sub(1)?, (n >> 32) as u32))
}

impl ResourceId {
    /// As one number (`pack`).
    #[inline]
    pub fn to_f64(self) -> f64 {
        pack(self.slot, self.generation)
    }

    /// The id `to_f64` gave `n`; `None` for a number no id gives.
    #[inline]
    pub fn from_f64(n: f64) -> Option<ResourceId> {
        unpack(n).map(|(slot, generation)| ResourceId { slot, generation })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_round_trips_through_one_number_and_others_are_refused() {
        for id in [
            ResourceId { slot: 0, generation: 0 },
            ResourceId { slot: 7, generation: 3 },
            ResourceId { slot: u32::MAX - 1, generation: GENERATIONS - 1 },
        ] {
            let n = id.to_f64();
            assert!((1.0..=9_007_199_254_740_991.0).contains(&n));
            assert_eq!(ResourceId::from_f64(n), Some(id));
        }
        for n in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY, LOW, f64::from(GENERATIONS) * LOW] {
            assert_eq!(ResourceId::from_f64(n), None, "{n}");
        }
    }
}
