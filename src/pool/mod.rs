//! The public `Pool`: the Rust mirror of the JS contract (SPEC §9).
//!
//! Every call that reads time takes the host clock's reading as its first argument, `now`
//! (milliseconds since the Unix epoch, fractions floored; anything but a finite number in
//! [0, 2^52] is `INVALID_ARGUMENT`; a reading earlier than one already applied counts as that
//! one: time never runs backwards). The engine reads no clock of its own. Each call validates
//! `now` and its arguments and checks that it can succeed *before* anything changes, then
//! applies time passing (expiries) and its own effect, and counts one revision step if
//! durable content changed. A failed call
//! changes nothing — `acquire` included: it works out whether it needs a random draw (two or
//! more candidates once the expiries due now are applied) before applying them, and draws
//! then, so a host random source returning a value outside [0, 1) fails a call that changed
//! nothing. The only randomness is one draw per `acquire` with two or more candidates. A call
//! that could take `revision`, `fencingHighWater` or `nextEventSeq` past 2^53 − 1 fails
//! before anything changes too (`counters.rs`).

mod admin;
mod core;
mod counters;
mod durable;
mod expiries;
mod expiry;
mod finished;
mod floor;
mod from_parts;
mod groups;
mod invariants;
mod kept_answers;
mod leases;
mod next_change;
mod reconfigure;
mod reports;
mod snapshot;
mod steps;
mod views;

pub use self::core::Core;
use counters::{CHANGES, GRANTS, Moves, READS, REGISTERS};
pub use floor::Floor;
pub use leases::Lease;
pub use snapshot::PartsRestore;
use std::rc::Rc;
pub use steps::Next;
pub use views::{CellView, Filter, ProbeDue, ResourceDetail, ResourceView, Stats};

use crate::check;
use crate::config::{Config, ConfigPatch};
use crate::error::{Error, Result, invalid_argument};
use crate::events::PoolEvent;
use crate::ids::ResourceId;
use crate::randomness::Randomness;
use crate::redact::redact;
use crate::registry::blocklist::Block;
use crate::registry::same_text;
use crate::types::{Kind, Millis, Outcome};

/// How long a block lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BlockSpec {
    /// Expires by itself after this many seconds (fractional allowed; at least 1 ms).
    Seconds(f64),
    /// Ends only with `unblock`.
    Permanent,
}

/// What `register_with` sets (`None`: as it is for a known resource; the default for a new one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Registration<'a> {
    /// The group (`Some(None)`: none). SPEC §3, groups.
    pub group: Option<Option<&'a str>>,
    /// How many leases the resource may hold at once, 1–1,024 (default 1). SPEC §3, capacity.
    pub max_leases: Option<u32>,
}

/// A reputation pool with its host random source (the clock's readings come with each call).
pub struct Pool {
    core: Core,
    random: Randomness,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("stats", &self.core.stats()).finish_non_exhaustive()
    }
}

fn unknown(kind: Kind, value: &str) -> Error {
    Error::UnknownResource(format!("{kind}/{} is not registered", redact(kind, value)))
}

#[inline(never)]
fn stale(id: ResourceId) -> Error {
    Error::UnknownResource(format!(
        "resource id {} names no registered resource",
        crate::json::float_text(id.to_f64())
    ))
}

impl Pool {
    /// A new, empty pool drawing from `random`: any `rand` generator (`impl rand::Rng`), or
    /// [`Randomness`]. A config with a field out of range is `INVALID_CONFIG`.
    pub fn new(config: Config, random: impl Into<Randomness>) -> Result<Pool> {
        config.validate()?;
        Ok(Pool { core: Core::new(config, 0), random: random.into() })
    }

    /// A new pool drawing from the seeded generator (`Randomness::seeded`: deterministic).
    pub fn with_seed(config: Config, seed: u64) -> Result<Pool> {
        Pool::new(config, Randomness::seeded(seed))
    }

