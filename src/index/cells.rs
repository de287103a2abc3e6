//! Cell storage and each context's cell tree: the index that makes `acquire` O(log n).
//!
//! A context's candidates are its selectable cells plus every available resource that has no
//! cell there yet (a transient fresh cell, score 0). Storing fresh entries per context would cost
//! resources × contexts; instead each context keeps a treap of its own cells in canonical order,
//! and every cell node records its `gap`: how many available cell-less resources sit between the
//! previous cell and it (`tail` counts those after the last cell). Subtree aggregates (sum and
//! min of selectable scores, selectable count, gap total) give the weight of any prefix, so one
//! descent finds the pick; a pick inside a gap is resolved by rank in the resource order.
//!
//! Gaps and `counted` flags reflect availability as of the context's log cursor; `sync` replays
//! the availability log to bring them to now. What makes a cell selectable is `cell.rs`'s rule;
//! this module stores the answer (`eligible`) and keeps aggregates right.

use std::rc::Rc;

use rustc_hash::FxHashMap;

use super::avail_log::AvailLog;
use super::treap::{self, Arena, Links, NIL};
use crate::cell::Cell;
use crate::registry::Registry;

/// Subtree aggregate of a cell tree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agg {
    /// Sum of scores of selectable, available cells.
    pub sum: f64,
    /// Lowest such score (+∞ when none).
    pub min: f64,
    /// Number of such cells.
    pub selectable: u32,
    /// Sum of gaps (available cell-less resources).
    pub gaps: u32,
}

impl Agg {
    const EMPTY: Agg = Agg {
        sum: 0.0,
        min: f64::INFINITY,
        selectable: 0,
        gaps: 0,
    };

    /// Total weight when a fresh candidate weighs `unit` and a cell weighs `score + unit`.
    fn weight(&self, unit: f64) -> f64 {
        self.sum + f64::from(self.selectable + self.gaps) * unit
    }

    fn candidates(&self) -> u32 {
        self.selectable + self.gaps
    }
}

/// A stored cell with its index node.
#[derive(Debug, Clone)]
pub struct CellSlot {
    pub(crate) links: Links,
    pub(crate) agg: Agg,
    /// The resource's slot in the registry.
    pub res: u32,
    /// The context's slot.
    pub ctx: u32,
    pub(crate) gap: u32,
    /// The context's view of the resource's availability (exact after `sync`).
    pub(crate) counted: bool,
    /// Whether the cell's state makes it a candidate (HEALTHY, RECOVERING, half-open trial).
    pub(crate) eligible: bool,
    pub cell: Cell,
}

impl CellSlot {
    fn own(&self) -> (f64, f64, u32) {
        if self.counted && self.eligible {
            (self.cell.score, self.cell.score, 1)
        } else {
            (0.0, f64::INFINITY, 0)
        }
    }
}

/// Every cell of the pool, addressed by slot and by `(resource, context)`.
#[derive(Debug, Clone, Default)]
pub struct CellStore {
    slots: Vec<Option<CellSlot>>,
    free: Vec<u32>,
    by_pair: FxHashMap<u64, u32>,
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
        self.slots[id as usize].as_ref().expect("live cell slot")
    }

    pub fn get_mut(&mut self, id: u32) -> &mut CellSlot {
        self.slots[id as usize].as_mut().expect("live cell slot")
    }

    /// Is `id` a live cell slot? (Expiry queues hold ids that may have been freed.)
    pub fn is_live(&self, id: u32) -> bool {
        self.slots.get(id as usize).is_some_and(Option::is_some)
    }

    /// Stores a cell (not yet in its context's tree).
    pub fn add(&mut self, res: u32, ctx: u32, cell: Cell) -> u32 {
        let slot = CellSlot {
            links: Links::DETACHED,
            agg: Agg::EMPTY,
            res,
            ctx,
            gap: 0,
            counted: false,
            eligible: false,
            cell,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(slot);
                id
            }
            None => {
                self.slots.push(Some(slot));
                (self.slots.len() - 1) as u32
            }
        };
        self.by_pair.insert(pair(res, ctx), id);
        id
    }

    /// Forgets a cell that has already left its tree.
    pub fn take(&mut self, id: u32) -> CellSlot {
        let slot = self.slots[id as usize].take().expect("live cell slot");
        self.by_pair.remove(&pair(slot.res, slot.ctx));
        self.free.push(id);
        slot
    }

    /// Live cell ids in no particular order.
    pub fn live_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, c)| c.is_some())
            .map(|(i, _)| i as u32)
    }

    /// Approximate heap bytes held (for memory accounting in benchmarks).
    pub fn heap_bytes(&self) -> usize {
        let windows: usize = self
            .live_ids()
            .map(|i| self.get(i).cell.window.heap_bytes() + 16)
            .sum();
        self.slots.capacity() * std::mem::size_of::<Option<CellSlot>>()
            + self.by_pair.capacity() * (std::mem::size_of::<(u64, u32)>() + 1)
            + windows
    }
}

