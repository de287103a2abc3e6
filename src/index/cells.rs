//! Cell storage and each context's index: what makes `acquire` O(log n).
//!
//! A context's candidates are its selectable cells plus every available resource that has no
//! cell there yet (a transient fresh cell, score 0). Storing fresh entries per context would cost
//! resources × contexts; instead each context keeps only its own cells, in canonical order, and
//! every entry records its `gap`: how many available cell-less resources sit between the
//! previous cell and it (`tail` counts those after the last cell). Chunk summaries (sum and min
//! of selectable scores, selectable count, gap total) give the weight of any prefix, so one
//! descent finds the pick; a pick inside a gap is resolved by rank in the resource order.
//!
//! Gaps and `counted` flags reflect availability as of the context's log cursor; `sync` replays
//! the availability log to bring them to now. What makes a cell selectable is `cell.rs`'s rule;
//! this module stores the answer and keeps summaries right.
//!
//! Weights are summed in fixed point (2^-20 units): sums are then exact and independent of the
//! order of additions, so summaries can be updated incrementally and a restored pool picks
//! exactly as the live one did. With integral scores and floor (the defaults) the pick equals
//! the spec's floating-point running sum exactly; fractional ones are quantised to 2^-20.

use std::cmp::Ordering;
use std::rc::Rc;

use rustc_hash::FxHashMap;

use super::avail_log::AvailLog;
use super::universe::Universe;
use crate::cell::Cell;
use crate::seq::chunks::{ChunkList, Item, Loc};
use crate::seq::summary_tree::Summary;
use crate::slab::Slab;
use crate::types::State;

/// Fixed-point scale of weights: 2^20 units per point.
pub const SCALE: f64 = (1u64 << 20) as f64;

// The smallest floor the config allows is exactly one unit.
const _: () = assert!(crate::config::MIN_EXPLORATION_FLOOR * SCALE == 1.0);

/// A score or floor in fixed point.
pub fn fixed(v: f64) -> i64 {
    let x = v * SCALE;
    // Most scores are whole multiples of 2^-20 (all of them with the default config): those
    // need no rounding call.
    let t = x as i64;
    if t as f64 == x { t } else { x.round() as i64 }
}

/// Summary of a run of cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agg {
    /// Sum of (fixed-point) scores of selectable, available cells.
    pub sum: i64,
    /// Lowest such score (`i64::MAX` when none).
    pub min: i64,
    /// Number of such cells.
    pub selectable: u32,
    /// Sum of gaps (available cell-less resources).
    pub gaps: u32,
    /// Selectable, available cells that are held (the cooling cap kept them from cooling).
    pub held: u32,
}

impl Summary for Agg {
    const EMPTY: Agg = Agg { sum: 0, min: i64::MAX, selectable: 0, gaps: 0, held: 0 };
    fn combine(&self, o: &Agg) -> Agg {
        Agg {
            sum: self.sum + o.sum,
            min: self.min.min(o.min),
            selectable: self.selectable + o.selectable,
            gaps: self.gaps + o.gaps,
            held: self.held + o.held,
        }
    }
    fn replace(&self, old: &Agg, new: &Agg) -> Option<Agg> {
        let min = if new.min <= self.min {
            new.min
        } else if old.min == self.min {
            return None; // the minimum may have left: rescan
        } else {
            self.min
        };
        Some(Agg {
            sum: self.sum - old.sum + new.sum,
            min,
            selectable: self.selectable - old.selectable + new.selectable,
            gaps: self.gaps - old.gaps + new.gaps,
            held: self.held - old.held + new.held,
        })
    }
}

impl Agg {
    /// Total weight when a fresh candidate weighs `unit` and a cell weighs `score + unit`.
    /// (`sum` may be negative; the weight never is, and fits u64 — see `Candidates` — so
    /// arithmetic modulo 2^64 gives it exactly.)
    fn weight(&self, unit: u64) -> u64 {
        u64::from(self.selectable + self.gaps).wrapping_mul(unit).wrapping_add(self.sum as u64)
    }
}

const HELD: u32 = 1 << 29;
const COUNTED: u32 = 1 << 30;
const ELIGIBLE: u32 = 1 << 31;
const GAP_MASK: u32 = HELD - 1;

