//! The availability log: every change of a resource between available and not (lease, release,
//! expiry, block, unblock, registration), in order, so that context indexes can catch up lazily.
//!
//! A lease changes availability in every context at once; updating each context's tree eagerly
//! would cost O(contexts × log n) per lease. Instead each context keeps a cursor into this log
//! and replays it when it is next used, folding repeated changes of one resource (a lease and its
//! release cancel out). Entries record each resource's toggle count, so a replay can tell the
//! first entry of a resource in its window and whether the net change is odd. The log is bounded:
//! a context whose cursor falls off the front rebuilds its index instead of replaying.

use crate::registry::{NO_SEQ, Registry};

#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub slot: u32,
    /// The resource's toggle count after this toggle.
    pub toggles: u32,
    /// Sequence number of the resource's previous toggle, or `NO_SEQ`.
    pub prev: u64,
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
        r.toggles = r.toggles.wrapping_add(1);
        let prev = r.last_toggle;
        r.last_toggle = seq;
        self.entries.push(Entry {
            slot,
            toggles: r.toggles,
            prev,
        });
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
    /// each listed once, at its first entry in the window, when its net toggle count is odd.
    pub fn changed_since<'a>(
        &'a self,
        reg: &'a Registry,
        from: u64,
    ) -> impl Iterator<Item = u32> + 'a {
        debug_assert!(from >= self.base);
        let skip = (from - self.base) as usize;
        self.entries[skip.min(self.entries.len())..]
            .iter()
            .filter_map(move |e| {
                let first_in_window = e.prev == NO_SEQ || e.prev < from;
                if !first_in_window {
                    return None;
                }
                let r = reg.get(e.slot);
                let net = r.toggles.wrapping_sub(e.toggles).wrapping_add(1);
                (net % 2 == 1).then_some(e.slot)
            })
    }
}
