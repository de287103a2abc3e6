//! Time passing: lease expiries, block expiries and cooldown expiries, processed lazily at each
//! call's `now` from priority queues (never by scanning).
//!
//! Queue entries may be stale (a lease renewed or released, a block replaced, a cell re-cooled);
//! each is checked against the live record when it comes due. Lease and block expiries are
//! processed in time order and emit `LEASE_EXPIRED` / `BLOCK_EXPIRED` stamped with the instant
//! they took effect; ties break on the canonical key, so the order is reproducible. A cooldown
//! expiry only re-indexes the cell (being due for recovery is derived, not an event). Also holds
//! the set of probe-only cooling cells that `dueForRecoveryProbe` reads.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::rc::Rc;

use super::core::Core;
use crate::events::EventType;
use crate::registry::Block;
use crate::types::{Kind, Millis};

/// A lease or block due at an instant: (when, kind, value, lease token or 0 for a block).
type Due = Reverse<(Millis, Kind, Rc<str>, u64)>;

#[derive(Debug, Clone, Default)]
pub struct Expiries {
    leases: BinaryHeap<Due>,
    blocks: BinaryHeap<Due>,
    /// Half-open cooldowns: (until, cell id); when due the cell becomes a candidate again.
    cooldowns: BinaryHeap<Reverse<(Millis, u32)>>,
    /// Probe-only cooling cells: (until, cell id).
    pub(crate) probe_only: BTreeSet<(Millis, u32)>,
}

impl Expiries {
    pub fn lease(&mut self, at: Millis, kind: Kind, value: &Rc<str>, token: u64) {
        self.leases
            .push(Reverse((at, kind, Rc::clone(value), token)));
    }

    pub fn block(&mut self, at: Millis, kind: Kind, value: &Rc<str>) {
        self.blocks.push(Reverse((at, kind, Rc::clone(value), 0)));
    }

    pub fn cooldown(&mut self, until: Millis, cell: u32) {
        self.cooldowns.push(Reverse((until, cell)));
    }

    /// The earliest pending lease or block expiry at or before `now`, blocks first on a tie.
    fn next_due(&mut self, now: Millis) -> Option<(bool, Millis, Kind, Rc<str>, u64)> {
        let b = self
            .blocks
            .peek()
            .map(|Reverse(d)| d.0)
            .filter(|&t| t <= now);
        let l = self
            .leases
            .peek()
            .map(|Reverse(d)| d.0)
            .filter(|&t| t <= now);
        let is_block = match (b, l) {
            (None, None) => return None,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(tb), Some(tl)) => tb <= tl,
        };
        let heap = if is_block {
            &mut self.blocks
        } else {
            &mut self.leases
        };
        let Reverse((at, kind, value, token)) = heap.pop()?;
        Some((is_block, at, kind, value, token))
    }
}

impl Core {
    /// Applies every expiry due at or before `now`.
    pub(crate) fn process_expiries(&mut self, now: Millis) {
        while let Some((is_block, at, kind, value, token)) = self.expiries.next_due(now) {
            let Some(slot) = self.reg.find(kind, &value) else {
                continue;
            };
            let r = self.reg.get_mut(slot);
            let ty = if is_block {
                if r.block != Some(Block::Until(at)) {
                    continue;
                }
                r.block = None;
                EventType::BlockExpired
            } else {
                if !r
                    .lease
                    .as_ref()
                    .is_some_and(|l| l.token == token && l.expires_at == at)
                {
                    continue;
                }
                r.lease = None;
                EventType::LeaseExpired
            };
            self.sync_avail(slot);
            let mut e = self.resource_event(ty, at, slot);
            if !is_block {
                e.token = Some(token);
            }
            self.emit(e);
        }
        while let Some(&Reverse((until, id))) = self.expiries.cooldowns.peek() {
            if until > now {
                break;
            }
            self.expiries.cooldowns.pop();
            if self.cells.is_live(id) {
                self.refresh_cell(id, now);
            }
        }
    }

    /// Records a cell's cooldown in the right queue after a report (or a restore).
    pub(crate) fn track_cooldown(&mut self, id: u32, before: Option<Millis>, now: Millis) {
        if let Some(old) = before {
            self.expiries.probe_only.remove(&(old, id));
        }
        let c = &self.cells.get(id).cell;
        if c.state != crate::types::State::Cooling {
            return;
        }
        let (Some(until), Some(cause)) = (c.cooldown_until, c.cooldown_cause) else {
            return;
        };
        if self.cfg.half_open_causes.contains(cause) {
            if until > now {
                self.expiries.cooldown(until, id);
            }
        } else {
            self.expiries.probe_only.insert((until, id));
        }
    }
}