/// One cell in its context's sequence, with what selection needs inline (16 bytes, so a
/// chunk scan touches few cache lines).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CellItem {
    pub cell: u32,
    pub res: u32,
    /// The cell's score in fixed point (|score| ≤ 100 · 2^20 fits).
    pub score: i32,
    /// The gap in the low 29 bits (≤ maxResources < 2^29), then `HELD`, `COUNTED` and
    /// `ELIGIBLE`.
    bits: u32,
}

impl CellItem {
    fn new(cell: u32, res: u32, c: &Cell, eligible: bool) -> CellItem {
        let mut e = CellItem { cell, res, score: fixed(c.score) as i32, bits: 0 };
        e.set(ELIGIBLE, eligible);
        e.set(HELD, c.held);
        e
    }

    /// Available cell-less resources between the previous cell and this one.
    pub fn gap(&self) -> u32 {
        self.bits & GAP_MASK
    }

    fn set_gap(&mut self, gap: u32) {
        debug_assert!(gap <= GAP_MASK);
        self.bits = (self.bits & !GAP_MASK) | gap;
    }

    /// The context's view of the resource's availability (exact after `sync`).
    pub fn counted(&self) -> bool {
        self.bits & COUNTED != 0
    }

    /// Whether the cell's state makes it a candidate (HEALTHY, RECOVERING, half-open trial).
    pub fn eligible(&self) -> bool {
        self.bits & ELIGIBLE != 0
    }

    fn candidate(&self) -> bool {
        self.bits & (COUNTED | ELIGIBLE) == COUNTED | ELIGIBLE
    }

    fn set(&mut self, flag: u32, on: bool) {
        if on {
            self.bits |= flag;
        } else {
            self.bits &= !flag;
        }
    }
}

impl Item for CellItem {
    type Sum = Agg;
    fn id(&self) -> u32 {
        self.cell
    }
    fn summary(&self) -> Agg {
        if self.candidate() {
            let score = i64::from(self.score);
            Agg {
                sum: score,
                min: score,
                selectable: 1,
                gaps: self.gap(),
                held: u32::from(self.bits & HELD != 0),
            }
        } else {
            Agg { gaps: self.gap(), ..Agg::EMPTY }
        }
    }
}

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

    fn relocate(&mut self, id: u32, at: Loc, sub: bool) {
        let s = self.slots.get_mut(id);
        if sub {
            s.sub_loc = at;
        } else {
            s.loc = at;
        }
    }

    fn loc(&self, id: u32, sub: bool) -> Loc {
        let s = self.slots.get(id);
        if sub { s.sub_loc } else { s.loc }
    }

    /// Heap bytes held (for memory accounting in benchmarks).
    pub fn heap_bytes(&self) -> usize {
        let windows: usize = self.live_ids().map(|i| self.get(i).cell.window.heap_bytes()).sum();
        self.slots.heap_bytes() + self.by_pair.capacity() * (std::mem::size_of::<(u64, u32)>() + 1) + windows
    }
}

/// A context: its name and its index — over the whole pool, or (a sub-index, `sub`) over one
/// group's members.
#[derive(Debug, Clone)]
pub struct Context {
    pub name: Rc<str>,
    list: ChunkList<CellItem>,
    /// Available cell-less resources after the last cell.
    tail: u32,
    /// Position in the availability log up to which gaps and `counted` are exact.
    cursor: u64,
    /// Whether this is a group's sub-index (its cells' positions are their `sub_loc`).
    sub: bool,
    /// The sub-indexes of the groups a grouped call has asked about, by group id: each holds
    /// this context's cells of that group's members, kept in step with this index.
    subs: FxHashMap<u32, Context>,
    /// Cells here whose stored state is `COOLING` with a cooldown still running (the cooling
    /// cap's count: `cooled` and `cooldown_ended` keep it).
    cooling: u32,
    /// The pacing gap of this context (`minGapMs` or its override; 0: off).
    min_gap: u64,
}

/// Where a pick landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Picked {
    /// A resource with a cell here: its registry slot and the cell.
    Cell { res: u32, cell: u32 },
    /// A cell-less resource: the k-th available resource in the resource order.
    Fresh(u32),
}

