//! The resource order: every registered resource in one treap, in canonical key order, counting
//! the available ones (registered, not leased, not blocked) in each subtree.
//!
//! Answers "how many available resources come before this one" (`rank`) and "which is the k-th
//! available resource" (`select`) in O(log n). Contexts use it to place the fresh (cell-less)
//! candidates between their cells. It does not know about contexts or cells.

use super::treap::{self, Arena, Links, NIL};
use crate::registry::Registry;

impl Arena for Registry {
    fn links(&self, i: u32) -> Links {
        self.get(i).links
    }
    fn links_mut(&mut self, i: u32) -> &mut Links {
        &mut self.get_mut(i).links
    }
    fn outranks(&self, a: u32, b: u32) -> bool {
        Registry::outranks(self, a, b)
    }
    fn pull(&mut self, i: u32) {
        let l = self.get(i).links;
        let below = |c: u32| if c == NIL { 0 } else { self.get(c).count };
        let count = below(l.left) + below(l.right) + u32::from(self.get(i).avail);
        self.get_mut(i).count = count;
    }
}

impl Registry {
    /// Puts a stored slot into the order (unavailable until `set_avail`).
    pub fn order_insert(&mut self, slot: u32) {
        self.get_mut(slot).avail = false;
        let mut root = self.root;
        treap::insert(self, &mut root, slot, |r, a, b| r.key_less(a, b));
        self.root = root;
    }

    /// Takes a slot out of the order.
    pub fn order_remove(&mut self, slot: u32) {
        let mut root = self.root;
        treap::remove(self, &mut root, slot);
        self.root = root;
    }

    /// Rebuilds the whole order from scratch in O(n) (restore).
    pub fn order_rebuild(&mut self) {
        let mut slots: Vec<u32> = self.live_slots().collect();
        slots.sort_unstable_by(|&a, &b| {
            let (ra, rb) = (self.get(a), self.get(b));
            (ra.kind, ra.value.as_bytes()).cmp(&(rb.kind, rb.value.as_bytes()))
        });
        for &s in &slots {
            let avail = self.get(s).is_available();
            self.get_mut(s).avail = avail;
        }
        self.root = treap::build_sorted(self, &slots);
    }

    /// Sets whether `slot` counts as available; returns whether that changed.
    pub fn set_avail(&mut self, slot: u32, avail: bool) -> bool {
        let r = self.get_mut(slot);
        if r.avail == avail {
            return false;
        }
        r.avail = avail;
        let mut x = slot;
        while x != NIL {
            let r = self.get_mut(x);
            r.count = if avail { r.count + 1 } else { r.count - 1 };
            x = r.links.parent;
        }
        true
    }

    /// Number of available resources.
    pub fn available(&self) -> u32 {
        if self.root == NIL {
            0
        } else {
            self.get(self.root).count
        }
    }

    fn count_of(&self, x: u32) -> u32 {
        if x == NIL { 0 } else { self.get(x).count }
    }

    /// Available resources strictly before `slot` in canonical order.
    pub fn rank(&self, slot: u32) -> u32 {
        let mut x = slot;
        let mut r = self.count_of(self.get(x).links.left);
        loop {
            let p = self.get(x).links.parent;
            if p == NIL {
                return r;
            }
            let pn = self.get(p);
            if pn.links.right == x {
                r += self.count_of(pn.links.left) + u32::from(pn.avail);
            }
            x = p;
        }
    }

    /// The `k`-th (from 0) available resource in canonical order.
    pub fn select(&self, mut k: u32) -> u32 {
        let mut x = self.root;
        loop {
            debug_assert!(x != NIL, "select past the available count");
            let n = self.get(x);
            let lc = self.count_of(n.links.left);
            if k < lc {
                x = n.links.left;
                continue;
            }
            k -= lc;
            if n.avail {
                if k == 0 {
                    return x;
                }
                k -= 1;
            }
            x = n.links.right;
        }
    }

    /// All live slots in canonical order.
    pub fn in_order(&self) -> Vec<u32> {
        treap::in_order(self, self.root)
    }
}
