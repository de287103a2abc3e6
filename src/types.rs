//! The vocabulary of the engine: resource kinds, failure types, cell states and outcomes.
//!
//! Owns the closed enums and their canonical string forms (the exact upper-case names of the
//! spec) plus [`PerFailure`], a table indexed by failure type. It does not own any rule: what a
//! failure does to a cell lives in `cell.rs`.

use std::fmt;
use std::ops::{Index, IndexMut};

/// Instants are integer milliseconds since the Unix epoch; durations are integer milliseconds.
pub type Millis = u64;

/// The kind half of a resource's identity. Declaration order is the canonical order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Proxy,
    Account,
    Session,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Proxy, Kind::Account, Kind::Session];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Proxy => "PROXY",
            Kind::Account => "ACCOUNT",
            Kind::Session => "SESSION",
        }
    }

    /// Parses the exact upper-case name; anything else is `None`.
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure as classified by the caller. Declaration order is the canonical order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FailureType {
    Blocked,
    TlsHandshake,
    ConnectionReset,
    Timeout,
    Slow,
}

impl FailureType {
    pub const ALL: [FailureType; 5] = [
        FailureType::Blocked,
        FailureType::TlsHandshake,
        FailureType::ConnectionReset,
        FailureType::Timeout,
        FailureType::Slow,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureType::Blocked => "BLOCKED",
            FailureType::TlsHandshake => "TLS_HANDSHAKE",
            FailureType::ConnectionReset => "CONNECTION_RESET",
            FailureType::Timeout => "TIMEOUT",
            FailureType::Slow => "SLOW",
        }
    }

    /// Parses the exact upper-case name; anything else is `None`.
    pub fn parse(s: &str) -> Option<FailureType> {
        FailureType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for FailureType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The stored state of a reputation cell. `BLOCKLISTED` is only a view (see [`ViewState`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum State {
    Healthy,
    Cooling,
    Recovering,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Healthy => "HEALTHY",
            State::Cooling => "COOLING",
            State::Recovering => "RECOVERING",
        }
    }

    pub fn parse(s: &str) -> Option<State> {
        [State::Healthy, State::Cooling, State::Recovering].into_iter().find(|st| st.as_str() == s)
    }
}

/// The state shown to readers: the stored state, or `Blocklisted` while the resource is blocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ViewState {
    Healthy,
    Cooling,
    Recovering,
    Blocklisted,
}

impl ViewState {
    pub fn as_str(self) -> &'static str {
        match self {
            ViewState::Healthy => "HEALTHY",
            ViewState::Cooling => "COOLING",
            ViewState::Recovering => "RECOVERING",
            ViewState::Blocklisted => "BLOCKLISTED",
        }
    }

    pub fn parse(s: &str) -> Option<ViewState> {
        [ViewState::Healthy, ViewState::Cooling, ViewState::Recovering, ViewState::Blocklisted]
            .into_iter()
            .find(|st| st.as_str() == s)
    }

    /// The view of a stored state on a resource that is (or is not) blocked.
    pub fn of(state: State, blocked: bool) -> ViewState {
        if blocked {
            return ViewState::Blocklisted;
        }
        match state {
            State::Healthy => ViewState::Healthy,
            State::Cooling => ViewState::Cooling,
            State::Recovering => ViewState::Recovering,
        }
    }
}

/// What a worker reports after using a resource. Latency is optional, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    Success { latency_ms: Option<f64> },
    Failure { failure: FailureType, latency_ms: Option<f64> },
}

impl Outcome {
    pub fn success() -> Outcome {
        Outcome::Success { latency_ms: None }
    }

    pub fn failure(failure: FailureType) -> Outcome {
        Outcome::Failure { failure, latency_ms: None }
    }

    pub fn latency_ms(&self) -> Option<f64> {
        match *self {
            Outcome::Success { latency_ms } | Outcome::Failure { latency_ms, .. } => latency_ms,
        }
    }

    /// The failure type, or `None` for a success.
    pub fn failure_type(&self) -> Option<FailureType> {
        match *self {
            Outcome::Success { .. } => None,
            Outcome::Failure { failure, .. } => Some(failure),
        }
    }
}

/// A value per failure type, indexed by [`FailureType`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerFailure<T>(pub [T; 5]);

impl<T> Index<FailureType> for PerFailure<T> {
    type Output = T;
    fn index(&self, t: FailureType) -> &T {
        &self.0[t.index()]
    }
}

impl<T> IndexMut<FailureType> for PerFailure<T> {
    fn index_mut(&mut self, t: FailureType) -> &mut T {
        &mut self.0[t.index()]
    }
}

/// A set of failure types (for `halfOpenCauses`), iterated in canonical order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CauseSet(u8);

impl CauseSet {
    pub const ALL: CauseSet = CauseSet(0b1_1111);
    pub const EMPTY: CauseSet = CauseSet(0);

    pub fn contains(self, t: FailureType) -> bool {
        self.0 & (1 << t.index()) != 0
    }

    pub fn insert(&mut self, t: FailureType) -> bool {
        let fresh = !self.contains(t);
        self.0 |= 1 << t.index();
        fresh
    }

    pub fn iter(self) -> impl Iterator<Item = FailureType> {
        FailureType::ALL.into_iter().filter(move |t| self.contains(*t))
    }
}

impl FromIterator<FailureType> for CauseSet {
    fn from_iter<I: IntoIterator<Item = FailureType>>(iter: I) -> Self {
        let mut set = CauseSet::EMPTY;
        for t in iter {
            set.insert(t);
        }
        set
    }
}
