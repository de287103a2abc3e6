//! `Pool`'s lease calls (SPEC §9): `acquire` and its variants, `report`, `renew`, `release`
//! and `finish`, each by name and by a grant's id and token. Each checks its arguments, then
//! runs the rule (`pool/leases.rs`, `reports.rs`, `steps.rs`) through `Pool::apply` or an
//! acquire's own counter check, draw and close (`pool/mod.rs`).

use std::rc::Rc;

use crate::check;
use crate::error::Result;
use crate::ids::ResourceId;
use crate::pool::counters::{CHANGES, GRANTS, READS};
use crate::pool::{Lease, Next, Pool, unknown};
use crate::registry::same_text;
use crate::types::{Kind, Millis, Outcome};

impl Pool {
    /// The lease with fencing token `token` on the resource `id` names, with that resource's
    /// slot, as the grant made it (its context from the lease's own record); `None` once the
    /// resource was deregistered or the lease ended (released, finished, expired).
    fn held(&self, id: ResourceId, token: u64) -> Option<(u32, Lease)> {
        let slot = self.core.reg.slot_of(id)?;
        let r = self.core.reg.get(slot);
        let rec = r.lease_by_token(token)?;
        let lease = Lease {
            id: Some(id),
            kind: r.kind,
            value: Rc::clone(&r.value),
            group: None,
            context: Rc::clone(&rec.context),
            token,
            leased_at: rec.leased_at,
            expires_at: rec.expires_at,
        };
        Some((slot, lease))
    }

    /// The slot and context of the lease with fencing token `token` on the resource `id` names
    /// (what a report or release by the lease needs of `held`, without building a `Lease`).
    fn held_in(&self, id: ResourceId, token: u64) -> Option<(u32, Rc<str>)> {
        let slot = self.core.reg.slot_of(id)?;
        let rec = self.core.reg.get(slot).lease_by_token(token)?;
        Some((slot, Rc::clone(&rec.context)))
    }

    /// Checks a call's value and context as arguments, except what the pool already holds: a
    /// registered resource's value (checked when it was registered or restored) and the context
    /// of that resource's lease (checked when it was acquired). Reports and releases name
    /// exactly those, and the check reads every byte. The resource's slot when registered.
    #[inline(always)]
    fn check_named(&self, kind: Kind, value: &str, context: &str) -> Result<Option<u32>> {
        let slot = self.core.reg.find(kind, value);
        match slot {
            Some(s)
                if self.core.reg.get(s).newest_lease().is_some_and(|l| same_text(&l.context, context)) =>
            {
                Ok(slot)
            }
            _ => Self::check_args(slot.is_none().then_some(value), context).map(|()| slot),
        }
    }

    /// The checks `check_named` could not spare (out of line: the common call skips them).
    #[inline(never)]
    fn check_args(value: Option<&str>, context: &str) -> Result<()> {
        if let Some(v) = value {
            check::value_arg(v)?;
        }
        check::context_arg(context)
    }

    /// Leases a candidate of `context`, or `None` (and an `ACQUISITION_REJECTED` event).
    pub fn acquire(&mut self, now: f64, context: &str) -> Result<Option<Lease>> {
        let t = check::clock_reading(now)?;
        // A context the pool holds was checked when it came in: only a new name is read through.
        let known = self.core.ctxs.find(context);
        if known.is_none() {
            check::context_arg(context)?;
        }
        self.acquire_at(t, context, known)
    }

    fn acquire_at(&mut self, t: Millis, context: &str, known: Option<u32>) -> Result<Option<Lease>> {
        self.core.check_counters(t, GRANTS)?;
        let random = &mut self.random;
        let out = self.core.acquire(context, known, t, false, || check::random_draw(random.next()));
        self.core.close_call();
        out
    }

