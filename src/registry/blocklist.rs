//! The blocklist: an operator's blocks, one record per resource, how many resources are
//! blocked, and the queue of temporary blocks by the instant they end.
//!
//! A record sits in its resource (`Resource::block`, read where availability is derived) but
//! is only ever changed here, through `Blocklist::set`, so the count and the queue of ends
//! always agree with the records. What a block does (never a candidate, its lease lapses, the
//! events) is `pool/admin.rs`; when a due end is applied is `pool/expiry.rs`.

use std::collections::BTreeSet;

use crate::types::Millis;

/// An operator's block: until an instant (exclusive), or until unblocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    Until(Millis),
    Permanent,
}

#[derive(Debug, Clone, Default)]
pub struct Blocklist {
    /// Resources blocked.
    count: usize,
    /// Temporary blocks: (end, resource slot).
    ends: BTreeSet<(Millis, u32)>,
}

impl Blocklist {
    /// Puts or ends the block in `rec`, resource `slot`'s record, keeping the count and the
    /// queue of ends; returns the previous block.
    pub fn set(&mut self, rec: &mut Option<Block>, slot: u32, block: Option<Block>) -> Option<Block> {
        let old = std::mem::replace(rec, block);
        self.count = self.count + usize::from(block.is_some()) - usize::from(old.is_some());
        if let Some(Block::Until(at)) = old {
            self.ends.remove(&(at, slot));
        }
        if let Some(Block::Until(at)) = block {
            self.ends.insert((at, slot));
        }
        old
    }

    /// Resources blocked.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Temporary blocks queued to end.
    pub fn queued(&self) -> usize {
        self.ends.len()
    }

    /// The earliest instant a temporary block ends.
    pub fn next_end(&self) -> Option<Millis> {
        self.ends.first().map(|e| e.0)
    }

    /// The slots whose temporary block ends exactly at `at`. (A walk from the front, not a
    /// range query: it is asked for the earliest end, and a range costs the module its own
    /// copy of the tree search.)
    pub fn ending_at(&self, at: Millis) -> impl Iterator<Item = u32> + '_ {
        self.ends.iter().skip_while(move |e| e.0 < at).take_while(move |e| e.0 == at).map(|e| e.1)
    }

    /// The slots whose temporary block ends at or before `now`, earliest first.
    pub fn ending_by(&self, now: Millis) -> impl Iterator<Item = u32> + '_ {
        self.ends.iter().take_while(move |e| e.0 <= now).map(|e| e.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_count_and_queue_move_together() {
        let (mut list, mut a, mut b) = (Blocklist::default(), None, None);
        assert_eq!(list.set(&mut a, 1, Some(Block::Until(30))), None);
        assert_eq!(list.set(&mut b, 2, Some(Block::Permanent)), None);
        assert_eq!((list.len(), list.queued(), list.next_end()), (2, 1, Some(30)));
        // Replacing a temporary block moves its end; a permanent one has none.
        assert_eq!(list.set(&mut a, 1, Some(Block::Until(10))), Some(Block::Until(30)));
        assert_eq!((list.len(), list.ending_at(10).collect(), list.ending_at(30).count()), (2, vec![1], 0));
        assert_eq!(list.ending_by(9).count(), 0);
        assert_eq!(list.set(&mut a, 1, None), Some(Block::Until(10)));
        assert_eq!((list.len(), list.queued(), a), (1, 0, None));
        assert_eq!(list.set(&mut b, 2, None), Some(Block::Permanent));
        assert!(list.is_empty());
    }
}
