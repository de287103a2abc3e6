//! The fencing tokens of leases already finished (`finish`, SPEC §3 "Finishing a step"): a
//! repeated finish of one lease — a client retrying after a lost answer — reports nothing again.
//!
//! Runtime state, like leases: never persisted, and a restored pool starts with none. A token is
//! kept for at least `leaseTtlMs` after its finish (until the first finish after that), so the
//! memory holds about `leaseTtlMs` worth of steps: 300 000 tokens at 10 000 steps a second and
//! the default 30 s, 16 bytes each in the set and the queue.

use std::collections::VecDeque;

use rustc_hash::FxHashSet;

use crate::types::Millis;

#[derive(Debug, Default, Clone)]
pub struct Finished {
    tokens: FxHashSet<u64>,
    /// `(finished at, token)` in finishing order (times never go back: the pool's `now`).
    order: VecDeque<(Millis, u64)>,
}

impl Finished {
    /// Whether the lease with `token` was finished (within the kept time).
    pub fn contains(&self, token: u64) -> bool {
        self.tokens.contains(&token)
    }

    /// Notes `token` finished at `now`, forgetting tokens finished `keep` ms or more before.
    pub fn remember(&mut self, token: u64, now: Millis, keep: Millis) {
        while let Some(&(at, old)) = self.order.front() {
            if at + keep > now {
                break;
            }
            self.order.pop_front();
            self.tokens.remove(&old);
        }
        if self.tokens.insert(token) {
            self.order.push_back((now, token));
        }
    }

    /// Tokens kept.
    pub fn kept(&self) -> usize {
        self.order.len()
    }
}
