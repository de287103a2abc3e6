//! A worker's step in one call, and the acquire a waiting host retries (SPEC §3 "Capacity,
//! waiting and finishing a step"):
//! - `finish` reports a lease's outcome on its (resource × context) cell — even when the lease
//!   has lapsed: the outcome is real — releases it for its current holder, and with `next`
//!   leases the next one, all in one call with one revision step. At most once per lease: a
//!   repeated finish is `LEASE_FINISHED` and reports nothing (`finished.rs`). A lease whose
//!   resource was deregistered meanwhile has no cell to report on — also when the same key was
//!   registered again since (its token is not above the new registration's `since`): its
//!   outcome is dropped and the call goes on to `next`.
//! - A quiet acquire (`Pool::try_acquire`) is `acquire` without its `ACQUISITION_REJECTED`: a
//!   host that waits for a candidate retries it each time something may have made one, and its
//!   wait emits one rejection when it ends empty (by a last, ordinary `acquire`).
//!
//! Waiting itself (queues, timers, wake-ups) is the hosts': the engine never blocks. The public
//! calls are `Pool`'s (`api/leases.rs`); this module applies the rules on `Core`.

use super::core::Core;
use super::counters::FINISHES;
use super::leases::Lease;
use crate::check;
use crate::error::{Error, Result, invalid_argument};
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

impl Core {
    /// `finish` at the clock reading `t` of the lease `token` held in `context` on `slot`
    /// (`None`: its resource is not registered any more); `draw` is the host's random draw for
    /// `next`. Checks everything it can before anything changes; the caller closes the call.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn finish_step(
        &mut self,
        t: Millis,
        slot: Option<u32>,
        context: &str,
        token: u64,
        outcome: &Outcome,
        next: Option<&Next>,
        draw: impl FnOnce() -> Result<f64>,
    ) -> Result<Option<Lease>> {
        check::latency_arg(outcome.latency_ms())?;
        if token == 0 || token > self.fencing() {
            return Err(invalid_argument(format!("lease.token {token} was never issued by this pool")));
        }
        if let Some(n) = next {
            n.context.map_or(Ok(()), check::context_arg)?;
            n.groups.map_or(Ok(()), check::groups_arg)?;
        }
        // Time as this call will apply it (the clock never goes back), read before anything
        // changes.
        if self.was_finished(token, self.time_at(t)) {
            return Err(Error::LeaseFinished(format!(
                "the lease with token {token} was finished already: its outcome was reported once"
            )));
        }
        // A lease granted to an earlier registration of the same key reports on nothing.
        let slot = slot.filter(|&s| self.reg.get(s).may_hold(token));
        let cell = slot.map(|s| self.locate_cell(s, context));
        if cell == Some(None) {
            self.check_cell_capacity()?;
        }
        self.check_counters(t, FINISHES)?;
        let now = self.advance(t);
        self.lease_finished(token, now);
        if let (Some(slot), Some(cell)) = (slot, cell) {
            self.report(slot, context, cell, outcome, now);
            self.release_token(slot, context, token, now);
        }
        match next {
            None => Ok(None),
            Some(n) => self.acquire_next(t, n.context.unwrap_or(context), n.groups, n.quiet, draw),
        }
    }

    /// An acquire in `context` (from `groups` in order, when given; `quiet`: no rejection
    /// event) at the clock reading `t`; the caller has checked the arguments and the counters.
    pub(crate) fn acquire_next(
        &mut self,
        t: Millis,
        context: &str,
        groups: Option<&[Option<&str>]>,
        quiet: bool,
        draw: impl FnOnce() -> Result<f64>,
    ) -> Result<Option<Lease>> {
        match groups {
            None => {
                let known = self.ctxs.find(context);
                self.acquire(context, known, t, quiet, draw)
            }
            Some(groups) => {
                let ids: Vec<Option<u32>> = groups.iter().map(|g| self.reg.groups().find(*g)).collect();
                self.acquire_grouped(context, &ids, t, quiet, draw)
            }
        }
    }
}
