//! A pool made from a restore fed its snapshot's parts (`snapshot/session.rs`): the other way
//! to `Pool::restore`, for a host that builds a large import in steps.

use super::Pool;
use super::snapshot::PartsRestore;
use crate::error::Result;
use crate::randomness::Randomness;

impl Pool {
    /// The pool `parts` built (its remaining steps are run first), drawing from `random`.
    /// Equal to `Pool::restore` of the joined document, with the same floor.
    pub fn from_parts(parts: PartsRestore, random: impl Into<Randomness>) -> Result<Pool> {
        Ok(Pool { core: parts.finish()?, random: random.into() })
    }
}