    /// Leases a candidate of `context` from the first usable group of `groups`, in order
    /// (`None` in the list: the resources without a group), or `None` (and an
    /// `ACQUISITION_REJECTED` event). SPEC §3, groups.
    pub fn acquire_in(&mut self, now: f64, context: &str, groups: &[Option<&str>]) -> Result<Option<Lease>> {
        let t = check::clock_reading(now)?;
        check::context_arg(context)?;
        check::groups_arg(groups)?;
        self.core.check_counters(t, GRANTS)?;
        let ids: Vec<Option<u32>> = groups.iter().map(|g| self.core.reg.groups().find(*g)).collect();
        let random = &mut self.random;
        let out = self.core.acquire_grouped(context, &ids, t, false, || check::random_draw(random.next()));
        self.core.close_call();
        out
    }

    /// Leases one named resource if it is free and its cell here is not inside a cooldown.
    pub fn acquire_resource(
        &mut self,
        now: f64,
        kind: Kind,
        value: &str,
        context: &str,
    ) -> Result<Option<Lease>> {
        let t = check::clock_reading(now)?;
        check::value_arg(value)?;
        check::context_arg(context)?;
        let slot = self.find(kind, value)?;
        self.apply(t, GRANTS, |c, now| c.acquire_resource(slot, context, now))
    }

    /// Records an outcome of using `(kind, value)` in `context`.
    pub fn report(
        &mut self,
        now: f64,
        kind: Kind,
        value: &str,
        context: &str,
        outcome: Outcome,
    ) -> Result<()> {
        let t = check::clock_reading(now)?;
        let slot = self.check_named(kind, value, context)?;
        check::latency_arg(outcome.latency_ms())?;
        let slot = slot.ok_or_else(|| unknown(kind, value))?;
        self.report_at(t, slot, context, outcome)
    }

    /// `report` on the resource and in the context of the lease with `token` on the resource
    /// `id` names — a lease's grant, for a host that holds it: no name is looked up or checked
    /// again. `false`, with nothing done, when that lease has ended or its resource was
    /// deregistered (the host then reports by name: `report`).
    pub fn report_lease(&mut self, now: f64, id: ResourceId, token: u64, outcome: Outcome) -> Result<bool> {
        let t = check::clock_reading(now)?;
        check::latency_arg(outcome.latency_ms())?;
        let Some((slot, context)) = self.held_in(id, token) else {
            return Ok(false);
        };
        self.report_at(t, slot, &context, outcome).map(|()| true)
    }

    fn report_at(&mut self, t: Millis, slot: u32, context: &str, outcome: Outcome) -> Result<()> {
        let cell = self.core.locate_cell(slot, context);
        if cell.is_none() {
            self.core.check_cell_capacity()?;
        }
        self.apply(t, CHANGES, |c, now| c.report(slot, context, cell, &outcome, now))
    }

    /// Extends the lease for its current holder; `None` when lapsed, not the holder, or blocked.
    pub fn renew(&mut self, now: f64, lease: &Lease) -> Result<Option<Lease>> {
        let t = check::clock_reading(now)?;
        self.check_named(lease.kind, &lease.value, &lease.context)?;
        self.apply(t, READS, |c, now| c.renew(lease, now))
    }

    /// `renew` of the lease with `token` on the resource `id` names (its grant: `Lease::id`,
    /// `Lease::token`). `None` when it is not held any more — also when its resource was
    /// deregistered: nothing to renew, and the call's clock reading counts like any other
    /// (SPEC §5: `now = max(now, lastNow)`).
    pub fn renew_lease(&mut self, now: f64, id: ResourceId, token: u64) -> Result<Option<Lease>> {
        let t = check::clock_reading(now)?;
        let Some((slot, lease)) = self.held(id, token) else {
            return self.apply(t, READS, |_, _| None);
        };
        self.apply(
            t,
            READS,
            |c, now| if c.holds(slot, &lease, now) { c.renew_on(slot, &lease, now) } else { None },
        )
    }

