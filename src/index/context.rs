//! A context's index: what makes `acquire` O(log n).
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
//! this module stores the answer and keeps summaries right. The entries and their fixed-point
//! weights are `weights.rs`'s; the cells themselves `cells.rs`'s. A context also owns its
//! cooling cap's count and its pacing gap, changed through methods named for the event.

use std::cmp::Ordering;
use std::rc::Rc;

use rustc_hash::FxHashMap;

use super::avail_log::AvailLog;
use super::cells::CellStore;
use super::universe::Universe;
use super::weights::{Candidates, CellItem, fixed, index_in_run};
use crate::seq::chunks::{ChunkList, Loc};

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
        e.set_counted(avail);
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
                    self.list.modify(at, |e| e.set_counted(avail));
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
                CellItem::new(id, c.res, c.cell(), eligible)
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
        let mut e = CellItem::new(id, res, c.cell(), eligible);
        e.set_gap(gap);
        e.set_counted(avail);
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
        let (at, score, held) = (cells.loc(id, self.sub), fixed(c.cell().score) as i32, c.cell().held);
        let e = self.list.get(at);
        if e.score != score || e.eligible() != eligible || e.held() != held {
            self.list.modify(at, |e| {
                e.score = score;
                e.set_eligible(eligible);
                e.set_held(held);
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
            if fixed(c.cell().score) as i32 != e.score {
                return Err("indexed score differs from the cell's".into());
            }
            if e.held() != c.cell().held {
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
