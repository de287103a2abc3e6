//! Engine benchmarks (`cargo bench --bench engine`); figures go to BENCHMARKS.md.
//!
//! - `cycle`: one acquire + report + release, over 1k / 10k / 100k resources × 10 contexts, every
//!   resource already holding a cell in every context, with a realistic outcome mix (85 % success,
//!   the rest spread over the five failure types) and time moving 1 ms per cycle so cooldowns
//!   start, expire and recover during the run.
//! - `snapshot` / `restore`: a pool of 500k cells (50k resources × 10 contexts, full windows).
//! - Before the benchmarks run, live heap bytes per cell of that pool are printed (a counting
//!   global allocator measures them).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::RefCell;
use std::sync::atomic::{AtomicIsize, Ordering};

use repute::{Pool, Randomness};

#[path = "common/workload.rs"]
mod workload;
use workload::{CycleState, Mode, T0, build};

// Native only, where these benches run: on wasm32 (checked by clippy, never run) the library
// brings the module's own allocator (src/wasm/allocator.rs), and a program has one.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards to the system allocator unchanged, only counting bytes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOC: Counting = Counting;

#[divan::bench(args = [1_000, 10_000, 100_000], sample_count = 200, sample_size = 200)]
fn cycle(bencher: divan::Bencher, n: usize) {
    let state = RefCell::new(CycleState::new(n));
    // Warm up so that cooldowns, half-open trials and recoveries are all in play.
    for _ in 0..20_000 {
        state.borrow_mut().cycle();
    }
    bencher.bench_local(|| state.borrow_mut().cycle());
}

fn warmed(n: usize, mode: Mode) -> RefCell<CycleState> {
    let state = RefCell::new(CycleState::with_mode(n, mode));
    for _ in 0..20_000 {
        state.borrow_mut().cycle();
    }
    state
}

/// The cycle with `acquire(context, { groups: [dc, isp, res] })`, the first two tiers blocked.
#[divan::bench(args = [1_000, 10_000, 100_000], sample_count = 200, sample_size = 200)]
fn cycle_grouped(bencher: divan::Bencher, n: usize) {
    let state = warmed(n, Mode::Grouped);
    bencher.bench_local(|| state.borrow_mut().cycle());
}

/// The cycle on a pool with `minGapMs` 50.
#[divan::bench(args = [1_000, 10_000, 100_000], sample_count = 200, sample_size = 200)]
fn cycle_paced(bencher: divan::Bencher, n: usize) {
    let state = warmed(n, Mode::Paced);
    bencher.bench_local(|| state.borrow_mut().cycle());
}

/// Acquire + release alone: plain.
#[divan::bench(args = [1_000, 10_000, 100_000], sample_count = 200, sample_size = 200)]
fn acquire_plain(bencher: divan::Bencher, n: usize) {
    let state = warmed(n, Mode::Plain);
    bencher.bench_local(|| state.borrow_mut().acquire_release());
}

/// Acquire + release alone: over three groups, the first two blocked.
#[divan::bench(args = [1_000, 10_000, 100_000], sample_count = 200, sample_size = 200)]
fn acquire_grouped(bencher: divan::Bencher, n: usize) {
    let state = warmed(n, Mode::Grouped);
    bencher.bench_local(|| state.borrow_mut().acquire_release());
}

const BIG: usize = 50_000; // × 10 contexts = 500k cells

thread_local! {
    static BIG_POOL: RefCell<Option<(Pool, String)>> = const { RefCell::new(None) };
}

fn with_big<R>(f: impl FnOnce(&mut Pool, &str) -> R) -> R {
    BIG_POOL.with(|cell| {
        let mut slot = cell.borrow_mut();
        let (pool, snap) = slot.as_mut().expect("built in main");
        f(pool, snap)
    })
}

#[divan::bench(sample_count = 7, sample_size = 1)]
fn snapshot_500k_cells(bencher: divan::Bencher) {
    bencher.bench_local(|| with_big(|pool, _| divan::black_box(pool.snapshot(T0).unwrap().len())));
}

#[divan::bench(sample_count = 7, sample_size = 1)]
fn restore_500k_cells(bencher: divan::Bencher) {
    bencher.bench_local(|| {
        with_big(|_, snap| {
            let p = Pool::restore(snap, None, Randomness::seeded(1)).unwrap();
            divan::black_box(p);
        })
    });
}

/// Builds the 500k-cell pool once (outside any timing) and prints its live heap per cell.
fn build_big() {
    let before = LIVE.load(Ordering::Relaxed);
    let mut pool = build(BIG, 10);
    let after = LIVE.load(Ordering::Relaxed);
    let stats = pool.stats(T0).unwrap();
    let bytes = (after - before) as f64;
    let snap = pool.snapshot(T0).unwrap();
    println!(
        "memory: {} resources, {} cells, {:.1} MiB live heap = {:.0} bytes per cell (windows of 10); snapshot {:.1} MiB",
        stats.registered,
        stats.cells,
        bytes / (1024.0 * 1024.0),
        bytes / stats.cells as f64,
        snap.len() as f64 / (1024.0 * 1024.0)
    );
    BIG_POOL.with(|cell| *cell.borrow_mut() = Some((pool, snap)));
}

fn main() {
    if std::env::args().all(|a| a != "--list") {
        build_big();
    }
    divan::main();
}
