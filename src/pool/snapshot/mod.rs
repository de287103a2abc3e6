//! Snapshot version 2 (SPEC §6; version 1 is still read): the whole durable state as one canonical JSON document
//! (`write.rs`), and the strict, all-or-nothing restore (`input.rs` parses, `restore.rs`
//! validates and builds; `session.rs` builds the same state from the parts `write.rs` also
//! writes, in steps); one resource's part read back (`part.rs`).

mod input;
mod part;
mod restore;
mod session;
mod write;

pub use part::read_part;
pub use restore::restore;
pub use session::PartsRestore;
pub use write::{write, write_head, write_resource};
