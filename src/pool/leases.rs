//! Leases: `acquire` (score-weighted random choice among a context's candidates),
//! `acquireResource` (one named resource), `renew` and `release` (current holder only).
//!
//! A resource holds at most `maxLeases` live leases at once, across all contexts (1 by default:
//! an exclusive lease), and a cell due for recovery (a half-open trial, or a probe-due cell
//! leased by name) at most one in its own context. Each lease carries its own fencing token,
//! which only grows for the life of the pool. Which resources are candidates and how one is
//! found in O(log n) is `index/context.rs`; this module applies the rules around it.

use std::rc::Rc;

use super::core::Core;
use crate::error::Result;
use crate::events::EventType;
use crate::ids::ResourceId;
use crate::index::context::Picked;
use crate::index::weights::{Candidates, index_in_run};
use crate::registry::{LeaseRec, NO_CELL, same_text};
use crate::types::{Kind, Millis};

/// A lease on one resource for one context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The resource's id (`ids.rs`), as the grant gave it: a host that keeps the lease calls
    /// by it (`Pool::release_lease`, …) instead of naming the resource again. `None` in a
    /// lease a host rebuilt from its fields; calls by name (`Pool::release`, …) ignore it.
    pub id: Option<ResourceId>,
    pub kind: Kind,
    pub value: Rc<str>,
    /// The resource's group when the lease was granted or renewed.
    pub group: Option<Rc<str>>,
    pub context: Rc<str>,
    pub token: u64,
    pub leased_at: Millis,
    pub expires_at: Millis,
}

impl Core {
    /// Summarises the candidates of `context` (after bringing its index up to date).
    pub(crate) fn candidates(&mut self, context: &str) -> (Option<u32>, Candidates) {
        self.candidates_in(self.ctxs.find(context))
    }

    /// `candidates` of the context with id `ctx` (`None`: a context without cells).
    fn candidates_in(&mut self, ctx: Option<u32>) -> (Option<u32>, Candidates) {
        let floor = self.config().exploration_floor;
        self.sync_order();
        match ctx {
            Some(id) => {
                self.sync_context(id);
                let ctx = self.ctxs.get_mut(id);
                ctx.ensure();
                (Some(id), ctx.summary(floor))
            }
            None => {
                // No cells here: every available resource is a fresh candidate of score 0.
                (None, Candidates::fresh(u64::from(self.reg.available()), floor))
            }
        }
    }

    /// `acquire(context)` at the clock reading `reading`, applying time passing itself: whether
    /// the call needs a random draw (two or more candidates once the expiries due now are
    /// applied) is worked out *before* they are, and `draw` is called then, exactly once when
    /// needed; so a bad draw fails the call before anything has changed (SPEC §9). `known` is
    /// the context's id as the caller found it (`ctxs.find(context)`).
    pub(crate) fn acquire(
        &mut self,
        context: &str,
        known: Option<u32>,
        reading: Millis,
        quiet: bool,
        draw: impl FnOnce() -> Result<f64>,
    ) -> Result<Option<Lease>> {
        let now = self.time_at(reading);
        let (mut ctx, mut sum) = self.candidates_in(known);
        let due = self.expiries().maybe_due(now);
        let count = if due { self.candidates_after(ctx, sum.count, now, 2) } else { sum.count };
        let u = if count >= 2 { Some(draw()?) } else { None };
        self.advance(reading);
        if due {
            (ctx, sum) = self.candidates(context);
        }
        debug_assert_eq!(sum.count >= 2, u.is_some(), "the draw was decided on the candidate count");
        if sum.count == 0 {
            if !quiet {
                self.rejected(ctx, context, now);
            }
            return Ok(None);
        }
        let target = u.map_or(0, |u| sum.target(u));
        let (slot, cell) = match ctx {
            Some(id) => match self.ctxs.get(id).pick(&self.reg, &sum, target) {
                Picked::Cell { res, cell } => (res, cell),
                Picked::Fresh(k) => (self.reg.select(k), NO_CELL),
            },
            None => (self.reg.select(index_in_run(target, 0, sum.unit, sum.count as u32)), NO_CELL),
        };
        let name = self.context_name(ctx, context);
        Ok(Some(self.grant(slot, name, cell, now)))
    }

    /// Emits `ACQUISITION_REJECTED` for `context` (`ctx`: its id, if it has cells).
    pub(crate) fn rejected(&mut self, ctx: Option<u32>, context: &str, now: Millis) {
        let mut e = crate::events::PoolEvent::new(EventType::AcquisitionRejected, now);
        e.context = Some(self.context_name(ctx, context));
        self.emit(e);
    }

    fn context_name(&self, ctx: Option<u32>, context: &str) -> Rc<str> {
        match ctx {
            Some(id) => Rc::clone(&self.ctxs.get(id).name),
            None => Rc::from(context),
        }
    }

