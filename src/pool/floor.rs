//! Restoring above a floor: a host's counters that must never go back across a restart.
//!
//! A host hands out fencing tokens and event seqs past its last checkpoint (it reserves ahead
//! on disk, as the Node runtime does), and an import may be older than the live pool it
//! replaces. Restoring such a snapshot raises its revision, fencing high-water mark and next
//! event seq to at least the host's floor, so a token after a restart is larger than any
//! before. Nothing else of the snapshot changes, and a floor beyond 2^53 − 1 is refused.

use super::core::Core;
use crate::check::{self, MAX_SAFE};
use crate::error::Result;

/// The least counters a restored pool may have (each 0 when the host has no floor for it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Floor {
    pub revision: u64,
    pub fencing_high_water: u64,
    pub next_event_seq: u64,
}

impl Floor {
    /// A floor from a host's numbers: whole, in [0, 2^53 − 1]; `None` is no floor.
    pub fn from_host(revision: Option<f64>, fencing: Option<f64>, next_seq: Option<f64>) -> Result<Floor> {
        let field = |name: &str, v: Option<f64>| match v {
            None => Ok(0),
            Some(v) => check::int_in(name, v, 0, MAX_SAFE).map_err(crate::error::invalid_argument),
        };
        Ok(Floor {
            revision: field("minRevision", revision)?,
            fencing_high_water: field("minFencingHighWater", fencing)?,
            next_event_seq: field("minNextEventSeq", next_seq)?,
        })
    }
}

impl Core {
    /// Raises the counters to at least `floor`'s (a freshly restored core: no event pending).
    pub(crate) fn raise_to(&mut self, floor: &Floor) {
        self.counters_raised(floor.revision, floor.fencing_high_water, floor.next_event_seq);
    }
}
