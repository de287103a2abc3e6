//! The pool's whole state, and what every call shares: the clock, the counters, the change
//! flag that becomes one revision step, events, availability changes and a cell's candidacy.
//!
//! `Core` is pure: time arrives as an argument and randomness as a draw function. The public
//! `Pool` (`mod.rs`, its calls in `api/`) validates the host's clock reading (`now`), holds
//! the random source and calls into `Core`. The rules are split by concern, each an `impl
//! Core` of its own file: `expiry.rs` (time passing), `leases.rs`, `reports.rs`, `steps.rs`,
//! `groups.rs`, `admin.rs`, `reconfigure.rs`, `next_change.rs`, `counters.rs`, `views.rs`;
//! snapshot code reads and builds state through `durable.rs` only.
//!
//! Who changes what. The clock, the counters (`revision`, the fencing high-water mark, the
//! counters' fast-path bound), the change flag, the config, the event buffer, the finished
//! tokens, the kept `nextChangeAt` answers, the availability log and the expiry queues are
//! private to `Core` (this file and its two parts): other files read them through accessors
//! (`now`, `revision`, `fencing`, `config`, `events`, `avail_log`, `expiries`, …) and change
//! them only through methods named for what happened (`issue_token`, `changed`,
//! `cell_reported`, `configured`, `counters_raised`, `lease_finished`, …). Its parts:
//! `core/queues.rs` keeps the expiry queues in step with what they queue (`lease_granted`,
//! `lease_renewed`, `lease_released_if`, `blocked`, `paced`, `track_cooldown`, `cooled`,
//! `cooldowns_ended`, `cooldown_dropped`) and drains them as time passes; `core/availability.rs`
//! logs availability changes and brings every index up to date with the log (`sync_order`,
//! `sync_context`, `sync_group`, `sync_sub`, `context_added`, `indexes_caught_up`).
//!
//! Three parts stay fields visible to `pool/` (`pub(super)`, nothing beyond: `tests/owners.rs`):
//! the registry (`reg`: resources, their order, groups, blocklist, lease records), the cell
//! store (`cells`) and the context table (`ctxs`, each context's index). Each is an owner of
//! its own state, with private fields behind methods that keep their own invariants (the
//! registry its lease count, block count and orders; the store its per-state counts and
//! `(resource, context)` lookup; a context its gaps, summaries, cooling count and the cells'
//! positions in it, which it sets as it moves them). The rule files call those methods by
//! the hundred; an accessor returning `&mut` to each would add a name and no owner. What the
//! rule files keep *between* them is the cell's life: a cell is stored and inserted into its
//! context's index (and the sub-index of its group, where one exists) together
//! (`reports.rs`, restore through `durable.rs`), and taken out of both together
//! (`admin.rs`); a resource's group moves with its cells' sub-index entries (`groups.rs`).
//! What crosses into the queues or the log (a lease's end, a cooldown, an availability
//! change) goes through the methods above, never a field.

mod availability;
mod queues;

use std::rc::Rc;

use super::expiries::Expiries;
use super::finished::Finished;
use super::kept_answers::KeptAnswers;
use crate::cell::Transition;
use crate::config::Config;
use crate::events::{EventBuffer, EventType, PoolEvent, Unmasked};
use crate::index::avail_log::AvailLog;
use crate::index::cells::CellStore;
use crate::index::contexts::Contexts;
use crate::registry::Registry;
use crate::types::{Millis, Outcome};

#[derive(Debug, Clone)]
pub struct Core {
    cfg: Config,
    pub(super) reg: Registry,
    pub(super) cells: CellStore,
    pub(super) ctxs: Contexts,
    /// Availability changes, which the indexes catch up on (`core/availability.rs`: every
    /// replay of it is there).
    log: AvailLog,
    events: EventBuffer,
    /// The expiry queues, changed only through `core/queues.rs`'s methods, named for what
    /// happened (a lease granted, renewed, released; a block; pacing; a cooldown filed, ended,
    /// dropped).
    expiries: Expiries,
    /// The highest fencing token ever issued.
    fencing: u64,
    revision: u64,
    /// Below this `revision`, no counter can be near 2^53 (`counters.rs`); 0 until checked.
    counters_far_until: u64,
    /// The latest clock reading applied (time never runs backwards).
    now: Millis,
    /// Set when the current call changed durable content; turned into one revision step.
    dirty: bool,
    /// The last contexts' `next_change_at` answers, kept exact as resources change
    /// (`next_change.rs`).
    kept_answers: KeptAnswers,
    /// Tokens of leases finished lately (runtime state, never persisted: `finished.rs`).
    finished: Finished,
}

