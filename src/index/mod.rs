//! The indexes that keep `acquire` sub-linear: the resource order (`order.rs`), each context's
//! cells with gap counts (`cells.rs`), the availability log that lets contexts catch up lazily
//! (`avail_log.rs`), and the blocked sequence with a segment tree they are built on
//! (`blocks.rs`).

pub mod avail_log;
pub mod blocks;
pub mod cells;
pub mod order;
