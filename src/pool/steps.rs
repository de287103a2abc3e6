//! A worker's step in one call, and the acquire a waiting host retries (SPEC §3 "Capacity,
//! waiting and finishing a step"):
//! - `finish` reports a lease's outcome on its (resource × context) cell — even when the lease
//!   has lapsed: the outcome is real — releases it for its current holder, and with `next`
//!   leases the next one, all in one call with one revision step. At most once per lease: a
//!   repeated finish is `LEASE_FINISHED` and reports nothing (`finished.rs`). A lease whose
//!   resource was deregistered meanwhile has no cell to report on: its outcome is dropped and
//!   the call goes on to `next`.
//! - `try_acquire` is `acquire` without its `ACQUISITION_REJECTED`: a host that waits for a
//!   candidate retries it each time something may have made one, and its wait emits one
//!   rejection when it ends empty (by a last, ordinary `acquire`).
//!
//! Waiting itself (queues, timers, wake-ups) is the hosts': the engine never blocks.

use std::rc::Rc;

use super::counters::{FINISHES, GRANTS};
use super::{Lease, Pool};
use crate::check;
use crate::error::{Error, Result, invalid_argument};
use crate::ids::{ContextId, ResourceId};
use crate::types::{Millis, Outcome};

/// What `finish` leases next: in `context` (default: the finished lease's), from `groups` in
/// order when given (as `acquire_in`), `quiet` when a host will wait on an empty answer (no
/// `ACQUISITION_REJECTED`, as `try_acquire`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Next<'a> {
    pub context: Option<&'a str>,
    pub groups: Option<&'a [Option<&'a str>]>,
    pub quiet: bool,
}

impl Pool {
    /// Finishes `lease`'s step: reports `outcome`, releases it, and with `next` answers the
    /// next lease (`None`: nothing granted). Errors, checked before anything changes: a bad
    /// argument, a token never issued (`INVALID_ARGUMENT`); a lease finished already
    /// (`LEASE_FINISHED`); a report that would create a cell past `maxCells`
    /// (`CAPACITY_EXCEEDED`). One exception to "a failed call changes nothing": the random draw
    /// of `next` is known to be needed only once the release is applied, so a host `random()`
    /// outside [0, 1) fails the call with the report and the release applied.
    pub fn finish(
        &mut self,
        now: f64,
        lease: &Lease,
        outcome: Outcome,
        next: Option<&Next>,
    ) -> Result<Option<Lease>> {
        let t = check::clock_reading(now)?;
        let slot = self.check_named(lease.kind, &lease.value, &lease.context)?;
        self.finish_at(t, slot, &lease.context, lease.token, outcome, next)
    }

    /// `finish` of the lease `(id, context, token)`; a stale id, or `None` (a resource the host
    /// knows is not registered any more), drops the outcome as `finish` does.
    pub fn finish_by_id(
        &mut self,
        now: f64,
        id: Option<ResourceId>,
        context: ContextId,
        token: u64,
        outcome: Outcome,
        next: Option<&Next>,
    ) -> Result<Option<Lease>> {
        let t = check::clock_reading(now)?;
        let slot = id.and_then(|id| self.core.reg.slot_of(id));
        let name = Rc::clone(self.contexts.name(context)?);
        self.finish_at(t, slot, &name, token, outcome, next)
    }

    fn finish_at(
        &mut self,
        t: Millis,
        slot: Option<u32>,
        context: &str,
        token: u64,
        outcome: Outcome,
        next: Option<&Next>,
    ) -> Result<Option<Lease>> {
        check::latency_arg(outcome.latency_ms())?;
        if token == 0 || token > self.core.fencing {
            return Err(invalid_argument(format!("lease.token {token} was never issued by this pool")));
        }
        if let Some(n) = next {
            n.context.map_or(Ok(()), check::context_arg)?;
            n.groups.map_or(Ok(()), check::groups_arg)?;
        }
        // Time as this call will apply it (the clock never goes back), read before anything
        // changes.
        let then = self.core.now.max(t);
        if self.finished.contains(token, then, self.core.cfg.lease_ttl_ms) {
            return Err(Error::LeaseFinished(format!(
                "the lease with token {token} was finished already: its outcome was reported once"
            )));
        }
        let cell = slot.map(|s| self.core.locate_cell(s, context));
        if cell == Some(None) {
            self.core.check_cell_capacity()?;
        }
        self.core.check_counters(t, FINISHES)?;
        let now = self.core.advance(t);
        let keep = self.core.cfg.lease_ttl_ms;
        self.finished.remember(token, now, keep);
        if let (Some(slot), Some(cell)) = (slot, cell) {
            self.core.report(slot, context, cell, &outcome, now);
            self.core.release_token(slot, context, token, now);
        }
        let out = match next {
            None => Ok(None),
            Some(n) => self.acquire_next(t, n.context.unwrap_or(context), n.groups, n.quiet),
        };
        self.core.finish();
        out
    }

    /// The acquire of `finish`'s `next` (time applied; the caller closes the call).
    fn acquire_next(
        &mut self,
        t: Millis,
        context: &str,
        groups: Option<&[Option<&str>]>,
        quiet: bool,
    ) -> Result<Option<Lease>> {
        let random = &mut self.random;
        let draw = || check::random_draw(random.next_f64());
        match groups {
            None => {
                let known = self.core.ctxs.find(context);
                self.core.acquire(context, known, t, quiet, draw)
            }
            Some(groups) => {
                let ids: Vec<Option<u32>> = groups.iter().map(|g| self.core.reg.groups().find(*g)).collect();
                self.core.acquire_grouped(context, &ids, t, quiet, draw)
            }
        }
    }

    /// `acquire` (with `groups`, as `acquire_in`) that emits no `ACQUISITION_REJECTED` when it
    /// grants nothing: the retry of a host's waiting acquire (see the header).
    pub fn try_acquire(
        &mut self,
        now: f64,
        context: &str,
        groups: Option<&[Option<&str>]>,
    ) -> Result<Option<Lease>> {
        let t = check::clock_reading(now)?;
        check::context_arg(context)?;
        groups.map_or(Ok(()), check::groups_arg)?;
        self.core.check_counters(t, GRANTS)?;
        let out = self.acquire_next(t, context, groups, true);
        self.core.finish();
        out
    }

    /// `try_acquire` in the context `context_id` gave (the hot path of a waiting host).
    pub fn try_acquire_by_id(&mut self, now: f64, context: ContextId) -> Result<Option<Lease>> {
        let t = check::clock_reading(now)?;
        let name = Rc::clone(self.contexts.name(context)?);
        self.core.check_counters(t, GRANTS)?;
        let out = self.acquire_next(t, &name, None, true);
        self.core.finish();
        out
    }

    /// How many finished tokens the pool remembers now (diagnostics).
    pub fn finished_kept(&self) -> usize {
        self.finished.kept()
    }
}
