//! The indexes that keep `acquire` sub-linear: the cells (`cells.rs`), each context's index of
//! its cells with gap counts (`context.rs`, weighed in fixed point by `weights.rs`), the table
//! of contexts (`contexts.rs`) and the availability log that lets contexts catch up lazily
//! (`avail_log.rs`). The resource order they place fresh candidates by is the registry's
//! (`registry/order.rs`, seen through `universe.rs`); both are built on the chunked sequence
//! of `seq/`.

pub mod avail_log;
pub mod cells;
pub mod context;
pub mod contexts;
pub mod universe;
pub mod weights;
