//! The registered resources: identity, lookup by `(kind, value)`, lease records.
//!
//! Resources live in a slab addressed by `u32` slot; slots are reused after deregistration. The
//! ordering index over them (which is available, ranks, selection) is `order.rs`; the
//! blocklist (block records, their count, the queue of ends) is `blocklist.rs`; the rules for
//! leases and blocks are in `pool/`. This module only stores.

use std::cmp::Ordering;
use std::rc::Rc;

use rustc_hash::FxHashMap;

pub mod blocklist;
pub mod order;

use crate::redact::redact;
use crate::slab::Slab;
use crate::types::{Kind, Millis};
use blocklist::{Block, Blocklist};
use order::OrderIndex;

/// The live lease on a resource. Leases are runtime state: never persisted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRec {
    pub context: Rc<str>,
    pub token: u64,
    pub leased_at: Millis,
    pub expires_at: Millis,
    /// The resource's cell in `context`, or `NO_CELL` (lets `report` skip a lookup).
    pub cell: u32,
}

/// Marks "no cell" in a lease record.
pub const NO_CELL: u32 = u32::MAX;

/// Marks "no log entry" in toggle bookkeeping.
pub const NO_SEQ: u64 = u64::MAX;

#[derive(Debug, Clone)]
pub struct Resource {
    pub kind: Kind,
    pub value: Rc<str>,
    /// The value as it may be shown in events, errors and logs.
    pub display: Rc<str>,
    /// Changed only through `Registry` (`set_lease`, `extend_lease`, `note_lease_cell`), which
    /// keeps the count of leased resources.
    lease: Option<LeaseRec>,
    /// Changed only by the blocklist (`Registry::set_block`).
    block: Option<Block>,
    /// Registered, not leased, not blocked (kept by `Core::sync_avail`; false while leaving).
    avail: bool,
    /// Sequence number of this resource's last entry in the availability log.
    last_toggle: u64,
}

impl Resource {
    /// Registered, not blocked, not leased: may be handed out (cell rules aside).
    pub fn is_available(&self) -> bool {
        self.avail
    }

    /// The live lease on this resource, if any.
    #[inline]
    pub fn lease(&self) -> Option<&LeaseRec> {
        self.lease.as_ref()
    }

    /// The operator's block on this resource, if any.
    pub fn block(&self) -> Option<Block> {
        self.block
    }

    /// Neither leased nor blocked: what availability should be.
    pub(crate) fn unclaimed(&self) -> bool {
        self.lease.is_none() && self.block.is_none()
    }
}

#[derive(Debug, Default, Clone)]
pub struct Registry {
    slots: Slab<Resource>,
    by_key: [FxHashMap<Rc<str>, u32>; 3],
    /// Canonical order and availability counts (see `order.rs`).
    order: OrderIndex,
    /// The slot most likely to be looked up next (the last one leased): `find` tries it first.
    hint: u32,
    /// Resources with a lease.
    leased: usize,
    /// The block records' count and queue of ends.
    blocks: Blocklist,
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

    /// The resource in `slot`, if one is registered there.
    pub fn try_get(&self, slot: u32) -> Option<&Resource> {
        self.slots.try_get(slot)
    }

    pub fn get(&self, slot: u32) -> &Resource {
        self.slots.get(slot)
    }

    pub fn get_mut(&mut self, slot: u32) -> &mut Resource {
        self.slots.get_mut(slot)
    }

    /// Stores a new resource (not yet in the order index) and returns its slot.
    pub fn add(&mut self, kind: Kind, value: &str) -> u32 {
        let value: Rc<str> = Rc::from(value);
        let display = match redact(kind, &value) {
            std::borrow::Cow::Borrowed(_) => Rc::clone(&value),
            std::borrow::Cow::Owned(s) => Rc::from(s),
        };
        let res = Resource {
            kind,
            value: Rc::clone(&value),
            display,
            lease: None,
            block: None,
            avail: false,
            last_toggle: NO_SEQ,
        };
        let slot = self.slots.insert(res);
        self.by_key[kind.index()].insert(value, slot);
        slot
    }

    /// Forgets a resource that has already left the order index.
    pub fn take(&mut self, slot: u32) -> Resource {
        let res = self.slots.remove(slot);
        self.by_key[res.kind.index()].remove(&*res.value);
        res
    }

