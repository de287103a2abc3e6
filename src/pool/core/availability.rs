//! `Core`'s availability log (`index/avail_log.rs`) and the indexes that catch up on it: a
//! resource's availability re-derived and its change logged, then the resource order, a
//! context's index, a group's order and a context's sub-index for a group brought up to date
//! lazily (every replay of the log is here), a context added or built with the log's
//! position, and the log started afresh once every index has read it. The log is a private
//! field of `Core`: other files read it through `avail_log` only.

use std::rc::Rc;

use super::Core;
use crate::index::avail_log::AvailLog;
use crate::index::context::Context;
use crate::index::universe::GroupUni;
use crate::types::Millis;

impl Core {
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

    /// Brings group `g`'s order up to date with the availability log.
    pub fn sync_group(&mut self, g: u32) {
        self.reg.group_ensure(g);
        let cursor = self.reg.groups().get(g).cursor;
        if cursor == self.log.end() {
            return;
        }
        let observed = self.log.observe();
        if cursor < self.log.base() {
            self.reg.sync_group(g, None, observed);
        } else {
            let mut changed = self.log.changed_since(cursor);
            self.reg.sync_group(g, Some(&mut changed), observed);
        }
    }

    /// Group `g`'s order holds every member's flag as it is (a member just moved in): it is
    /// caught up with the log. (A group made by the move would otherwise replay the log from
    /// its start, and after a restore, whose resources have no entries there, miss a return.)
    #[inline]
    pub(crate) fn group_caught_up(&mut self, g: u32) {
        self.reg.sync_group(g, Some(&mut std::iter::empty()), self.log.observe());
    }

    /// Brings context `ctx`'s sub-index for group `g` up to date, making it if needed.
    pub fn sync_sub(&mut self, ctx: u32, g: u32) {
        self.sync_context(ctx);
        self.sync_group(g);
        let uni = GroupUni::new(&self.reg, g);
        let c = self.ctxs.get_mut(ctx);
        match c.sub_mut(g) {
            Some(sub) => sub.sync(&mut self.cells, &uni, &self.log, ctx),
            None => {
                c.ensure();
                let sub = c.sub_index(&mut self.cells, &uni, &self.log);
                c.sub_made(g, sub);
            }
        }
    }

    /// Every index has read the availability log to its end (a slot is about to be reused):
    /// the log starts afresh, the resource order's cursor with it.
    #[inline]
    pub(crate) fn indexes_caught_up(&mut self) {
        self.log.clear(&mut self.reg);
        self.reg.set_order_cursor(self.log.observe());
    }

    /// The availability log, to read (`invariants.rs` checks the indexes against it).
    #[inline]
    pub(crate) fn avail_log(&self) -> &AvailLog {
        &self.log
    }

    /// A context named `name`, paced by `gap`, comes in with an empty index; its id.
    #[inline]
    pub(crate) fn context_added(&mut self, name: Rc<str>, gap: Millis) -> u32 {
        self.ctxs.add(Context::new(name, gap, &self.reg, &self.log, false))
    }

    /// Context `ctx`'s index is built from its cells, given in canonical order with whether
    /// each is a candidate (restore).
    #[inline]
    pub(crate) fn context_built(&mut self, ctx: u32, sorted: &[(u32, bool)]) {
        let c = self.ctxs.get_mut(ctx);
        c.build(&mut self.cells, &self.reg, &self.log, sorted);
    }
}
