//! Every cell of the pool: stored by slot and found by `(resource, context)`, with the count
//! of cells in each stored state, and where each sits in its context's index and in its
//! group's sub-index (positions that `context.rs` keeps as it moves entries). A cell's rules
//! are `cell.rs`'s; its context's index is `context.rs`'s.

use rustc_hash::FxHashMap;

use crate::cell::Cell;
use crate::seq::chunks::Loc;
use crate::slab::Slab;
use crate::types::State;

/// A stored cell.
#[derive(Debug, Clone)]
pub struct CellSlot {
    /// The resource's slot in the registry.
    pub res: u32,
    /// The context's slot.
    pub ctx: u32,
    /// Where the cell sits in its context's sequence.
    loc: Loc,
    /// Where it sits in its context's index of its resource's group, when there is one.
    sub_loc: Loc,
    /// Changed only through `CellStore::update`, which keeps the per-state counts.
    cell: Cell,
}

impl CellSlot {
    /// The cell's rules' state (score, streaks, cooldown, window).
    #[inline]
    pub fn cell(&self) -> &Cell {
        &self.cell
    }
}

/// Every cell of the pool, addressed by slot and by `(resource, context)`.
#[derive(Debug, Clone, Default)]
pub struct CellStore {
    slots: Slab<CellSlot>,
    by_pair: FxHashMap<u64, u32>,
    /// Cells per stored state (HEALTHY, COOLING, RECOVERING).
    by_state: [usize; 3],
}

fn pair(res: u32, ctx: u32) -> u64 {
    (u64::from(res) << 32) | u64::from(ctx)
}

impl CellStore {
    pub fn len(&self) -> usize {
        self.by_pair.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_pair.is_empty()
    }

    pub fn find(&self, res: u32, ctx: u32) -> Option<u32> {
        self.by_pair.get(&pair(res, ctx)).copied()
    }

    pub fn get(&self, id: u32) -> &CellSlot {
        self.slots.get(id)
    }

    /// Changes cell `id` through `f`, keeping the per-state counts.
    #[inline]
    pub fn update<R>(&mut self, id: u32, f: impl FnOnce(&mut Cell) -> R) -> R {
        let cell = &mut self.slots.get_mut(id).cell;
        let before = cell.state;
        let out = f(cell);
        let after = cell.state;
        if after != before {
            self.by_state[before as usize] -= 1;
            self.by_state[after as usize] += 1;
        }
        out
    }

    /// Is `id` a live cell slot? (Expiry queues hold ids that may have been freed.)
    pub fn is_live(&self, id: u32) -> bool {
        self.slots.is_live(id)
    }

    /// Cells in a stored state.
    pub fn count_in(&self, state: State) -> usize {
        self.by_state[state as usize]
    }

    /// Stores a cell (not yet in its context's sequence).
    pub fn add(&mut self, res: u32, ctx: u32, cell: Cell) -> u32 {
        self.by_state[cell.state as usize] += 1;
        let slot = CellSlot { res, ctx, loc: Loc::default(), sub_loc: Loc::default(), cell };
        let id = self.slots.insert(slot);
        self.by_pair.insert(pair(res, ctx), id);
        id
    }

    /// Makes room for `n` more cells.
    pub fn reserve(&mut self, n: usize) {
        self.slots.reserve(n);
        self.by_pair.reserve(n);
    }

    /// Forgets a cell that has already left its context's sequence.
    pub fn take(&mut self, id: u32) -> CellSlot {
        let slot = self.slots.remove(id);
        self.by_state[slot.cell.state as usize] -= 1;
        self.by_pair.remove(&pair(slot.res, slot.ctx));
        slot
    }

    /// Live cell ids in no particular order.
    pub fn live_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.ids()
    }

    /// Notes where cell `id` now sits in its context's index (`sub`: in its group's sub-index).
    pub(super) fn relocate(&mut self, id: u32, at: Loc, sub: bool) {
        let s = self.slots.get_mut(id);
        if sub {
            s.sub_loc = at;
        } else {
            s.loc = at;
        }
    }

    /// Where cell `id` sits in its context's index (`sub`: in its group's sub-index).
    pub(super) fn loc(&self, id: u32, sub: bool) -> Loc {
        let s = self.slots.get(id);
        if sub { s.sub_loc } else { s.loc }
    }

    /// Heap bytes held (for memory accounting in benchmarks).
    pub fn heap_bytes(&self) -> usize {
        let windows: usize = self.live_ids().map(|i| self.get(i).cell.window.heap_bytes()).sum();
        self.slots.heap_bytes() + self.by_pair.capacity() * (std::mem::size_of::<(u64, u32)>() + 1) + windows
    }
}
