//! The registered resources: identity, lookup by `(kind, value)`, capacity, lease records.
//!
//! Resources live in a slab addressed by `u32` slot; slots are reused after deregistration. The
//! ordering index over them (which is available, ranks, selection) is `order.rs`; the
//! blocklist (block records, their count, the queue of ends) is `blocklist.rs`; the rules for
//! leases and blocks are in `pool/`. This module only stores.

use std::cmp::Ordering;
use std::rc::Rc;

use rustc_hash::FxHashMap;

pub mod blocklist;
pub mod groups;
pub mod order;

use crate::redact::redact;
use crate::slab::Slab;
use crate::types::{Kind, Millis};
use blocklist::{Block, Blocklist};
use groups::{Groups, UNGROUPED};
use order::OrderIndex;

/// One live lease on a resource. Leases are runtime state: never persisted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRec {
    pub context: Rc<str>,
    pub token: u64,
    pub leased_at: Millis,
    pub expires_at: Millis,
    /// The resource's group when the lease was granted or last renewed.
    pub group: Option<Rc<str>>,
    /// The resource's cell in `context`, or `NO_CELL` (lets `report` skip a lookup).
    pub cell: u32,
}

/// Marks "no cell" in a lease record.
pub const NO_CELL: u32 = u32::MAX;

/// Marks "no log entry" in toggle bookkeeping.
pub const NO_SEQ: u64 = u64::MAX;

/// Whether two strings hold the same text; one the pool handed out (a lease's context, a
/// value) and given back is recognised by its address without reading its bytes.
#[inline]
pub fn same_text(a: &str, b: &str) -> bool {
    a.len() == b.len() && (std::ptr::eq(a.as_ptr(), b.as_ptr()) || a == b)
}

#[derive(Debug, Clone)]
pub struct Resource {
    pub kind: Kind,
    pub value: Rc<str>,
    /// The value as it may be shown in events, errors and logs.
    pub display: Rc<str>,
    /// The live leases, oldest first (tokens grow in grant order, so by token too). Changed only
    /// through `Registry` (`add_lease`, `take_lease`, `extend_lease`, `note_lease_cell`), which
    /// keeps the count of live leases.
    leases: Vec<LeaseRec>,
    /// How many leases it may hold at once (SPEC §3, capacity: 1–1,024).
    max_leases: u32,
    /// Changed only by the blocklist (`Registry::set_block`).
    block: Option<Block>,
    /// Registered, holding fewer leases than `max_leases`, not blocked (kept by
    /// `Core::sync_avail`; false while leaving).
    avail: bool,
    /// Sequence number of this resource's last entry in the availability log.
    last_toggle: u64,
    /// Its group's id (`groups.rs`; `UNGROUPED` for none). Changed only through `Registry`.
    group: u32,
}

impl Resource {
    /// Registered, not blocked, room for a lease: may be handed out (cell rules aside).
    pub fn is_available(&self) -> bool {
        self.avail
    }

    /// The oldest live lease on this resource, if any.
    #[inline]
    pub fn lease(&self) -> Option<&LeaseRec> {
        self.leases.first()
    }

    /// The newest live lease on this resource, if any (the one a report or release most
    /// likely names).
    #[inline]
    pub fn newest_lease(&self) -> Option<&LeaseRec> {
        self.leases.last()
    }

    /// Every live lease, oldest first.
    #[inline]
    pub fn leases(&self) -> &[LeaseRec] {
        &self.leases
    }

    /// The live lease with fencing token `token`, if any.
    #[inline]
    pub fn lease_by_token(&self, token: u64) -> Option<&LeaseRec> {
        lease_index(&self.leases, token).map(|i| &self.leases[i])
    }

    /// Whether one of its leases is held in `context` and still in force at `now` (leases whose
    /// end has passed but which time passing has not yet ended do not count).
    pub fn leased_in(&self, context: &str, now: Millis) -> bool {
        self.leases.iter().any(|l| now < l.expires_at && same_text(&l.context, context))
    }

    /// How many leases it may hold at once.
    #[inline]
    pub fn max_leases(&self) -> u32 {
        self.max_leases
    }

    /// The operator's block on this resource, if any.
    pub fn block(&self) -> Option<Block> {
        self.block
    }

    /// The id of the resource's group (`UNGROUPED` for none).
    #[inline]
    pub fn group(&self) -> u32 {
        self.group
    }

    /// Room for another lease and not blocked: what availability should be.
    pub(crate) fn unclaimed(&self) -> bool {
        (self.leases.len() as u32) < self.max_leases && self.block.is_none()
    }
}