impl Core {
    pub fn new(cfg: Config, now: Millis) -> Core {
        Core {
            events: EventBuffer::new(cfg.event_buffer_size as usize, 1),
            cfg,
            reg: Registry::new(),
            cells: CellStore::default(),
            ctxs: Contexts::default(),
            log: AvailLog::default(),
            expiries: Expiries::default(),
            fencing: 0,
            revision: 0,
            counters_far_until: 0,
            now,
            dirty: false,
            kept_answers: KeptAnswers::default(),
            finished: Finished::default(),
        }
    }

    /// An empty pool restored at `now` with a snapshot's counters (`durable.rs`).
    pub fn restored(cfg: Config, now: Millis, revision: u64, fencing: u64, next_event_seq: u64) -> Core {
        let events = EventBuffer::new(cfg.event_buffer_size as usize, next_event_seq);
        Core { revision, fencing, events, ..Core::new(cfg, now) }
    }

    /// The config in force.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Puts `cfg` in force (the event buffer takes its size); returns the config it replaces.
    /// What else a new config changes is `reconfigure.rs`'s.
    pub fn configured(&mut self, cfg: Config) -> Config {
        let old = std::mem::replace(&mut self.cfg, cfg);
        if old.event_buffer_size != self.cfg.event_buffer_size {
            self.events.set_capacity(self.cfg.event_buffer_size as usize);
        }
        old
    }

    /// The latest clock reading applied.
    #[inline]
    pub fn now(&self) -> Millis {
        self.now
    }

    /// The instant a call reading `reading` applies (time never runs backwards), known before
    /// `advance` applies it.
    #[inline]
    pub fn time_at(&self, reading: Millis) -> Millis {
        self.now.max(reading)
    }

    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// The highest fencing token ever issued (`fencingHighWater`).
    #[inline]
    pub fn fencing(&self) -> u64 {
        self.fencing
    }

    /// A lease is being granted: its fencing token, above every one issued before.
    #[inline]
    pub fn issue_token(&mut self) -> u64 {
        self.fencing += 1;
        self.fencing
    }

    /// Raises the counters to at least a host's floor (`floor.rs`).
    pub fn counters_raised(&mut self, revision: u64, fencing: u64, next_event_seq: u64) {
        self.revision = self.revision.max(revision);
        self.fencing = self.fencing.max(fencing);
        self.events.raise_next_seq(next_event_seq);
    }

    /// Below this revision no counter can be near its ceiling (`counters.rs`).
    #[inline]
    pub fn counters_far_until(&self) -> u64 {
        self.counters_far_until
    }

    /// `counters.rs` found every counter far from its ceiling until `revision`.
    pub fn counters_far(&mut self, revision: u64) {
        self.counters_far_until = revision;
    }

    /// The current call changed durable content: it closes with one revision step.
    #[inline]
    pub fn changed(&mut self) {
        self.dirty = true;
    }

    /// Cell `id` takes a report's `outcome` at `now` by the cell rules (`cell.rs`); a durable
    /// change. The index and the queues hear of it from `report` (`reports.rs`).
    #[inline]
    pub fn cell_reported(
        &mut self,
        id: u32,
        outcome: &Outcome,
        now: Millis,
        blocked: bool,
        capped: bool,
    ) -> Transition {
        self.dirty = true;
        let cfg = &self.cfg;
        self.cells.update(id, |cell| cell.report(outcome, now, blocked, capped, cfg))
    }

    /// The events not yet drained.
    pub fn events(&self) -> &EventBuffer {
        &self.events
    }

    /// Hands over the pending events, oldest first.
    pub fn drain_events(&mut self) -> Vec<PoolEvent> {
        self.events.drain()
    }

