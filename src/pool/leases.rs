//! Leases: `acquire` (score-weighted random choice among a context's candidates),
//! `acquireResource` (one named resource), `renew` and `release` (current holder only).
//!
//! A lease is exclusive across all contexts and carries a fencing token that only grows for the
//! life of the pool. Which resources are candidates and how one is found in O(log n) is
//! `index/cells.rs`; this module applies the rules around it.

use std::rc::Rc;

use super::core::Core;
use crate::error::Result;
use crate::events::EventType;
use crate::index::cells::{Candidates, Picked, index_in_run};
use crate::registry::LeaseRec;
use crate::types::{Kind, Millis};

/// A lease on one resource for one context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub kind: Kind,
    pub value: Rc<str>,
    pub context: Rc<str>,
    pub token: u64,
    pub leased_at: Millis,
    pub expires_at: Millis,
}

impl Core {
    /// Summarises the candidates of `context` (after bringing its index up to date).
    pub(crate) fn candidates(&mut self, context: &str) -> (Option<u32>, Candidates) {
        let floor = self.cfg.exploration_floor;
        match self.ctxs.find(context) {
            Some(id) => {
                self.sync_context(id);
                (Some(id), self.ctxs.get(id).summary(floor))
            }
            None => {
                // No cells here: every available resource is a fresh candidate of score 0.
                (None, Candidates::fresh(u64::from(self.reg.available()), floor))
            }
        }
    }

    /// `acquire(context)`. `draw` is called exactly once when there are two or more candidates.
    pub(crate) fn acquire(
        &mut self,
        context: &str,
        now: Millis,
        draw: impl FnOnce() -> Result<f64>,
    ) -> Result<Option<Lease>> {
        let (ctx, sum) = self.candidates(context);
        if sum.count == 0 {
            let mut e = crate::events::PoolEvent::new(EventType::AcquisitionRejected, now);
            e.context = Some(self.context_name(ctx, context));
            self.emit(e);
            return Ok(None);
        }
        let target = if sum.count == 1 { 0 } else { sum.target(draw()?) };
        let picked = match ctx {
            Some(id) => self.ctxs.get(id).pick(&self.reg, &sum, target),
            None => Picked::Fresh(index_in_run(target, 0, sum.unit, sum.count as u32)),
        };
        let slot = match picked {
            Picked::Cell(slot) => slot,
            Picked::Fresh(k) => self.reg.select(k),
        };
        let name = self.context_name(ctx, context);
        Ok(Some(self.grant(slot, name, now)))
    }

    fn context_name(&self, ctx: Option<u32>, context: &str) -> Rc<str> {
        match ctx {
            Some(id) => Rc::clone(&self.ctxs.get(id).name),
            None => Rc::from(context),
        }
    }

    /// `acquireResource`: grants when registered, available, and its cell here is `HEALTHY`,
    /// `RECOVERING` or due for recovery; otherwise `None` without an event.
    pub(crate) fn acquire_resource(&mut self, slot: u32, context: &str, now: Millis) -> Option<Lease> {
        if !self.reg.get(slot).is_available() {
            return None;
        }
        let ctx = self.ctxs.find(context);
        let cell_ok = ctx
            .and_then(|c| self.cells.find(slot, c))
            .is_none_or(|id| self.cells.get(id).cell.leasable_by_name(now));
        if !cell_ok {
            return None;
        }
        let name = self.context_name(ctx, context);
        Some(self.grant(slot, name, now))
    }

    fn grant(&mut self, slot: u32, context: Rc<str>, now: Millis) -> Lease {
        self.fencing += 1;
        let token = self.fencing;
        let expires_at = now + self.cfg.lease_ttl_ms;
        let r = self.reg.get_mut(slot);
        r.lease = Some(LeaseRec { context: Rc::clone(&context), token, leased_at: now, expires_at });
        let lease =
            Lease { kind: r.kind, value: Rc::clone(&r.value), context, token, leased_at: now, expires_at };
        self.expiries.add_lease(expires_at, lease.kind, &lease.value, token);
        self.sync_avail(slot);
        let mut e = self.resource_event(EventType::ResourceLeased, now, slot);
        e.context = Some(Rc::clone(&lease.context));
        e.token = Some(token);
        e.until = Some(expires_at);
        self.emit(e);
        lease
    }

    /// The slot whose current lease is exactly `lease` and still in force at `now`.
    fn holder(&self, lease: &Lease, now: Millis) -> Option<u32> {
        let slot = self.reg.find(lease.kind, &lease.value)?;
        let rec = self.reg.get(slot).lease.as_ref()?;
        (rec.token == lease.token && *rec.context == *lease.context && now < rec.expires_at).then_some(slot)
    }

    /// `renew`: extends to `now + leaseTtlMs` for the current holder of a non-blocked resource.
    pub(crate) fn renew(&mut self, lease: &Lease, now: Millis) -> Option<Lease> {
        let slot = self.holder(lease, now)?;
        let ttl = self.cfg.lease_ttl_ms;
        let r = self.reg.get_mut(slot);
        if r.block.is_some() {
            return None;
        }
        let (kind, value) = (r.kind, Rc::clone(&r.value));
        let rec = r.lease.as_mut()?;
        let old = rec.expires_at;
        rec.expires_at = now + ttl;
        let renewed = Lease { expires_at: rec.expires_at, leased_at: rec.leased_at, ..lease.clone() };
        self.expiries.remove_lease(old, kind, &value);
        self.expiries.add_lease(renewed.expires_at, kind, &value, renewed.token);
        Some(renewed)
    }

    /// `release`: ends the lease for its current holder (also while blocked).
    pub(crate) fn release(&mut self, lease: &Lease, now: Millis) -> bool {
        let Some(slot) = self.holder(lease, now) else {
            return false;
        };
        let r = self.reg.get_mut(slot);
        let (kind, value) = (r.kind, Rc::clone(&r.value));
        if let Some(rec) = r.lease.take() {
            self.expiries.remove_lease(rec.expires_at, kind, &value);
        }
        self.sync_avail(slot);
        let mut e = self.resource_event(EventType::LeaseReleased, now, slot);
        e.context = Some(Rc::clone(&lease.context));
        e.token = Some(lease.token);
        self.emit(e);
        true
    }
}