/// A context: its name and its cell tree.
#[derive(Debug, Clone)]
pub struct Context {
    pub name: Rc<str>,
    pub(crate) root: u32,
    /// Available cell-less resources after the last cell.
    pub(crate) tail: u32,
    /// Position in the availability log up to which gaps and `counted` are exact.
    pub(crate) cursor: u64,
    /// Cells in this context.
    pub cells: u32,
}

/// Where a pick landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Picked {
    /// A stored cell (its id).
    Cell(u32),
    /// A cell-less resource: the k-th available resource in the resource order.
    Fresh(u32),
}

/// The candidate set of a context, summarised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub count: u64,
    /// Weight of a fresh candidate: `explorationFloor − min`; a cell weighs `score + unit`.
    pub unit: f64,
    pub total: f64,
}

/// The treap view over one context's cells (cells of every context share the store).
struct Tree<'a> {
    cells: &'a mut CellStore,
    reg: &'a Registry,
}

impl Arena for Tree<'_> {
    fn links(&self, i: u32) -> Links {
        self.cells.get(i).links
    }
    fn links_mut(&mut self, i: u32) -> &mut Links {
        &mut self.cells.get_mut(i).links
    }
    fn outranks(&self, a: u32, b: u32) -> bool {
        self.reg
            .outranks(self.cells.get(a).res, self.cells.get(b).res)
    }
    fn pull(&mut self, i: u32) {
        let agg = computed_agg(self.cells, i);
        self.cells.get_mut(i).agg = agg;
    }
}

/// Node `i`'s aggregate from its own data and its children's stored aggregates.
fn computed_agg(cells: &CellStore, i: u32) -> Agg {
    let c = cells.get(i);
    let child = |x: u32| {
        if x == NIL {
            Agg::EMPTY
        } else {
            cells.get(x).agg
        }
    };
    let (l, r) = (child(c.links.left), child(c.links.right));
    let (own_sum, own_min, own_n) = c.own();
    Agg {
        sum: l.sum + own_sum + r.sum,
        min: l.min.min(own_min).min(r.min),
        selectable: l.selectable + own_n + r.selectable,
        gaps: l.gaps + c.gap + r.gaps,
    }
}

/// Read-only view for traversals.
struct View<'a> {
    cells: &'a CellStore,
}

impl Arena for View<'_> {
    fn links(&self, i: u32) -> Links {
        self.cells.get(i).links
    }
    fn links_mut(&mut self, _: u32) -> &mut Links {
        unreachable!("read-only view")
    }
    fn outranks(&self, _: u32, _: u32) -> bool {
        unreachable!("read-only view")
    }
    fn pull(&mut self, _: u32) {}
}

/// The smallest `j < len` with `base + (j + 1) × unit > target` (the last one if none): the
/// position of a pick inside a run of equal weights, exact for integral weights.
pub(crate) fn index_in_run(target: f64, base: f64, unit: f64, len: u32) -> u32 {
    debug_assert!(len > 0);
    let last = len - 1;
    let mut j = ((target - base) / unit).floor().clamp(0.0, f64::from(last)) as u32;
    while j > 0 && base + f64::from(j) * unit > target {
        j -= 1;
    }
    while j < last && base + f64::from(j + 1) * unit <= target {
        j += 1;
    }
    j
}

impl Context {
    pub fn new(name: Rc<str>, reg: &Registry, log: &AvailLog) -> Context {
        Context {
            name,
            root: NIL,
            tail: reg.available(),
            cursor: log.end(),
            cells: 0,
        }
    }

