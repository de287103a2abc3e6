//! The indexes that keep `acquire` sub-linear: each context's cells with gap counts
//! (`cells.rs`), the table of contexts (`contexts.rs`) and the availability log that lets contexts catch up lazily (`avail_log.rs`).
//! The resource order they place fresh candidates by is the registry's (`registry/order.rs`);
//! both are built on the chunked sequence of `seq/`.

pub mod avail_log;
pub mod cells;
pub mod contexts;
pub mod universe;