    /// Puts or ends `slot`'s lease (keeping the count); returns the previous one.
    pub fn set_lease(&mut self, slot: u32, lease: Option<LeaseRec>) -> Option<LeaseRec> {
        let now_leased = lease.is_some();
        let old = std::mem::replace(&mut self.get_mut(slot).lease, lease);
        self.leased = self.leased + usize::from(now_leased) - usize::from(old.is_some());
        old
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

    /// Moves the end of `slot`'s lease to `expires_at`; returns the old end and when it was
    /// granted, or `None` when the resource holds no lease.
    pub fn extend_lease(&mut self, slot: u32, expires_at: Millis) -> Option<(Millis, Millis)> {
        let rec = self.get_mut(slot).lease.as_mut()?;
        let old = std::mem::replace(&mut rec.expires_at, expires_at);
        Some((old, rec.leased_at))
    }

    /// Notes that `slot`'s lease, when held in `context`, now has cell `cell` there.
    pub fn note_lease_cell(&mut self, slot: u32, context: &str, cell: u32) {
        if let Some(l) = &mut self.get_mut(slot).lease
            && *l.context == *context
        {
            l.cell = cell;
        }
    }

    /// Resources holding a lease.
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

    // --- the canonical order (`order.rs`), with the keys and availability it is kept by ---

    /// Puts a stored slot into the order, unavailable until `set_order_avail`.
    pub fn order_insert(&mut self, slot: u32) {
        let Registry { order, slots, .. } = self;
        let key = |s: u32| {
            let r = slots.get(s);
            (r.kind, r.value.as_bytes())
        };
        let mine = key(slot);
        order.insert(slot, |other| key(other) < mine);
    }

    /// Brings the order's tree up to date (after insertions and removals).
    pub fn order_ensure(&mut self) {
        self.order.ensure();
    }

    /// Takes a slot out of the order.
    pub fn order_remove(&mut self, slot: u32) {
        self.order.remove(slot);
    }

    /// Re-reads every resource's availability into the order.
    pub fn order_refresh_all(&mut self) {
        let Registry { order, slots, .. } = self;
        order.refresh_all(|s| slots.get(s).avail);
    }

    /// Sets every resource's availability from its lease and block (restore, before
    /// `order_rebuild`; nothing is logged).
    pub fn restore_avail(&mut self) {
        for slot in self.live_slots().collect::<Vec<_>>() {
            let r = self.get_mut(slot);
            r.avail = r.unclaimed();
        }
    }

    /// Rebuilds the whole order from scratch (restore). The caller sets the cursor.
    pub fn order_rebuild(&mut self) {
        let mut slots: Vec<u32> = self.live_slots().collect();
        crate::sort::sort_ids(&mut slots, &|a, b| {
            let (ra, rb) = (self.get(a), self.get(b));
            (ra.kind, ra.value.as_bytes()).cmp(&(rb.kind, rb.value.as_bytes()))
        });
        let sorted: Vec<(u32, bool)> = slots.iter().map(|&s| (s, self.get(s).avail)).collect();
        self.order.rebuild_from(sorted.into_iter());
    }

    /// Sets whether the order counts `slot` as available.
    pub fn set_order_avail(&mut self, slot: u32, avail: bool) {
        self.order.set_avail(slot, avail);
    }

    /// Number of available resources.
    pub fn available(&self) -> u32 {
        self.order.available()
    }

    /// Available resources strictly before `slot` in canonical order.
    pub fn rank(&self, slot: u32) -> u32 {
        self.order.rank(slot)
    }

    /// The `k`-th (from 0) available resource in canonical order.
    pub fn select(&self, k: u32) -> u32 {
        self.order.select(k)
    }

    /// Canonical order between two registered resources, from their positions.
    pub fn order_cmp(&self, a: u32, b: u32) -> Ordering {
        self.order.order_cmp(a, b)
    }

    /// Every slot in canonical order with whether the order counts it available.
    pub fn order_iter(&self) -> impl Iterator<Item = (u32, bool)> + '_ {
        self.order.order_iter()
    }

    /// All live slots in canonical order.
    pub fn in_order(&self) -> Vec<u32> {
        self.order.in_order()
    }

    /// Checks the order's structure and counts (tests).
    pub fn verify_order(&self) -> Result<(), String> {
        self.order.verify_list()?;
        let order = self.in_order();
        if order.len() != self.len() {
            return Err(format!("order holds {} of {} resources", order.len(), self.len()));
        }
        for w in order.windows(2) {
            if !self.key_less(w[0], w[1]) || self.order_cmp(w[0], w[1]) != Ordering::Less {
                return Err("resource order out of key order".into());
            }
        }
        let mut before = 0;
        for (k, &slot) in order.iter().enumerate() {
            let r = self.get(slot);
            if self.order.avail(slot) != r.avail || r.avail != r.unclaimed() {
                return Err("availability flag differs from lease/block".into());
            }
            if self.rank(slot) != before {
                return Err("rank differs from a count".into());
            }
            if r.avail && self.select(before) != slot {
                return Err(format!("select({before}) is not the {k}-th resource"));
            }
            before += u32::from(r.avail);
        }
        Ok(())
    }

    /// Approximate heap bytes held (for memory accounting in benchmarks).
    pub fn heap_bytes(&self) -> usize {
        let strings: usize = self.live_slots().map(|s| self.get(s).value.len() + 16).sum();
        let maps: usize = self.by_key.iter().map(|m| m.capacity() * 24).sum();
        self.slots.heap_bytes() + strings + maps + self.order.heap_bytes()
    }
}
