//! The pool's whole state and the bookkeeping every call shares: availability changes, events,
//! and revision counting.
//!
//! `Core` is pure: time arrives as an argument and randomness as a draw function. The public
//! `Pool` (in `mod.rs`) validates the host's clock reading (`now`) and holds the RNG, and calls
//! into it. The rules themselves are
//! split by concern: `expiry.rs` (time passing), `leases.rs`, `reports.rs`, `admin.rs`,
//! `views.rs`.
//!
//! The fields are visible to `pool/` only, and each part keeps its own fields behind methods:
//! the resources, their order and the blocklist (`registry/`), the cell store and each
//! context's index (`index/cells.rs`), the context table (`index/contexts.rs`), the expiry queues (`expiries.rs`). Snapshot code reads
//! and builds state through `durable.rs`.

use std::rc::Rc;

use super::expiries::Expiries;
use super::finished::Finished;
use super::kept_answers::NextChange;
use crate::config::Config;
use crate::events::{EventBuffer, EventType, PoolEvent, Unmasked};
use crate::index::avail_log::AvailLog;
use crate::index::cells::CellStore;
use crate::index::contexts::Contexts;
use crate::registry::Registry;
use crate::types::Millis;

#[derive(Debug, Clone)]
pub struct Core {
    pub(super) cfg: Config,
    pub(super) reg: Registry,
    pub(super) cells: CellStore,
    pub(super) ctxs: Contexts,
    pub(super) log: AvailLog,
    pub(super) events: EventBuffer,
    pub(super) expiries: Expiries,
    /// The highest fencing token ever issued.
    pub(super) fencing: u64,
    pub(super) revision: u64,
    /// Below this `revision`, no counter can be near 2^53 (`counters.rs`); 0 until checked.
    pub(super) counters_fast: u64,
    /// The latest clock reading applied (time never runs backwards).
    pub(super) now: Millis,
    /// Set when the current call changed durable content; turned into one revision step.
    pub(super) dirty: bool,
    /// The last contexts' `next_change_at` answers, kept exact as resources change
    /// (`next_change.rs`).
    pub(super) next_change: Vec<NextChange>,
    /// Tokens of leases finished lately (runtime state, never persisted: `finished.rs`).
    pub(super) finished: Finished,
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
            counters_fast: 0,
            now,
            dirty: false,
            next_change: Vec::new(),
            finished: Finished::default(),
        }
    }

    /// Applies a clock reading: monotonic, then everything that expired by then. Inline is
    /// only the check whether anything may be due (most calls: nothing); the processing has
    /// one copy out of line (inlining it into `acquire` doubled the module's expiry code).
    #[inline]
    pub fn advance(&mut self, reading: Millis) -> Millis {
        self.now = self.now.max(reading);
        if self.expiries.maybe_due(self.now) {
            self.expire(self.now);
        }
        self.now
    }

    #[inline(never)]
    fn expire(&mut self, now: Millis) {
        self.process_expiries(now);
    }

    /// Closes a call: one revision step if durable content changed.
    pub fn finish(&mut self) {
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

    /// Re-derives `slot`'s availability after its lease or block changed, and logs a change.
    /// Indexes learn of it lazily from the log (`sync_order`, `sync_context`). The last
    /// `next_change_at` answers hear of it even when availability stays (a leased resource
    /// unblocked, a blocked one released): when it may next be a candidate has changed.
    pub fn sync_avail(&mut self, slot: u32) {
        self.set_avail(slot, self.reg.get(slot).unclaimed());
        self.next_change_touched(slot, None);
    }

    /// Sets `slot`'s availability, logging a change.
    pub fn set_avail(&mut self, slot: u32, avail: bool) {
        if self.reg.set_avail(slot, avail) {
            self.log.record(&mut self.reg, slot);
        }
    }

    /// Brings the resource order's availability counts up to date with the log. Needed before
    /// `rank`, `select` and `available` are read. (Inline: nearly always there is nothing to
    /// do, and a call cost more than the check; the replay is out of line.)
    #[inline]
    pub fn sync_order(&mut self) {
        self.reg.order_ensure();
        if self.reg.order_cursor() != self.log.end() {
            self.replay_order();
        }
    }

    #[inline(never)]
    fn replay_order(&mut self) {
        let cursor = self.reg.order_cursor();
        if cursor < self.log.base() {
            self.reg.order_refresh_all();
        } else {
            for slot in self.log.changed_since(cursor) {
                let avail = self.reg.get(slot).is_available();
                self.reg.set_order_avail(slot, avail);
            }
        }
        self.reg.set_order_cursor(self.log.observe());
    }

    /// Brings context `id`'s index up to date with the availability log.
    #[inline]
    pub fn sync_context(&mut self, id: u32) {
        self.sync_order();
        let ctx = self.ctxs.get_mut(id);
        ctx.sync(&mut self.cells, &self.reg, &self.log, id);
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
        if !c.subs.is_empty()
            && let Some(sub) = c.subs.get_mut(&g)
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
            && c.paced_until(now, self.ctxs.get(slot.ctx).min_gap).is_none()
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
        slot.cell().paced_until(now, self.ctxs.get(slot.ctx).min_gap)
    }
}