/// The candidate set of a context, summarised (weights in fixed point).
///
/// Weights are u64: a weight is at least `explorationFloor` (> 0), and the total is at most
/// `maxResources × (explorationFloor + 200) × 2^20` ≤ 10^7 × (10^6 + 200) × 2^20 < 2^64 (the
/// config's bounds). Partial sums with a negative score sum are taken modulo 2^64, which is
/// exact because every true value lies in [0, 2^64). (On wasm32, u64 is native and i128 is
/// not: this is most of the pick's arithmetic.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidates {
    pub count: u64,
    /// Weight of a fresh candidate: `explorationFloor − min`; a cell weighs `score + unit`.
    pub unit: u64,
    pub total: u64,
}

impl Candidates {
    /// Every candidate fresh (score 0): `count` of them at `floor` each.
    pub fn fresh(count: u64, floor: f64) -> Candidates {
        let unit = fixed(floor).max(1) as u64;
        Candidates { count, unit, total: count * unit }
    }

    /// The fixed-point target for draw `u`: a candidate is picked when its running weight
    /// exceeds it. `target = u × totalWeight` in floating point, as the spec says, then moved
    /// to fixed point exactly (a running weight `r` exceeds `t` iff `r > floor(t × 2^20)`).
    pub fn target(&self, u: f64) -> u64 {
        let total = self.total as f64 / SCALE;
        // Truncation is the floor here: the product is never negative.
        ((u * total) * SCALE) as u64
    }
}

/// The smallest `j < len` with `base + (j + 1) × unit > target` (the last one if none): the
/// position of a pick inside a run of equal weights.
pub(crate) fn index_in_run(target: u64, base: u64, unit: u64, len: u32) -> u32 {
    debug_assert!(len > 0 && unit > 0);
    (target.saturating_sub(base) / unit).min(u64::from(len - 1)) as u32
}

/// The candidate of `entries` (no gaps among them) whose running weight, from `base`, first
/// exceeds `target`; `None` with `base` moved past them all when none does. The same sums as
/// `pick`'s general scan, four entries per comparison (without branches per entry) until the
/// group holding the pick.
fn gapless_run(entries: &[CellItem], unit: u64, target: u64, base: &mut u64) -> Option<CellItem> {
    let w = |e: &CellItem| {
        let mask = 0u64.wrapping_sub(u64::from(e.candidate()));
        unit.wrapping_add(i64::from(e.score) as u64) & mask
    };
    let mut quads = entries.chunks_exact(4);
    let mut rest: &[CellItem] = quads.remainder();
    for q in &mut quads {
        let sum = w(&q[0]).wrapping_add(w(&q[1])).wrapping_add(w(&q[2])).wrapping_add(w(&q[3]));
        if target < *base + sum {
            rest = q;
            break;
        }
        *base += sum;
    }
    for e in rest {
        let ow = w(e);
        if target < *base + ow {
            return Some(*e);
        }
        *base += ow;
    }
    None
}

/// Sets every entry's gap and `counted` flag from the (synced) resource order; returns the
/// tail. Dense contexts walk the order once (O(resources)); sparse ones ask for ranks
/// (O(cells × log resources)).
fn fill_gaps(entries: &mut [CellItem], reg: &dyn Universe) -> u32 {
    let mut covered = 0u32; // available resources up to and including the previous cell
    let mut place = |e: &mut CellItem, rank: u32, avail: bool| {
        e.set_gap(rank - covered);
        e.set(COUNTED, avail);
        covered = rank + u32::from(avail);
    };
    if entries.len() * 16 >= reg.len() {
        let mut order = reg.order_iter();
        let mut before = 0u32;
        for e in entries.iter_mut() {
            for (slot, avail) in order.by_ref() {
                if slot == e.res {
                    place(e, before, avail);
                    before += u32::from(avail);
                    break;
                }
                before += u32::from(avail);
            }
        }
    } else {
        for e in entries.iter_mut() {
            place(e, reg.rank(e.res), reg.is_avail(e.res));
        }
    }
    reg.available() - covered
}

impl Context {
    /// A context without cells, paced by `min_gap` (0: off).
    pub fn new(name: Rc<str>, min_gap: u64, reg: &dyn Universe, log: &AvailLog, sub: bool) -> Context {
        Context {
            name,
            list: ChunkList::default(),
            tail: reg.available(),
            cursor: log.observe(),
            sub,
            subs: FxHashMap::default(),
            cooling: 0,
            min_gap,
        }
    }

