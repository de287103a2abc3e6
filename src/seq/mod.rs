//! Ordered sequences for the indexes: a list split into small chunks (`chunks.rs`) with a tree
//! of chunk summaries over it (`summary_tree.rs`). Generic: they know nothing of resources,
//! cells or weights. The resource order (`registry/order.rs`) and every context's cells
//! (`index/context.rs`) are built on them.

pub mod chunks;
pub mod summary_tree;
