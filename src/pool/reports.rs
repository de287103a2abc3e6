//! `report`: the only call that creates cells. Applies the cell rules (`cell.rs`), keeps the
//! context index and the cooldown queues in step, and emits `RESOURCE_COOLED` /
//! `RESOURCE_RECOVERED`.

use std::rc::Rc;

use super::core::Core;
use crate::cell::{Cell, Transition};
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::index::cells::Context;
use crate::types::{Millis, Outcome, State};

impl Core {
    /// Fails with `CAPACITY_EXCEEDED` when reporting on `(slot, context)` would need a new cell
    /// past `maxCells`. Checked before anything changes.
    pub(crate) fn check_cell_capacity(&self, slot: u32, context: &str) -> Result<()> {
        let exists = self.ctxs.find(context).and_then(|c| self.cells.find(slot, c)).is_some();
        if !exists && self.cells.len() >= self.cfg.max_cells as usize {
            return Err(Error::CapacityExceeded(format!(
                "the pool holds maxCells = {} cells; a report in a new context would create one more",
                self.cfg.max_cells
            )));
        }
        Ok(())
    }

    pub(crate) fn report(&mut self, slot: u32, context: &str, outcome: &Outcome, now: Millis) {
        let blocked = self.reg.get(slot).block.is_some();
        let (id, ctx) = match self.ctxs.find(context).map(|c| (self.cells.find(slot, c), c)) {
            Some((Some(id), ctx)) => (id, ctx),
            found => self.create_cell(slot, context, found.map(|(_, c)| c), now),
        };
        let before = {
            let c = &self.cells.get(id).cell;
            (c.state == State::Cooling).then_some(c.cooldown_until).flatten()
        };
        let cfg = &self.cfg;
        let transition = self.cells.get_mut(id).cell.report(outcome, now, blocked, cfg);
        self.dirty = true;
        self.refresh_cell(id, now);
        self.track_cooldown(id, before, now);
        let ty = match transition {
            Transition::None | Transition::Probation => return,
            Transition::Cooled { .. } => EventType::ResourceCooled,
            Transition::Recovered => EventType::ResourceRecovered,
        };
        let mut e = self.resource_event(ty, now, slot);
        e.context = Some(Rc::clone(&self.ctxs.get(ctx).name));
        if let Transition::Cooled { cause, until } = transition {
            e.cause = Some(cause);
            e.until = Some(until);
        }
        self.emit(e);
    }

    /// Creates the fresh cell of `slot` in `context` (and the context, on its first cell).
    fn create_cell(&mut self, slot: u32, context: &str, ctx: Option<u32>, now: Millis) -> (u32, u32) {
        let ctx = match ctx {
            Some(c) => c,
            None => self.ctxs.add(Context::new(Rc::from(context), &self.reg, &self.log)),
        };
        self.sync_context(ctx);
        let id = self.cells.add(slot, ctx, Cell::fresh(now));
        let c = self.ctxs.get_mut(ctx);
        c.insert(&mut self.cells, &self.reg, id, true);
        (id, ctx)
    }
}
