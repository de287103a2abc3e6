//! An ordered sequence split into small chunks, with a tree of chunk summaries: the
//! cache-friendly ordered index both the resource order and every context's cells are built on.
//!
//! Items live inline in chunks of at most `MAX_CHUNK` (so a scan touches a few contiguous
//! cache lines); a tree over the chunks' summaries (`summary_tree.rs`), in sequence order,
//! answers prefix and "where does the running total cross x" questions in O(log chunks).
//! Items move when chunks split or shift; the owner keeps back-pointers up to date through
//! the `relocate` callbacks. This module knows nothing of resources, cells or weights.

use super::summary_tree::{Summary, SummaryTree};

/// An entry of the sequence: carries the id its owner relocates, and its own summary.
pub trait Item: Copy + Default {
    type Sum: Summary;
    fn id(&self) -> u32;
    fn summary(&self) -> Self::Sum;
}

/// Where an entry sits: chunk id (stable until the chunk is dropped) and index in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Loc {
    pub chunk: u32,
    pub index: u32,
}

/// Blocks split above this many entries. The `small-blocks` feature (tests only) makes them
/// tiny so that small pools exercise splits, removals and multi-level trees.
#[cfg(not(feature = "small-blocks"))]
pub const MAX_CHUNK: usize = 64;
#[cfg(feature = "small-blocks")]
pub const MAX_CHUNK: usize = 4;

/// A chunk's entries, stored inline so that the chunk header and its first entries share
/// cache lines (one miss instead of two dependent ones). `repr(C)` keeps `len` before the
/// items: left to itself the compiler put it after them, a cache line away from the entries a
/// scan reads first.
#[derive(Clone)]
#[repr(C)]
pub struct Items<E> {
    len: u32,
    items: [E; MAX_CHUNK],
}

impl<E: Item> Items<E> {
    fn new() -> Items<E> {
        Items { len: 0, items: [E::default(); MAX_CHUNK] }
    }

    fn from_slice(s: &[E]) -> Items<E> {
        let mut e = Items::new();
        e.items[..s.len()].copy_from_slice(s);
        e.len = s.len() as u32;
        e
    }

    /// Inserts at `i`; the chunk must have room (it splits first otherwise).
    fn insert(&mut self, i: usize, e: E) {
        let n = self.len as usize;
        self.items.copy_within(i..n, i + 1);
        self.items[i] = e;
        self.len += 1;
    }

    fn remove(&mut self, i: usize) -> E {
        let n = self.len as usize;
        let e = self.items[i];
        self.items.copy_within(i + 1..n, i);
        self.len -= 1;
        e
    }
}

impl<E> std::ops::Deref for Items<E> {
    type Target = [E];
    fn deref(&self) -> &[E] {
        &self.items[..self.len as usize]
    }
}

impl<E> std::ops::DerefMut for Items<E> {
    fn deref_mut(&mut self) -> &mut [E] {
        &mut self.items[..self.len as usize]
    }
}

impl<E: std::fmt::Debug> std::fmt::Debug for Items<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// `repr(C)`: the summary, the length and the first entries share the chunk's first line.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Chunk<E: Item> {
    pub sum: E::Sum,
    pub entries: Items<E>,
}

#[derive(Debug, Clone)]
pub struct ChunkList<E: Item> {
    chunks: Vec<Chunk<E>>,
    /// Chunk ids in sequence order.
    order: Vec<u32>,
    /// Chunk id → position in `order`.
    pos_of: Vec<u32>,
    /// Summaries of the chunks in sequence order, and of runs of them.
    tree: SummaryTree<E::Sum>,
    len: usize,
    /// Ids of chunks that left the sequence, for reuse.
    free: Vec<u32>,
    /// The tree is out of date (chunks were split or dropped); `ensure` rebuilds it. Deferring
    /// the rebuild keeps bulk insertions (registering a million resources) linear.
    stale_tree: bool,
}

impl<E: Item> Default for ChunkList<E> {
    fn default() -> Self {
        ChunkList::from_sorted(Vec::new(), |_, _| {})
    }
}

fn compute<E: Item>(entries: &[E]) -> E::Sum {
    entries.iter().fold(E::Sum::EMPTY, |acc, e| acc.combine(&e.summary()))
}

