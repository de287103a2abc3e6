//! The indexes that keep `acquire` sub-linear: the resource order (`order.rs`), each context's
//! cells with gap counts (`cells.rs`), the availability log that lets contexts catch up lazily
//! (`avail_log.rs`), and the blocked sequence they are built on (`blocks.rs`) with its tree of
//! block summaries (`summary_tree.rs`).

pub mod avail_log;
pub mod blocks;
pub mod cells;
pub mod order;
pub mod summary_tree;
