//! The outcome window of a cell: its last `windowSize` outcomes with their latency, and the
//! latency percentiles read from it.
//!
//! Each observation is packed in one `u64` (outcome code, whether a latency was given, the
//! latency in whole microseconds), so a default window of ten costs 80 bytes. Latencies are kept
//! to the microsecond and capped at 2^50 ms. This module knows nothing of scores or states.

use crate::types::{FailureType, Outcome};

const LAT_BITS: u32 = 60;
const LAT_MASK: u64 = (1 << LAT_BITS) - 1;
const HAS_LAT: u64 = 1 << LAT_BITS;
/// The largest latency kept, in microseconds (2^50 ms ≈ 2^60 µs would overflow; stay below).
const MAX_LAT_MICROS: u64 = (1u64 << 50) * 1000;

/// One remembered outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation(u64);

impl Observation {
    /// `failure = None` is a success.
    pub fn new(failure: Option<FailureType>, latency_ms: Option<f64>) -> Observation {
        let code = failure.map_or(0, |t| t.index() as u64 + 1);
        let lat = match latency_ms {
            None => 0,
            Some(ms) => HAS_LAT | ((ms * 1000.0).round().clamp(0.0, MAX_LAT_MICROS as f64) as u64),
        };
        Observation((code << (LAT_BITS + 1)) | lat)
    }

    pub fn from_outcome(o: &Outcome) -> Observation {
        Observation::new(o.failure_type(), o.latency_ms())
    }

    /// `None` for a success.
    pub fn failure(self) -> Option<FailureType> {
        match (self.0 >> (LAT_BITS + 1)) as usize {
            0 => None,
            c => Some(FailureType::ALL[c - 1]),
        }
    }

    pub fn latency_micros(self) -> Option<u64> {
        (self.0 & HAS_LAT != 0).then_some(self.0 & LAT_MASK)
    }

    /// The latency in milliseconds, as stored (to the microsecond).
    pub fn latency_ms(self) -> Option<f64> {
        self.latency_micros().map(|us| us as f64 / 1000.0)
    }

    /// The label used in snapshots: `OK` or the failure type.
    pub fn label(self) -> &'static str {
        self.failure().map_or("OK", FailureType::as_str)
    }
}

/// A bounded ring of observations, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Window {
    ring: Vec<Observation>,
    /// Index of the oldest observation once the ring is full.
    head: u32,
}

impl Window {
    /// Appends, dropping the oldest when `capacity` is reached.
    pub fn push(&mut self, obs: Observation, capacity: usize) {
        if self.ring.len() < capacity {
            if self.ring.capacity() == 0 {
                self.ring.reserve_exact(capacity);
            }
            self.ring.push(obs);
        } else {
            let h = self.head as usize;
            self.ring[h] = obs;
            self.head = ((h + 1) % capacity) as u32;
        }
    }

    pub fn len(&self) -> usize {
        self.ring.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// Oldest first.
    pub fn iter(&self) -> impl Iterator<Item = Observation> + '_ {
        let h = self.head as usize;
        self.ring[h..].iter().chain(&self.ring[..h]).copied()
    }

    /// Rebuilds from oldest-first observations, keeping only the newest `capacity`.
    pub fn from_oldest_first(obs: impl IntoIterator<Item = Observation>, capacity: usize) -> Window {
        let mut all: Vec<Observation> = obs.into_iter().collect();
        if all.len() > capacity {
            all.drain(..all.len() - capacity);
        }
        all.shrink_to_fit();
        Window { ring: all, head: 0 }
    }

    /// Nearest-rank percentiles (`p` in (0, 1]) over the observations that carry a latency.
    pub fn percentiles<const N: usize>(&self, ps: [f64; N]) -> [Option<f64>; N] {
        let mut lats: Vec<u64> = self.iter().filter_map(Observation::latency_micros).collect();
        if lats.is_empty() {
            return [None; N];
        }
        lats.sort_unstable();
        let n = lats.len();
        ps.map(|p| {
            let rank = ((p * n as f64).ceil() as usize).clamp(1, n);
            Some(lats[rank - 1] as f64 / 1000.0)
        })
    }

    /// Heap bytes held by this window (for memory accounting in benchmarks).
    pub fn heap_bytes(&self) -> usize {
        self.ring.capacity() * std::mem::size_of::<Observation>()
    }
}