impl<E: Item> ChunkList<E> {
    /// Builds from entries already in order, in chunks three-quarters full (room to grow
    /// without splitting at once); reports every location.
    pub fn from_sorted(entries: Vec<E>, mut relocate: impl FnMut(u32, Loc)) -> ChunkList<E> {
        let chunk = MAX_CHUNK * 3 / 4;
        let mut chunks: Vec<Chunk<E>> =
            entries.chunks(chunk).map(|c| Chunk { entries: Items::from_slice(c), sum: compute(c) }).collect();
        if chunks.is_empty() {
            chunks.push(Chunk { entries: Items::new(), sum: E::Sum::EMPTY });
        }
        for (b, chunk) in chunks.iter().enumerate() {
            for (i, e) in chunk.entries.iter().enumerate() {
                relocate(e.id(), Loc { chunk: b as u32, index: i as u32 });
            }
        }
        let n = chunks.len();
        let mut list = ChunkList {
            chunks,
            order: (0..n as u32).collect(),
            pos_of: (0..n as u32).collect(),
            tree: SummaryTree::build(vec![E::Sum::EMPTY]),
            len: entries.len(),
            free: Vec::new(),
            stale_tree: false,
        };
        list.rebuild_tree();
        list
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn chunks(&self) -> usize {
        self.order.len()
    }

    /// The chunk at sequence position `pos`.
    pub fn chunk_at(&self, pos: usize) -> &Chunk<E> {
        &self.chunks[self.order[pos] as usize]
    }

    pub fn chunk(&self, id: u32) -> &Chunk<E> {
        &self.chunks[id as usize]
    }

    pub fn position(&self, chunk: u32) -> usize {
        self.pos_of[chunk as usize] as usize
    }

    pub fn get(&self, at: Loc) -> &E {
        &self.chunks[at.chunk as usize].entries[at.index as usize]
    }

    /// Changes an entry in place and updates its chunk's summary and the tree.
    pub fn modify(&mut self, at: Loc, f: impl FnOnce(&mut E)) {
        let b = &mut self.chunks[at.chunk as usize];
        let e = &mut b.entries[at.index as usize];
        let old = e.summary();
        f(e);
        let new = e.summary();
        if old == new {
            return;
        }
        b.sum = match b.sum.replace(&old, &new) {
            Some(sum) => sum,
            None => compute(&b.entries),
        };
        self.update_leaf(at.chunk);
    }

    /// Brings the tree up to date after splits or removals; reads below need it.
    pub fn ensure(&mut self) {
        if self.stale_tree {
            self.rebuild_tree();
        }
    }

    /// The summary of the whole sequence.
    pub fn total(&self) -> E::Sum {
        debug_assert!(!self.stale_tree, "read of a stale tree");
        self.tree.total()
    }

    /// The summary of chunks at positions `0..pos`.
    pub fn prefix(&self, pos: usize) -> E::Sum {
        debug_assert!(!self.stale_tree, "read of a stale tree");
        self.tree.prefix(pos)
    }

    /// Descends to the chunk in which a running total first crosses a target: `inside` is
    /// shown each left part in turn and answers whether the target lies within it, folding the
    /// part into its own running total when it does not. Returns the chunk position, or `None`
    /// when the target lies beyond every chunk (the running total then holds all of them).
    pub fn descend(&self, inside: impl FnMut(&E::Sum) -> bool) -> Option<usize> {
        debug_assert!(!self.stale_tree, "read of a stale tree");
        self.tree.descend(inside)
    }

    fn resummarise(&mut self, chunk: u32) {
        let b = &mut self.chunks[chunk as usize];
        b.sum = compute(&b.entries);
        self.update_leaf(chunk);
    }

    fn update_leaf(&mut self, chunk: u32) {
        if self.stale_tree {
            return; // the rebuild will read the chunk's summary
        }
        self.tree.set(self.pos_of[chunk as usize] as usize, self.chunks[chunk as usize].sum);
    }

    fn rebuild_tree(&mut self) {
        self.stale_tree = false;
        self.tree = SummaryTree::build(self.order.iter().map(|&id| self.chunks[id as usize].sum).collect());
    }

    /// Room for `n` more entries appended by `extend_sorted`.
    pub fn reserve(&mut self, n: usize) {
        let more = n.div_ceil(MAX_CHUNK * 3 / 4);
        self.chunks.reserve(more);
        self.order.reserve(more);
        self.pos_of.reserve(more);
    }

    /// Appends entries that come after every entry of the list, in order, as `from_sorted` lays
    /// out its entries: the last chunk filled to three-quarters, then new chunks. A list built
    /// empty and extended batch by batch is the one `from_sorted` builds of all the entries at
    /// once (a restore fed parts, `pool/snapshot/session.rs`). The tree is stale until `ensure`.
    pub fn extend_sorted(
        &mut self,
        entries: impl IntoIterator<Item = E>,
        mut relocate: impl FnMut(u32, Loc),
    ) {
        let fill = MAX_CHUNK * 3 / 4;
        for e in entries {
            let mut last = *self.order.last().expect("a list keeps a chunk");
            if self.chunks[last as usize].entries.len() >= fill {
                last = match self.free.pop() {
                    Some(id) => id,
                    None => {
                        self.chunks.push(Chunk { entries: Items::new(), sum: E::Sum::EMPTY });
                        self.pos_of.push(0);
                        (self.chunks.len() - 1) as u32
                    }
                };
                self.chunks[last as usize] = Chunk { entries: Items::new(), sum: E::Sum::EMPTY };
                self.pos_of[last as usize] = self.order.len() as u32;
                self.order.push(last);
            }
            let chunk = &mut self.chunks[last as usize];
            let index = chunk.entries.len();
            chunk.entries.insert(index, e);
            chunk.sum = chunk.sum.combine(&e.summary());
            self.len += 1;
            relocate(e.id(), Loc { chunk: last, index: index as u32 });
            self.stale_tree = true;
        }
    }

    /// Inserts `e` at `index` of chunk `chunk`, splitting a full chunk first.
    pub fn insert(&mut self, chunk: u32, index: usize, e: E, mut relocate: impl FnMut(u32, Loc)) {
        self.len += 1;
        let entries = &mut self.chunks[chunk as usize].entries;
        if entries.len() < MAX_CHUNK {
            entries.insert(index, e);
            for (i, moved) in entries.iter().enumerate().skip(index) {
                relocate(moved.id(), Loc { chunk, index: i as u32 });
            }
            self.resummarise(chunk);
            return;
        }
        // Full: split the chunk with the new entry in, halves of MAX_CHUNK / 2 and + 1.
        let mut all: Vec<E> = entries.to_vec();
        all.insert(index, e);
        let (low, high) = all.split_at(MAX_CHUNK / 2);
        *entries = Items::from_slice(low);
        for (i, moved) in entries.iter().enumerate() {
            relocate(moved.id(), Loc { chunk, index: i as u32 });
        }
        self.chunks[chunk as usize].sum = compute(low);
        let upper = Items::from_slice(high);
        let sum = compute(high);
        let new_id = match self.free.pop() {
            Some(id) => {
                self.chunks[id as usize] = Chunk { entries: upper, sum };
                id
            }
            None => {
                self.chunks.push(Chunk { entries: upper, sum });
                self.pos_of.push(0);
                (self.chunks.len() - 1) as u32
            }
        };
        for (i, moved) in self.chunks[new_id as usize].entries.iter().enumerate() {
            relocate(moved.id(), Loc { chunk: new_id, index: i as u32 });
        }
        let at = self.pos_of[chunk as usize] as usize + 1;
        self.order.insert(at, new_id);
        self.renumber_from(at);
        self.stale_tree = true;
    }

    /// Removes the entry at `at`, dropping its chunk if it empties (unless it is the last).
    pub fn remove(&mut self, at: Loc, mut relocate: impl FnMut(u32, Loc)) -> E {
        self.len -= 1;
        let chunk = at.chunk;
        let entries = &mut self.chunks[chunk as usize].entries;
        let e = entries.remove(at.index as usize);
        for (i, moved) in entries.iter().enumerate().skip(at.index as usize) {
            relocate(moved.id(), Loc { chunk, index: i as u32 });
        }
        if entries.is_empty() && self.order.len() > 1 {
            let pos = self.pos_of[chunk as usize] as usize;
            self.order.remove(pos);
            self.renumber_from(pos);
            self.chunks[chunk as usize] = Chunk { entries: Items::new(), sum: E::Sum::EMPTY };
            self.free.push(chunk);
            self.stale_tree = true;
        } else {
            self.resummarise(chunk);
        }
        e
    }

    fn renumber_from(&mut self, from: usize) {
        for p in from..self.order.len() {
            self.pos_of[self.order[p] as usize] = p as u32;
        }
    }

    /// Finds the insertion point for a key: the chunk (by id) and index before which it goes,
    /// given `before(entry)` = "the entry comes before the key" (monotone over the sequence).
    pub fn lower_bound(&self, before: impl Fn(&E) -> bool) -> Loc {
        // First chunk whose first entry is not before the key; the key goes into the chunk
        // preceding it (or that chunk itself when it is the first).
        let (mut lo, mut hi) = (0, self.order.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.chunk_at(mid).entries.first() {
                Some(first) if before(first) => lo = mid + 1,
                _ => hi = mid,
            }
        }
        let pos = lo.saturating_sub(1);
        let id = self.order[pos];
        let entries = &self.chunks[id as usize].entries;
        let index = entries.partition_point(|e| before(e));
        Loc { chunk: id, index: index as u32 }
    }

    /// The location right after `at` in sequence order, or `None` at the end.
    pub fn next(&self, at: Loc) -> Option<Loc> {
        if (at.index as usize + 1) < self.chunks[at.chunk as usize].entries.len() {
            return Some(Loc { chunk: at.chunk, index: at.index + 1 });
        }
        self.first_from(self.pos_of[at.chunk as usize] as usize + 1)
    }

    /// The location right before `at` in sequence order, or `None` at the start.
    pub fn prev(&self, at: Loc) -> Option<Loc> {
        if at.index > 0 {
            return Some(Loc { chunk: at.chunk, index: at.index - 1 });
        }
        let mut pos = self.pos_of[at.chunk as usize] as usize;
        while pos > 0 {
            pos -= 1;
            let id = self.order[pos];
            let n = self.chunks[id as usize].entries.len();
            if n > 0 {
                return Some(Loc { chunk: id, index: n as u32 - 1 });
            }
        }
        None
    }

    /// The first entry at or after chunk position `pos`.
    pub fn first_from(&self, mut pos: usize) -> Option<Loc> {
        while pos < self.order.len() {
            let id = self.order[pos];
            if !self.chunks[id as usize].entries.is_empty() {
                return Some(Loc { chunk: id, index: 0 });
            }
            pos += 1;
        }
        None
    }

    /// The location of the entry at `at`, normalised: if `at.index` is one past the end of its
    /// chunk, the first entry after it.
    pub fn at_or_next(&self, at: Loc) -> Option<Loc> {
        if (at.index as usize) < self.chunks[at.chunk as usize].entries.len() {
            Some(at)
        } else {
            self.first_from(self.pos_of[at.chunk as usize] as usize + 1)
        }
    }

    /// Every entry in sequence order.
    pub fn iter(&self) -> impl Iterator<Item = &E> + '_ {
        self.order.iter().flat_map(move |&id| self.chunks[id as usize].entries.iter())
    }

    /// Checks summaries and the tree against recomputation (tests).
    pub fn verify(&self) -> Result<(), String> {
        if self.stale_tree {
            return Err("tree not brought up to date".into());
        }
        for (p, &id) in self.order.iter().enumerate() {
            let b = &self.chunks[id as usize];
            if b.sum != compute(&b.entries) {
                return Err(format!("chunk {p} summary stale"));
            }
            if self.pos_of[id as usize] as usize != p || *self.tree.leaf(p) != b.sum {
                return Err(format!("chunk {p} position or tree leaf stale"));
            }
        }
        if self.tree.leaves() != self.order.len() {
            return Err("summary tree has the wrong number of leaves".into());
        }
        self.tree.verify()?;
        if self.iter().count() != self.len {
            return Err("length differs".into());
        }
        Ok(())
    }

    /// Heap bytes held (for memory accounting).
    pub fn heap_bytes(&self) -> usize {
        self.chunks.capacity() * std::mem::size_of::<Chunk<E>>()
            + (self.order.capacity() + self.pos_of.capacity()) * 4
            + self.tree.heap_bytes()
    }
}