/// The position of the lease with token `token` in a list sorted by token.
#[inline]
fn lease_index(leases: &[LeaseRec], token: u64) -> Option<usize> {
    match leases {
        [] => None,
        [only] => (only.token == token).then_some(0),
        _ => leases.binary_search_by_key(&token, |l| l.token).ok(),
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
            leases: Vec::new(),
            max_leases: 1,
            block: None,
            avail: false,
            last_toggle: NO_SEQ,
            group: UNGROUPED,
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

    // --- the canonical order (`order.rs`), with the keys and availability it is kept by ---

    /// Puts a stored slot into the order, unavailable until `set_order_avail`.
    pub fn order_insert(&mut self, slot: u32) {
        let Registry { order, slots, .. } = self;
        insert_by_key(&mut order.seq, &mut order.loc, slots, slot);
        self.group_insert(slot);
    }

    /// Puts a slot into its group's order (unavailable there until the group syncs).
    fn group_insert(&mut self, slot: u32) {
        let Registry { groups, slots, .. } = self;
        let (seq, loc) = groups.order_mut(slots.get(slot).group);
        insert_by_key(seq, loc, slots, slot);
    }

    /// Takes a slot out of its group's order (forgetting the group if it empties; true then).
    fn group_remove(&mut self, slot: u32) -> bool {
        let g = self.get(slot).group;
        let (seq, loc) = self.groups.order_mut(g);
        seq.remove(loc, slot);
        self.groups.drop_if_empty(g)
    }

    /// Moves `slot` to group `group` (by name; `None`: ungrouped). The caller has made the
    /// resource unavailable and synced every index of both groups first. Returns the old
    /// group's id and whether that group was forgotten (it emptied).
    pub fn set_group(&mut self, slot: u32, group: Option<&str>) -> (u32, bool) {
        let old = self.get(slot).group;
        let dropped = self.group_remove(slot);
        let id = self.groups.find_or_add(group);
        self.get_mut(slot).group = id;
        self.group_insert(slot);
        (old, dropped)
    }

    /// Sets a newly stored slot's group (before `order_insert`).
    pub fn init_group(&mut self, slot: u32, group: Option<&str>) {
        let id = self.groups.find_or_add(group);
        self.get_mut(slot).group = id;
    }

    /// The groups.
    pub fn groups(&self) -> &Groups {
        &self.groups
    }

    /// The name of group `id` (`None`: ungrouped).
    pub fn group_name(&self, id: u32) -> Option<&Rc<str>> {
        self.groups.get(id).name.as_ref()
    }

    /// Brings group `g`'s availability counts up to date: `changed` are the slots whose
    /// availability may have changed since its cursor, or `None` to re-read every member.
    pub fn sync_group(&mut self, g: u32, changed: Option<&mut dyn Iterator<Item = u32>>, cursor: u64) {
        let Registry { groups, slots, .. } = self;
        let (seq, loc) = groups.order_mut(g);
        match changed {
            None => seq.refresh_all(loc, |s| slots.get(s).avail),
            Some(it) => {
                for s in it {
                    let r = slots.get(s);
                    if r.group == g {
                        seq.set_avail(loc, s, r.avail);
                    }
                }
            }
        }
        groups.get_mut(g).cursor = cursor;
    }

    /// Brings group `g`'s tree up to date (after insertions and removals).
    pub fn group_ensure(&mut self, g: u32) {
        self.groups.order_mut(g).0.ensure();
    }

    /// Brings the order's tree up to date (after insertions and removals).
    pub fn order_ensure(&mut self) {
        self.order.seq.ensure();
    }

    /// Takes a slot out of the order (and its group's); true when its group emptied and was
    /// forgotten.
    pub fn order_remove(&mut self, slot: u32) -> bool {
        let OrderIndex { seq, loc, .. } = &mut self.order;
        seq.remove(loc, slot);
        self.group_remove(slot)
    }

    /// Re-reads every resource's availability into the order.
    pub fn order_refresh_all(&mut self) {
        let Registry { order, slots, .. } = self;
        order.seq.refresh_all(&mut order.loc, |s| slots.get(s).avail);
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
        let OrderIndex { seq, loc, .. } = &mut self.order;
        seq.rebuild_from(loc, sorted.iter().copied());
        // Each group's members, in the same order (groups were set by `init_group`).
        let mut by_group: FxHashMap<u32, Vec<(u32, bool)>> = FxHashMap::default();
        for &(slot, avail) in &sorted {
            by_group.entry(self.get(slot).group).or_default().push((slot, avail));
        }
        for (g, members) in by_group {
            let (seq, loc) = self.groups.order_mut(g);
            seq.rebuild_from(loc, members.into_iter());
        }
    }

    /// Sets whether the order counts `slot` as available.
    pub fn set_order_avail(&mut self, slot: u32, avail: bool) {
        self.order.seq.set_avail(&self.order.loc, slot, avail);
    }

    /// Number of available resources.
    pub fn available(&self) -> u32 {
        self.order.seq.available()
    }

    /// Available resources strictly before `slot` in canonical order.
    pub fn rank(&self, slot: u32) -> u32 {
        self.order.seq.rank(&self.order.loc, slot)
    }

    /// The `k`-th (from 0) available resource in canonical order.
    pub fn select(&self, k: u32) -> u32 {
        self.order.seq.select(k)
    }

    /// Canonical order between two registered resources, from their positions.
    pub fn order_cmp(&self, a: u32, b: u32) -> Ordering {
        self.order.seq.order_cmp(&self.order.loc, a, b)
    }

    /// Every slot in canonical order with whether the order counts it available.
    pub fn order_iter(&self) -> impl Iterator<Item = (u32, bool)> + '_ {
        self.order.seq.order_iter()
    }

    /// All live slots in canonical order.
    pub fn in_order(&self) -> Vec<u32> {
        self.order.seq.in_order()
    }

    /// Checks the order's structure and counts (tests).
    pub fn verify_order(&self) -> Result<(), String> {
        self.order.seq.verify_list()?;
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
            if self.order.seq.avail(&self.order.loc, slot) != r.avail || r.avail != r.unclaimed() {
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

/// Inserts `slot` into an order by its key (kind, then value bytes): one copy for the pool's
/// order and every group's.
#[inline(never)]
fn insert_by_key(
    seq: &mut order::OrderSeq,
    loc: &mut Vec<crate::seq::chunks::Loc>,
    slots: &Slab<Resource>,
    slot: u32,
) {
    let key = |s: u32| {
        let r = slots.get(s);
        (r.kind, r.value.as_bytes())
    };
    let mine = key(slot);
    seq.insert(loc, slot, |other| key(other) < mine);
}
