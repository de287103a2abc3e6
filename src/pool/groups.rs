//! Groups in the pool (SPEC §3, groups): registering into a group and moving a resource
//! between groups, each group's indexes brought up to date, and a grouped `acquire` — the
//! first listed group with a candidate that is not held, else the first with any, picked by
//! the ordinary rule over that group's candidates in O(|groups| × log n).
//!
//! The ungrouped pick is `leases.rs`; a group's order is `registry/groups.rs`; a context's
//! sub-index per group is an ordinary context index over that group's members
//! (`index/context.rs` with `index/universe.rs`).

use std::rc::Rc;

use super::core::Core;
use crate::error::Result;
use crate::events::EventType;
use crate::index::context::Picked;
use crate::index::universe::{GroupUni, Universe};
use crate::index::weights::{Candidates, index_in_run};
use crate::registry::NO_CELL;
use crate::types::Millis;

use super::leases::Lease;

/// What a listed group offers a grouped acquire.
#[derive(Debug, Clone, Copy)]
struct Offer {
    group: u32,
    count: u64,
    usable: bool,
}

impl Core {
    /// Brings every group's order and every sub-index up to date (before the log is cleared
    /// or a resource changes group).
    pub(crate) fn sync_all_groups(&mut self) {
        let groups: Vec<u32> = self.reg.groups().ids().collect();
        for g in groups {
            self.sync_group(g);
        }
        let ids: Vec<u32> = self.ctxs.ids().collect();
        for ctx in ids {
            let subs = self.ctxs.get(ctx).sub_groups();
            for g in subs {
                self.sync_sub(ctx, g);
            }
        }
    }

    /// Removes cell `id` (of resource `slot`, context `ctx`) from its group's sub-index, if
    /// that exists (synced).
    pub(crate) fn sub_remove(&mut self, ctx: u32, slot: u32, id: u32) {
        let g = self.reg.get(slot).group();
        if let Some(sub) = self.ctxs.get_mut(ctx).sub_mut(g) {
            sub.remove(&mut self.cells, id);
        }
    }

    /// Moves resource `slot` to group `group`; emits `RESOURCE_REGROUPED`. Its cells leave the
    /// old group's sub-indexes and join the new one's; while it moves it counts as
    /// unavailable everywhere, so every index sees it leave and arrive through the log.
    pub(crate) fn regroup(&mut self, slot: u32, group: Option<&str>, now: Millis) {
        self.set_avail(slot, false);
        self.sync_order();
        self.sync_all_groups();
        let ids: Vec<u32> = self.ctxs.ids().collect();
        let mut cells = Vec::new();
        for &ctx in &ids {
            if let Some(id) = self.cells.find(slot, ctx) {
                self.sub_remove(ctx, slot, id);
                cells.push((ctx, id));
            }
        }
        let (old, dropped) = self.reg.set_group(slot, group);
        if dropped {
            for &ctx in &ids {
                self.ctxs.get_mut(ctx).sub_dropped(old);
            }
        }
        let g = self.reg.get(slot).group();
        // Every member's flag in `g`'s order is exact now (the moved one went in unavailable,
        // as it is).
        self.group_caught_up(g);
        self.reg.group_ensure(g);
        for (ctx, id) in cells {
            if self.ctxs.get(ctx).sub(g).is_some() {
                let eligible = self.eligible(id, now);
                let uni = GroupUni::new(&self.reg, g);
                let sub = self.ctxs.get_mut(ctx).sub_mut(g).expect("present");
                sub.insert(&mut self.cells, &uni, id, eligible);
            }
        }
        self.sync_avail(slot);
        self.next_change_forget(None);
        let mut e = self.resource_event(EventType::ResourceRegrouped, now, slot);
        e.group = Some(self.reg.group_name(g).cloned());
        self.emit(e);
    }

