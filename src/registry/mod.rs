//! The registered resources: identity, lookup by `(kind, value)`, capacity, lease records.
//!
//! Resources live in a slab addressed by `u32` slot; slots are reused after deregistration.
//! `Registry` stores them (this file), each one a `Resource` (`resource.rs`); the ordering
//! index over them (which is available, ranks, selection) is `order.rs`, kept in step with
//! them, and each group's order, by `order_upkeep.rs`; the groups are `groups.rs`; the
//! blocklist (block records, their count, the queue of ends) is `blocklist.rs`; the rules for
//! leases and blocks are in `pool/`. This module only stores.

use std::rc::Rc;

use rustc_hash::FxHashMap;

pub mod blocklist;
pub mod groups;
pub mod order;
mod order_upkeep;
mod resource;

use crate::redact::redact;
use crate::slab::Slab;
use crate::types::{Kind, Millis};
use blocklist::{Block, Blocklist};
use groups::{Groups, UNGROUPED};
use order::OrderIndex;
use resource::lease_index;
pub use resource::{LeaseRec, NO_CELL, NO_SEQ, Resource, same_text};

#[derive(Debug, Default, Clone)]
pub struct Registry {
    slots: Slab<Resource>,
    by_key: [FxHashMap<Rc<str>, u32>; 3],
    /// Canonical order and availability counts (see `order.rs`).
    order: OrderIndex,
    /// The slot most likely to be looked up next (the last one leased): `find` tries it first.
    hint: u32,
    /// Live leases, over every resource.
    leased: usize,
    /// The block records' count and queue of ends.
    blocks: Blocklist,
    /// The groups and each one's members in order.
    groups: Groups,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Every slot is below this (for tables by slot).
    pub fn slot_bound(&self) -> usize {
        self.slots.id_bound()
    }

    pub fn find(&self, kind: Kind, value: &str) -> Option<u32> {
        // A lease's value is the registry's own string: when `value` is that very string (same
        // address and length, so the same bytes, since the registry keeps it alive and
        // unchanged) no hashing is needed. Report and release after acquire take this path.
        if let Some(r) = self.try_get(self.hint)
            && r.kind == kind
            && std::ptr::eq(r.value.as_ptr(), value.as_ptr())
            && r.value.len() == value.len()
        {
            return Some(self.hint);
        }
        self.by_key[kind.index()].get(value).copied()
    }

    /// Sets `slot`'s availability flag; true when it changed (the caller logs the change).
    #[inline]
    pub fn set_avail(&mut self, slot: u32, avail: bool) -> bool {
        let r = self.get_mut(slot);
        if r.avail == avail {
            return false;
        }
        r.avail = avail;
        true
    }

    /// Sets the sequence number of `slot`'s last availability-log entry; returns the previous.
    #[inline]
    pub fn replace_toggle(&mut self, slot: u32, seq: u64) -> u64 {
        std::mem::replace(&mut self.get_mut(slot).last_toggle, seq)
    }

    /// Forgets `slot`'s last log entry, if `slot` is still registered (the log was cleared).
    pub fn forget_toggle(&mut self, slot: u32) {
        if let Some(r) = self.slots.try_get_mut(slot) {
            r.last_toggle = NO_SEQ;
        }
    }

    /// Notes the slot most likely to be looked up next (`find` tries it first).
    #[inline]
    pub fn set_hint(&mut self, slot: u32) {
        self.hint = slot;
    }

    /// The position in the availability log up to which the order's counts are exact.
    pub fn order_cursor(&self) -> u64 {
        self.order.cursor
    }

    pub fn set_order_cursor(&mut self, cursor: u64) {
        self.order.cursor = cursor;
    }

    /// The id of the resource registered in `slot`.
    pub fn id_of(&self, slot: u32) -> crate::ids::ResourceId {
        crate::ids::ResourceId { slot, generation: self.slots.generation(slot) }
    }

    /// The slot of the resource `id` names, if it is still registered.
    #[inline]
    pub fn slot_of(&self, id: crate::ids::ResourceId) -> Option<u32> {
        self.slots.try_get_at(id.slot, id.generation).map(|_| id.slot)
    }

