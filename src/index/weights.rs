//! What selection weighs, in fixed point: one entry of a context's sequence (`CellItem`: a
//! cell's score, its gap and its flags inline), the summary of a run of entries (`Agg`), and a
//! context's candidate set (`Candidates`) with the target a draw picks by.
//!
//! Weights are summed in fixed point (2^-20 units): sums are then exact and independent of the
//! order of additions, so summaries can be updated incrementally and a restored pool picks
//! exactly as the live one did. With integral scores and floor (the defaults) the pick equals
//! the spec's floating-point running sum exactly; fractional ones are quantised to 2^-20.
//! Where the entries sit and how a pick walks them is `context.rs`'s.

use crate::cell::Cell;
use crate::seq::chunks::Item;
use crate::seq::summary_tree::Summary;

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
    pub(super) fn weight(&self, unit: u64) -> u64 {
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
    /// Cell `cell` of resource `res`, its score and held flag read from `c`.
    pub(super) fn new(cell: u32, res: u32, c: &Cell, eligible: bool) -> CellItem {
        let mut e = CellItem { cell, res, score: fixed(c.score) as i32, bits: 0 };
        e.set(ELIGIBLE, eligible);
        e.set(HELD, c.held);
        e
    }

    /// Available cell-less resources between the previous cell and this one.
    pub fn gap(&self) -> u32 {
        self.bits & GAP_MASK
    }

    pub(super) fn set_gap(&mut self, gap: u32) {
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

    /// Whether the cell is indexed as held (the cooling cap kept it from cooling).
    pub fn held(&self) -> bool {
        self.bits & HELD != 0
    }

    /// Counted available and eligible: a candidate of its context.
    pub(super) fn candidate(&self) -> bool {
        self.bits & (COUNTED | ELIGIBLE) == COUNTED | ELIGIBLE
    }

    pub(super) fn set_counted(&mut self, on: bool) {
        self.set(COUNTED, on);
    }

    pub(super) fn set_eligible(&mut self, on: bool) {
        self.set(ELIGIBLE, on);
    }

    pub(super) fn set_held(&mut self, on: bool) {
        self.set(HELD, on);
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
            Agg { sum: score, min: score, selectable: 1, gaps: self.gap(), held: u32::from(self.held()) }
        } else {
            Agg { gaps: self.gap(), ..Agg::EMPTY }
        }
    }
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
