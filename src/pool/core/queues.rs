//! `Core`'s expiry queues (`expiries.rs`) kept in step with what they queue: a lease's end
//! with the registry's lease record (granted, renewed, released, dropped; a stale entry
//! counted and compacted away), a temporary block's end, pacing ends, and a cell's cooldown
//! with its context's cooling count (`cooled`, `cooldowns_ended`, `cooldown_dropped`). Time
//! passing drains them here (`expire`); what an expiry means is `expiry.rs`'s. The queues are
//! a private field of `Core`: every change to them is one of these methods.

use std::rc::Rc;

use super::Core;
use crate::pool::expiries::Expiries;
use crate::registry::blocklist::Block;
use crate::registry::{LeaseRec, Registry};
use crate::types::Millis;

impl Core {
    /// Applies every expiry due at or before `now`, in time order: at each instant the
    /// blocks, then the leases queued to end then (`expiry.rs`, which applies the rules; a
    /// queued lease that ended early is dropped here as stale), then the half-open cooldowns
    /// and pacing ends (their cells re-evaluated) and the running cooldowns due.
    #[inline(never)]
    pub(super) fn expire(&mut self, now: Millis) {
        while let Some(at) = self.expiries.next_due(now, self.reg.blocks().next_end()) {
            let mut leases = self.expiries.take_leases_ending_at(at);
            let Core { expiries, reg, .. } = self;
            leases.retain(|&(slot, token)| {
                let live = lease_is(reg, slot, token, at);
                if !live {
                    expiries.stale_taken();
                }
                live
            });
            self.end_leases_and_blocks(at, leases);
        }
        while let Some(id) = self.expiries.pop_cooldown_due(now) {
            if self.cells.is_live(id) {
                self.refresh_cell(id, now);
            }
        }
        while let Some(id) = self.expiries.pop_paced_due(now) {
            if self.cells.is_live(id) {
                self.refresh_cell(id, now);
            }
        }
        self.cooldowns_ended(now);
        self.expiries.processed(self.reg.blocks().next_end());
    }

    /// The expiry queues, to read (what is due, and when).
    #[inline]
    pub(crate) fn expiries(&self) -> &Expiries {
        &self.expiries
    }

    /// Lease `rec` is granted on `slot`: the registry holds it, its end is queued.
    #[inline]
    pub(crate) fn lease_granted(&mut self, slot: u32, rec: LeaseRec) {
        self.expiries.add_lease(rec.expires_at, slot, rec.token);
        self.reg.add_lease(slot, rec);
    }

    /// `slot`'s lease `token` is renewed to end at `expires_at` (the resource's group now
    /// `group`); a renewal that lands on the same end keeps its queue entry, one that moves it
    /// ends the old entry and queues the new one. The old end and when the lease was granted,
    /// or `None` when the resource holds no such lease.
    #[inline]
    pub(crate) fn lease_renewed(
        &mut self,
        slot: u32,
        token: u64,
        expires_at: Millis,
        group: Option<Rc<str>>,
    ) -> Option<(Millis, Millis)> {
        let (old, leased_at) = self.reg.extend_lease(slot, token, expires_at, group)?;
        if old != expires_at {
            self.lease_ended(old, slot, token);
            self.expiries.add_lease(expires_at, slot, token);
        }
        Some((old, leased_at))
    }

    /// `slot`'s lease `token` is released, when `held` says so of it: the registry lets it go
    /// and its queued end is stale. Returns it.
    #[inline]
    pub(crate) fn lease_released_if(
        &mut self,
        slot: u32,
        token: u64,
        held: impl FnOnce(&LeaseRec) -> bool,
    ) -> Option<LeaseRec> {
        let rec = self.reg.take_lease_if(slot, token, held)?;
        self.lease_ended(rec.expires_at, slot, rec.token);
        Some(rec)
    }

    /// `slot` is leaving (deregistered): its leases and block go with their queue entries.
    #[inline]
    pub(crate) fn leases_and_block_dropped(&mut self, slot: u32) {
        let leases = self.reg.take_leases(slot);
        self.reg.set_block(slot, None);
        for rec in leases {
            self.lease_ended(rec.expires_at, slot, rec.token);
        }
    }

    /// The queued lease `(at, slot, token)` ended early: the queue drops the entry or counts
    /// it stale, and is compacted when it is mostly stale.
    fn lease_ended(&mut self, at: Millis, slot: u32, token: u64) {
        self.expiries.lease_ended(at, slot, token);
        if self.expiries.wants_compaction() {
            let Core { expiries, reg, .. } = self;
            expiries.compact_leases(|at, slot, token| lease_is(reg, slot, token, at));
        }
    }

    /// `slot` is blocked by `block`, replacing any block it had (returned): a temporary
    /// block's end comes due then.
    #[inline]
    pub(crate) fn blocked(&mut self, slot: u32, block: Block) -> Option<Block> {
        let old = self.reg.set_block(slot, Some(block));
        if let Block::Until(until) = block {
            self.expiries.note_due(until);
        }
        old
    }

    /// Cell `id` is paced until `end`: it is re-evaluated then.
    #[inline]
    pub(crate) fn paced(&mut self, id: u32, end: Millis) {
        self.expiries.pace(end, id);
    }

    /// Files cell `id`'s cooldown in the right queue after a report, a restore or a new
    /// `halfOpenCauses` (`before`: the end it was filed under, if any): a half-open cause's
    /// end in the cooldown queue, any other cause's cell among the probe-only ones.
    pub fn track_cooldown(&mut self, id: u32, before: Option<Millis>, now: Millis) {
        if let Some(old) = before {
            self.expiries.remove_probe_only(old, id);
        }
        let c = self.cells.get(id).cell();
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
            self.expiries.add_probe_only(until, id);
        }
    }

    /// Cell `id` of context `ctx` began a cooldown running `until` (a report, or a restore of
    /// one still running): the cooling cap counts it until the cooldown ends.
    #[inline]
    pub fn cooled(&mut self, ctx: u32, id: u32, until: Millis) {
        self.expiries.cooling_started(until, id);
        self.ctxs.get_mut(ctx).cooled();
    }

    /// Time has reached `now`: the cooldowns that ran until then have ended.
    #[inline]
    pub fn cooldowns_ended(&mut self, now: Millis) {
        while let Some(id) = self.expiries.pop_cooling_ended(now) {
            let ctx = self.cells.get(id).ctx;
            self.ctxs.get_mut(ctx).cooldown_ended();
        }
    }

    /// Cell `id` of context `ctx`, cooling `until`, went (its resource was deregistered): it
    /// is no probe-only cell any more, and a cooldown still running no longer counts.
    #[inline]
    pub fn cooldown_dropped(&mut self, ctx: u32, id: u32, until: Millis) {
        self.expiries.remove_probe_only(until, id);
        if self.expiries.cooling_removed(until, id) {
            self.ctxs.get_mut(ctx).cooldown_ended();
        }
    }
}

/// Is `token`, expiring `at`, still a lease on `slot`?
fn lease_is(reg: &Registry, slot: u32, token: u64, at: Millis) -> bool {
    let live = reg.try_get(slot).and_then(|r| r.lease_by_token(token));
    live.is_some_and(|l| l.expires_at == at)
}
