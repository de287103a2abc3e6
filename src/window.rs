//! The outcome window of a cell: its last `windowSize` outcomes with their latency, and the
//! latency percentiles read from it.
//!
//! Each observation is packed in one `u64` (outcome code, whether a latency was given, the
//! latency in whole microseconds), so a default window of ten costs 80 bytes, kept inside the
//! cell; larger windows move to the heap. Latencies are kept to the microsecond and capped at
//! 2^50 µs (35 years; larger values would not survive the round trip through a snapshot's
//! milliseconds). This module knows nothing of scores or states.

use crate::json::{array, opt_float, string};
use crate::types::{FailureType, Outcome};

const LAT_BITS: u32 = 60;
const LAT_MASK: u64 = (1 << LAT_BITS) - 1;
const HAS_LAT: u64 = 1 << LAT_BITS;
/// The largest latency kept, in microseconds: its milliseconds print and parse back exactly.
const MAX_LAT_MICROS: u64 = 1 << 50;

/// A latency in whole microseconds, rounded half away from zero and capped (`ms` ≥ 0).
fn micros(ms: f64) -> u64 {
    let us = ms * 1000.0;
    // Whole microseconds (the usual case) need no rounding call. Converted through i64, which
    // they fit below the cap (one instruction on x86-64; float to u64 takes a dozen).
    if us <= MAX_LAT_MICROS as f64 {
        let t = us as i64;
        if t as f64 == us {
            return t as u64;
        }
    }
    us.round().clamp(0.0, MAX_LAT_MICROS as f64) as u64
}

/// One remembered outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation(u64);

