//! The engine's one sort: ids (`u32`) ordered by a comparator passed by reference.
//!
//! Every sort in the engine goes through `sort_ids` — of slots, cell ids, or the positions of
//! the items of a list (`sorted_positions`) — so the WebAssembly module holds one copy of the
//! sort code; each sort of a type of its own would add 3–7 KB of code (BENCHMARKS.md,
//! "Module size"). None of these sorts is on the acquire → report → release path.

use std::cmp::Ordering;

/// Sorts `ids` by `cmp`, unstably (callers' keys are unique, or ties are equal).
pub fn sort_ids(ids: &mut [u32], cmp: &dyn Fn(u32, u32) -> Ordering) {
    ids.sort_unstable_by(|&a, &b| cmp(a, b));
}

/// The positions `0..n` of a list's items in the order `cmp` gives them.
pub fn sorted_positions(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..n as u32).collect();
    sort_ids(&mut ids, &|a, b| cmp(a as usize, b as usize));
    ids
}
