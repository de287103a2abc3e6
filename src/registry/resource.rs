//! One registered resource (`Resource`: its key, how it may be shown, its live leases, its
//! capacity, block, availability flag and group) and one live lease on it (`LeaseRec`). The
//! fields that change keep one owner: they are visible to `registry/` only, changed through
//! `Registry` (`mod.rs`), which keeps the counts they feed; readers outside use the methods
//! and the identity fields (`kind`, `value`, `display`), which a `&Resource` cannot change.

use std::rc::Rc;

use super::blocklist::Block;
use crate::types::{Kind, Millis};

/// One live lease on a resource. Leases are runtime state: never persisted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseRec {
    pub context: Rc<str>,
    pub token: u64,
    pub leased_at: Millis,
    pub expires_at: Millis,
    /// The resource's group when the lease was granted or last renewed.
    pub group: Option<Rc<str>>,
    /// The resource's cell in `context`, or `NO_CELL` (lets `report` skip a lookup).
    pub cell: u32,
}

/// Marks "no cell" in a lease record.
pub const NO_CELL: u32 = u32::MAX;

/// Marks "no log entry" in toggle bookkeeping.
pub const NO_SEQ: u64 = u64::MAX;

/// Whether two strings hold the same text; one the pool handed out (a lease's context, a
/// value) and given back is recognised by its address without reading its bytes.
#[inline]
pub fn same_text(a: &str, b: &str) -> bool {
    a.len() == b.len() && (std::ptr::eq(a.as_ptr(), b.as_ptr()) || a == b)
}

#[derive(Debug, Clone)]
pub struct Resource {
    pub kind: Kind,
    pub value: Rc<str>,
    /// The value as it may be shown in events, errors and logs.
    pub display: Rc<str>,
    /// The live leases, oldest first (tokens grow in grant order, so by token too). Changed only
    /// through `Registry` (`add_lease`, `take_lease`, `extend_lease`, `note_lease_cell`), which
    /// keeps the count of live leases.
    pub(super) leases: Vec<LeaseRec>,
    /// How many leases it may hold at once (SPEC §3, capacity: 1–1,024).
    pub(super) max_leases: u32,
    /// Changed only by the blocklist (`Registry::set_block`).
    pub(super) block: Option<Block>,
    /// Registered, holding fewer leases than `max_leases`, not blocked (kept by
    /// `Core::sync_avail`; false while leaving).
    pub(super) avail: bool,
    /// Sequence number of this resource's last entry in the availability log.
    pub(super) last_toggle: u64,
    /// Its group's id (`groups.rs`; `UNGROUPED` for none). Changed only through `Registry`.
    pub(super) group: u32,
    /// The fencing high-water mark when it was registered in this pool (0 when it came with a
    /// restored snapshot): a lease with a token at or below it was granted to an earlier
    /// registration of the same key, never to this one.
    pub(super) since: u64,
}

impl Resource {
    /// Registered, not blocked, room for a lease: may be handed out (cell rules aside).
    pub fn is_available(&self) -> bool {
        self.avail
    }

    /// The oldest live lease on this resource, if any.
    #[inline]
    pub fn lease(&self) -> Option<&LeaseRec> {
        self.leases.first()
    }

    /// The newest live lease on this resource, if any (the one a report or release most
    /// likely names).
    #[inline]
    pub fn newest_lease(&self) -> Option<&LeaseRec> {
        self.leases.last()
    }

    /// Every live lease, oldest first.
    #[inline]
    pub fn leases(&self) -> &[LeaseRec] {
        &self.leases
    }

    /// The live lease with fencing token `token`, if any.
    #[inline]
    pub fn lease_by_token(&self, token: u64) -> Option<&LeaseRec> {
        lease_index(&self.leases, token).map(|i| &self.leases[i])
    }

    /// Whether one of its leases is held in `context` and still in force at `now` (leases whose
    /// end has passed but which time passing has not yet ended do not count).
    pub fn leased_in(&self, context: &str, now: Millis) -> bool {
        self.leases.iter().any(|l| now < l.expires_at && same_text(&l.context, context))
    }

    /// How many leases it may hold at once.
    #[inline]
    pub fn max_leases(&self) -> u32 {
        self.max_leases
    }

    /// Whether a lease with fencing token `token` may have been granted on this registration
    /// (not on an earlier one of the same key, deregistered since).
    #[inline]
    pub fn may_hold(&self, token: u64) -> bool {
        token > self.since
    }

    /// The operator's block on this resource, if any.
    pub fn block(&self) -> Option<Block> {
        self.block
    }

    /// The id of the resource's group (`UNGROUPED` for none).
    #[inline]
    pub fn group(&self) -> u32 {
        self.group
    }

    /// Room for another lease and not blocked: what availability should be.
    pub(crate) fn unclaimed(&self) -> bool {
        (self.leases.len() as u32) < self.max_leases && self.block.is_none()
    }
}

/// The position of the lease with token `token` in a list sorted by token.
#[inline]
pub(super) fn lease_index(leases: &[LeaseRec], token: u64) -> Option<usize> {
    match leases {
        [] => None,
        [only] => (only.token == token).then_some(0),
        _ => leases.binary_search_by_key(&token, |l| l.token).ok(),
    }
}
