//! Snapshot v1 (SPEC §6): the whole durable state as one canonical JSON document
//! (`write.rs`), and the strict, all-or-nothing restore (`input.rs` parses, `restore.rs`
//! validates and builds).

mod input;
mod restore;
mod write;

pub use restore::restore;
pub use write::{write, write_head, write_resource};
