//! `ContextNames`: the context names a host has asked an id for (`Pool::context_id`), each
//! checked once as it comes in and numbered in order of first sight, for the pool's life (an id
//! never names another context). Hot-path calls by `ContextId` read the name here instead of
//! checking and hashing a string again. Not durable: a restored pool starts with none. It knows
//! nothing of cells: a context with an id need not have any (`index/contexts.rs` holds those).

use std::rc::Rc;

use rustc_hash::FxHashMap;

use crate::check;
use crate::error::{Result, invalid_argument};
use crate::ids::ContextId;

#[derive(Debug, Default)]
pub struct ContextNames {
    names: Vec<Rc<str>>,
    ids: FxHashMap<Rc<str>, u32>,
}

impl ContextNames {
    /// The id of `name`, given to it now if it has none (`INVALID_ARGUMENT` for a name no call
    /// takes).
    pub fn intern(&mut self, name: &str) -> Result<ContextId> {
        if let Some(&id) = self.ids.get(name) {
            return Ok(ContextId(id));
        }
        check::context_arg(name)?;
        let name: Rc<str> = Rc::from(name);
        let id = self.names.len() as u32;
        self.names.push(Rc::clone(&name));
        self.ids.insert(name, id);
        Ok(ContextId(id))
    }

    /// The name `id` stands for; `INVALID_ARGUMENT` for an id this pool never gave.
    #[inline]
    pub fn name(&self, id: ContextId) -> Result<&Rc<str>> {
        self.names.get(id.0 as usize).ok_or_else(|| invalid_argument("unknown context id"))
    }
}