    /// The pacing gap of this context (0: off).
    pub fn min_gap(&self) -> u64 {
        self.min_gap
    }

    /// The config now paces this context by `gap`; true when that changed it.
    pub fn gap_configured(&mut self, gap: u64) -> bool {
        std::mem::replace(&mut self.min_gap, gap) != gap
    }

    /// How many cells here are in a running cooldown (the cooling cap's count).
    pub fn cooling(&self) -> u32 {
        self.cooling
    }

    /// A cell here began a cooldown.
    pub fn cooled(&mut self) {
        self.cooling += 1;
    }

    /// A running cooldown of a cell here ended (or its cell went).
    pub fn cooldown_ended(&mut self) {
        self.cooling -= 1;
    }

    /// Whether a grouped call has asked about any group here (most contexts: none).
    pub fn has_subs(&self) -> bool {
        !self.subs.is_empty()
    }

    /// The groups this context keeps a sub-index of, in no defined order.
    pub fn sub_groups(&self) -> Vec<u32> {
        self.subs.keys().copied().collect()
    }

    /// Group `g`'s sub-index, if it has one.
    pub fn sub(&self, g: u32) -> Option<&Context> {
        self.subs.get(&g)
    }

    pub fn sub_mut(&mut self, g: u32) -> Option<&mut Context> {
        self.subs.get_mut(&g)
    }

    /// Keeps `sub` as group `g`'s sub-index.
    pub fn sub_made(&mut self, g: u32, sub: Context) {
        self.subs.insert(g, sub);
    }

    /// Group `g` is gone (or changed members wholesale): its sub-index goes.
    pub fn sub_dropped(&mut self, g: u32) {
        self.subs.remove(&g);
    }

    /// Cells in this context.
    pub fn cells(&self) -> usize {
        self.list.len()
    }

    /// Brings gaps and `counted` flags up to date with the availability log. (Inline: nearly
    /// always there is nothing to do; the replay is out of line.)
    #[inline]
    pub fn sync(&mut self, cells: &mut CellStore, reg: &dyn Universe, log: &AvailLog, me: u32) {
        if self.cursor != log.end() {
            self.replay(cells, reg, log, me);
        }
    }

    #[inline(never)]
    fn replay(&mut self, cells: &mut CellStore, reg: &dyn Universe, log: &AvailLog, me: u32) {
        if self.cursor < log.base() {
            self.rebuild(cells, reg, log);
            return;
        }
        for slot in log.changed_since(self.cursor) {
            if !reg.member(slot) {
                continue;
            }
            let avail = reg.is_avail(slot);
            if let Some(id) = cells.find(slot, me) {
                let at = cells.loc(id, self.sub);
                if self.list.get(at).counted() != avail {
                    self.list.modify(at, |e| e.set(COUNTED, avail));
                }
            } else {
                let at = self.successor(reg, slot);
                self.adjust_gap(at, if avail { 1 } else { -1 });
            }
        }
        self.cursor = log.observe();
    }

    /// Recomputes every gap and flag from the resource order.
    pub fn rebuild(&mut self, cells: &mut CellStore, reg: &dyn Universe, log: &AvailLog) {
        let entries: Vec<CellItem> = self.list.iter().copied().collect();
        self.build_from(cells, reg, log, entries);
    }

    fn build_from(
        &mut self,
        cells: &mut CellStore,
        reg: &dyn Universe,
        log: &AvailLog,
        mut entries: Vec<CellItem>,
    ) {
        self.tail = fill_gaps(&mut entries, reg);
        let sub = self.sub;
        self.list = ChunkList::from_sorted(entries, |id, at| cells.relocate(id, at, sub));
        self.cursor = log.observe();
    }

    /// A group's sub-index of this (synced) context: the entries of `reg`'s members, as
    /// indexed here.
    pub fn sub_index(&self, cells: &mut CellStore, reg: &dyn Universe, log: &AvailLog) -> Context {
        let entries: Vec<CellItem> = self.list.iter().filter(|e| reg.member(e.res)).copied().collect();
        let mut sub = Context::new(Rc::clone(&self.name), self.min_gap, reg, log, true);
        sub.build_from(cells, reg, log, entries);
        sub
    }

