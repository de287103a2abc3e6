//! The one conversion layer between the engine and a JavaScript host: the hosts' JSON of
//! leases, events and views (`views_json.rs`), stats and the config as structured values
//! (`views_value.rs`, serde-wasm-bindgen), drained events packed into numbers and one
//! string table (`packed.rs`), and the WebAssembly facade that hands them out (`facade.rs`;
//! in `facade/` its reads, its arguments' decoding, and the hot path's calls by name, whose
//! strings may cross in a buffer: `by_name.rs`, `text_args.rs`; and a restore from a
//! snapshot's parts, driven in steps: `parts_restore.rs`), with the host's randomness
//! and errors in `host.rs`, and the module's allocator, which grows its memory in large steps
//! (`allocator.rs`); built for wasm32 only. The first three
//! are compiled everywhere, so native tests compare them (`tests/scenarios.rs`, `tests/views_value.rs`).

pub mod packed;
pub mod views_json;
pub mod views_value;

#[cfg(target_arch = "wasm32")]
mod allocator;
#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)]
mod facade;
#[cfg(target_arch = "wasm32")]
mod host;

/// The facade's class, for its own tests in wasm32 (`tests/wasm_facade.rs`), which call it as
/// the package's `pool.js` does.
#[cfg(target_arch = "wasm32")]
pub use facade::RawPool;
