//! Pool events: every decision the engine makes, numbered by a per-pool `seq` that never
//! restarts (the snapshot keeps `nextEventSeq`), held in a bounded buffer until drained.
//!
//! Owns the event types, the event record and the buffer (overflow drops the oldest and counts
//! them). Events show resource values in their masked form only (`redact.rs`); the value
//! itself rides along as an [`Unmasked`], which no output of the engine prints, so that a host
//! can name the resource by an opaque id of its own (the HTTP server's resource ids).
//! Delivering events to streams or logs is the hosts' business.

use std::collections::VecDeque;
use std::rc::Rc;

use crate::types::{FailureType, Kind, Millis};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    ResourceRegistered,
    ResourceDeregistered,
    ResourceLeased,
    LeaseReleased,
    LeaseExpired,
    ResourceCooled,
    ResourceRecovered,
    ResourceBlocklisted,
    ResourceUnblocked,
    BlockExpired,
    AcquisitionRejected,
    ConfigChanged,
    ResourceRegrouped,
    CooldownSuppressed,
    ResourceReconfigured,
}

impl EventType {
    pub const ALL: [EventType; 15] = [
        EventType::ResourceRegistered,
        EventType::ResourceDeregistered,
        EventType::ResourceLeased,
        EventType::LeaseReleased,
        EventType::LeaseExpired,
        EventType::ResourceCooled,
        EventType::ResourceRecovered,
        EventType::ResourceBlocklisted,
        EventType::ResourceUnblocked,
        EventType::BlockExpired,
        EventType::AcquisitionRejected,
        EventType::ConfigChanged,
        EventType::ResourceRegrouped,
        EventType::CooldownSuppressed,
        EventType::ResourceReconfigured,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::ResourceRegistered => "RESOURCE_REGISTERED",
            EventType::ResourceDeregistered => "RESOURCE_DEREGISTERED",
            EventType::ResourceLeased => "RESOURCE_LEASED",
            EventType::LeaseReleased => "LEASE_RELEASED",
            EventType::LeaseExpired => "LEASE_EXPIRED",
            EventType::ResourceCooled => "RESOURCE_COOLED",
            EventType::ResourceRecovered => "RESOURCE_RECOVERED",
            EventType::ResourceBlocklisted => "RESOURCE_BLOCKLISTED",
            EventType::ResourceUnblocked => "RESOURCE_UNBLOCKED",
            EventType::BlockExpired => "BLOCK_EXPIRED",
            EventType::AcquisitionRejected => "ACQUISITION_REJECTED",
            EventType::ConfigChanged => "CONFIG_CHANGED",
            EventType::ResourceRegrouped => "RESOURCE_REGROUPED",
            EventType::CooldownSuppressed => "COOLDOWN_SUPPRESSED",
            EventType::ResourceReconfigured => "RESOURCE_RECONFIGURED",
        }
    }
}

/// One event. Optional fields are present only for the types that carry them.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolEvent {
    pub seq: u64,
    pub ty: EventType,
    pub at: Millis,
    /// The resource, its value masked (see `redact.rs`).
    pub resource: Option<(Kind, Rc<str>)>,
    /// The resource's value as registered (with `resource`): for telling resources apart, never
    /// for showing.
    pub unmasked: Option<Unmasked>,
    pub context: Option<Rc<str>>,
    /// `RESOURCE_COOLED`: the failure type that started the cooldown.
    pub cause: Option<FailureType>,
    /// Cooldown end, block end, or lease expiry.
    pub until: Option<Millis>,
    /// `RESOURCE_BLOCKLISTED` without an end.
    pub permanent: bool,
    /// Lease events: the fencing token.
    pub token: Option<u64>,
    /// `RESOURCE_REGISTERED` / `RESOURCE_REGROUPED`: the resource's group (`Some(None)`: none).
    pub group: Option<Option<Rc<str>>>,
    /// `RESOURCE_RECONFIGURED`: the resource's new `maxLeases`.
    pub max_leases: Option<u32>,
}

impl PoolEvent {
    pub fn new(ty: EventType, at: Millis) -> PoolEvent {
        PoolEvent {
            seq: 0,
            ty,
            at,
            resource: None,
            unmasked: None,
            context: None,
            cause: None,
            until: None,
            permanent: false,
            token: None,
            group: None,
            max_leases: None,
        }
    }
}

/// A resource value that may hold credentials. Its `Debug` does not print it; `expose` does,
/// for code that needs the value to identify the resource.
#[derive(Clone, PartialEq, Eq)]
pub struct Unmasked(pub(crate) Rc<str>);

impl Unmasked {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Unmasked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Unmasked(..)")
    }
}

/// The bounded buffer of undrained events.
#[derive(Debug, Clone)]
pub struct EventBuffer {
    queue: VecDeque<PoolEvent>,
    capacity: usize,
    next_seq: u64,
    dropped: u64,
}

impl EventBuffer {
    pub fn new(capacity: usize, next_seq: u64) -> EventBuffer {
        EventBuffer { queue: VecDeque::new(), capacity, next_seq, dropped: 0 }
    }

    /// Numbers and stores an event, dropping the oldest when full.
    pub fn push(&mut self, mut e: PoolEvent) {
        e.seq = self.next_seq;
        self.next_seq += 1;
        if self.queue.len() == self.capacity {
            self.queue.pop_front();
            self.dropped += 1;
        }
        self.queue.push_back(e);
    }

    /// Changes the bound; when more events are pending than the new bound holds, the oldest
    /// are dropped and counted, as on overflow.
    pub fn set_capacity(&mut self, capacity: usize) {
        let excess = self.queue.len().saturating_sub(capacity);
        self.queue.drain(..excess);
        self.dropped += excess as u64;
        self.capacity = capacity;
    }

    /// Every pending event, oldest first. The buffer itself is handed over (moving each event
    /// into a new `Vec` cost more than the rest of a drain); the next events go into a fresh
    /// one of the same capacity (sized for just as many as this drain took, it was grown, and
    /// so copied, whenever the next drain took more).
    pub fn drain(&mut self) -> Vec<PoolEvent> {
        if self.queue.is_empty() {
            return Vec::new();
        }
        let fresh = VecDeque::with_capacity(self.queue.capacity());
        Vec::from(std::mem::replace(&mut self.queue, fresh))
    }

    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The next seq to at least `min` (seqs only ever grow).
    pub fn raise_next_seq(&mut self, min: u64) {
        self.next_seq = self.next_seq.max(min);
    }

    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    pub fn pending(&self) -> usize {
        self.queue.len()
    }
}
