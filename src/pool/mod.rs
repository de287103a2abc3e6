//! The public `Pool`: the Rust mirror of the JS contract (SPEC §9).
//!
//! Every call that reads time takes the host clock's reading as its first argument, `now`
//! (milliseconds since the Unix epoch, fractions floored; anything but a finite number in
//! [0, 2^52] is `INVALID_ARGUMENT`; a reading earlier than one already applied counts as that
//! one: time never runs backwards). The engine reads no clock of its own. Each call validates
//! `now` and its arguments and checks that it can succeed *before* anything changes, then
//! applies time passing (expiries) and its own effect, and counts one revision step if
//! durable content changed. A failed call
//! changes nothing — `acquire` included: it works out whether it needs a random draw (two or
//! more candidates once the expiries due now are applied) before applying them, and draws
//! then, so a host random source returning a value outside [0, 1) fails a call that changed
//! nothing. The only randomness is one draw per `acquire` with two or more candidates. A call
//! that could take `revision`, `fencingHighWater` or `nextEventSeq` past 2^53 − 1 fails
//! before anything changes too (`counters.rs`).
//!
//! This file holds the `Pool` itself, its constructors and how a call is run (`apply`, `read`);
//! the calls are `api/`'s, one file a family; the rules they run are the other files here, on
//! `Core` (`core.rs`).

mod admin;
mod api;
mod core;
mod counters;
mod durable;
mod expiries;
mod expiry;
mod finished;
mod floor;
mod from_parts;
mod groups;
mod invariants;
mod kept_answers;
mod leases;
mod next_change;
mod reconfigure;
mod reinstate;
mod reports;
mod snapshot;
mod steps;
mod views;

pub use self::core::Core;
use counters::{Moves, READS};
pub use floor::Floor;
pub use leases::Lease;
pub use snapshot::PartsRestore;
pub use steps::Next;
pub use views::{CellView, Filter, ProbeDue, ResourceDetail, ResourceView, Stats};

use crate::config::{Config, ConfigPatch};
use crate::error::{Error, Result};
use crate::ids::ResourceId;
use crate::randomness::Randomness;
use crate::redact::redact;
use crate::types::{Kind, Millis};

/// How long a block lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BlockSpec {
    /// Expires by itself after this many seconds (fractional allowed; at least 1 ms).
    Seconds(f64),
    /// Ends only with `unblock`.
    Permanent,
}

/// What `register_with` sets (`None`: as it is for a known resource; the default for a new one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Registration<'a> {
    /// The group (`Some(None)`: none). SPEC §3, groups.
    pub group: Option<Option<&'a str>>,
    /// How many leases the resource may hold at once, 1–1,024 (default 1). SPEC §3, capacity.
    pub max_leases: Option<u32>,
}

/// A reputation pool with its host random source (the clock's readings come with each call).
pub struct Pool {
    core: Core,
    random: Randomness,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("stats", &self.core.stats()).finish_non_exhaustive()
    }
}

fn unknown(kind: Kind, value: &str) -> Error {
    Error::UnknownResource(format!("{kind}/{} is not registered", redact(kind, value)))
}

#[inline(never)]
fn stale(id: ResourceId) -> Error {
    Error::UnknownResource(format!(
        "resource id {} names no registered resource",
        crate::json::float_text(id.to_f64())
    ))
}

impl Pool {
    /// A new, empty pool drawing from `random`: any `rand` generator (`impl rand::Rng`), or
    /// [`Randomness`]. A config with a field out of range is `INVALID_CONFIG`.
    pub fn new(config: Config, random: impl Into<Randomness>) -> Result<Pool> {
        config.validate()?;
        Ok(Pool { core: Core::new(config, 0), random: random.into() })
    }

    /// A new pool drawing from the seeded generator (`Randomness::seeded`: deterministic).
    pub fn with_seed(config: Config, seed: u64) -> Result<Pool> {
        Pool::new(config, Randomness::seeded(seed))
    }

    /// Restores a snapshot; `overrides` replaces fields of the snapshot's config. On any error
    /// nothing is built and the error names the JSON path of the problem. Reads no clock: the
    /// restored pool's time is the snapshot's `takenAt` until a call brings a later reading.
    pub fn restore(
        json: &str,
        overrides: Option<&ConfigPatch>,
        random: impl Into<Randomness>,
    ) -> Result<Pool> {
        Pool::restore_above(json, overrides, &Floor::default(), random)
    }

    /// `restore`, with the counters raised to at least `floor`'s (`floor.rs`).
    pub fn restore_above(
        json: &str,
        overrides: Option<&ConfigPatch>,
        floor: &Floor,
        random: impl Into<Randomness>,
    ) -> Result<Pool> {
        let mut core = snapshot::restore(json, overrides)?;
        core.raise_to(floor);
        Ok(Pool { core, random: random.into() })
    }

    fn find(&self, kind: Kind, value: &str) -> Result<u32> {
        self.core.reg.find(kind, value).ok_or_else(|| unknown(kind, value))
    }

    /// The slot `id` names, or `UNKNOWN_RESOURCE` when its resource was deregistered.
    fn slot_of(&self, id: ResourceId) -> Result<u32> {
        self.core.reg.slot_of(id).ok_or_else(|| stale(id))
    }

    /// Runs `body`, which moves the counters at most `m`, after applying the clock reading
    /// `t`, and closes the call; fails first if a counter could pass 2^53 − 1.
    fn apply<T>(&mut self, t: Millis, m: Moves, body: impl FnOnce(&mut Core, Millis) -> T) -> Result<T> {
        self.core.check_counters(t, m)?;
        let now = self.core.advance(t);
        let out = body(&mut self.core, now);
        self.core.close_call();
        Ok(out)
    }

    /// Like `apply` for calls that only read: time passing (and its revision step) is applied
    /// first, so what they return already shows it.
    fn read<T>(&mut self, t: Millis, body: impl FnOnce(&mut Core, Millis) -> T) -> Result<T> {
        self.core.check_counters(t, READS)?;
        let now = self.core.advance(t);
        self.core.close_call();
        Ok(body(&mut self.core, now))
    }

    /// How many finished tokens the pool remembers now (diagnostics; `finished.rs`).
    pub fn finished_kept(&self) -> usize {
        self.core.finished_kept()
    }

    pub fn config(&self) -> &Config {
        self.core.config()
    }

    /// The pure state, for benchmarks and diagnostics.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// Verifies every index against a from-scratch recomputation (property and model tests).
    #[doc(hidden)]
    pub fn check_invariants(&mut self) -> std::result::Result<(), String> {
        self.core.check_invariants()
    }
}
