//! Self-checks of the index structures against from-scratch recomputation, for property and
//! model tests. Not used on any operation path.

use super::core::Core;
use crate::index::universe::{GroupUni, Universe};
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
            ctx.verify(&self.cells, &self.reg, self.avail_log())
                .map_err(|e| format!("context {}: {e}", ctx.name))?;
            if ctx.cells() == 0 {
                return Err(format!("context {} kept without cells", ctx.name));
            }
            let now = self.now();
            let running = self
                .cells
                .live_ids()
                .filter(|&c| self.cells.get(c).ctx == id && self.cells.get(c).cell().cooling_at(now))
                .count();
            if running != ctx.cooling() as usize {
                return Err(format!(
                    "context {} counts {} cooling cells, {running} are",
                    ctx.name,
                    ctx.cooling()
                ));
            }
            let subs = ctx.sub_groups();
            for g in subs {
                self.sync_sub(id, g);
                let sub = self.ctxs.get_mut(id).sub_mut(g).expect("synced");
                sub.ensure();
                let uni = GroupUni::new(&self.reg, g);
                let sub = self.ctxs.get(id).sub(g).expect("synced");
                sub.verify(&self.cells, &uni, self.avail_log())
                    .map_err(|e| format!("context {} group {g}: {e}", self.ctxs.get(id).name))?;
                let members = self.cells.live_ids().filter(|&c| {
                    let cs = self.cells.get(c);
                    cs.ctx == id && self.reg.get(cs.res).group() == g
                });
                if members.count() != sub.cells() {
                    return Err(format!(
                        "context {} group {g}: sub-index holds {} cells",
                        self.ctxs.get(id).name,
                        sub.cells()
                    ));
                }
            }
        }
        for g in self.reg.groups().ids().collect::<Vec<_>>() {
            self.sync_group(g);
            let uni = GroupUni::new(&self.reg, g);
            let mut before = 0;
            for (slot, avail) in uni.order_iter() {
                let r = self.reg.get(slot);
                if r.group() != g || avail != r.is_available() || uni.rank(slot) != before {
                    return Err(format!("group {g}'s order is stale at a member"));
                }
                before += u32::from(avail);
            }
            let members = self.reg.live_slots().filter(|&s| self.reg.get(s).group() == g).count();
            if members != uni.len() {
                return Err(format!("group {g} orders {} of {members} members", uni.len()));
            }
        }
        if cells != self.cells.len() {
            return Err(format!("contexts hold {cells} cells, store {}", self.cells.len()));
        }
        let slots: Vec<u32> = self.reg.live_slots().collect();
        let leased: usize = slots.iter().map(|&s| self.reg.get(s).leases().len()).sum();
        for &s in &slots {
            let r = self.reg.get(s);
            if !r.leases().windows(2).all(|w| w[0].token < w[1].token) {
                return Err("a resource's leases are not in token order".into());
            }
            if r.max_leases() == 0 || r.max_leases() > crate::check::MAX_LEASES {
                return Err(format!("maxLeases {} out of range", r.max_leases()));
            }
        }
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
        let half_open = self.config().half_open_causes;
        for id in self.cells.live_ids() {
            let c = self.cells.get(id);
            let ctx = self.ctxs.get(c.ctx);
            let paced = c.cell().paced_until(self.now(), ctx.min_gap()).is_some();
            // One trial at a time: a cell due for recovery that a lease here is trying waits.
            let r = self.reg.get(c.res);
            let trying = c.cell().state == State::Cooling
                && r.leases().iter().any(|l| *l.context == *ctx.name && self.now() < l.expires_at);
            let eligible = c.cell().selectable(self.now(), half_open) && !paced && !trying;
            if ctx.indexed_eligible(&self.cells, id) != eligible {
                return Err(format!("cell eligibility stale in context {}", ctx.name));
            }
        }
        Ok(())
    }
}
