//! The engine's error type: one variant per stable error code of the spec (SPEC §9).
//!
//! Messages say what is wrong and, where there is one, the path of the offending field. They never
//! carry a secret: resource values are shown only in their redacted form (see `redact.rs`).

use thiserror::Error;

/// A failed call. A call that returns an error has changed nothing.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// Bad input to a call: blank or oversized strings, unknown enums, bad numbers, a bad clock
    /// or random reading.
    #[error("INVALID_ARGUMENT: {0}")]
    InvalidArgument(String),
    /// A configuration field is unknown or outside its allowed range.
    #[error("INVALID_CONFIG: {0}")]
    InvalidConfig(String),
    /// A snapshot could not be restored; the message names the JSON path.
    #[error("INVALID_SNAPSHOT: {0}")]
    InvalidSnapshot(String),
    /// A snapshot declares a format version this engine does not read.
    #[error("UNSUPPORTED_SNAPSHOT_VERSION: {0}")]
    UnsupportedSnapshotVersion(String),
    /// `maxResources` or `maxCells` would be exceeded.
    #[error("CAPACITY_EXCEEDED: {0}")]
    CapacityExceeded(String),
    /// The call names a resource that is not registered.
    #[error("UNKNOWN_RESOURCE: {0}")]
    UnknownResource(String),
    /// `finish` of a lease that was finished already (SPEC §3, finishing a step).
    #[error("LEASE_FINISHED: {0}")]
    LeaseFinished(String),
}

impl Error {
    /// The stable code, as exposed to JavaScript (`error.code`).
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidArgument(_) => "INVALID_ARGUMENT",
            Error::InvalidConfig(_) => "INVALID_CONFIG",
            Error::InvalidSnapshot(_) => "INVALID_SNAPSHOT",
            Error::UnsupportedSnapshotVersion(_) => "UNSUPPORTED_SNAPSHOT_VERSION",
            Error::CapacityExceeded(_) => "CAPACITY_EXCEEDED",
            Error::UnknownResource(_) => "UNKNOWN_RESOURCE",
            Error::LeaseFinished(_) => "LEASE_FINISHED",
        }
    }

    /// The message without the code prefix.
    pub fn detail(&self) -> &str {
        match self {
            Error::InvalidArgument(m)
            | Error::InvalidConfig(m)
            | Error::InvalidSnapshot(m)
            | Error::UnsupportedSnapshotVersion(m)
            | Error::CapacityExceeded(m)
            | Error::UnknownResource(m)
            | Error::LeaseFinished(m) => m,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn invalid_argument(msg: impl Into<String>) -> Error {
    Error::InvalidArgument(msg.into())
}