    /// The resource in `slot`, if one is registered there.
    pub fn try_get(&self, slot: u32) -> Option<&Resource> {
        self.slots.try_get(slot)
    }

    pub fn get(&self, slot: u32) -> &Resource {
        self.slots.get(slot)
    }

    fn get_mut(&mut self, slot: u32) -> &mut Resource {
        self.slots.get_mut(slot)
    }

    /// Stores a new resource (not yet in the order index), registered when the fencing
    /// high-water mark was `since` (0 for one restored from a snapshot); returns its slot.
    pub fn add(&mut self, kind: Kind, value: &str, since: u64) -> u32 {
        let value: Rc<str> = Rc::from(value);
        let display = match redact(kind, &value) {
            std::borrow::Cow::Borrowed(_) => Rc::clone(&value),
            std::borrow::Cow::Owned(s) => Rc::from(s),
        };
        let res = Resource {
            kind,
            value: Rc::clone(&value),
            display,
            leases: Vec::new(),
            max_leases: 1,
            block: None,
            avail: false,
            last_toggle: NO_SEQ,
            group: UNGROUPED,
            since,
        };
        let slot = self.slots.insert(res);
        self.by_key[kind.index()].insert(value, slot);
        slot
    }

    /// Room for `by_kind[k]` more resources of each kind (`Kind::index` order), in the key
    /// tables and the canonical order: a restore that knows its counts adds them with no table
    /// grown (and copied, or every value hashed again) on the way. Groups' orders grow as they go.
    pub fn reserve(&mut self, by_kind: [usize; 3]) {
        let n = by_kind.iter().sum();
        self.slots.reserve(n);
        self.order.seq.reserve(n);
        self.order.loc.reserve(n);
        self.groups.reserve_loc(n);
        for (map, n) in self.by_key.iter_mut().zip(by_kind) {
            map.reserve(n);
        }
    }

    /// Registered resources of each kind (`Kind::index` order).
    pub fn counts_by_kind(&self) -> [usize; 3] {
        self.by_key.each_ref().map(|m| m.len())
    }

    /// Forgets a resource that has already left the order index.
    pub fn take(&mut self, slot: u32) -> Resource {
        let res = self.slots.remove(slot);
        self.by_key[res.kind.index()].remove(&*res.value);
        res
    }

    /// Adds a lease to `slot` (its token above every other it holds), keeping the count.
    pub fn add_lease(&mut self, slot: u32, rec: LeaseRec) {
        let leases = &mut self.get_mut(slot).leases;
        debug_assert!(leases.last().is_none_or(|l| l.token < rec.token), "tokens grow");
        leases.push(rec);
        self.leased += 1;
    }

    /// Ends `slot`'s lease with token `token` (keeping the count); returns it.
    pub fn take_lease(&mut self, slot: u32, token: u64) -> Option<LeaseRec> {
        self.take_lease_if(slot, token, |_| true)
    }

    /// Ends `slot`'s lease with token `token` when `holds` says so of it (keeping the count);
    /// returns it. One lookup for the check and the removal.
    #[inline]
    pub fn take_lease_if(
        &mut self,
        slot: u32,
        token: u64,
        holds: impl FnOnce(&LeaseRec) -> bool,
    ) -> Option<LeaseRec> {
        let leases = &mut self.slots.get_mut(slot).leases;
        let i = lease_index(leases, token)?;
        if !holds(&leases[i]) {
            return None;
        }
        // The newest lease is the one most often ended (the only one, at capacity 1).
        let rec = if i + 1 == leases.len() { leases.pop().expect("i is in range") } else { leases.remove(i) };
        self.leased -= 1;
        Some(rec)
    }

    /// Ends every lease of `slot` (keeping the count); returns them, oldest first.
    pub fn take_leases(&mut self, slot: u32) -> Vec<LeaseRec> {
        let leases = std::mem::take(&mut self.get_mut(slot).leases);
        self.leased -= leases.len();
        leases
    }

