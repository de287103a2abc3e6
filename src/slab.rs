//! `Slab<T>`: values addressed by small `u32` ids, with the ids of removed values reused, the
//! most recently freed first (so a pool's ids, and through them its order of work and its
//! snapshots, depend only on its history). The resources, the cells and the contexts are each
//! stored in one. Each id also has a generation, counting the values it has held (modulo
//! `GENERATIONS`), so that a name made of (id, generation) stops naming anything once its value
//! is removed, even when the id is given to another value (`ids.rs`). It knows nothing of what
//! it stores.

/// Generations count modulo this (2^21: an id and its generation fit a JavaScript number).
pub const GENERATIONS: u32 = 1 << 21;

#[derive(Debug, Clone)]
pub struct Slab<T> {
    slots: Vec<Option<T>>,
    /// Freed ids, reused last-freed first.
    free: Vec<u32>,
    /// Per id, how many values it has held before the current one (modulo `GENERATIONS`).
    generations: Vec<u32>,
    live: u32,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { slots: Vec::new(), free: Vec::new(), generations: Vec::new(), live: 0 }
    }
}

impl<T> Slab<T> {
    /// Stores `value` under the most recently freed id, or a new one; returns the id.
    pub fn insert(&mut self, value: T) -> u32 {
        self.live += 1;
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(value);
                id
            }
            None => {
                self.slots.push(Some(value));
                self.generations.push(0);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Takes the value out of live id `id`, freeing the id.
    pub fn remove(&mut self, id: u32) -> T {
        let value = self.slots[id as usize].take().expect("live slab id");
        self.free.push(id);
        let g = &mut self.generations[id as usize];
        *g = (*g + 1) % GENERATIONS;
        self.live -= 1;
        value
    }

    /// The value under live id `id`.
    #[inline]
    pub fn get(&self, id: u32) -> &T {
        self.slots[id as usize].as_ref().expect("live slab id")
    }

    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut T {
        self.slots[id as usize].as_mut().expect("live slab id")
    }

    /// The value under `id`, if `id` is live.
    #[inline]
    pub fn try_get(&self, id: u32) -> Option<&T> {
        self.slots.get(id as usize)?.as_ref()
    }

    pub fn try_get_mut(&mut self, id: u32) -> Option<&mut T> {
        self.slots.get_mut(id as usize)?.as_mut()
    }

    /// The generation of `id`'s current (or next) value; 0 for an id never given.
    #[inline]
    pub fn generation(&self, id: u32) -> u32 {
        self.generations.get(id as usize).copied().unwrap_or(0)
    }

    /// The value under `id` if `id` is live and its value is of generation `generation`.
    #[inline]
    pub fn try_get_at(&self, id: u32, generation: u32) -> Option<&T> {
        if self.generation(id) != generation {
            return None;
        }
        self.try_get(id)
    }

    pub fn is_live(&self, id: u32) -> bool {
        self.try_get(id).is_some()
    }

    /// Live values.
    pub fn len(&self) -> usize {
        self.live as usize
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// One more than the highest id ever given: every id is below it (for tables by id).
    pub fn id_bound(&self) -> usize {
        self.slots.len()
    }

    /// Live ids, lowest first.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().enumerate().filter(|(_, v)| v.is_some()).map(|(i, _)| i as u32)
    }

    /// Makes room for `n` more values (their generations too).
    pub fn reserve(&mut self, n: usize) {
        self.slots.reserve(n);
        self.generations.reserve(n);
    }

    /// Heap bytes of the table itself (not what the values point to).
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Option<T>>()
            + (self.free.capacity() + self.generations.capacity()) * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_and_freed_ones_are_reused_last_freed_first() {
        let mut s = Slab::default();
        let ids: Vec<u32> = ["a", "b", "c", "d"].into_iter().map(|v| s.insert(v)).collect();
        assert_eq!(ids, [0, 1, 2, 3]);
        assert_eq!(s.remove(1), "b");
        assert_eq!(s.remove(3), "d");
        assert_eq!((s.len(), s.id_bound()), (2, 4));
        assert_eq!(s.ids().collect::<Vec<_>>(), [0, 2]);
        // Last freed first: 3, then 1, then new ids.
        assert_eq!(s.insert("e"), 3);
        assert_eq!(s.insert("f"), 1);
        assert_eq!(s.insert("g"), 4);
        assert_eq!((s.get(1), s.get(3), s.len()), (&"f", &"e", 5));
    }

    #[test]
    fn reads_of_a_freed_or_unknown_id_say_so() {
        let mut s = Slab::default();
        let a = s.insert(7u64);
        *s.get_mut(a) += 1;
        assert_eq!(s.try_get(a), Some(&8));
        s.remove(a);
        assert!(!s.is_live(a) && s.try_get(a).is_none() && s.try_get(99).is_none());
        assert!(s.try_get_mut(a).is_none() && s.is_empty());
        s.reserve(10);
        assert!(s.heap_bytes() >= 10 * std::mem::size_of::<Option<u64>>());
    }

    #[test]
    fn a_generation_names_one_value_of_an_id() {
        let mut s = Slab::default();
        let a = s.insert("a");
        assert_eq!(s.generation(a), 0);
        assert_eq!(s.try_get_at(a, 0), Some(&"a"));
        s.remove(a);
        assert_eq!(s.try_get_at(a, 0), None, "removed");
        assert_eq!(s.insert("b"), a, "the id is reused");
        assert_eq!(s.generation(a), 1);
        assert_eq!(s.try_get_at(a, 0), None, "the old generation names nothing");
        assert_eq!(s.try_get_at(a, 1), Some(&"b"));
        assert_eq!((s.generation(99), s.try_get_at(99, 0)), (0, None));
    }

    #[test]
    #[should_panic(expected = "live slab id")]
    fn a_freed_id_is_not_read_as_live() {
        let mut s = Slab::default();
        let a = s.insert(1u8);
        s.remove(a);
        s.get(a);
    }
}
