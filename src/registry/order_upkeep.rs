//! The registry's orders kept in step with its resources: the canonical order of every
//! resource (`order.rs`'s index) and each group's order of its members (`groups.rs`), by key
//! (kind, then value bytes) and availability — inserting, removing, regrouping, syncing,
//! rebuilding on restore, and the rank and select queries selection asks of them. `impl
//! Registry` only: the resources themselves are `mod.rs`'s.

use std::cmp::Ordering;
use std::rc::Rc;

use rustc_hash::FxHashMap;

use super::groups::Groups;
use super::order::{OrderIndex, OrderSeq};
use super::{Registry, Resource};
use crate::seq::chunks::Loc;
use crate::slab::Slab;

impl Registry {
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

    /// Appends stored slots that come after every slot in the order, in canonical order, to
    /// it and to their groups' orders, each with its availability from its lease and block (a
    /// restore fed parts, built as it is fed: the orders `order_rebuild` would build of them
    /// all). The trees are stale until `order_ensure` and `group_ensure`.
    pub fn order_extend(&mut self, sorted: &[u32]) {
        for &slot in sorted {
            let r = self.get_mut(slot);
            r.avail = r.unclaimed();
        }
        let Registry { order, slots, groups, .. } = self;
        let OrderIndex { seq, loc, .. } = order;
        seq.extend_from(loc, sorted.iter().map(|&s| (s, slots.get(s).avail)));
        for &slot in sorted {
            let r = slots.get(slot);
            let (seq, loc) = groups.order_mut(r.group);
            seq.extend_from(loc, std::iter::once((slot, r.avail)));
        }
    }

    /// Re-reads a slot's availability from its lease and block into both orders (a restore
    /// fed parts, for a block that came after the slot was appended).
    pub fn order_avail_reread(&mut self, slot: u32) {
        let r = self.get_mut(slot);
        r.avail = r.unclaimed();
        let (avail, g) = (r.avail, r.group);
        self.set_order_avail(slot, avail);
        let (seq, loc) = self.groups.order_mut(g);
        seq.set_avail(loc, slot, avail);
    }

    /// Brings every group's tree up to date.
    pub fn groups_ensure(&mut self) {
        for g in self.groups.ids().collect::<Vec<_>>() {
            self.group_ensure(g);
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
}

/// Inserts `slot` into an order by its key (kind, then value bytes): one copy for the pool's
/// order and every group's.
#[inline(never)]
fn insert_by_key(seq: &mut OrderSeq, loc: &mut Vec<Loc>, slots: &Slab<Resource>, slot: u32) {
    let key = |s: u32| {
        let r = slots.get(s);
        (r.kind, r.value.as_bytes())
    };
    let mine = key(slot);
    seq.insert(loc, slot, |other| key(other) < mine);
}
