//! The ceiling of the pool's three counters — `revision`, `fencingHighWater` and
//! `nextEventSeq`: each stays at most 2^53 − 1, the largest integer every host represents
//! exactly and the largest a snapshot may hold. A call that could take one past it fails with
//! `CAPACITY_EXCEEDED` naming the counter, before anything changes; so the pool never hands out
//! a token or an event seq a host would round, and every snapshot it writes restores.
//!
//! What a call can move, at most: one revision step; one token (`acquire`,
//! `acquireResource`, `finish`); its own events (one for most calls, two for a `register` that
//! regroups and reconfigures, three for `finish`) plus one per lease or block ending at its
//! reading. The check costs one comparison until a counter may have
//! passed 2^52 (no pool gets there by use: a million tokens a second for 142 years). Past it,
//! once the first queued lease or block end is due, every one queued is counted as ending:
//! near the ceiling, refusing a few million events early is as good as exact.

use super::core::Core;
use crate::check::MAX_SAFE;
use crate::error::{Error, Result};
use crate::types::Millis;

/// What a call may move besides one revision step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Moves {
    /// Tokens it may issue.
    pub tokens: u64,
    /// Events of its own it may emit (expiry events are counted apart).
    pub own: u64,
}

/// Reads, and `renew` (which changes nothing durable): only the expiries due at the reading.
pub(crate) const READS: Moves = Moves { tokens: 0, own: 0 };
/// Calls that may change the pool: at most one event of their own.
pub(crate) const CHANGES: Moves = Moves { tokens: 0, own: 1 };
/// `register`: it may regroup and reconfigure a known resource at once (two events).
pub(crate) const REGISTERS: Moves = Moves { tokens: 0, own: 2 };
/// `acquire` and `acquireResource`: one token and one event.
pub(crate) const GRANTS: Moves = Moves { tokens: 1, own: 1 };
/// `finish`: a report's event, a release's and the next lease's, and its token.
pub(crate) const FINISHES: Moves = Moves { tokens: 1, own: 3 };

/// Past this, the exact check runs before every call.
const NEAR: u64 = 1 << 52;

/// The most any counter moves in one call: one token or revision step, or the call's own events
/// (at most `FINISHES.own`) plus one per lease or block ending (each resource has at most one
/// block and 1,024 leases, and there are at most 10^7 resources).
const PER_CALL: u64 = 1 << 35;
const _: () = assert!(FINISHES.own + 10_000_000 * (1 + crate::check::MAX_LEASES as u64) < PER_CALL);

impl Core {
    /// Fails when the call about to run at clock reading `reading`, moving at most `m`, could
    /// take a counter past 2^53 − 1. One comparison while `revision` is below `counters_fast`:
    /// every call that moves a counter steps `revision` exactly once and moves none by more
    /// than `PER_CALL`, so until then no counter can have reached `NEAR`.
    #[inline(always)]
    pub(crate) fn check_counters(&mut self, reading: Millis, m: Moves) -> Result<()> {
        if self.revision() < self.counters_far_until() {
            return Ok(());
        }
        self.check_counters_near(reading, m)
    }

    #[cold]
    #[inline(never)]
    fn check_counters_near(&mut self, reading: Millis, m: Moves) -> Result<()> {
        let (revision, fencing, next_seq) = (self.revision(), self.fencing(), self.events().next_seq());
        let high = revision.max(fencing).max(next_seq);
        if high < NEAR {
            self.counters_far(revision + (NEAR - high) / PER_CALL);
            return Ok(());
        }
        let events = m.own + self.ends_due_at_most(self.time_at(reading));
        let past = if fencing + m.tokens > MAX_SAFE {
            "fencingHighWater"
        } else if revision == MAX_SAFE && events > 0 {
            "revision"
        } else if next_seq + events > MAX_SAFE {
            "nextEventSeq"
        } else {
            return Ok(());
        };
        Err(Error::CapacityExceeded(
            past.to_owned() + " would pass 2^53 − 1 (what a snapshot holds): nothing changed",
        ))
    }
}