    /// Builds the sequence from cells given in canonical order (restore).
    pub fn build(
        &mut self,
        cells: &mut CellStore,
        reg: &dyn Universe,
        log: &AvailLog,
        sorted: &[(u32, bool)],
    ) {
        let entries: Vec<CellItem> = sorted
            .iter()
            .map(|&(id, eligible)| {
                let c = cells.get(id);
                CellItem::new(id, c.res, &c.cell, eligible)
            })
            .collect();
        self.build_from(cells, reg, log, entries);
    }

    /// The first cell whose resource comes after resource `slot`, or `None`.
    fn successor(&self, reg: &dyn Universe, slot: u32) -> Option<Loc> {
        let at = self.list.lower_bound(|e| reg.order_cmp(e.res, slot) == Ordering::Less);
        self.list.at_or_next(at)
    }

    fn adjust_gap(&mut self, at: Option<Loc>, delta: i64) {
        match at {
            None => self.tail = (i64::from(self.tail) + delta) as u32,
            Some(at) => self.list.modify(at, |e| e.set_gap((i64::from(e.gap()) + delta) as u32)),
        }
    }

    /// Adds stored cell `id` to this (synced) context, splitting the gap it lands in.
    pub fn insert(&mut self, cells: &mut CellStore, reg: &dyn Universe, id: u32, eligible: bool) {
        let c = cells.get(id);
        let res = c.res;
        let avail = reg.is_avail(res);
        let at = self.list.lower_bound(|e| reg.order_cmp(e.res, res) == Ordering::Less);
        let pred = if at.index > 0 {
            Some(Loc { chunk: at.chunk, index: at.index - 1 })
        } else {
            self.list.prev(at)
        };
        let covered = pred.map_or(0, |p| {
            let r = self.list.get(p).res;
            reg.rank(r) + u32::from(reg.is_avail(r))
        });
        let gap = reg.rank(res) - covered;
        let succ = self.list.at_or_next(at);
        self.adjust_gap(succ, -(i64::from(gap) + i64::from(avail)));
        let mut e = CellItem::new(id, res, &c.cell, eligible);
        e.set_gap(gap);
        e.set(COUNTED, avail);
        let sub = self.sub;
        self.list.insert(at.chunk, at.index as usize, e, |id, at| cells.relocate(id, at, sub));
    }

    /// Takes cell `id` out of this (synced) context; its gap joins the next one.
    pub fn remove(&mut self, cells: &mut CellStore, id: u32) {
        let at = cells.loc(id, self.sub);
        let e = *self.list.get(at);
        let succ = self.list.next(at);
        self.adjust_gap(succ, i64::from(e.gap()) + i64::from(e.counted()));
        let sub = self.sub;
        self.list.remove(at, |id, at| cells.relocate(id, at, sub));
    }

    /// Copies cell `id`'s score and eligibility into the index.
    pub fn refresh(&mut self, cells: &CellStore, id: u32, eligible: bool) {
        let c = cells.get(id);
        let (at, score, held) = (cells.loc(id, self.sub), fixed(c.cell.score) as i32, c.cell.held);
        let e = self.list.get(at);
        if e.score != score || e.eligible() != eligible || (e.bits & HELD != 0) != held {
            self.list.modify(at, |e| {
                e.score = score;
                e.set(ELIGIBLE, eligible);
                e.set(HELD, held);
            });
        }
    }

    /// Whether this (synced, ensured) index has a candidate that is not held: a group whose
    /// sub-index has one is usable (SPEC §3, groups).
    pub fn usable(&self) -> bool {
        let agg = self.list.total();
        agg.selectable > agg.held || agg.gaps > 0 || self.tail > 0
    }

    /// Whether cell `id` is indexed as eligible (tests).
    pub fn indexed_eligible(&self, cells: &CellStore, id: u32) -> bool {
        self.list.get(cells.loc(id, self.sub)).eligible()
    }

    /// Brings the summary tree up to date; `summary` and `pick` need it. (Inserting cells only
    /// marks it stale, so creating many cells in a row costs one rebuild, not one each.)
    pub fn ensure(&mut self) {
        self.list.ensure();
    }