    /// Restores a snapshot; `overrides` replaces fields of the snapshot's config. On any error
    /// nothing is built and the error names the JSON path of the problem. Reads no clock: the
    /// restored pool's time is the snapshot's `takenAt` until a call brings a later reading.
    pub fn restore(
        json: &str,
        overrides: Option<&ConfigPatch>,
        random: impl Into<Randomness>,
    ) -> Result<Pool> {
        Pool::restore_above(json, overrides, &Floor::default(), random)
    }

    /// `restore`, with the counters raised to at least `floor`'s (`floor.rs`).
    pub fn restore_above(
        json: &str,
        overrides: Option<&ConfigPatch>,
        floor: &Floor,
        random: impl Into<Randomness>,
    ) -> Result<Pool> {
        let mut core = snapshot::restore(json, overrides)?;
        core.raise_to(floor);
        Ok(Pool { core, random: random.into() })
    }

    fn find(&self, kind: Kind, value: &str) -> Result<u32> {
        self.core.reg.find(kind, value).ok_or_else(|| unknown(kind, value))
    }

    /// The slot `id` names, or `UNKNOWN_RESOURCE` when its resource was deregistered.
    fn slot_of(&self, id: ResourceId) -> Result<u32> {
        self.core.reg.slot_of(id).ok_or_else(|| stale(id))
    }

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

    /// Runs `body`, which moves the counters at most `m`, after applying the clock reading
    /// `t`, and closes the call; fails first if a counter could pass 2^53 − 1.
    fn apply<T>(&mut self, t: Millis, m: Moves, body: impl FnOnce(&mut Core, Millis) -> T) -> Result<T> {
        self.core.check_counters(t, m)?;
        let now = self.core.advance(t);
        let out = body(&mut self.core, now);
        self.core.close_call();
        Ok(out)
    }

    /// Like `apply` for calls that only read: time passing (and its revision step) is applied
    /// first, so what they return already shows it.
    fn read<T>(&mut self, t: Millis, body: impl FnOnce(&mut Core, Millis) -> T) -> Result<T> {
        self.core.check_counters(t, READS)?;
        let now = self.core.advance(t);
        self.core.close_call();
        Ok(body(&mut self.core, now))
    }

    /// Registers a resource; `true` when it was not registered before.
    pub fn register(&mut self, now: f64, kind: Kind, value: &str) -> Result<bool> {
        self.register_in(now, kind, value, None)
    }

    /// `register` with a group (SPEC §3, groups): `None` leaves a known resource's group as it
    /// is; `Some(g)` sets it (`Some(None)`: no group), moving a known resource whose group
    /// differs (a `RESOURCE_REGROUPED` event).
    pub fn register_in(
        &mut self,
        now: f64,
        kind: Kind,
        value: &str,
        group: Option<Option<&str>>,
    ) -> Result<bool> {
        self.register_with(now, kind, value, Registration { group, max_leases: None })
    }

    /// `register` with its options (SPEC §3, groups and capacity): a field left `None` leaves a
    /// known resource's setting as it is (a new one gets no group and `maxLeases` 1); one
    /// given sets it, changing a known resource's when it differs (`RESOURCE_REGROUPED`,
    /// `RESOURCE_RECONFIGURED`; one revision step for the call).
    pub fn register_with(
        &mut self,
        now: f64,
        kind: Kind,
        value: &str,
        options: Registration,
    ) -> Result<bool> {
        let t = check::clock_reading(now)?;
        check::value_arg(value)?;
        check::group_arg(options.group.flatten())?;
        check::max_leases_arg(options.max_leases)?;
        self.core.check_resource_capacity(kind, value)?;
        self.apply(t, REGISTERS, |c, now| c.register(kind, value, options.group, options.max_leases, now))
    }

    /// Removes a resource with its cells, block and lease; `false` when it was not registered.
    pub fn deregister(&mut self, now: f64, kind: Kind, value: &str) -> Result<bool> {
        let t = check::clock_reading(now)?;
        check::value_arg(value)?;
        let Some(slot) = self.core.reg.find(kind, value) else {
            return self.apply(t, READS, |_, _| false);
        };
        self.apply(t, CHANGES, |c, now| c.deregister(slot, now))?;
        Ok(true)
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
        let Some((slot, lease)) = self.held(id, token) else {
            return Ok(false);
        };
        self.report_at(t, slot, &lease.context, outcome).map(|()| true)
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
        let Some((slot, lease)) = self.held(id, token) else {
            return self.apply(t, READS, |_, _| false);
        };
        self.apply(t, CHANGES, |c, now| c.release_token(slot, &lease.context, token, now))
    }