    /// `acquireResource`: grants when registered, available (room for a lease, not blocked),
    /// and its cell here is `HEALTHY`, `RECOVERING` or due for recovery — the last only while
    /// no lease on it is held here (one trial at a time); otherwise `None` without an event.
    pub(crate) fn acquire_resource(&mut self, slot: u32, context: &str, now: Millis) -> Option<Lease> {
        if !self.reg.get(slot).is_available() {
            return None;
        }
        let ctx = self.ctxs.find(context);
        let cell = ctx.and_then(|c| self.cells.find(slot, c));
        if cell.is_some_and(|id| {
            let c = self.cells.get(id).cell();
            !c.leasable_by_name(now)
                || self.paced_until(id, now).is_some()
                || (c.due_for_recovery(now) && self.reg.get(slot).leased_in(context, now))
        }) {
            return None;
        }
        let name = self.context_name(ctx, context);
        Some(self.grant(slot, name, cell.unwrap_or(NO_CELL), now))
    }

    pub(super) fn grant(&mut self, slot: u32, context: Rc<str>, cell: u32, now: Millis) -> Lease {
        if cell != NO_CELL {
            // The holder's report comes next and reads this cell: start that memory load now,
            // while the loads below are in flight too (on large pools both are cache misses).
            std::hint::black_box(self.cells.get(cell).cell().updated_at);
        }
        let token = self.issue_token();
        let expires_at = now + self.config().lease_ttl_ms;
        let group = self.reg.group_name(self.reg.get(slot).group()).cloned();
        let rec = LeaseRec {
            context: Rc::clone(&context),
            token,
            leased_at: now,
            expires_at,
            group: group.clone(),
            cell,
        };
        self.lease_granted(slot, rec);
        self.reg.set_hint(slot);
        let r = self.reg.get(slot);
        let lease = Lease {
            id: Some(self.reg.id_of(slot)),
            kind: r.kind,
            value: Rc::clone(&r.value),
            group,
            context,
            token,
            leased_at: now,
            expires_at,
        };
        self.sync_avail(slot);
        self.trial_lease_changed(cell, now);
        let mut e = self.resource_event(EventType::ResourceLeased, now, slot);
        e.context = Some(Rc::clone(&lease.context));
        e.token = Some(token);
        e.until = Some(expires_at);
        self.emit(e);
        lease
    }

    /// A lease on `cell` (`NO_CELL`: none) began or ended: while the cell is due for recovery,
    /// whether it is a candidate depends on the leases held in its context (one trial at a
    /// time), so its index entry is re-derived. Other cells are untouched (and cost one load).
    #[inline]
    pub(crate) fn trial_lease_changed(&mut self, cell: u32, now: Millis) {
        if cell != NO_CELL && self.cells.get(cell).cell().state == crate::types::State::Cooling {
            self.refresh_cell(cell, now);
        }
    }

    /// The slot holding exactly `lease` as one of its live leases, in force at `now`.
    fn holder(&self, lease: &Lease, now: Millis) -> Option<u32> {
        let slot = self.reg.find(lease.kind, &lease.value)?;
        self.holds(slot, lease, now).then_some(slot)
    }

    /// Whether `slot` holds exactly `lease` (its token, in its context), in force at `now`.
    pub(crate) fn holds(&self, slot: u32, lease: &Lease, now: Millis) -> bool {
        let rec = self.reg.get(slot).lease_by_token(lease.token);
        rec.is_some_and(|rec| same_text(&rec.context, &lease.context) && now < rec.expires_at)
    }

    /// `renew`: extends to `now + leaseTtlMs` for the current holder of a non-blocked resource.
    pub(crate) fn renew(&mut self, lease: &Lease, now: Millis) -> Option<Lease> {
        let slot = self.holder(lease, now)?;
        self.renew_on(slot, lease, now)
    }

    /// `renew` of `lease` on `slot`, which holds it (`holds`); `None` when the resource is
    /// blocked.
    pub(crate) fn renew_on(&mut self, slot: u32, lease: &Lease, now: Millis) -> Option<Lease> {
        let ttl = self.config().lease_ttl_ms;
        if self.reg.get(slot).block().is_some() {
            return None;
        }
        let group = self.reg.group_name(self.reg.get(slot).group()).cloned();
        let (old, leased_at) = self.lease_renewed(slot, lease.token, now + ttl, group.clone())?;
        let renewed = Lease {
            id: Some(self.reg.id_of(slot)),
            expires_at: now + ttl,
            leased_at,
            group,
            ..lease.clone()
        };
        // A renewal that moves the lease's end changes when the resource may next be free.
        if old != renewed.expires_at {
            self.next_change_touched(slot, None);
        }
        Some(renewed)
    }

    /// `release`: ends the lease for its current holder (also while blocked).
    pub(crate) fn release(&mut self, lease: &Lease, now: Millis) -> bool {
        match self.reg.find(lease.kind, &lease.value) {
            Some(slot) => self.release_token(slot, &lease.context, lease.token, now),
            None => false,
        }
    }

    /// Ends the lease `token` on `slot`, held in `context`, when it is in force at `now`.
    pub(crate) fn release_token(&mut self, slot: u32, context: &str, token: u64, now: Millis) -> bool {
        let held = |rec: &LeaseRec| same_text(&rec.context, context) && now < rec.expires_at;
        let Some(rec) = self.lease_released_if(slot, token, held) else {
            return false;
        };
        self.sync_avail(slot);
        self.trial_lease_changed(rec.cell, now);
        let mut e = self.resource_event(EventType::LeaseReleased, now, slot);
        e.context = Some(rec.context);
        e.token = Some(token);
        self.emit(e);
        true
    }
}