impl Observation {
    /// `failure = None` is a success.
    pub fn new(failure: Option<FailureType>, latency_ms: Option<f64>) -> Observation {
        let code = failure.map_or(0, |t| t.index() as u64 + 1);
        let lat = match latency_ms {
            None => 0,
            Some(ms) => HAS_LAT | micros(ms),
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

/// Windows up to this size live inside the cell (no allocation, no extra cache miss).
const INLINE: usize = 10;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Store {
    Inline([Observation; INLINE]),
    Heap(Box<[Observation]>),
}

/// A bounded ring of observations, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    store: Store,
    len: u16,
    /// Index of the oldest observation once the ring is full.
    head: u16,
}

impl Default for Window {
    fn default() -> Self {
        Window { store: Store::Inline([Observation(0); INLINE]), len: 0, head: 0 }
    }
}

impl Window {
    /// The window, oldest first, as `[["OK", 12.5], ["TIMEOUT", null], ...]` (label, latency
    /// in ms): the form snapshots and a resource's detail share.
    pub fn write_json(&self, out: &mut String) {
        let obs: Vec<Observation> = self.iter().collect();
        array(out, &obs, |out, ob| {
            out.push('[');
            string(out, ob.label());
            out.push(',');
            opt_float(out, ob.latency_ms());
            out.push(']');
        });
    }

    fn ring(&self) -> &[Observation] {
        match &self.store {
            Store::Inline(a) => &a[..self.len as usize],
            Store::Heap(b) => &b[..self.len as usize],
        }
    }

    fn slots_mut(&mut self) -> &mut [Observation] {
        match &mut self.store {
            Store::Inline(a) => a,
            Store::Heap(b) => b,
        }
    }

    /// Appends, dropping the oldest when `capacity` is reached.
    pub fn push(&mut self, obs: Observation, capacity: usize) {
        let len = self.len as usize;
        if len < capacity {
            if self.slots_mut().len() < capacity {
                let mut grown = vec![Observation(0); capacity].into_boxed_slice();
                grown[..len].copy_from_slice(self.ring());
                self.store = Store::Heap(grown);
            }
            self.slots_mut()[len] = obs;
            self.len += 1;
        } else {
            let h = self.head as usize;
            self.slots_mut()[h] = obs;
            self.head = if h + 1 == capacity { 0 } else { (h + 1) as u16 };
        }
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Oldest first.
    pub fn iter(&self) -> impl Iterator<Item = Observation> + '_ {
        let h = self.head as usize;
        let ring = self.ring();
        ring[h..].iter().chain(&ring[..h]).copied()
    }

    /// Rebuilds from `count` oldest-first observations, keeping only the newest `capacity`.
    pub fn from_oldest_first(
        obs: impl IntoIterator<Item = Observation>,
        count: usize,
        capacity: usize,
    ) -> Window {
        let mut w = Window::default();
        for o in obs.into_iter().skip(count.saturating_sub(capacity)) {
            w.push(o, capacity);
        }
        w
    }

    /// Nearest-rank percentiles (`p` in (0, 1]) over the observations that carry a latency.
    pub fn percentiles<const N: usize>(&self, ps: [f64; N]) -> [Option<f64>; N] {
        let lats: Vec<u64> = self.iter().filter_map(Observation::latency_micros).collect();
        if lats.is_empty() {
            return [None; N];
        }
        // The engine's one sort (a sort of u64 of its own would cost the module 3 KB).
        let order = crate::sort::sorted_positions(lats.len(), &|a, b| lats[a].cmp(&lats[b]));
        let n = lats.len();
        ps.map(|p| {
            let rank = ((p * n as f64).ceil() as usize).clamp(1, n);
            Some(lats[order[rank - 1] as usize] as f64 / 1000.0)
        })
    }

    /// Heap bytes held by this window (for memory accounting in benchmarks).
    pub fn heap_bytes(&self) -> usize {
        match &self.store {
            Store::Inline(_) => 0,
            Store::Heap(b) => b.len() * std::mem::size_of::<Observation>(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(ms: u64) -> Observation {
        Observation::new(None, Some(ms as f64))
    }

    fn lats(w: &Window) -> Vec<f64> {
        w.iter().map(|o| o.latency_ms().unwrap()).collect()
    }

    #[test]
    fn keeps_the_newest_capacity_outcomes_oldest_first() {
        for cap in [1usize, 3, 10, 11, 40] {
            let mut w = Window::default();
            for i in 0..(cap as u64 * 3 + 2) {
                w.push(obs(i), cap);
                let n = (i + 1).min(cap as u64);
                let want: Vec<f64> = (i + 1 - n..=i).map(|v| v as f64).collect();
                assert_eq!(lats(&w), want, "cap {cap} after {i}");
            }
            assert_eq!(w.heap_bytes() > 0, cap > INLINE);
        }
    }

    #[test]
    fn rebuild_keeps_the_newest() {
        let w = Window::from_oldest_first((0..7).map(obs), 7, 4);
        assert_eq!(lats(&w), vec![3.0, 4.0, 5.0, 6.0]);
    }

    #[test]
    fn observations_round_trip_labels_and_microsecond_latency() {
        let o = Observation::new(Some(FailureType::Timeout), Some(12.3456));
        assert_eq!(o.label(), "TIMEOUT");
        assert_eq!(o.latency_ms(), Some(12.346));
        let ok = Observation::new(None, None);
        assert_eq!((ok.label(), ok.latency_ms()), ("OK", None));
        assert_eq!(Observation::new(Some(FailureType::Slow), Some(0.0)).latency_ms(), Some(0.0));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut w = Window::default();
        assert_eq!(w.percentiles([0.5, 0.95]), [None, None]);
        for ms in [50, 10, 40, 20, 30] {
            w.push(obs(ms), 10);
        }
        w.push(Observation::new(Some(FailureType::Blocked), None), 10);
        // sorted 10 20 30 40 50: p50 → rank ceil(2.5)=3 → 30; p95 → rank ceil(4.75)=5 → 50
        assert_eq!(w.percentiles([0.5, 0.95]), [Some(30.0), Some(50.0)]);
    }
}
