//! Exports `init(n)` (a pool of `n` resources × 10 contexts, then the 20 000 warm-up cycles)
//! and `run(cycles)` (that many more cycles), the workload of benches/common/workload.rs, so a
//! host times `run` in one call: the engine's cycle in WebAssembly with no boundary crossing.

#![allow(unsafe_code)]

#[path = "../../common/workload.rs"]
mod workload;

use std::cell::RefCell;

thread_local! {
    static STATE: RefCell<Option<workload::CycleState>> = const { RefCell::new(None) };
}

/// A fresh pool of `n` resources, warmed up by 20 000 cycles (as the native and Node sides).
#[unsafe(no_mangle)]
pub extern "C" fn init(n: u32) {
    let mut state = workload::CycleState::new(n as usize);
    for _ in 0..20_000 {
        state.cycle();
    }
    STATE.with(|s| *s.borrow_mut() = Some(state));
}

/// `cycles` more cycles on the pool `init` made.
#[unsafe(no_mangle)]
pub extern "C" fn run(cycles: u32) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let state = s.as_mut().expect("init first");
        for _ in 0..cycles {
            state.cycle();
        }
    });
}