    /// The candidate set of this (synced, ensured) context.
    pub fn summary(&self, floor: f64) -> Candidates {
        let agg = self.list.total();
        let fresh = u64::from(agg.gaps) + u64::from(self.tail);
        let count = fresh + u64::from(agg.selectable);
        if agg.selectable == 0 {
            return Candidates::fresh(count, floor);
        }
        let min = if fresh > 0 { agg.min.min(0) } else { agg.min };
        let unit = (fixed(floor).max(1) - min) as u64;
        Candidates { count, unit, total: count.wrapping_mul(unit).wrapping_add(agg.sum as u64) }
    }

    /// The candidate whose running weight, in canonical order, first exceeds `target`.
    pub fn pick(&self, reg: &dyn Universe, sum: &Candidates, target: u64) -> Picked {
        debug_assert!(sum.count > 0);
        let unit = sum.unit;
        let mut base = 0;
        let start = self.list.descend(|a| {
            let w = a.weight(unit);
            if target < base + w {
                true
            } else {
                base += w;
                false
            }
        });
        for pos in start.into_iter().flat_map(|p| p..self.list.chunks()) {
            let chunk = self.list.chunk_at(pos);
            let entries = &chunk.entries[..];
            // No gap in the chunk (its summary says so: the usual chunk once every resource
            // has a cell here): an entry weighs `unit + score` when it is a candidate and
            // nothing otherwise, and four at a time are stepped over by their sum.
            if chunk.sum.gaps == 0 {
                match gapless_run(entries, unit, target, &mut base) {
                    Some(e) => return Picked::Cell { res: e.res, cell: e.cell },
                    None => continue,
                }
            }
            for e in entries.iter() {
                let gap = e.gap();
                if gap > 0 {
                    let gw = u64::from(gap) * unit;
                    if target < base + gw {
                        let j = index_in_run(target, base, unit, gap);
                        return Picked::Fresh(reg.rank(e.res) - gap + j);
                    }
                    base += gw;
                }
                if e.candidate() {
                    let ow = unit.wrapping_add(i64::from(e.score) as u64);
                    if target < base + ow {
                        return Picked::Cell { res: e.res, cell: e.cell };
                    }
                    base += ow;
                }
            }
        }
        if self.tail > 0 {
            let j = index_in_run(target, base, unit, self.tail);
            return Picked::Fresh(reg.available() - self.tail + j);
        }
        self.last_candidate(reg)
    }

    /// The last candidate in canonical order (absorbs floating-point drift).
    fn last_candidate(&self, reg: &dyn Universe) -> Picked {
        for pos in (0..self.list.chunks()).rev() {
            for e in self.list.chunk_at(pos).entries.iter().rev() {
                if e.candidate() {
                    return Picked::Cell { res: e.res, cell: e.cell };
                }
                if e.gap() > 0 {
                    return Picked::Fresh(reg.rank(e.res) - 1);
                }
            }
        }
        unreachable!("last_candidate on a context without candidates")
    }

    /// Checks every gap, flag and summary against a from-scratch recomputation (tests).
    pub fn verify(&self, cells: &CellStore, reg: &dyn Universe, log: &AvailLog) -> Result<(), String> {
        if self.cursor != log.end() {
            return Err("context not synced".into());
        }
        self.list.verify()?;
        let entries: Vec<CellItem> = self.list.iter().copied().collect();
        for w in entries.windows(2) {
            if reg.order_cmp(w[0].res, w[1].res) != Ordering::Less {
                return Err("cells out of key order".into());
            }
        }
        let mut covered = 0u32;
        for e in &entries {
            let c = cells.get(e.cell);
            if c.res != e.res || self.list.get(cells.loc(e.cell, self.sub)).cell != e.cell {
                return Err("cell back-pointer stale".into());
            }
            if fixed(c.cell.score) as i32 != e.score {
                return Err("indexed score differs from the cell's".into());
            }
            if (e.bits & HELD != 0) != c.cell.held {
                return Err("indexed held flag differs from the cell's".into());
            }
            let (rank, avail) = (reg.rank(e.res), reg.is_avail(e.res));
            if e.gap() != rank - covered {
                return Err(format!("gap {} but {} fresh resources before cell", e.gap(), rank - covered));
            }
            if e.counted() != avail {
                return Err("counted flag differs from availability".into());
            }
            covered = rank + u32::from(avail);
        }
        if self.tail != reg.available() - covered {
            return Err(format!("tail {} but {}", self.tail, reg.available() - covered));
        }
        Ok(())
    }
}
