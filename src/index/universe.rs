//! The resources a context index places fresh candidates among: the whole pool (for an
//! ungrouped `acquire`) or one group's members (for each group a grouped `acquire` lists).
//! Both answer the same questions from an order with availability counts (`registry/order.rs`,
//! `registry/groups.rs`); the index (`cells.rs`) is written once against this trait, and
//! compiled once (it takes `&dyn Universe`: a second monomorphised copy of the index cost the
//! WebAssembly module kilobytes, and the calls it makes through the trait are off the
//! acquire → report → release path).

use std::cmp::Ordering;

use crate::registry::Registry;
use crate::registry::order::OrderSeq;
use crate::seq::chunks::Loc;

pub trait Universe {
    /// Whether `slot` belongs to this universe.
    fn member(&self, slot: u32) -> bool;
    /// Whether `slot` is available now (its live flag, ahead of the counts until synced).
    fn is_avail(&self, slot: u32) -> bool;
    /// Members in the order (for choosing between a walk and rank queries).
    fn len(&self) -> usize;
    /// No members.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Available members counted by the order.
    fn available(&self) -> u32;
    /// Available members strictly before `slot`.
    fn rank(&self, slot: u32) -> u32;
    /// The `k`-th available member.
    fn select(&self, k: u32) -> u32;
    /// Order between two members.
    fn order_cmp(&self, a: u32, b: u32) -> Ordering;
    /// Every member in order with whether the order counts it available.
    fn order_iter(&self) -> Box<dyn Iterator<Item = (u32, bool)> + '_>;
}

impl Universe for Registry {
    #[inline]
    fn member(&self, _slot: u32) -> bool {
        true
    }
    #[inline]
    fn is_avail(&self, slot: u32) -> bool {
        self.get(slot).is_available()
    }
    fn len(&self) -> usize {
        Registry::len(self)
    }
    #[inline]
    fn available(&self) -> u32 {
        Registry::available(self)
    }
    #[inline]
    fn rank(&self, slot: u32) -> u32 {
        Registry::rank(self, slot)
    }
    fn select(&self, k: u32) -> u32 {
        Registry::select(self, k)
    }
    #[inline]
    fn order_cmp(&self, a: u32, b: u32) -> Ordering {
        Registry::order_cmp(self, a, b)
    }
    fn order_iter(&self) -> Box<dyn Iterator<Item = (u32, bool)> + '_> {
        Box::new(Registry::order_iter(self))
    }
}

/// One group's members.
pub struct GroupUni<'a> {
    reg: &'a Registry,
    group: u32,
    seq: &'a OrderSeq,
    loc: &'a [Loc],
}

impl<'a> GroupUni<'a> {
    pub fn new(reg: &'a Registry, group: u32) -> GroupUni<'a> {
        let (seq, loc) = reg.groups().order(group);
        GroupUni { reg, group, seq, loc }
    }
}

impl Universe for GroupUni<'_> {
    fn member(&self, slot: u32) -> bool {
        self.reg.get(slot).group() == self.group
    }
    fn is_avail(&self, slot: u32) -> bool {
        self.reg.get(slot).is_available()
    }
    fn len(&self) -> usize {
        self.seq.len()
    }
    fn available(&self) -> u32 {
        self.seq.available()
    }
    fn rank(&self, slot: u32) -> u32 {
        self.seq.rank(self.loc, slot)
    }
    fn select(&self, k: u32) -> u32 {
        self.seq.select(k)
    }
    fn order_cmp(&self, a: u32, b: u32) -> Ordering {
        self.seq.order_cmp(self.loc, a, b)
    }
    fn order_iter(&self) -> Box<dyn Iterator<Item = (u32, bool)> + '_> {
        Box::new(self.seq.order_iter())
    }
}