    /// Group `g`'s candidates in context `ctx` (`None`: no cells there) as indexed now (its
    /// indexes brought up to date): how many, and whether one is not held.
    pub(crate) fn group_candidates(&mut self, ctx: Option<u32>, g: u32) -> (u64, bool) {
        match ctx {
            Some(c) => {
                self.sync_sub(c, g);
                let sub = self.ctxs.get_mut(c).sub_mut(g).expect("synced");
                sub.ensure();
                (sub.summary(1.0).count, sub.usable())
            }
            None => {
                self.sync_group(g);
                let n = u64::from(GroupUni::new(&self.reg, g).available());
                (n, n > 0)
            }
        }
    }

    /// What group `g` offers context `ctx` (`None`: no cells there) now, with the expiries
    /// due at `now` counted as if applied (they only add candidates).
    fn offer(&mut self, ctx: Option<u32>, g: u32, now: Millis) -> Offer {
        let (mut count, mut usable) = self.group_candidates(ctx, g);
        if self.expiries().maybe_due(now) {
            let mut seen: Vec<u32> = Vec::new();
            for slot in self.due_slots(ctx, now) {
                if seen.contains(&slot) || self.reg.try_get(slot).is_none_or(|r| r.group() != g) {
                    continue;
                }
                seen.push(slot);
                if self.becomes_candidate(ctx, slot, now) {
                    count += 1;
                    let held = ctx
                        .and_then(|c| self.cells.find(slot, c))
                        .is_some_and(|id| self.cells.get(id).cell().held);
                    usable |= !held;
                }
            }
        }
        Offer { group: g, count, usable }
    }

    /// `acquire(context, { groups })` (SPEC §3, groups): `groups` are the listed groups' ids
    /// in order (`None`: a name no resource has). Like `acquire`, works out whether it needs a
    /// draw before applying the expiries due now, so a bad draw changes nothing.
    pub(crate) fn acquire_grouped(
        &mut self,
        context: &str,
        groups: &[Option<u32>],
        reading: Millis,
        quiet: bool,
        draw: impl FnOnce() -> Result<f64>,
    ) -> Result<Option<Lease>> {
        let now = self.time_at(reading);
        self.sync_order();
        let ctx = self.ctxs.find(context);
        let mut chosen: Option<Offer> = None;
        for &g in groups.iter().flatten() {
            let o = self.offer(ctx, g, now);
            if o.usable {
                chosen = Some(o);
                break;
            }
            if chosen.is_none() && o.count > 0 {
                chosen = Some(o);
            }
        }
        let u = match chosen {
            Some(o) if o.count >= 2 => Some(draw()?),
            _ => None,
        };
        self.advance(reading);
        let Some(o) = chosen else {
            if !quiet {
                self.rejected(self.ctxs.find(context), context, now);
            }
            return Ok(None);
        };
        let g = o.group;
        // Time passing neither makes nor removes contexts: `ctx` still names this one.
        let floor = self.config().exploration_floor;
        let (sum, picked) = match ctx {
            Some(c) => {
                self.sync_sub(c, g);
                let uni = GroupUni::new(&self.reg, g);
                let sub = self.ctxs.get_mut(c).sub_mut(g).expect("synced");
                sub.ensure();
                let sum = sub.summary(floor);
                debug_assert_eq!(sum.count, o.count, "the draw was decided on the candidate count");
                let target = u.map_or(0, |u| sum.target(u));
                let picked = match sub.pick(&uni, &sum, target) {
                    Picked::Cell { res, cell } => (res, cell),
                    Picked::Fresh(k) => (uni.select(k), NO_CELL),
                };
                (sum, picked)
            }
            None => {
                self.sync_group(g);
                let uni = GroupUni::new(&self.reg, g);
                let sum = Candidates::fresh(u64::from(uni.available()), floor);
                let target = u.map_or(0, |u| sum.target(u));
                (sum, (uni.select(index_in_run(target, 0, sum.unit, sum.count as u32)), NO_CELL))
            }
        };
        debug_assert!(sum.count > 0);
        let name = match ctx {
            Some(c) => Rc::clone(&self.ctxs.get(c).name),
            None => Rc::from(context),
        };
        Ok(Some(self.grant(picked.0, name, picked.1, now)))
    }
}
