//! The resource order: every registered resource in canonical key order (kind, then value by
//! UTF-8 bytes), with a count of the available ones (registered, not leased, not blocked).
//!
//! Answers "how many available resources come before this one" (`rank`), "which is the k-th
//! available resource" (`select`) and "which of two resources comes first" (`less`, two array
//! reads, no string comparison) in O(log n). Contexts use it to place fresh (cell-less)
//! candidates between their cells. It knows nothing of contexts or cells.

use std::cmp::Ordering;

use super::blocks::{BlockList, Entry, Loc, Summary};
use crate::registry::Registry;

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Count(pub u32);

impl Summary for Count {
    const EMPTY: Count = Count(0);
    fn combine(&self, other: &Count) -> Count {
        Count(self.0 + other.0)
    }
    fn replace(&self, old: &Count, new: &Count) -> Option<Count> {
        Some(Count(self.0 - old.0 + new.0))
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Slot {
    pub slot: u32,
    pub avail: bool,
}

impl Entry for Slot {
    type Sum = Count;
    fn id(&self) -> u32 {
        self.slot
    }
    fn summary(&self) -> Count {
        Count(u32::from(self.avail))
    }
}

#[derive(Debug, Clone, Default)]
pub struct OrderIndex {
    list: BlockList<Slot>,
    /// Resource slot → where it sits in `list`.
    loc: Vec<Loc>,
    /// Position in the availability log up to which the counts are exact.
    pub(crate) cursor: u64,
}

fn place(loc: &mut Vec<Loc>, slot: u32, at: Loc) {
    let i = slot as usize;
    if loc.len() <= i {
        loc.resize(i + 1, Loc::default());
    }
    loc[i] = at;
}

impl OrderIndex {
    pub fn heap_bytes(&self) -> usize {
        self.list.heap_bytes() + self.loc.capacity() * std::mem::size_of::<Loc>()
    }
}

impl Registry {
    /// Puts a stored slot into the order, unavailable until `set_avail`.
    pub fn order_insert(&mut self, slot: u32) {
        let at = {
            let r = self.get(slot);
            let key = (r.kind, r.value.as_bytes());
            self.order.list.lower_bound(|e| {
                let o = self.get(e.slot);
                (o.kind, o.value.as_bytes()) < key
            })
        };
        let OrderIndex { list, loc, .. } = &mut self.order;
        list.insert(at.block, at.index as usize, Slot { slot, avail: false }, |s, at| place(loc, s, at));
    }

    /// Brings the order's tree up to date (after insertions and removals).
    pub fn order_ensure(&mut self) {
        self.order.list.ensure();
    }

    /// Takes a slot out of the order.
    pub fn order_remove(&mut self, slot: u32) {
        let OrderIndex { list, loc, .. } = &mut self.order;
        let at = loc[slot as usize];
        list.remove(at, |s, at| place(loc, s, at));
    }

    /// Re-reads every resource's availability (when the log no longer reaches back far enough).
    pub fn order_refresh_all(&mut self) {
        let entries: Vec<Slot> =
            self.order.list.iter().map(|e| Slot { slot: e.slot, avail: self.get(e.slot).avail }).collect();
        let loc = &mut self.order.loc;
        self.order.list = BlockList::from_sorted(entries, |s, at| place(loc, s, at));
    }

    /// Rebuilds the whole order from scratch (restore).
    /// The caller sets the cursor.
    pub fn order_rebuild(&mut self) {
        let mut slots: Vec<u32> = self.live_slots().collect();
        crate::sort::sort_ids(&mut slots, &|a, b| {
            let (ra, rb) = (self.get(a), self.get(b));
            (ra.kind, ra.value.as_bytes()).cmp(&(rb.kind, rb.value.as_bytes()))
        });
        let entries: Vec<Slot> =
            slots.iter().map(|&slot| Slot { slot, avail: self.get(slot).avail }).collect();
        let loc = &mut self.order.loc;
        self.order.list = BlockList::from_sorted(entries, |s, at| place(loc, s, at));
    }

    /// Whether the order counts `slot` as available.
    fn order_avail(&self, slot: u32) -> bool {
        self.order.list.get(self.order.loc[slot as usize]).avail
    }

    /// Sets whether the order counts `slot` as available.
    pub fn set_order_avail(&mut self, slot: u32, avail: bool) {
        let at = self.order.loc[slot as usize];
        self.order.list.modify(at, |e| e.avail = avail);
    }

    /// Number of available resources.
    pub fn available(&self) -> u32 {
        self.order.list.total().0
    }

    /// Available resources strictly before `slot` in canonical order.
    pub fn rank(&self, slot: u32) -> u32 {
        let at = self.order.loc[slot as usize];
        let list = &self.order.list;
        let before = list.prefix(list.position(at.block)).0;
        let within = list.block(at.block).entries[..at.index as usize].iter().filter(|e| e.avail).count();
        before + within as u32
    }

    /// The `k`-th (from 0) available resource in canonical order.
    pub fn select(&self, k: u32) -> u32 {
        let list = &self.order.list;
        let mut base = 0;
        let pos = list.descend(|c| {
            if k < base + c.0 {
                true
            } else {
                base += c.0;
                false
            }
        });
        let pos = pos.expect("select below the available count");
        let mut left = k - base;
        for e in list.block_at(pos).entries.iter() {
            if e.avail {
                if left == 0 {
                    return e.slot;
                }
                left -= 1;
            }
        }
        unreachable!("select({k}) past the available count")
    }

    /// Canonical order between two registered resources, from their positions.
    pub fn order_cmp(&self, a: u32, b: u32) -> Ordering {
        let (la, lb) = (self.order.loc[a as usize], self.order.loc[b as usize]);
        let list = &self.order.list;
        (list.position(la.block), la.index).cmp(&(list.position(lb.block), lb.index))
    }

    /// Every slot in canonical order with whether the order counts it available.
    pub fn order_iter(&self) -> impl Iterator<Item = (u32, bool)> + '_ {
        self.order.list.iter().map(|e| (e.slot, e.avail))
    }

    /// All live slots in canonical order.
    pub fn in_order(&self) -> Vec<u32> {
        self.order.list.iter().map(|e| e.slot).collect()
    }

    /// Checks the order's structure and counts (tests).
    pub fn verify_order(&self) -> Result<(), String> {
        self.order.list.verify()?;
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
            if self.order_avail(slot) != r.avail || r.avail != r.unclaimed() {
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
