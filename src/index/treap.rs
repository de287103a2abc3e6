//! An intrusive treap over nodes that live in someone else's arena, with parent links and
//! subtree aggregates.
//!
//! Both indexes of the pool use it: the resource order (`order.rs`) and each context's cell tree
//! (`cells.rs`). The arena says how to reach a node's links, which of two nodes has the higher
//! priority, and how to recompute a node's aggregate from its children (`pull`). Priorities come
//! from a hash of the resource key, so a tree's shape depends only on the set of keys it holds:
//! equal states have equal shapes, and aggregates summed in tree order are reproducible.
//! This module holds no keys and no aggregates itself.

pub const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Links {
    pub left: u32,
    pub right: u32,
    pub parent: u32,
}

impl Links {
    pub const DETACHED: Links = Links {
        left: NIL,
        right: NIL,
        parent: NIL,
    };
}

impl Default for Links {
    fn default() -> Self {
        Links::DETACHED
    }
}

/// Storage for treap nodes.
pub trait Arena {
    fn links(&self, i: u32) -> Links;
    fn links_mut(&mut self, i: u32) -> &mut Links;
    /// A strict total order on priorities: `a` should sit above `b`.
    fn outranks(&self, a: u32, b: u32) -> bool;
    /// Recomputes node `i`'s aggregate from its own data and its children's aggregates.
    fn pull(&mut self, i: u32);
}

/// Inserts detached node `x`, placed by `less(arena, a, b)` (key order), and restores the heap
/// order and every aggregate on its path.
pub fn insert<A: Arena>(a: &mut A, root: &mut u32, x: u32, less: impl Fn(&A, u32, u32) -> bool) {
    *a.links_mut(x) = Links::DETACHED;
    if *root == NIL {
        *root = x;
        a.pull(x);
        return;
    }
    let mut cur = *root;
    loop {
        let l = a.links(cur);
        let go_left = less(a, x, cur);
        let next = if go_left { l.left } else { l.right };
        if next == NIL {
            if go_left {
                a.links_mut(cur).left = x;
            } else {
                a.links_mut(cur).right = x;
            }
            a.links_mut(x).parent = cur;
            break;
        }
        cur = next;
    }
    a.pull(x);
    loop {
        let p = a.links(x).parent;
        if p == NIL || !a.outranks(x, p) {
            break;
        }
        rotate_up(a, root, x);
    }
    pull_to_root(a, a.links(x).parent);
}

/// Removes node `x` and restores every aggregate on its former path.
pub fn remove<A: Arena>(a: &mut A, root: &mut u32, x: u32) {
    loop {
        let l = a.links(x);
        let child = match (l.left, l.right) {
            (NIL, NIL) => break,
            (c, NIL) | (NIL, c) => c,
            (lc, rc) => {
                if a.outranks(lc, rc) {
                    lc
                } else {
                    rc
                }
            }
        };
        rotate_up(a, root, child);
    }
    let p = a.links(x).parent;
    if p == NIL {
        *root = NIL;
    } else {
        let pl = a.links_mut(p);
        if pl.left == x {
            pl.left = NIL;
        } else {
            pl.right = NIL;
        }
    }
    *a.links_mut(x) = Links::DETACHED;
    pull_to_root(a, p);
}

/// Recomputes the aggregates of `x` and all its ancestors (after `x`'s own data changed).
pub fn pull_to_root<A: Arena>(a: &mut A, mut x: u32) {
    while x != NIL {
        a.pull(x);
        x = a.links(x).parent;
    }
}

/// Moves `x` above its parent, keeping in-order sequence and both nodes' aggregates.
fn rotate_up<A: Arena>(a: &mut A, root: &mut u32, x: u32) {
    let p = a.links(x).parent;
    let g = a.links(p).parent;
    if a.links(p).left == x {
        let moved = a.links(x).right;
        a.links_mut(p).left = moved;
        if moved != NIL {
            a.links_mut(moved).parent = p;
        }
        a.links_mut(x).right = p;
    } else {
        let moved = a.links(x).left;
        a.links_mut(p).right = moved;
        if moved != NIL {
            a.links_mut(moved).parent = p;
        }
        a.links_mut(x).left = p;
    }
    a.links_mut(p).parent = x;
    a.links_mut(x).parent = g;
    if g == NIL {
        *root = x;
    } else if a.links(g).left == p {
        a.links_mut(g).left = x;
    } else {
        a.links_mut(g).right = x;
    }
    a.pull(p);
    a.pull(x);
}

/// Builds a treap from nodes already in key order, in O(n), and computes every aggregate.
pub fn build_sorted<A: Arena>(a: &mut A, sorted: &[u32]) -> u32 {
    let mut spine: Vec<u32> = Vec::new();
    for &x in sorted {
        *a.links_mut(x) = Links::DETACHED;
        let mut last = NIL;
        while let Some(&top) = spine.last()
            && a.outranks(x, top)
        {
            last = top;
            spine.pop();
        }
        if last != NIL {
            a.links_mut(x).left = last;
            a.links_mut(last).parent = x;
        }
        if let Some(&top) = spine.last() {
            a.links_mut(top).right = x;
            a.links_mut(x).parent = top;
        }
        spine.push(x);
    }
    let root = spine.first().copied().unwrap_or(NIL);
    pull_subtree(a, root);
    root
}

/// Recomputes every aggregate under `root`, children first, without recursion.
pub fn pull_subtree<A: Arena>(a: &mut A, root: u32) {
    if root == NIL {
        return;
    }
    let mut order = Vec::new();
    let mut stack = vec![root];
    while let Some(x) = stack.pop() {
        order.push(x);
        let l = a.links(x);
        for c in [l.left, l.right] {
            if c != NIL {
                stack.push(c);
            }
        }
    }
    for &x in order.iter().rev() {
        a.pull(x);
    }
}

/// The first node in key order, or `NIL`.
pub fn first<A: Arena>(a: &A, mut x: u32) -> u32 {
    if x == NIL {
        return NIL;
    }
    while a.links(x).left != NIL {
        x = a.links(x).left;
    }
    x
}

/// The next node in key order, or `NIL`.
pub fn next<A: Arena>(a: &A, x: u32) -> u32 {
    let r = a.links(x).right;
    if r != NIL {
        return first(a, r);
    }
    let mut child = x;
    let mut p = a.links(x).parent;
    while p != NIL && a.links(p).right == child {
        child = p;
        p = a.links(p).parent;
    }
    p
}

/// The last node in key order, or `NIL`.
pub fn last<A: Arena>(a: &A, mut x: u32) -> u32 {
    if x == NIL {
        return NIL;
    }
    while a.links(x).right != NIL {
        x = a.links(x).right;
    }
    x
}

/// The previous node in key order, or `NIL`.
pub fn prev<A: Arena>(a: &A, x: u32) -> u32 {
    let l = a.links(x).left;
    if l != NIL {
        return last(a, l);
    }
    let mut child = x;
    let mut p = a.links(x).parent;
    while p != NIL && a.links(p).left == child {
        child = p;
        p = a.links(p).parent;
    }
    p
}

/// All nodes under `root` in key order.
pub fn in_order<A: Arena>(a: &A, root: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut x = first(a, root);
    while x != NIL {
        out.push(x);
        x = next(a, x);
    }
    out
}