    /// Blocks a resource in every context, replacing any existing block.
    pub fn block(&mut self, now: f64, kind: Kind, value: &str, spec: BlockSpec) -> Result<()> {
        let t = check::clock_reading(now)?;
        check::value_arg(value)?;
        let ms = match spec {
            BlockSpec::Permanent => None,
            BlockSpec::Seconds(s) => {
                let ms = (s * 1000.0).round();
                if !(s.is_finite() && s > 0.0 && ms <= check::MAX_INSTANT as f64) {
                    return Err(invalid_argument("seconds must be a finite number > 0 and at most 2^52 ms"));
                }
                Some((ms as Millis).max(1))
            }
        };
        let slot = self.find(kind, value)?;
        self.apply(t, CHANGES, |c, now| {
            let block = ms.map_or(Block::Permanent, |ms| Block::Until(now + ms));
            c.block(slot, block, now)
        })
    }

    /// Lifts a block; `true` when the resource was blocked.
    pub fn unblock(&mut self, now: f64, kind: Kind, value: &str) -> Result<bool> {
        let t = check::clock_reading(now)?;
        check::value_arg(value)?;
        let slot = self.find(kind, value)?;
        self.apply(t, CHANGES, |c, now| c.unblock(slot, now))
    }

    /// The canonical JSON snapshot of the durable state.
    pub fn snapshot(&mut self, now: f64) -> Result<String> {
        let t = check::clock_reading(now)?;
        self.read(t, |c, _| snapshot::write(c))
    }

    /// The snapshot in parts (`snapshot/write.rs`): its head, and with `resource` that
    /// resource's three lines (`None` when it is not registered), for a host that stores each
    /// resource on its own.
    pub fn snapshot_part(&mut self, now: f64, resource: Option<(Kind, &str)>) -> Result<Option<String>> {
        let t = check::clock_reading(now)?;
        let slot = match resource {
            None => None,
            Some((kind, value)) => {
                check::value_arg(value)?;
                match self.core.reg.find(kind, value) {
                    Some(slot) => Some(slot),
                    None => return self.read(t, |_, _| None),
                }
            }
        };
        self.read(t, |c, _| {
            Some(match slot {
                None => snapshot::write_head(c),
                Some(slot) => snapshot::write_resource(c, slot),
            })
        })
    }

    /// Events since the last drain, in `seq` order.
    pub fn drain_events(&mut self, now: f64) -> Result<Vec<PoolEvent>> {
        let t = check::clock_reading(now)?;
        self.read(t, |c, _| c.drain_events())
    }

    /// The dashboard view, in canonical order.
    pub fn resources(&mut self, now: f64, filter: &Filter) -> Result<Vec<ResourceView>> {
        self.resources_page(now, filter, None, usize::MAX)
    }

    /// A page of the dashboard view: the resources `resources(filter)` lists that come after
    /// `after` (a kind and value, registered or not) in canonical order, at most `limit`.
    pub fn resources_page(
        &mut self,
        now: f64,
        filter: &Filter,
        after: Option<(Kind, &str)>,
        limit: usize,
    ) -> Result<Vec<ResourceView>> {
        if let Some((_, value)) = after {
            check::value_arg(value)?;
        }
        let t = check::clock_reading(now)?;
        if let Some(ctx) = &filter.context {
            check::context_arg(ctx)?;
        }
        if let Some(group) = &filter.group {
            check::group_arg(group.as_deref())?;
        }
        self.read(t, |c, _| c.resources_page(filter, after, limit))
    }

    /// One resource with every cell and its window (recent outcomes); `UNKNOWN_RESOURCE` when
    /// it is not registered.
    pub fn resource(&mut self, now: f64, kind: Kind, value: &str) -> Result<ResourceDetail> {
        let t = check::clock_reading(now)?;
        check::value_arg(value)?;
        let slot = self.find(kind, value)?;
        self.read(t, |c, _| c.resource_detail(slot))
    }

