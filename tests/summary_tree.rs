//! The B-ary summary tree (`seq/summary_tree.rs`) against a plain array: totals, prefixes,
//! descents (including targets past the end) and leaf updates, for every size from one leaf to
//! several levels, and random updates checked by proptest. The test summary carries a minimum
//! as well as a sum, so updates take both ways up the tree: replacing the changed part, and
//! refolding the children when the minimum may have risen (as the engine's selection
//! summaries do).

// Native only, as proptest is (Cargo.toml): property tests do not run in wasm32.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use repute::seq::summary_tree::Summary;
use repute::seq::summary_tree::{FANOUT, SummaryTree};

/// A count with the smallest leaf under it (`u64::MAX` for none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Count(u64, u64);

fn leaf(x: u64) -> Count {
    Count(x, x)
}

impl Summary for Count {
    const EMPTY: Count = Count(0, u64::MAX);
    fn combine(&self, o: &Count) -> Count {
        Count(self.0 + o.0, self.1.min(o.1))
    }
    /// Like the engine's: `None` when the part that held the minimum rose.
    fn replace(&self, old: &Count, new: &Count) -> Option<Count> {
        let min = if new.1 <= self.1 {
            new.1
        } else if old.1 == self.1 {
            return None;
        } else {
            self.1
        };
        Some(Count(self.0 - old.0 + new.0, min))
    }
}

/// The summary of `xs` computed directly.
fn count(xs: &[u64]) -> Count {
    Count(xs.iter().sum(), xs.iter().copied().min().unwrap_or(u64::MAX))
}

/// The leaf whose running total first exceeds `target`, and what `inside` saw folded.
fn descend(tree: &SummaryTree<Count>, target: u64) -> (Option<usize>, u64) {
    let mut base = 0;
    let leaf = tree.descend(|c| {
        if target < base + c.0 {
            true
        } else {
            base += c.0;
            false
        }
    });
    (leaf, base)
}

fn check(tree: &SummaryTree<Count>, xs: &[u64]) {
    tree.verify().unwrap();
    assert_eq!(tree.leaves(), xs.len());
    assert_eq!(tree.total(), count(xs));
    let mut run = 0;
    let mut before = Count::EMPTY;
    for (i, &x) in xs.iter().enumerate() {
        assert_eq!(tree.prefix(i), before, "prefix({i}) of {} leaves", xs.len());
        for t in run..run + x {
            assert_eq!(descend(tree, t), (Some(i), run), "target {t} of {} leaves", xs.len());
        }
        run += x;
        before = before.combine(&leaf(x));
    }
    assert_eq!(tree.prefix(xs.len()), count(xs));
    assert_eq!(descend(tree, run), (None, run), "past the end of {} leaves", xs.len());
}

#[test]
fn every_size_up_to_three_levels_answers_like_an_array() {
    for n in 1..=FANOUT * FANOUT + 3 {
        let xs: Vec<u64> = (0..n as u64).map(|i| (i * 7 + 3) % 5).collect();
        let tree = SummaryTree::build(xs.iter().map(|&x| leaf(x)).collect());
        check(&tree, &xs);
    }
}

#[test]
fn empty_leaves_are_skipped_and_all_empty_is_past_the_end() {
    let xs = vec![0, 0, 0, 4, 0, 0, 0, 0, 0, 1, 0];
    let tree = SummaryTree::build(xs.iter().map(|&x| leaf(x)).collect());
    check(&tree, &xs);
    let zeros = [0u64; 20];
    let tree = SummaryTree::build(zeros.iter().map(|&x| leaf(x)).collect());
    assert_eq!(descend(&tree, 0), (None, 0));
}

#[test]
fn raising_the_smallest_leaf_refolds_the_minimum_up_every_level() {
    let n = FANOUT * FANOUT * 2;
    let mut xs: Vec<u64> = vec![5; n];
    let mut tree = SummaryTree::build(xs.iter().map(|&x| leaf(x)).collect());
    for i in [0, n / 2, n - 1] {
        for x in [1, 9, 5] {
            // 1: the new minimum everywhere above; 9: the minimum must rise back (refold).
            xs[i] = x;
            tree.set(i, leaf(x));
            check(&tree, &xs);
        }
    }
}

proptest! {
    #[test]
    fn updates_keep_every_answer(
        xs in prop::collection::vec(0u64..6, 1..600),
        updates in prop::collection::vec((any::<prop::sample::Index>(), 0u64..6), 0..40),
    ) {
        let mut xs = xs;
        let mut tree = SummaryTree::build(xs.iter().map(|&x| leaf(x)).collect());
        for (at, x) in updates {
            let i = at.index(xs.len());
            xs[i] = x;
            tree.set(i, leaf(x));
        }
        check(&tree, &xs);
    }
}