    /// Ends the lease for its current holder; `false` otherwise.
    pub fn release(&mut self, now: f64, lease: &Lease) -> Result<bool> {
        let t = check::clock_reading(now)?;
        self.check_named(lease.kind, &lease.value, &lease.context)?;
        self.apply(t, CHANGES, |c, now| c.release(lease, now))
    }

    /// `release` of the lease with `token` on the resource `id` names (as `renew_lease`);
    /// `false` when it is not held any more, the clock reading counted.
    pub fn release_lease(&mut self, now: f64, id: ResourceId, token: u64) -> Result<bool> {
        let t = check::clock_reading(now)?;
        let Some((slot, context)) = self.held_in(id, token) else {
            return self.apply(t, READS, |_, _| false);
        };
        self.apply(t, CHANGES, |c, now| c.release_token(slot, &context, token, now))
    }

    /// Finishes `lease`'s step (SPEC §3, finishing a step; `steps.rs`): reports `outcome`,
    /// releases it, and with `next` answers the next lease (`None`: nothing granted). Errors,
    /// checked before anything changes: a bad argument, a token never issued
    /// (`INVALID_ARGUMENT`); a lease finished already (`LEASE_FINISHED`); a report that would
    /// create a cell past `maxCells` (`CAPACITY_EXCEEDED`). One exception to "a failed call
    /// changes nothing": the random draw of `next` is known to be needed only once the release
    /// is applied, so a host `random()` outside [0, 1) fails the call with the report and the
    /// release applied.
    pub fn finish(
        &mut self,
        now: f64,
        lease: &Lease,
        outcome: Outcome,
        next: Option<&Next>,
    ) -> Result<Option<Lease>> {
        let t = check::clock_reading(now)?;
        let slot = self.check_named(lease.kind, &lease.value, &lease.context)?;
        self.finish_at(t, slot, &lease.context, lease.token, &outcome, next)
    }

    /// `finish` of the lease with `token` on the resource `id` names (as `report_lease`):
    /// `None`, with nothing done, when that lease is not held any more — its outcome still
    /// belongs on its cell (or is refused as a second finish), which the host then reaches by
    /// name (`finish`).
    pub fn finish_lease(
        &mut self,
        now: f64,
        id: ResourceId,
        token: u64,
        outcome: Outcome,
        next: Option<&Next>,
    ) -> Result<Option<Option<Lease>>> {
        let t = check::clock_reading(now)?;
        let Some((slot, lease)) = self.held(id, token) else {
            return Ok(None);
        };
        self.finish_at(t, Some(slot), &lease.context, token, &outcome, next).map(Some)
    }

    fn finish_at(
        &mut self,
        t: Millis,
        slot: Option<u32>,
        context: &str,
        token: u64,
        outcome: &Outcome,
        next: Option<&Next>,
    ) -> Result<Option<Lease>> {
        let random = &mut self.random;
        let draw = || check::random_draw(random.next());
        let out = self.core.finish_step(t, slot, context, token, outcome, next, draw);
        self.core.close_call();
        out
    }

    /// `acquire` (with `groups`, as `acquire_in`) that emits no `ACQUISITION_REJECTED` when it
    /// grants nothing: the retry of a host's waiting acquire (`steps.rs`).
    pub fn try_acquire(
        &mut self,
        now: f64,
        context: &str,
        groups: Option<&[Option<&str>]>,
    ) -> Result<Option<Lease>> {
        let t = check::clock_reading(now)?;
        check::context_arg(context)?;
        groups.map_or(Ok(()), check::groups_arg)?;
        self.quiet_acquire_at(t, context, groups)
    }

    fn quiet_acquire_at(
        &mut self,
        t: Millis,
        context: &str,
        groups: Option<&[Option<&str>]>,
    ) -> Result<Option<Lease>> {
        self.core.check_counters(t, GRANTS)?;
        let random = &mut self.random;
        let out = self.core.acquire_next(t, context, groups, true, || check::random_draw(random.next()));
        self.core.close_call();
        out
    }
}