    /// Probe-due cells (cooldown over, cause not half-open, resource neither blocked nor leased).
    pub fn due_for_recovery_probe(&mut self, now: f64) -> Result<Vec<ProbeDue>> {
        let t = check::clock_reading(now)?;
        self.read(t, |c, now| c.due_for_recovery_probe(now))
    }

    /// The earliest instant at which something in `context` may become eligible.
    pub fn next_change_at(&mut self, now: f64, context: &str) -> Result<Option<Millis>> {
        let t = check::clock_reading(now)?;
        check::context_arg(context)?;
        self.read(t, |c, now| c.next_change_at(context, now))
    }

    /// `next_change_at` for the listed groups only (the same list rules as `acquire_in`).
    pub fn next_change_at_in(
        &mut self,
        now: f64,
        context: &str,
        groups: &[Option<&str>],
    ) -> Result<Option<Millis>> {
        let t = check::clock_reading(now)?;
        check::context_arg(context)?;
        check::groups_arg(groups)?;
        self.read(t, |c, now| {
            let ids: Vec<u32> = groups.iter().filter_map(|g| c.reg.groups().find(*g)).collect();
            c.next_change_at_grouped(context, &ids, now)
        })
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

    /// How many finished tokens the pool remembers now (diagnostics; `finished.rs`).
    pub fn finished_kept(&self) -> usize {
        self.core.finished_kept()
    }

    pub fn stats(&mut self, now: f64) -> Result<Stats> {
        let t = check::clock_reading(now)?;
        self.read(t, |c, _| {
            c.sync_order();
            c.stats()
        })
    }

    pub fn config(&self) -> &Config {
        self.core.config()
    }

    /// Changes the config in force: `patch` applied over it (nested maps key by key, as at
    /// creation). An invalid field is `INVALID_CONFIG` naming it; a `maxResources` or `maxCells`
    /// below what the pool holds is `CAPACITY_EXCEEDED`; either way nothing changes. Returns
    /// `false` when the result is the config already in force (no event, no revision step);
    /// otherwise one revision step and a `CONFIG_CHANGED` event (`reconfigure.rs` says what a
    /// new value means for state already held).
    pub fn set_config(&mut self, now: f64, patch: &ConfigPatch) -> Result<bool> {
        let t = check::clock_reading(now)?;
        let cfg = patch.apply(self.core.config(), "").map_err(Error::InvalidConfig)?;
        self.core.check_config_capacity(&cfg)?;
        self.apply(t, CHANGES, |c, now| c.set_config(cfg, now))
    }

    /// The id of a registered resource, for hosts that name resources by number between calls
    /// (`ids.rs`): it names this resource until it is deregistered, and nothing after, even
    /// once its slot holds another resource. Reads no clock and changes nothing.
    pub fn resource_id(&self, kind: Kind, value: &str) -> Option<ResourceId> {
        self.core.reg.find(kind, value).map(|slot| self.core.reg.id_of(slot))
    }

    /// The group of the resource `id` names (`None`: ungrouped); `UNKNOWN_RESOURCE` once it was
    /// deregistered. Reads no clock.
    pub fn resource_group(&self, id: ResourceId) -> Result<Option<&Rc<str>>> {
        let slot = self.slot_of(id)?;
        Ok(self.core.reg.group_name(self.core.reg.get(slot).group()))
    }

    /// The resource `id` names; `UNKNOWN_RESOURCE` once it was deregistered. Reads no clock.
    pub fn resource_of(&self, id: ResourceId) -> Result<(Kind, &Rc<str>)> {
        let slot = self.slot_of(id)?;
        let r = self.core.reg.get(slot);
        Ok((r.kind, &r.value))
    }

    /// The pure state, for benchmarks and diagnostics.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// Verifies every index against a from-scratch recomputation (property and model tests).
    #[doc(hidden)]
    pub fn check_invariants(&mut self) -> std::result::Result<(), String> {
        self.core.check_invariants()
    }
}