    /// Brings gaps and `counted` flags up to date with the availability log.
    pub fn sync(&mut self, cells: &mut CellStore, reg: &Registry, log: &AvailLog, me: u32) {
        if self.cursor == log.end() {
            return;
        }
        if self.cursor < log.base() {
            self.rebuild(cells, reg, log);
            return;
        }
        for slot in log.changed_since(reg, self.cursor) {
            let avail = reg.get(slot).avail;
            if let Some(id) = cells.find(slot, me) {
                let c = cells.get_mut(id);
                if c.counted != avail {
                    c.counted = avail;
                    treap::pull_to_root(&mut Tree { cells, reg }, id);
                }
            } else {
                let s = self.successor(cells, reg, slot);
                self.adjust_gap(cells, reg, s, if avail { 1 } else { -1 });
            }
        }
        self.cursor = log.end();
    }

    /// Recomputes every gap, flag and aggregate from the resource order (O(cells × log n)).
    pub fn rebuild(&mut self, cells: &mut CellStore, reg: &Registry, log: &AvailLog) {
        let order = treap::in_order(&View { cells }, self.root);
        let mut covered = 0u32; // available resources up to and including the previous cell
        for &id in &order {
            let res = cells.get(id).res;
            let rank = reg.rank(res);
            let avail = reg.get(res).avail;
            let c = cells.get_mut(id);
            c.gap = rank - covered;
            c.counted = avail;
            covered = rank + u32::from(avail);
        }
        self.tail = reg.available() - covered;
        treap::pull_subtree(&mut Tree { cells, reg }, self.root);
        self.cursor = log.end();
    }

    /// Rebuilds the tree itself from cells given in canonical order (restore), then the gaps.
    pub fn build(&mut self, cells: &mut CellStore, reg: &Registry, log: &AvailLog, sorted: &[u32]) {
        self.root = treap::build_sorted(&mut Tree { cells, reg }, sorted);
        self.cells = sorted.len() as u32;
        self.rebuild(cells, reg, log);
    }

    /// The first cell whose resource comes after resource `slot` in canonical order, or `NIL`.
    fn successor(&self, cells: &CellStore, reg: &Registry, slot: u32) -> u32 {
        let r = reg.get(slot);
        let mut x = self.root;
        let mut best = NIL;
        while x != NIL {
            let c = cells.get(x);
            if reg.key_before(r.kind, &r.value, c.res) {
                best = x;
                x = c.links.left;
            } else {
                x = c.links.right;
            }
        }
        best
    }

    fn adjust_gap(&mut self, cells: &mut CellStore, reg: &Registry, at: u32, delta: i64) {
        if at == NIL {
            self.tail = (i64::from(self.tail) + delta) as u32;
        } else {
            let c = cells.get_mut(at);
            c.gap = (i64::from(c.gap) + delta) as u32;
            treap::pull_to_root(&mut Tree { cells, reg }, at);
        }
    }

    /// Adds stored cell `id` to this (synced) context's tree, splitting the gap it lands in.
    pub fn insert(&mut self, cells: &mut CellStore, reg: &Registry, id: u32) {
        let res = cells.get(id).res;
        let avail = reg.get(res).avail;
        let succ = self.successor(cells, reg, res);
        let pred = if succ == NIL {
            treap::last(&View { cells }, self.root)
        } else {
            treap::prev(&View { cells }, succ)
        };
        let covered = if pred == NIL {
            0
        } else {
            let p = cells.get(pred).res;
            reg.rank(p) + u32::from(reg.get(p).avail)
        };
        let gap = reg.rank(res) - covered;
        self.adjust_gap(cells, reg, succ, -(i64::from(gap) + i64::from(avail)));
        let c = cells.get_mut(id);
        c.gap = gap;
        c.counted = avail;
        let mut root = self.root;
        treap::insert(&mut Tree { cells, reg }, &mut root, id, |t, a, b| {
            t.reg.key_less(t.cells.get(a).res, t.cells.get(b).res)
        });
        self.root = root;
        self.cells += 1;
    }

    /// Takes cell `id` out of this (synced) context's tree; its gap joins the next one.
    pub fn remove(&mut self, cells: &mut CellStore, reg: &Registry, id: u32) {
        let c = cells.get(id);
        let give = i64::from(c.gap) + i64::from(c.counted);
        let succ = treap::next(&View { cells }, id);
        self.adjust_gap(cells, reg, succ, give);
        let mut root = self.root;
        treap::remove(&mut Tree { cells, reg }, &mut root, id);
        self.root = root;
        self.cells -= 1;
    }

    /// Re-aggregates after cell `id`'s score or eligibility changed.
    pub fn refresh(cells: &mut CellStore, reg: &Registry, id: u32) {
        treap::pull_to_root(&mut Tree { cells, reg }, id);
    }

