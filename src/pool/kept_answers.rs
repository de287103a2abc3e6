//! The `nextChangeAt` answers kept for the last contexts asked (data only; how they are
//! answered and kept exact is `next_change.rs`).

use std::rc::Rc;

use crate::types::Millis;

/// Contexts whose answers are kept (the most recently asked).
pub const KEPT: usize = 16;

/// The kept answer for one context.
#[derive(Debug, Clone)]
pub struct NextChange {
    pub(super) context: Rc<str>,
    /// The context's id then (`None`: no cells). Adding or removing a context forgets the
    /// answer, so the id stays valid.
    pub(super) ctx: Option<u32>,
    pub(super) answer: Option<Millis>,
    /// The resource whose instant is `answer`.
    pub(super) argmin: Option<u32>,
}
