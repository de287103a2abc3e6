//! Groups: the tier or place each resource belongs to (or none), and each group's members in
//! canonical order with availability counts — what a grouped `acquire` places fresh candidates
//! by, as the whole pool's order (`order.rs`) does for an ungrouped one.
//!
//! Group ids are small numbers; id 0 is "no group" (`null`) and always exists. A named group
//! exists while it has members (its id is reused after). Each group's order is brought up to
//! date with the availability log lazily, by its own cursor (`Core::sync_group`), so pools
//! that never acquire by group pay only the insertion.

use std::rc::Rc;

use rustc_hash::FxHashMap;

use super::order::OrderSeq;
use crate::seq::chunks::Loc;
use crate::slab::Slab;

/// The id of "no group".
pub const UNGROUPED: u32 = 0;

#[derive(Debug, Clone, Default)]
pub struct Group {
    /// `None` for the ungrouped.
    pub name: Option<Rc<str>>,
    pub(super) members: OrderSeq,
    /// Position in the availability log up to which `members`' counts are exact.
    pub cursor: u64,
}

#[derive(Debug, Clone)]
pub struct Groups {
    slots: Slab<Group>,
    by_name: FxHashMap<Rc<str>, u32>,
    /// Resource slot → where it sits in its group's order.
    pub(super) loc: Vec<Loc>,
}

impl Default for Groups {
    fn default() -> Groups {
        let mut slots = Slab::default();
        let none = slots.insert(Group::default());
        debug_assert_eq!(none, UNGROUPED);
        Groups { slots, by_name: FxHashMap::default(), loc: Vec::new() }
    }
}

impl Groups {
    /// The id of the group named `name` (`None`: the ungrouped), if it exists.
    pub fn find(&self, name: Option<&str>) -> Option<u32> {
        match name {
            None => Some(UNGROUPED),
            Some(n) => self.by_name.get(n).copied(),
        }
    }

    /// The id of the group named `name`, made if it does not exist.
    pub fn find_or_add(&mut self, name: Option<&str>) -> u32 {
        if let Some(id) = self.find(name) {
            return id;
        }
        let name: Rc<str> = Rc::from(name.expect("the ungrouped always exists"));
        let id = self.slots.insert(Group { name: Some(Rc::clone(&name)), ..Group::default() });
        self.by_name.insert(name, id);
        id
    }

    pub fn get(&self, id: u32) -> &Group {
        self.slots.get(id)
    }

    pub fn get_mut(&mut self, id: u32) -> &mut Group {
        self.slots.get_mut(id)
    }

    /// Forgets named group `id` once it has no members; true when it did.
    pub fn drop_if_empty(&mut self, id: u32) -> bool {
        if id == UNGROUPED || !self.slots.get(id).members.is_empty() {
            return false;
        }
        let g = self.slots.remove(id);
        self.by_name.remove(g.name.as_deref().expect("a named group"));
        true
    }

    /// Every group id.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.ids()
    }

    /// Group `id`'s order with the shared position table.
    pub fn order(&self, id: u32) -> (&OrderSeq, &[Loc]) {
        (&self.slots.get(id).members, &self.loc)
    }

    /// Group `id`'s order, mutably, with the shared position table.
    pub fn order_mut(&mut self, id: u32) -> (&mut OrderSeq, &mut Vec<Loc>) {
        (&mut self.slots.get_mut(id).members, &mut self.loc)
    }

    /// Room in the table of locations by slot for `n` more slots.
    pub fn reserve_loc(&mut self, n: usize) {
        self.loc.reserve(n);
    }

    pub fn heap_bytes(&self) -> usize {
        self.loc.capacity() * std::mem::size_of::<Loc>()
    }
}