    /// Whether the lease with `token` was finished, as known at `now` (`finished.rs`).
    pub fn was_finished(&self, token: u64, now: Millis) -> bool {
        self.finished.contains(token, now, self.cfg.lease_ttl_ms)
    }

    /// The lease with `token` is finished at `now`: a repeated finish is refused.
    pub fn lease_finished(&mut self, token: u64, now: Millis) {
        self.finished.remember(token, now, self.cfg.lease_ttl_ms);
    }

    /// How many finished tokens are remembered now (diagnostics).
    pub fn finished_kept(&self) -> usize {
        self.finished.kept()
    }

    /// The kept `nextChangeAt` answers (`next_change.rs` keeps them exact).
    #[inline]
    pub fn kept_answers(&self) -> &KeptAnswers {
        &self.kept_answers
    }

    pub fn kept_answers_mut(&mut self) -> &mut KeptAnswers {
        &mut self.kept_answers
    }

    /// Applies a clock reading: monotonic, then everything that expired by then. Inline is
    /// only the check whether anything may be due (most calls: nothing); the processing has
    /// one copy out of line (inlining it into `acquire` doubled the module's expiry code).
    #[inline]
    pub fn advance(&mut self, reading: Millis) -> Millis {
        self.now = self.time_at(reading);
        if self.expiries.maybe_due(self.now) {
            self.expire(self.now);
        }
        self.now
    }

    /// Closes a call: one revision step if durable content changed. (Not `finish`, the
    /// worker's step: that is `steps.rs`.)
    pub fn close_call(&mut self) {
        if self.dirty {
            self.revision += 1;
            self.dirty = false;
        }
    }

    pub fn emit(&mut self, e: PoolEvent) {
        self.events.push(e);
        self.dirty = true;
    }

    /// An event about resource `slot`.
    pub fn resource_event(&self, ty: EventType, at: Millis, slot: u32) -> PoolEvent {
        let r = self.reg.get(slot);
        let mut e = PoolEvent::new(ty, at);
        e.resource = Some((r.kind, Rc::clone(&r.display)));
        e.unmasked = Some(Unmasked(Rc::clone(&r.value)));
        e
    }

    /// Re-evaluates whether cell `id` is a candidate at `now` and re-aggregates if needed.
    pub fn refresh_cell(&mut self, id: u32, now: Millis) {
        let eligible = self.eligible(id, now);
        let slot = self.cells.get(id);
        let (ctx, res) = (slot.ctx, slot.res);
        let g = self.reg.get(res).group();
        let c = self.ctxs.get_mut(ctx);
        c.refresh(&self.cells, id, eligible);
        // Most contexts are never asked by group: no lookup then.
        if c.has_subs()
            && let Some(sub) = c.sub_mut(g)
        {
            sub.refresh(&self.cells, id, eligible);
        }
        self.next_change_touched(res, Some(ctx));
    }

    /// Whether cell `id` is a candidate at `now` by its own state: `HEALTHY`, `RECOVERING` or
    /// a half-open trial that no lease in its context is trying already (one trial at a time),
    /// and not paced. (Always inline: it is on every report's path, and a call cost more.)
    #[inline(always)]
    pub fn eligible(&self, id: u32, now: Millis) -> bool {
        let slot = self.cells.get(id);
        let c = slot.cell();
        c.selectable(now, self.cfg.half_open_causes)
            && c.paced_until(now, self.ctxs.get(slot.ctx).min_gap()).is_none()
            && (c.state != crate::types::State::Cooling || !self.trial_taken(id, now))
    }

    /// Whether a lease held in cell `id`'s context is trying the cell already (it is due for
    /// recovery: one trial at a time). Out of line: asked only of cooling cells.
    #[inline(never)]
    fn trial_taken(&self, id: u32, now: Millis) -> bool {
        let slot = self.cells.get(id);
        self.reg.get(slot.res).leased_in(&self.ctxs.get(slot.ctx).name, now)
    }

    /// The end of cell `id`'s pacing at `now`, if it is paced.
    pub fn paced_until(&self, id: u32, now: Millis) -> Option<Millis> {
        let slot = self.cells.get(id);
        slot.cell().paced_until(now, self.ctxs.get(slot.ctx).min_gap())
    }
}
