//! The availability log: every change of a resource between available and not (lease, release,
//! expiry, block, unblock, registration), in order, so that context indexes can catch up lazily.
//!
//! A lease changes availability in every context at once; updating each context's index
//! eagerly would cost O(contexts × log n) per lease. Instead each context keeps a cursor into
//! this log and replays it when it is next used, folding repeated changes of one resource (a
//! lease and its release cancel out). Entries of one resource are chained both ways, so a
//! replay finds each resource's first entry in its window and counts its changes without
//! touching the resource itself. The log is bounded: a context whose cursor falls off the front
//! rebuilds its index instead of replaying.

use crate::registry::{NO_SEQ, Registry};

#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub slot: u32,
    /// Sequence number of the resource's previous change, or `NO_SEQ`.
    prev: u64,
    /// Sequence number of the resource's next change, or `NO_SEQ` (filled in later).
    next: u64,
}

#[derive(Debug, Clone, Default)]
pub struct AvailLog {
    entries: Vec<Entry>,
    base: u64,
}

/// Entries kept before the oldest half is dropped.
const CAPACITY: usize = 1 << 16;

impl AvailLog {
    /// The sequence number the next entry will get.
    pub fn end(&self) -> u64 {
        self.base + self.entries.len() as u64
    }

    /// The oldest sequence number still held.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Records that `slot` changed availability (the caller already changed it).
    pub fn record(&mut self, reg: &mut Registry, slot: u32) {
        if self.entries.len() >= CAPACITY {
            let drop = CAPACITY / 2;
            self.entries.drain(..drop);
            self.base += drop as u64;
        }
        let seq = self.end();
        let r = reg.get_mut(slot);
        let prev = std::mem::replace(&mut r.last_toggle, seq);
        if prev != NO_SEQ && prev >= self.base {
            self.entries[(prev - self.base) as usize].next = seq;
        }
        self.entries.push(Entry { slot, prev, next: NO_SEQ });
    }

    /// Forgets every entry (all cursors must already be at `end()`).
    pub fn clear(&mut self, reg: &mut Registry) {
        for e in &self.entries {
            if let Some(Some(r)) = reg.slots.get_mut(e.slot as usize) {
                r.last_toggle = NO_SEQ;
            }
        }
        self.base = self.end();
        self.entries.clear();
    }

    /// The resources whose availability, seen from a cursor at `from`, has changed by now:
    /// each listed once (at its first entry in the window) when it changed an odd number of
    /// times since.
    pub fn changed_since(&self, from: u64) -> impl Iterator<Item = u32> + '_ {
        debug_assert!(from >= self.base);
        let skip = ((from - self.base) as usize).min(self.entries.len());
        self.entries[skip..].iter().filter_map(move |e| {
            if e.prev != NO_SEQ && e.prev >= from {
                return None; // not the resource's first change in the window
            }
            let mut changes = 1u32;
            let mut next = e.next;
            while next != NO_SEQ {
                changes += 1;
                next = self.entries[(next - self.base) as usize].next;
            }
            (changes % 2 == 1).then_some(e.slot)
        })
    }
}
