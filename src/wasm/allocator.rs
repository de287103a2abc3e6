//! The module's memory allocator: dlmalloc — the allocator Rust's standard library itself uses
//! on wasm32 — growing the WebAssembly memory at least `GRANULARITY` bytes at a time, where the
//! standard library's grows it by 64 KiB pages as allocations ask.
//!
//! Why: every growth of a WebAssembly memory makes V8 (Node, Chromium, workerd) collect
//! garbage. Building a 370 MiB import grew the memory about 6,000 times, one page each, and
//! the server's loop ran a collection every 15–20 ms all along: a worker's acquire + release
//! went from p99 1 ms to 32 ms while it lasted. In Node 20, 6,000 growths of one page cost
//! 587 collections and 1.16 s; 94 growths of 4 MiB, 9 collections and 14 ms (BENCHMARKS.md,
//! "The module's memory grown 4 MiB at a time"). What it costs: up to `GRANULARITY` of memory
//! reserved ahead and not yet used (WebAssembly memory never shrinks either way).
//!
//! The only hand-written unsafe code of the crate: `GlobalAlloc` is an unsafe trait, and the
//! allocator's state is one static. Sound because a wasm32-unknown-unknown module built
//! without the `atomics` feature runs on one thread (refused at compile time otherwise), and
//! dlmalloc never calls back into the global allocator.

#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::cell::UnsafeCell;

use dlmalloc::Dlmalloc;

#[cfg(target_feature = "atomics")]
compile_error!("the allocator's state has no lock: a threaded (atomics) build needs one");

/// Bytes the memory grows by at least, each time it must grow (a power of two).
const GRANULARITY: usize = 4 << 20;

/// dlmalloc's state, set up for `GRANULARITY`.
struct Coarse(UnsafeCell<Dlmalloc>);

// SAFETY: one thread (see the header): no two calls ever reach the state at once.
unsafe impl Sync for Coarse {}

const fn coarse() -> Dlmalloc {
    let mut d = Dlmalloc::new();
    assert!(d.set_granularity(GRANULARITY), "GRANULARITY must be a power of two of 64 KiB or more");
    d
}

#[global_allocator]
static ALLOCATOR: Coarse = Coarse(UnsafeCell::new(coarse()));

impl Coarse {
    /// SAFETY: the caller holds no other reference to the state (one thread, no reentry).
    #[allow(clippy::mut_from_ref)]
    unsafe fn state(&self) -> &mut Dlmalloc {
        unsafe { &mut *self.0.get() }
    }
}

// SAFETY: each call hands `GlobalAlloc`'s contract on to dlmalloc's functions of the same
// name, which keep it (they are the standard library's allocator on wasm32). Never inlined:
// inlined into every drop and collection, they made the module 23 KB larger (5.2 KB gzip);
// as calls, it is 0.4 KB larger (0.2 KB gzip) than with the standard library's allocator.
unsafe impl GlobalAlloc for Coarse {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { self.state().malloc(layout.size(), layout.align()) }
    }

    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe { self.state().calloc(layout.size(), layout.align()) }
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.state().free(ptr, layout.size(), layout.align()) }
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe { self.state().realloc(ptr, layout.size(), layout.align(), new_size) }
    }
}
