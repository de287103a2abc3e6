//! The indexes that keep `acquire` sub-linear: the resource order (`order.rs`), each context's
//! cell tree with gap counts (`cells.rs`), the availability log that lets contexts catch up
//! lazily (`avail_log.rs`), and the treap they are built on (`treap.rs`).

pub mod avail_log;
pub mod cells;
pub mod order;
pub mod treap;
