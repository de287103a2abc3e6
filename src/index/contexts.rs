//! The context table: every context that has at least one cell, by small id and by name — the
//! one table that gives a context its id (calls name a context by its string; a lease holds its
//! own). Ids are slab ids (a removed context's id is reused), so a pool's ids depend only on its
//! history; they stay inside the engine. What a context holds (its cells' index) is `context.rs`.

use std::rc::Rc;

use rustc_hash::FxHashMap;

use super::context::Context;
use crate::slab::Slab;

/// The contexts that have at least one cell, by slot and by name.
#[derive(Debug, Clone, Default)]
pub struct Contexts {
    slots: Slab<Context>,
    by_name: FxHashMap<Rc<str>, u32>,
}

impl Contexts {
    pub fn find(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    pub fn get(&self, id: u32) -> &Context {
        self.slots.get(id)
    }

    pub fn get_mut(&mut self, id: u32) -> &mut Context {
        self.slots.get_mut(id)
    }

    pub fn add(&mut self, ctx: Context) -> u32 {
        let name = Rc::clone(&ctx.name);
        let id = self.slots.insert(ctx);
        self.by_name.insert(name, id);
        id
    }

    pub fn remove(&mut self, id: u32) {
        let ctx = self.slots.remove(id);
        self.by_name.remove(&*ctx.name);
    }

    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.ids()
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}
