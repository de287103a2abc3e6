//! Membership and operator actions: `register`, `deregister`, `block`, `unblock`.
//!
//! Registration is idempotent. Blocking is resource-wide and beats everything: a blocked
//! resource is never a candidate; its lease lapses at its TTL. The engine never adds or removes
//! blocklist entries by itself (expiry of a temporary block aside).

use super::core::Core;
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::registry::blocklist::Block;
use crate::types::{Kind, Millis};

impl Core {
    pub(crate) fn check_resource_capacity(&self, kind: Kind, value: &str) -> Result<()> {
        if self.reg.find(kind, value).is_none() && self.reg.len() >= self.config().max_resources as usize {
            return Err(Error::CapacityExceeded(format!(
                "the pool holds maxResources = {} resources",
                self.config().max_resources
            )));
        }
        Ok(())
    }

    /// Returns true when newly added. `group`: `None` leaves a known resource's group as it
    /// is (a new one gets none); `Some(g)` puts it in group `g` (`Some(None)`: no group),
    /// moving a known resource whose group differs. `max_leases`: `None` leaves a known
    /// resource's capacity as it is (a new one gets 1); `Some(m)` sets it, changing a known
    /// resource's when it differs (`RESOURCE_RECONFIGURED`). Checked by the caller.
    pub(crate) fn register(
        &mut self,
        kind: Kind,
        value: &str,
        group: Option<Option<&str>>,
        max_leases: Option<u32>,
        now: Millis,
    ) -> bool {
        if let Some(slot) = self.reg.find(kind, value) {
            if let Some(g) = group {
                let current = self.reg.group_name(self.reg.get(slot).group()).map(|n| &**n);
                if current != g {
                    self.regroup(slot, g, now);
                }
            }
            if let Some(m) = max_leases.filter(|&m| m != self.reg.get(slot).max_leases()) {
                self.reconfigure(slot, m, now);
            }
            return false;
        }
        let slot = self.reg.add(kind, value, self.fencing());
        self.reg.init_group(slot, group.flatten());
        self.reg.set_max_leases(slot, max_leases.unwrap_or(1));
        self.reg.order_insert(slot);
        self.sync_avail(slot);
        let mut e = self.resource_event(EventType::ResourceRegistered, now, slot);
        e.group = Some(self.reg.group_name(self.reg.get(slot).group()).cloned());
        self.emit(e);
        true
    }

    /// Sets how many leases `slot` may hold. Lowering it ends no lease: no new one is granted
    /// until fewer than `max` remain.
    fn reconfigure(&mut self, slot: u32, max: u32, now: Millis) {
        self.reg.set_max_leases(slot, max);
        self.sync_avail(slot);
        let mut e = self.resource_event(EventType::ResourceReconfigured, now, slot);
        e.max_leases = Some(max);
        self.emit(e);
    }

    /// Removes the resource, its cells, its block and its leases.
    pub(crate) fn deregister(&mut self, slot: u32, now: Millis) {
        self.next_change_forget(Some(slot));
        self.leases_and_block_dropped(slot);
        self.set_avail(slot, false);
        let ids: Vec<u32> = self.ctxs.ids().collect();
        for ctx in ids {
            self.sync_context(ctx);
            let Some(id) = self.cells.find(slot, ctx) else {
                continue;
            };
            let g = self.reg.get(slot).group();
            if self.ctxs.get(ctx).sub(g).is_some() {
                self.sync_sub(ctx, g);
                self.sub_remove(ctx, slot, id);
            }
            let c = self.ctxs.get_mut(ctx);
            c.remove(&mut self.cells, id);
            let gone = self.cells.take(id);
            if let Some(until) = gone.cell().cooldown_until {
                self.cooldown_dropped(ctx, id, until);
            }
            if self.ctxs.get(ctx).cells() == 0 {
                self.ctxs.remove(ctx);
                self.next_change_forget(None);
            }
        }
        // Every index is at the log's end, so no entry will be read again (and none may
        // outlive the slot, which is about to be reused).
        self.sync_order();
        self.sync_all_groups();
        let g = self.reg.get(slot).group();
        self.indexes_caught_up();
        let e = self.resource_event(EventType::ResourceDeregistered, now, slot);
        if self.reg.order_remove(slot) {
            let ids: Vec<u32> = self.ctxs.ids().collect();
            for ctx in ids {
                self.ctxs.get_mut(ctx).sub_dropped(g);
            }
        }
        self.reg.take(slot);
        self.emit(e);
    }

    pub(crate) fn block(&mut self, slot: u32, block: Block, now: Millis) {
        self.blocked(slot, block);
        self.sync_avail(slot);
        let mut e = self.resource_event(EventType::ResourceBlocklisted, now, slot);
        match block {
            Block::Until(until) => e.until = Some(until),
            Block::Permanent => e.permanent = true,
        }
        self.emit(e);
    }

    /// Returns true when the resource was blocked.
    pub(crate) fn unblock(&mut self, slot: u32, now: Millis) -> bool {
        if self.reg.set_block(slot, None).is_none() {
            return false;
        }
        self.sync_avail(slot);
        let e = self.resource_event(EventType::ResourceUnblocked, now, slot);
        self.emit(e);
        true
    }
}
