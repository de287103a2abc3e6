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
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::rc::Rc;

use super::core::Core;
use crate::events::EventType;
use crate::registry::Block;
use crate::types::{Kind, Millis};

/// When something ends, and for what: ordered by instant, then canonical key.
type Due = (Millis, Kind, Rc<str>);

#[derive(Debug, Clone, Default)]
pub struct Expiries {
    /// Live leases by expiry → token. Released or renewed leases are removed, so this holds
    /// exactly the leases in force.
    leases: BTreeMap<Due, u64>,
    /// Temporary blocks by expiry.
    blocks: BTreeSet<Due>,
    /// Half-open cooldowns: (until, cell id); when due the cell becomes a candidate again.
    /// Entries may be stale (the cell re-cooled or left); re-evaluating one is harmless.
    cooldowns: BinaryHeap<Reverse<(Millis, u32)>>,
    /// Probe-only cooling cells: (until, cell id).
    pub(crate) probe_only: BTreeSet<(Millis, u32)>,
}

impl Expiries {
    pub fn add_lease(&mut self, at: Millis, kind: Kind, value: &Rc<str>, token: u64) {
        self.leases.insert((at, kind, Rc::clone(value)), token);
    }

    pub fn remove_lease(&mut self, at: Millis, kind: Kind, value: &Rc<str>) {
        self.leases.remove(&(at, kind, Rc::clone(value)));
    }

    pub fn add_block(&mut self, at: Millis, kind: Kind, value: &Rc<str>) {
        self.blocks.insert((at, kind, Rc::clone(value)));
    }

    pub fn remove_block(&mut self, at: Millis, kind: Kind, value: &Rc<str>) {
        self.blocks.remove(&(at, kind, Rc::clone(value)));
    }

    pub fn cooldown(&mut self, until: Millis, cell: u32) {
        self.cooldowns.push(Reverse((until, cell)));
    }

    /// Takes the earliest lease or block expiry at or before `now` (blocks first on a tie):
    /// `(is_block, entry, token)`.
    fn take_due(&mut self, now: Millis) -> Option<(bool, Due, u64)> {
        let b = self.blocks.first().map(|d| d.0).filter(|&t| t <= now);
        let l = self.leases.first_key_value().map(|(d, _)| d.0).filter(|&t| t <= now);
        match (b, l) {
            (None, None) => None,
            (Some(tb), Some(tl)) if tb > tl => self.leases.pop_first().map(|(d, t)| (false, d, t)),
            (Some(_), _) => self.blocks.pop_first().map(|d| (true, d, 0)),
            (None, Some(_)) => self.leases.pop_first().map(|(d, t)| (false, d, t)),
        }
    }
}

impl Core {
    /// Applies every expiry due at or before `now`.
    pub(crate) fn process_expiries(&mut self, now: Millis) {
        while let Some((is_block, (at, kind, value), token)) = self.expiries.take_due(now) {
            let slot = self.reg.find(kind, &value).expect("expiry queues hold live resources only");
            let r = self.reg.get_mut(slot);
            let ty = if is_block {
                debug_assert_eq!(r.block, Some(Block::Until(at)));
                r.block = None;
                EventType::BlockExpired
            } else {
                debug_assert!(r.lease.as_ref().is_some_and(|l| l.token == token && l.expires_at == at));
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