    /// The candidate set of this (synced) context.
    pub fn summary(&self, cells: &CellStore, floor: f64) -> Summary {
        let agg = if self.root == NIL {
            Agg::EMPTY
        } else {
            cells.get(self.root).agg
        };
        let fresh = u64::from(agg.gaps) + u64::from(self.tail);
        let min = if fresh > 0 { agg.min.min(0.0) } else { agg.min };
        let count = fresh + u64::from(agg.selectable);
        if count == 0 {
            return Summary {
                count,
                unit: floor,
                total: 0.0,
            };
        }
        let unit = floor - min;
        Summary {
            count,
            unit,
            total: agg.sum + count as f64 * unit,
        }
    }

    /// The candidate whose running weight, in canonical order, first exceeds `target`.
    pub fn pick(&self, cells: &CellStore, reg: &Registry, sum: &Summary, target: f64) -> Picked {
        debug_assert!(sum.count > 0);
        let unit = sum.unit;
        let mut base = 0.0;
        let mut x = self.root;
        while x != NIL {
            let c = cells.get(x);
            let (l, r) = (c.links.left, c.links.right);
            if l != NIL {
                let lw = cells.get(l).agg.weight(unit);
                if target < base + lw {
                    x = l;
                    continue;
                }
                base += lw;
            }
            if c.gap > 0 {
                let gw = f64::from(c.gap) * unit;
                if target < base + gw {
                    let j = index_in_run(target, base, unit, c.gap);
                    return Picked::Fresh(reg.rank(c.res) - c.gap + j);
                }
                base += gw;
            }
            if c.counted && c.eligible {
                let ow = c.cell.score + unit;
                if target < base + ow {
                    return Picked::Cell(x);
                }
                base += ow;
            }
            x = r;
        }
        if self.tail > 0 {
            let j = index_in_run(target, base, unit, self.tail);
            return Picked::Fresh(reg.available() - self.tail + j);
        }
        self.last_candidate(cells, reg)
    }

    /// The last candidate in canonical order (absorbs floating-point drift).
    fn last_candidate(&self, cells: &CellStore, reg: &Registry) -> Picked {
        let mut x = self.root;
        while x != NIL {
            let c = cells.get(x);
            if c.links.right != NIL && cells.get(c.links.right).agg.candidates() > 0 {
                x = c.links.right;
            } else if c.counted && c.eligible {
                return Picked::Cell(x);
            } else if c.gap > 0 {
                return Picked::Fresh(reg.rank(c.res) - 1);
            } else {
                x = c.links.left;
            }
        }
        unreachable!("last_candidate on a context without candidates")
    }

    /// Cell ids of this context in canonical order.
    pub fn cells_in_order(&self, cells: &CellStore) -> Vec<u32> {
        treap::in_order(&View { cells }, self.root)
    }

    /// Checks every gap, flag and aggregate against a from-scratch recomputation (tests).
    pub fn verify(&self, cells: &CellStore, reg: &Registry, log: &AvailLog) -> Result<(), String> {
        if self.cursor != log.end() {
            return Err("context not synced".into());
        }
        let order = self.cells_in_order(cells);
        if order.len() != self.cells as usize {
            return Err(format!(
                "cell count {} but tree holds {}",
                self.cells,
                order.len()
            ));
        }
        let mut covered = 0u32;
        for w in order.windows(2) {
            if !reg.key_less(cells.get(w[0]).res, cells.get(w[1]).res) {
                return Err("cell tree out of key order".into());
            }
        }
        for &id in &order {
            let c = cells.get(id);
            let l = c.links;
            for child in [l.left, l.right] {
                if child != NIL && reg.outranks(cells.get(child).res, c.res) {
                    return Err("cell tree heap order broken".into());
                }
            }
            let res = c.res;
            let (rank, avail) = (reg.rank(res), reg.get(res).avail);
            if c.gap != rank - covered {
                return Err(format!(
                    "gap {} but {} fresh resources before cell",
                    c.gap,
                    rank - covered
                ));
            }
            if c.counted != avail {
                return Err("counted flag differs from availability".into());
            }
            covered = rank + u32::from(avail);
        }
        if self.tail != reg.available() - covered {
            return Err(format!(
                "tail {} but {}",
                self.tail,
                reg.available() - covered
            ));
        }
        for &id in &order {
            let stored = cells.get(id).agg;
            let recomputed = computed_agg(cells, id);
            if stored != recomputed {
                return Err(format!(
                    "aggregate {stored:?} but recomputed {recomputed:?}"
                ));
            }
        }
        Ok(())
    }
}
