//! A B-ary tree of summaries over a sequence of leaves (a chunk list's chunks): prefix sums
//! and "where does the running total cross x" in O(log_B n) dependent steps.
//!
//! Fan-out 8 rather than 2: a pick on a 100k-cell context descends about 4 levels instead of
//! 12, and the 8 children of a node are contiguous, so their loads go out together instead of
//! one after another (on pools too large for the cache, each level is a miss). Levels are
//! stored leaves first, each exactly as long as it needs to be (no padding to a power).

/// A summary that combines associatively (sums, counts, minimums).
pub trait Summary: Copy + PartialEq + std::fmt::Debug {
    const EMPTY: Self;
    fn combine(&self, other: &Self) -> Self;
    /// This summary with one part `old` replaced by `new`, when that can be had without
    /// looking at the other parts (exact sums can; a minimum that rises may not).
    fn replace(&self, old: &Self, new: &Self) -> Option<Self>;
}

/// Children per node.
pub const FANOUT: usize = 8;

#[derive(Debug, Clone)]
pub struct SummaryTree<S: Summary> {
    /// Every level, leaves first, root last.
    nodes: Vec<S>,
    /// Each level's start in `nodes` and length, leaves first; the last level has one node.
    levels: Vec<(usize, usize)>,
}

fn fold<S: Summary>(parts: &[S]) -> S {
    parts.iter().fold(S::EMPTY, |acc, s| acc.combine(s))
}

impl<S: Summary> SummaryTree<S> {
    /// The tree over `leaves` (at least one).
    pub fn build(leaves: Vec<S>) -> SummaryTree<S> {
        debug_assert!(!leaves.is_empty());
        let mut levels = vec![(0, leaves.len())];
        let mut nodes = leaves;
        let (mut start, mut len) = (0, nodes.len());
        while len > 1 {
            let next = nodes.len();
            for c in (start..start + len).step_by(FANOUT) {
                let end = (c + FANOUT).min(start + len);
                nodes.push(fold(&nodes[c..end]));
            }
            (start, len) = (next, nodes.len() - next);
            levels.push((start, len));
        }
        SummaryTree { nodes, levels }
    }

    pub fn leaves(&self) -> usize {
        self.levels[0].1
    }

    pub fn leaf(&self, pos: usize) -> &S {
        &self.nodes[pos]
    }

    pub fn total(&self) -> S {
        self.nodes[self.nodes.len() - 1]
    }

    /// Sets leaf `pos` and brings its ancestors up to date: each by replacing the changed
    /// child's part when the summary allows it (one step instead of folding eight children),
    /// stopping where nothing changed.
    pub fn set(&mut self, pos: usize, s: S) {
        let (mut old, mut new) = (std::mem::replace(&mut self.nodes[pos], s), s);
        let mut i = pos;
        for w in self.levels.windows(2) {
            if old == new {
                return;
            }
            let ((start, len), (up, _)) = (w[0], w[1]);
            let first = i - i % FANOUT;
            let end = (first + FANOUT).min(len);
            i /= FANOUT;
            let parent = self.nodes[up + i];
            let updated =
                parent.replace(&old, &new).unwrap_or_else(|| fold(&self.nodes[start + first..start + end]));
            self.nodes[up + i] = updated;
            (old, new) = (parent, updated);
        }
    }

    /// The summary of leaves `0..pos`.
    pub fn prefix(&self, pos: usize) -> S {
        let mut acc = S::EMPTY;
        let mut i = pos;
        for &(start, _) in &self.levels {
            let first = i - i % FANOUT;
            for s in self.nodes[start + first..start + i].iter().rev() {
                acc = s.combine(&acc);
            }
            i /= FANOUT;
        }
        acc
    }

    /// Descends to the leaf in which a running total first crosses a target: `inside` is shown
    /// each left part in turn and answers whether the target lies within it, folding the part
    /// into its own running total when it does not. Above the leaves the last child is entered
    /// without asking. Returns the leaf, or `None` when the target lies beyond every leaf (the
    /// running total then holds all of them).
    pub fn descend(&self, mut inside: impl FnMut(&S) -> bool) -> Option<usize> {
        let mut j = 0;
        for &(start, len) in self.levels[1..].iter().rev().skip(1) {
            let first = j * FANOUT;
            let last = (first + FANOUT).min(len) - 1;
            j = (first..last).find(|&c| inside(&self.nodes[start + c])).unwrap_or(last);
        }
        let (first, len) = (j * FANOUT, self.levels[0].1);
        if self.levels.len() == 1 {
            return inside(&self.nodes[0]).then_some(0);
        }
        (first..(first + FANOUT).min(len)).find(|&c| inside(&self.nodes[c]))
    }

    /// Checks every inner node against its children (tests).
    pub fn verify(&self) -> Result<(), String> {
        for w in self.levels.windows(2) {
            let ((start, len), (up, up_len)) = (w[0], w[1]);
            if up_len != len.div_ceil(FANOUT) {
                return Err("summary tree level has the wrong length".into());
            }
            for j in 0..up_len {
                let end = ((j + 1) * FANOUT).min(len);
                if self.nodes[up + j] != fold(&self.nodes[start + j * FANOUT..start + end]) {
                    return Err("summary tree node stale".into());
                }
            }
        }
        Ok(())
    }

    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<S>() + self.levels.capacity() * 16
    }
}
