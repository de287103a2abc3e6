//! `ContextNames`: the context names a host has asked an id for (`Pool::context_id`), each
//! checked once as it comes in. Hot-path calls by `ContextId` read the name here instead of
//! checking and hashing a string again. Not durable: a restored pool starts with none. It
//! knows nothing of cells: a context with an id need not have any (`index/contexts.rs` holds
//! those).
//!
//! Bounded: a host that names contexts from its clients' requests would otherwise grow the
//! table for ever. When a new name arrives and the table holds `sweep_at` names, the names of
//! contexts holding no cell and no lease are forgotten first (their ids' generations move on, so a call by
//! one is refused, never taken for another name), and `sweep_at` becomes twice what is left
//! (at least `MIN_SWEEP`): amortised O(1) per name, and the table is at most twice the live
//! contexts, or `MIN_SWEEP`. The id of a context that holds a cell or a lease never changes.
//! `intern` says when it forgot names, so a host's cache of ids can forget them too.

use std::rc::Rc;

use rustc_hash::FxHashMap;

use crate::check;
use crate::error::{Error, Result, invalid_argument};
use crate::ids::ContextId;
use crate::slab::Slab;

/// The fewest names the table holds before it forgets any.
pub const MIN_SWEEP: usize = 4096;

#[derive(Debug)]
pub struct ContextNames {
    names: Slab<Rc<str>>,
    ids: FxHashMap<Rc<str>, u32>,
    /// The table's size at which a new name first forgets the unused ones.
    sweep_at: usize,
}

impl Default for ContextNames {
    fn default() -> Self {
        ContextNames { names: Slab::default(), ids: FxHashMap::default(), sweep_at: MIN_SWEEP }
    }
}

/// What `intern` gives: the id, and whether other names were forgotten to make room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interned {
    pub id: ContextId,
    pub forgot: bool,
}

impl ContextNames {
    /// The id of `name`, given to it now if it has none (`INVALID_ARGUMENT` for a name no call
    /// takes). `in_use(f)`: calls `f` with every context the pool holds a cell or a lease in
    /// (their names are never forgotten); asked only when the table is full.
    pub fn intern(&mut self, name: &str, in_use: impl FnOnce(&mut dyn FnMut(&str))) -> Result<Interned> {
        if let Some(&slot) = self.ids.get(name) {
            return Ok(Interned { id: self.id(slot), forgot: false });
        }
        check::context_arg(name)?;
        let forgot = self.names.len() >= self.sweep_at;
        if forgot {
            self.forget_unused(in_use);
        }
        let name: Rc<str> = Rc::from(name);
        let slot = self.names.insert(Rc::clone(&name));
        self.ids.insert(name, slot);
        Ok(Interned { id: self.id(slot), forgot })
    }

    #[cold]
    fn forget_unused(&mut self, in_use: impl FnOnce(&mut dyn FnMut(&str))) {
        let mut keep = vec![false; self.names.id_bound()];
        in_use(&mut |name| {
            if let Some(&slot) = self.ids.get(name) {
                keep[slot as usize] = true;
            }
        });
        let unused: Vec<u32> = self.names.ids().filter(|&s| !keep[s as usize]).collect();
        for slot in unused {
            let name = self.names.remove(slot);
            self.ids.remove(&*name);
        }
        self.sweep_at = (2 * self.names.len()).max(MIN_SWEEP);
    }

    fn id(&self, slot: u32) -> ContextId {
        ContextId { slot, generation: self.names.generation(slot) }
    }

    /// The name `id` stands for; `INVALID_ARGUMENT` for an id this pool never gave or has
    /// forgotten.
    #[inline]
    pub fn name(&self, id: ContextId) -> Result<&Rc<str>> {
        self.names.try_get_at(id.slot, id.generation).ok_or_else(unknown)
    }
}

#[cold]
fn unknown() -> Error {
    invalid_argument("unknown context id (ask for the context's id again)")
}
