//! The resource order: every registered resource in canonical key order (kind, then value by
//! UTF-8 bytes), with a count of the available ones (registered, not leased, not blocked).
//!
//! Answers "how many available resources come before this one" (`rank`), "which is the k-th
//! available resource" (`select`) and "which of two resources comes first" (`less`, two array
//! reads, no string comparison) in O(log n). Contexts use it to place fresh (cell-less)
//! candidates between their cells. It knows nothing of contexts or cells.

use std::cmp::Ordering;

use crate::seq::chunks::{ChunkList, Item, Loc};
use crate::seq::summary_tree::Summary;

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
pub struct OrderItem {
    pub slot: u32,
    pub avail: bool,
}

impl Item for OrderItem {
    type Sum = Count;
    fn id(&self) -> u32 {
        self.slot
    }
    fn summary(&self) -> Count {
        Count(u32::from(self.avail))
    }
}

/// A sequence of resource slots in canonical order with availability counts, whose slots'
/// positions are kept by the owner (`loc`, indexed by slot): the whole pool's order shares
/// the shape with each group's (`groups.rs`), whose members share one position table.
#[derive(Debug, Clone, Default)]
pub struct OrderSeq {
    list: ChunkList<OrderItem>,
}

/// The whole pool's order: a sequence with its own position table.
#[derive(Debug, Clone, Default)]
pub struct OrderIndex {
    pub(super) seq: OrderSeq,
    /// Resource slot → where it sits in `seq`.
    pub(super) loc: Vec<Loc>,
    /// Position in the availability log up to which the counts are exact.
    pub(super) cursor: u64,
}

pub(super) fn place(loc: &mut Vec<Loc>, slot: u32, at: Loc) {
    let i = slot as usize;
    if loc.len() <= i {
        loc.resize(i + 1, Loc::default());
    }
    loc[i] = at;
}

impl OrderIndex {
    pub fn heap_bytes(&self) -> usize {
        self.seq.list.heap_bytes() + self.loc.capacity() * std::mem::size_of::<Loc>()
    }
}

impl OrderSeq {
    /// Entries held.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Puts `slot` into the order, unavailable until `set_avail`: before every resource for
    /// which `comes_before(other)` is false (the caller compares keys).
    pub fn insert(&mut self, loc: &mut Vec<Loc>, slot: u32, comes_before: impl Fn(u32) -> bool) {
        let at = self.list.lower_bound(|e| comes_before(e.slot));
        self.list
            .insert(at.chunk, at.index as usize, OrderItem { slot, avail: false }, |s, at| place(loc, s, at));
    }

    /// Brings the order's tree up to date (after insertions and removals).
    pub fn ensure(&mut self) {
        self.list.ensure();
    }

    /// Takes a slot out of the order.
    pub fn remove(&mut self, loc: &mut Vec<Loc>, slot: u32) {
        let at = loc[slot as usize];
        self.list.remove(at, |s, at| place(loc, s, at));
    }

    /// Re-reads every resource's availability (when the log no longer reaches back far enough).
    pub fn refresh_all(&mut self, loc: &mut Vec<Loc>, avail: impl Fn(u32) -> bool) {
        let entries: Vec<OrderItem> =
            self.list.iter().map(|e| OrderItem { slot: e.slot, avail: avail(e.slot) }).collect();
        self.rebuild(loc, entries);
    }

    /// Rebuilds the whole order from `(slot, available)` in canonical order (restore). The
    /// caller sets the cursor.
    pub fn rebuild_from(&mut self, loc: &mut Vec<Loc>, sorted: impl Iterator<Item = (u32, bool)>) {
        self.rebuild(loc, sorted.map(|(slot, avail)| OrderItem { slot, avail }).collect());
    }

    /// Room for `n` more slots appended by `extend_from`.
    pub fn reserve(&mut self, n: usize) {
        self.list.reserve(n);
    }

    /// Appends slots that come after every slot in the order, in order (`ChunkList::
    /// extend_sorted`); the tree is stale until `ensure`.
    pub fn extend_from(&mut self, loc: &mut Vec<Loc>, sorted: impl Iterator<Item = (u32, bool)>) {
        self.list
            .extend_sorted(sorted.map(|(slot, avail)| OrderItem { slot, avail }), |s, at| place(loc, s, at));
    }

    fn rebuild(&mut self, loc: &mut Vec<Loc>, entries: Vec<OrderItem>) {
        self.list = ChunkList::from_sorted(entries, |s, at| place(loc, s, at));
    }

    /// Whether the order counts `slot` as available.
    pub fn avail(&self, loc: &[Loc], slot: u32) -> bool {
        self.list.get(loc[slot as usize]).avail
    }

    /// Sets whether the order counts `slot` as available.
    pub fn set_avail(&mut self, loc: &[Loc], slot: u32, avail: bool) {
        let at = loc[slot as usize];
        self.list.modify(at, |e| e.avail = avail);
    }

    /// Number of available resources.
    pub fn available(&self) -> u32 {
        self.list.total().0
    }

    /// Available resources strictly before `slot` in canonical order.
    pub fn rank(&self, loc: &[Loc], slot: u32) -> u32 {
        let at = loc[slot as usize];
        let list = &self.list;
        let before = list.prefix(list.position(at.chunk)).0;
        let within = list.chunk(at.chunk).entries[..at.index as usize].iter().filter(|e| e.avail).count();
        before + within as u32
    }

    /// The `k`-th (from 0) available resource in canonical order.
    pub fn select(&self, k: u32) -> u32 {
        let list = &self.list;
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
        for e in list.chunk_at(pos).entries.iter() {
            if e.avail {
                if left == 0 {
                    return e.slot;
                }
                left -= 1;
            }
        }
        unreachable!("select({k}) past the available count")
    }

    /// Canonical order between two resources of this sequence, from their positions.
    pub fn order_cmp(&self, loc: &[Loc], a: u32, b: u32) -> Ordering {
        let (la, lb) = (loc[a as usize], loc[b as usize]);
        let list = &self.list;
        (list.position(la.chunk), la.index).cmp(&(list.position(lb.chunk), lb.index))
    }

    /// Every slot in canonical order with whether the order counts it available.
    pub fn order_iter(&self) -> impl Iterator<Item = (u32, bool)> + '_ {
        self.list.iter().map(|e| (e.slot, e.avail))
    }

    /// All slots in canonical order.
    pub fn in_order(&self) -> Vec<u32> {
        self.list.iter().map(|e| e.slot).collect()
    }

    /// Checks the chunk list's own structure (tests).
    pub fn verify_list(&self) -> Result<(), String> {
        self.list.verify()
    }
}