    /// Sets how many leases `slot` may hold (availability is the caller's to re-derive).
    pub fn set_max_leases(&mut self, slot: u32, max: u32) {
        self.get_mut(slot).max_leases = max;
    }

    /// Puts or ends `slot`'s block through the blocklist; returns the previous one. (One copy:
    /// blocks change rarely, and each inlined copy of the queue upkeep costs the module.)
    #[inline(never)]
    pub fn set_block(&mut self, slot: u32, block: Option<Block>) -> Option<Block> {
        let Registry { slots, blocks, .. } = self;
        let r = slots.get_mut(slot);
        blocks.set(&mut r.block, slot, block)
    }

    /// The blocklist (count and temporary blocks' ends).
    pub fn blocks(&self) -> &Blocklist {
        &self.blocks
    }

    /// Moves the end of `slot`'s lease `token` to `expires_at` (noting the resource's group
    /// now); returns the old end and when it was granted, or `None` when the resource holds no
    /// such lease.
    pub fn extend_lease(
        &mut self,
        slot: u32,
        token: u64,
        expires_at: Millis,
        group: Option<Rc<str>>,
    ) -> Option<(Millis, Millis)> {
        let leases = &mut self.get_mut(slot).leases;
        let i = lease_index(leases, token)?;
        let rec = &mut leases[i];
        rec.group = group;
        let old = std::mem::replace(&mut rec.expires_at, expires_at);
        Some((old, rec.leased_at))
    }

    /// Notes that `slot`'s leases held in `context` now have cell `cell` there.
    pub fn note_lease_cell(&mut self, slot: u32, context: &str, cell: u32) {
        for l in &mut self.get_mut(slot).leases {
            if same_text(&l.context, context) {
                l.cell = cell;
            }
        }
    }

    /// Live leases, over every resource.
    pub fn leased(&self) -> usize {
        self.leased
    }

    /// Resources blocked.
    pub fn blocked(&self) -> usize {
        self.blocks.len()
    }

    /// Live slots in no particular order.
    pub fn live_slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.ids()
    }

    /// Canonical key order: kind (declaration order), then value by UTF-8 bytes.
    pub fn key_less(&self, a: u32, b: u32) -> bool {
        let (ra, rb) = (self.get(a), self.get(b));
        (ra.kind, ra.value.as_bytes()) < (rb.kind, rb.value.as_bytes())
    }

    /// Approximate heap bytes held (for memory accounting in benchmarks).
    pub fn heap_bytes(&self) -> usize {
        let strings: usize = self.live_slots().map(|s| self.get(s).value.len() + 16).sum();
        let maps: usize = self.by_key.iter().map(|m| m.capacity() * 24).sum();
        self.slots.heap_bytes() + strings + maps + self.order.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slab's and each key table's room.
    fn room(reg: &Registry) -> (usize, [usize; 3]) {
        (reg.slots.heap_bytes(), reg.by_key.each_ref().map(|m| m.capacity()))
    }

    fn fill(reg: &mut Registry, proxies: usize, sessions: usize) {
        for i in 0..proxies {
            reg.add(Kind::Proxy, &format!("proxy-{i}.example:8080"), 0);
        }
        for i in 0..sessions {
            reg.add(Kind::Session, &format!("session-{i}"), 0);
        }
    }

    #[test]
    fn reserved_room_takes_the_resources_without_growing() {
        let mut reg = Registry::new();
        reg.reserve([1000, 0, 30]);
        let before = room(&reg);
        fill(&mut reg, 1000, 30);
        assert_eq!(room(&reg), before, "a table grew (and rehashed) though room was made");
        assert_eq!(reg.counts_by_kind(), [1000, 0, 30]);
        // The control: without the room, the same resources grow the tables on the way.
        let mut grown = Registry::new();
        let empty = room(&grown);
        fill(&mut grown, 1, 0);
        let first = room(&grown);
        fill(&mut grown, 999, 30);
        assert!(room(&grown) != first && first != empty);
    }
}
