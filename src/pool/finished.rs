//! The fencing tokens of leases already finished (`finish`, SPEC §3 "Finishing a step"): a
//! repeated finish of one lease — a client retrying after a lost answer — reports nothing again.
//!
//! Runtime state, like leases: never persisted, and a restored pool starts with none. A token
//! counts as finished for exactly `leaseTtlMs` after its finish (`now < finishedAt + leaseTtlMs`)
//! — whatever other finishes happen meanwhile, so whether a repeat reports again depends only on
//! its own time. Entries past that are dropped at the next finish, so the memory holds about
//! `leaseTtlMs` worth of steps: 300 000 tokens at 10 000 steps a second and the default 30 s,
//! about 16 bytes each in the map and the queue.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::types::Millis;

#[derive(Debug, Default, Clone)]
pub struct Finished {
    /// Token → when it was finished.
    at: FxHashMap<u64, Millis>,
    /// `(finished at, token)` in finishing order (times never go back: the pool's `now`).
    order: VecDeque<(Millis, u64)>,
}

impl Finished {
    /// Whether the lease with `token` was finished less than `keep` ms before `now`.
    pub fn contains(&self, token: u64, now: Millis, keep: Millis) -> bool {
        self.at.get(&token).is_some_and(|&at| now < at.saturating_add(keep))
    }

    /// Notes `token` finished at `now`, dropping tokens finished `keep` ms or more before.
    pub fn remember(&mut self, token: u64, now: Millis, keep: Millis) {
        while let Some(&(at, old)) = self.order.front() {
            if at.saturating_add(keep) > now {
                break;
            }
            self.order.pop_front();
            // A token finished again was forgotten first (`contains` is false exactly when
            // its entry is due here), so its old entry is gone before the new one is queued.
            self.at.remove(&old);
        }
        self.at.insert(token, now);
        self.order.push_back((now, token));
    }

    /// Tokens kept.
    pub fn kept(&self) -> usize {
        self.at.len()
    }
}
