//! repute — a reputation pool for crawler fleets.
//!
//! It decides which interchangeable resource (a proxy, an account, a session) a worker should
//! use next, learns from the outcomes the worker reports, and keeps a resource away from the
//! contexts where it is burnt without losing it everywhere else. Reputation lives per
//! `(resource × context)` cell; `acquire` leases a resource exclusively with a fencing token.
//!
//! The engine is pure and deterministic: time comes from a host [`Clock`] and randomness from a
//! host [`RandomSource`] (or a seeded PRNG), so equal inputs give equal decisions and
//! byte-identical snapshots on every platform.
//!
//! ```
//! use repute::{Config, Kind, Outcome, Pool, FailureType};
//!
//! let mut pool = Pool::with_seed(Config::default(), || 1_700_000_000_000.0, 7);
//! pool.register(Kind::Proxy, "proxy-1.example.net:8080")?;
//! let lease = pool.acquire("checkout-us")?.expect("one fresh candidate");
//! pool.report(lease.kind, &lease.value, "checkout-us", Outcome::failure(FailureType::Blocked))?;
//! assert!(pool.release(&lease)?);
//! # Ok::<(), repute::Error>(())
//! ```
#![forbid(unsafe_code)]

pub mod cell;
pub mod check;
pub mod clock;
pub mod config;
pub mod error;
pub mod events;
pub mod index;
pub mod json;
pub mod pool;
pub mod random;
pub mod redact;
pub mod registry;
pub mod snapshot;
pub mod types;
pub mod window;

pub use clock::{Clock, ManualClock};
pub use config::{Config, ConfigPatch};
pub use error::{Error, Result};
pub use events::{EventType, PoolEvent};
pub use pool::{BlockSpec, CellView, Filter, Lease, Pool, ProbeDue, ResourceView, Stats};
pub use random::{RandomSource, SeededRandom};
pub use types::{FailureType, Kind, Millis, Outcome, State, ViewState};
