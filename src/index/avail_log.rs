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
//!
//! A change that undoes a resource's previous one before any reader has read that one removes
//! it instead of adding an entry: a lease released before any index caught up leaves no trace
//! (the common cycle acquire → report → release then costs readers nothing). Readers take
//! their cursor from `observe`, which remembers how far any of them has read.

use std::cell::Cell;

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
    /// The furthest cursor any reader has taken (entries at or after it are unread).
    observed: Cell<u64>,
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

    /// The cursor of a reader that has caught up: `end()`, remembered as read.
    pub fn observe(&self) -> u64 {
        let end = self.end();
        self.observed.set(self.observed.get().max(end));
        end
    }

    /// Records that `slot` changed availability (the caller already changed it). When the
    /// last entry is `slot`'s previous change and no reader has read it, the two cancel: the
    /// entry goes and nothing is added.
    #[inline]
    pub fn record(&mut self, reg: &mut Registry, slot: u32) {
        // `end() > observed`: the newest entry, `end() - 1`, is unread.
        if let Some(last) = self.entries.last()
            && last.slot == slot
            && self.end() > self.observed.get()
        {
            let prev = last.prev;
            self.entries.pop();
            reg.replace_toggle(slot, prev);
            if prev != NO_SEQ && prev >= self.base {
                self.entries[(prev - self.base) as usize].next = NO_SEQ;
            }
            return;
        }
        if self.entries.len() >= CAPACITY {
            let drop = CAPACITY / 2;
            self.entries.drain(..drop);
            self.base += drop as u64;
        }
        let seq = self.end();
        let prev = reg.replace_toggle(slot, seq);
        if prev != NO_SEQ && prev >= self.base {
            self.entries[(prev - self.base) as usize].next = seq;
        }
        self.entries.push(Entry { slot, prev, next: NO_SEQ });
    }

    /// Forgets every entry (all cursors must already be at `end()`).
    pub fn clear(&mut self, reg: &mut Registry) {
        for e in &self.entries {
            reg.forget_toggle(e.slot);
        }
        self.base = self.end();
        self.entries.clear();
        self.observe();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Kind;

    fn setup() -> (AvailLog, Registry, u32, u32) {
        let mut reg = Registry::new();
        let (a, b) = (reg.add(Kind::Proxy, "a", 0), reg.add(Kind::Proxy, "b", 0));
        (AvailLog::default(), reg, a, b)
    }

    #[test]
    fn a_change_undone_before_anyone_reads_leaves_no_entry() {
        let (mut log, mut reg, a, b) = setup();
        log.record(&mut reg, a);
        let cursor = log.observe();
        log.record(&mut reg, b); // lease
        log.record(&mut reg, b); // release, unread: both go
        assert_eq!(log.end(), cursor);
        assert_eq!(log.changed_since(cursor).count(), 0);
        // The resource's chain is intact: its next change links to its earlier one.
        log.record(&mut reg, a);
        assert_eq!(log.end(), cursor + 1);
        assert_eq!(log.changed_since(0).collect::<Vec<_>>(), Vec::<u32>::new(), "a: twice, even");
    }

    #[test]
    fn a_change_read_in_between_stays() {
        let (mut log, mut reg, a, _) = setup();
        log.record(&mut reg, a);
        let cursor = log.observe();
        log.record(&mut reg, a);
        assert_eq!(log.end(), cursor + 1, "the first entry was read: the second is kept");
        assert_eq!(log.changed_since(cursor).collect::<Vec<_>>(), vec![a]);
    }

    #[test]
    fn only_the_newest_entry_of_the_same_resource_cancels() {
        let (mut log, mut reg, a, b) = setup();
        let cursor = log.observe();
        log.record(&mut reg, a);
        log.record(&mut reg, b);
        log.record(&mut reg, a); // a's entry is not the newest: kept
        assert_eq!(log.end(), cursor + 3);
        assert_eq!(log.changed_since(cursor).collect::<Vec<_>>(), vec![b]);
    }
}
