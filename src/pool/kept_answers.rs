//! The `nextChangeAt` answers kept for the last contexts asked: what is kept and how it is
//! found and forgotten; how they are answered and kept exact is `next_change.rs`.

use std::rc::Rc;

use crate::types::Millis;

/// Contexts whose answers are kept (the most recently asked).
const KEPT: usize = 16;

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

/// The answers kept for the last `KEPT` contexts asked, oldest first.
#[derive(Debug, Clone, Default)]
pub struct KeptAnswers(Vec<NextChange>);

impl KeptAnswers {
    /// The answer kept for `context`, if one is.
    pub fn answer(&self, context: &str) -> Option<Option<Millis>> {
        self.0.iter().find(|n| *n.context == *context).map(|n| n.answer)
    }

    /// Keeps `n`, forgetting the oldest answer when `KEPT` are kept.
    pub fn keep(&mut self, n: NextChange) {
        if self.0.len() == KEPT {
            self.0.remove(0);
        }
        self.0.push(n);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Keeps the answers `f` says to keep, letting it change them.
    pub fn retain_mut(&mut self, f: impl FnMut(&mut NextChange) -> bool) {
        self.0.retain_mut(f);
    }

    /// Forgets every answer (the context table changed).
    pub fn forget_all(&mut self) {
        self.0.clear();
    }

    /// Forgets the answers resource `slot` gives (it is leaving).
    pub fn forget_given_by(&mut self, slot: u32) {
        self.0.retain(|n| n.argmin != Some(slot));
    }
}
