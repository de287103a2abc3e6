//! `report`: the only call that creates cells. Applies the cell rules (`cell.rs`), keeps the
//! context index and the cooldown queues in step, applies the cooling cap and pacing, and
//! emits `RESOURCE_COOLED` / `COOLDOWN_SUPPRESSED` / `RESOURCE_RECOVERED`.

use std::rc::Rc;

use super::core::Core;
use crate::cell::{Cell, Transition};
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::index::universe::GroupUni;
use crate::registry::{NO_CELL, same_text};
use crate::types::{Millis, Outcome, State};

impl Core {
    /// The cell of `(slot, context)`, if it exists. A resource whose newest lease is held in
    /// this context knows its cell, which spares the lookup on the common path (report after
    /// acquire).
    pub(crate) fn locate_cell(&self, slot: u32, context: &str) -> Option<u32> {
        if let Some(l) = self.reg.get(slot).newest_lease()
            && l.cell != NO_CELL
            && same_text(&l.context, context)
        {
            return Some(l.cell);
        }
        self.ctxs.find(context).and_then(|c| self.cells.find(slot, c))
    }

    /// Fails with `CAPACITY_EXCEEDED` when a new cell would pass `maxCells`. Checked before
    /// anything changes.
    pub(crate) fn check_cell_capacity(&self) -> Result<()> {
        if self.cells.len() >= self.config().max_cells as usize {
            return Err(Error::CapacityExceeded(format!(
                "the pool holds maxCells = {} cells; a report in a new context would create one more",
                self.config().max_cells
            )));
        }
        Ok(())
    }

    /// Applies `outcome` to the cell of `(slot, context)` (`cell` from `locate_cell`).
    pub(crate) fn report(
        &mut self,
        slot: u32,
        context: &str,
        cell: Option<u32>,
        outcome: &Outcome,
        now: Millis,
    ) {
        let blocked = self.reg.get(slot).block().is_some();
        let id = match cell {
            Some(id) => id,
            None => self.create_cell(slot, context, now),
        };
        let ctx = self.cells.get(id).ctx;
        let before = {
            let c = self.cells.get(id).cell();
            (c.state == State::Cooling).then_some(c.cooldown_until).flatten()
        };
        // At 100 % the cap never binds (a cell that would cool is not cooling, so fewer cells
        // than the registered resources are): the common pool skips the count.
        let capped = self.config().max_cooling_percent < 100
            && outcome.failure_type().is_some()
            && self.cells.get(id).cell().would_cool(now, blocked, self.config())
            && self.cooling_cap_reached(ctx);
        let transition = self.cell_reported(id, outcome, now, blocked, capped);
        let gap = self.ctxs.get(ctx).min_gap();
        if gap > 0 {
            self.paced(id, now + gap);
        }
        self.refresh_cell(id, now);
        self.track_cooldown(id, before, now);
        let ty = match transition {
            Transition::None | Transition::Probation => return,
            Transition::Cooled { until, .. } => {
                self.cooled(ctx, id, until);
                EventType::ResourceCooled
            }
            Transition::Suppressed { .. } => EventType::CooldownSuppressed,
            Transition::Recovered => EventType::ResourceRecovered,
        };
        let mut e = self.resource_event(ty, now, slot);
        e.context = Some(Rc::clone(&self.ctxs.get(ctx).name));
        match transition {
            Transition::Cooled { cause, until } => {
                e.cause = Some(cause);
                e.until = Some(until);
            }
            Transition::Suppressed { cause } => e.cause = Some(cause),
            _ => {}
        }
        self.emit(e);
    }

    /// The cooling cap (SPEC §3): whether context `ctx` already has as many cells in a running
    /// cooldown as `max(1, ⌊maxCoolingPercent × registered ÷ 100⌋)` allows.
    fn cooling_cap_reached(&self, ctx: u32) -> bool {
        let registered = self.reg.len() as u64;
        let allowed = (u64::from(self.config().max_cooling_percent) * registered / 100).max(1);
        u64::from(self.ctxs.get(ctx).cooling()) >= allowed
    }

    /// Creates the fresh cell of `slot` in `context` (and the context, on its first cell).
    fn create_cell(&mut self, slot: u32, context: &str, now: Millis) -> u32 {
        self.place_cell(slot, context, Cell::fresh(now))
    }

    /// Stores `cell` as `slot`'s cell in `context` (creating the context on its first cell),
    /// indexed as a candidate: a cell that is not fresh is re-indexed by the caller
    /// (`refresh_cell`, as `reinstate.rs` does).
    pub(crate) fn place_cell(&mut self, slot: u32, context: &str, cell: Cell) -> u32 {
        let ctx = match self.ctxs.find(context) {
            Some(c) => c,
            None => {
                self.sync_order();
                self.next_change_forget(None);
                let gap = self.config().min_gap_for(context);
                self.context_added(Rc::from(context), gap)
            }
        };
        self.sync_context(ctx);
        let g = self.reg.get(slot).group();
        let in_sub = self.ctxs.get(ctx).sub(g).is_some();
        if in_sub {
            // Before the cell exists: a sync replaying this resource's availability would
            // take its new cell for one the sub-index already holds.
            self.sync_sub(ctx, g);
        }
        let id = self.cells.add(slot, ctx, cell);
        let c = self.ctxs.get_mut(ctx);
        c.insert(&mut self.cells, &self.reg, id, true);
        if in_sub {
            let uni = GroupUni::new(&self.reg, g);
            let sub = self.ctxs.get_mut(ctx).sub_mut(g).expect("synced");
            sub.insert(&mut self.cells, &uni, id, true);
        }
        self.reg.note_lease_cell(slot, context, id);
        id
    }
}
