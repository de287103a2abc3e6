//! The B-ary summary tree (`index/summary_tree.rs`) against a plain array: totals, prefixes,
//! descents (including targets past the end) and leaf updates, for every size from one leaf to
//! several levels, and random updates checked by proptest.

use proptest::prelude::*;
use repute::index::blocks::Summary;
use repute::index::summary_tree::{FANOUT, SummaryTree};

/// A count: the simplest summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Count(u64);

impl Summary for Count {
    const EMPTY: Count = Count(0);
    fn combine(&self, o: &Count) -> Count {
        Count(self.0 + o.0)
    }
    fn replace(&self, old: &Count, new: &Count) -> Option<Count> {
        Some(Count(self.0 - old.0 + new.0))
    }
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
    assert_eq!(tree.total(), Count(xs.iter().sum()));
    let mut run = 0;
    for (i, &x) in xs.iter().enumerate() {
        assert_eq!(tree.prefix(i), Count(run), "prefix({i}) of {} leaves", xs.len());
        for t in run..run + x {
            assert_eq!(descend(tree, t), (Some(i), run), "target {t} of {} leaves", xs.len());
        }
        run += x;
    }
    assert_eq!(tree.prefix(xs.len()), Count(run));
    assert_eq!(descend(tree, run), (None, run), "past the end of {} leaves", xs.len());
}

#[test]
fn every_size_up_to_three_levels_answers_like_an_array() {
    for n in 1..=FANOUT * FANOUT + 3 {
        let xs: Vec<u64> = (0..n as u64).map(|i| (i * 7 + 3) % 5).collect();
        let tree = SummaryTree::build(xs.iter().map(|&x| Count(x)).collect());
        check(&tree, &xs);
    }
}

#[test]
fn empty_leaves_are_skipped_and_all_empty_is_past_the_end() {
    let xs = vec![0, 0, 0, 4, 0, 0, 0, 0, 0, 1, 0];
    let tree = SummaryTree::build(xs.iter().map(|&x| Count(x)).collect());
    check(&tree, &xs);
    let zeros = [0u64; 20];
    let tree = SummaryTree::build(zeros.iter().map(|&x| Count(x)).collect());
    assert_eq!(descend(&tree, 0), (None, 0));
}

proptest! {
    #[test]
    fn updates_keep_every_answer(
        xs in prop::collection::vec(0u64..6, 1..600),
        updates in prop::collection::vec((any::<prop::sample::Index>(), 0u64..6), 0..40),
    ) {
        let mut xs = xs;
        let mut tree = SummaryTree::build(xs.iter().map(|&x| Count(x)).collect());
        for (at, x) in updates {
            let i = at.index(xs.len());
            xs[i] = x;
            tree.set(i, Count(x));
        }
        check(&tree, &xs);
    }
}
