//! Self-checks of the index structures against from-scratch recomputation, for property and
//! model tests. Not used on any operation path.

use super::core::Core;
use crate::types::State;

impl Core {
    /// Brings every context up to date, then verifies every index; returns the first problem.
    pub(crate) fn check_invariants(&mut self) -> Result<(), String> {
        self.sync_order();
        self.reg.verify_order()?;
        let ids: Vec<u32> = self.ctxs.ids().collect();
        let mut cells = 0;
        for id in ids {
            self.sync_context(id);
            self.ctxs.get_mut(id).ensure();
            let ctx = self.ctxs.get(id);
            cells += ctx.cells();
            ctx.verify(&self.cells, &self.reg, &self.log)
                .map_err(|e| format!("context {}: {e}", ctx.name))?;
            if ctx.cells() == 0 {
                return Err(format!("context {} kept without cells", ctx.name));
            }
        }
        if cells != self.cells.len() {
            return Err(format!("contexts hold {cells} cells, store {}", self.cells.len()));
        }
        let slots: Vec<u32> = self.reg.live_slots().collect();
        let leased = slots.iter().filter(|&&s| self.reg.get(s).lease().is_some()).count();
        let blocked = slots.iter().filter(|&&s| self.reg.get(s).block().is_some()).count();
        if (leased, blocked) != (self.reg.leased(), self.reg.blocked()) {
            return Err(format!(
                "counters say {} leased, {} blocked; resources say {leased}, {blocked}",
                self.reg.leased(),
                self.reg.blocked()
            ));
        }
        for state in [State::Healthy, State::Cooling, State::Recovering] {
            let n = self.cells.live_ids().filter(|&id| self.cells.get(id).cell().state == state).count();
            if n != self.cells.count_in(state) {
                return Err(format!("{} cells counted {state:?}, {n} are", self.cells.count_in(state)));
            }
        }
        let half_open = self.cfg.half_open_causes;
        for id in self.cells.live_ids() {
            let c = self.cells.get(id);
            let ctx = self.ctxs.get(c.ctx);
            if ctx.indexed_eligible(&self.cells, id) != c.cell().selectable(self.now, half_open) {
                return Err(format!("cell eligibility stale in context {}", ctx.name));
            }
        }
        Ok(())
    }
}
