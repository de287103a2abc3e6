//! The shape of a snapshot as parsed: serde structures with unknown-field and duplicate-key
//! detection, borrowing strings from the input, and windows read straight into `Window`s (no
//! per-cell allocation; each outcome checked as it is read).
//!
//! Semantic checks that need more than one field (ranges, references between sections) are
//! `restore.rs`'s.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

use crate::config::{ConfigPatch, some};
use crate::json_number::{Exact, exact};
use crate::types::FailureType;
use crate::window::Observation;

/// Every key a snapshot may hold (the config's and the failure types' included): the names an
/// error message may quote (`json_path::describe_private`). Any other key in a document is
/// text from the file, which may be a fragment of a resource value.
pub const KEYS: &[&str] = &[
    "format",
    "version",
    "revision",
    "takenAt",
    "fencingHighWater",
    "nextEventSeq",
    "config",
    "registered",
    "blocklist",
    "cells",
    "kind",
    "value",
    "until",
    "permanent",
    "context",
    "score",
    "consecutiveFailures",
    "consecutiveSuccesses",
    "state",
    "cooldownUntil",
    "cooldownCause",
    "updatedAt",
    "window",
    "group",
    "held",
    "coolAfter",
    "recoverAfter",
    "successReward",
    "penalties",
    "cooldownBaseMs",
    "maxBackoffExponent",
    "explorationFloor",
    "leaseTtlMs",
    "windowSize",
    "halfOpenCauses",
    "maxResources",
    "maxCells",
    "eventBufferSize",
    "minGapMs",
    "minGapMsByContext",
    "maxCoolingPercent",
    "BLOCKED",
    "TLS_HANDSHAKE",
    "CONNECTION_RESET",
    "TIMEOUT",
    "SLOW",
];

/// A key of the format (see `KEYS`).
pub fn is_key(k: &str) -> bool {
    KEYS.contains(&k)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SnapshotIn<'a> {
    #[serde(borrow)]
    pub format: Cow<'a, str>,
    pub version: f64,
    pub revision: f64,
    pub taken_at: f64,
    pub fencing_high_water: f64,
    pub next_event_seq: f64,
    pub config: ConfigPatch,
    #[serde(borrow)]
    pub registered: Vec<ResourceIn<'a>>,
    #[serde(borrow)]
    pub blocklist: Vec<BlockIn<'a>>,
    #[serde(borrow)]
    pub cells: Vec<CellIn<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceIn<'a> {
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
    #[serde(borrow)]
    pub value: Cow<'a, str>,
    /// Version 2: the resource's group; left out when it has none (`null` is refused).
    #[serde(default, borrow, deserialize_with = "crate::config::some")]
    pub group: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockIn<'a> {
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
    #[serde(borrow)]
    pub value: Cow<'a, str>,
    /// Left out, or present with a value: `null` is refused (a permanent block has no
    /// `until` key at all).
    #[serde(default, deserialize_with = "some")]
    pub until: Option<f64>,
    #[serde(default, deserialize_with = "some")]
    pub permanent: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CellIn<'a> {
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
    #[serde(borrow)]
    pub value: Cow<'a, str>,
    #[serde(borrow)]
    pub context: Cow<'a, str>,
    #[serde(deserialize_with = "exact")]
    pub score: f64,
    pub consecutive_failures: f64,
    pub consecutive_successes: f64,
    #[serde(borrow)]
    pub state: Cow<'a, str>,
    /// Both keys are required, `null` when the cell never cooled (serde alone would take a
    /// missing `Option` field for `null`).
    #[serde(deserialize_with = "nullable")]
    pub cooldown_until: Option<f64>,
    #[serde(deserialize_with = "nullable")]
    pub cooldown_cause: Option<CauseIn>,
    pub updated_at: f64,
    pub window: WindowIn,
    /// Version 2: `true` while the cell is held; left out otherwise.
    #[serde(default, deserialize_with = "crate::config::some")]
    pub held: Option<bool>,
}

/// A field that must be present and may be `null`.
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(d)
}

/// A failure type by its name (no allocation: the name is matched as it is read).
pub struct CauseIn(pub FailureType);

impl<'de> Deserialize<'de> for CauseIn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CauseIn, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = CauseIn;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("BLOCKED, TLS_HANDSHAKE, CONNECTION_RESET, TIMEOUT, SLOW or null")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<CauseIn, E> {
                FailureType::parse(s).map(CauseIn).ok_or_else(|| {
                    E::custom("must be BLOCKED, TLS_HANDSHAKE, CONNECTION_RESET, TIMEOUT or SLOW")
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// The largest window a snapshot may hold (the `windowSize` limit).
const MAX_WINDOW: usize = 1024;

/// A window as read: its outcomes, oldest first, the first few inline (no allocation for
/// default-sized windows).
pub struct WindowIn {
    head: [Observation; 10],
    more: Vec<Observation>,
    pub len: usize,
}

impl WindowIn {
    pub fn iter(&self) -> impl Iterator<Item = Observation> + '_ {
        self.head[..self.len.min(10)].iter().chain(&self.more).copied()
    }

    /// The newest outcome, if any.
    pub fn newest(&self) -> Option<Observation> {
        self.more.last().or(self.head[..self.len.min(10)].last()).copied()
    }
}

impl<'de> Deserialize<'de> for WindowIn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<WindowIn, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = WindowIn;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of [label, latencyMs | null] outcomes")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<WindowIn, A::Error> {
                let mut w = WindowIn { head: [Observation::new(None, None); 10], more: Vec::new(), len: 0 };
                while let Some(ObsIn(o)) = seq.next_element()? {
                    if w.len == MAX_WINDOW {
                        return Err(de::Error::custom("holds more than 1024 outcomes"));
                    }
                    if w.len < w.head.len() {
                        w.head[w.len] = o;
                    } else {
                        w.more.push(o);
                    }
                    w.len += 1;
                }
                Ok(w)
            }
        }
        d.deserialize_seq(V)
    }
}

/// One `[label, latencyMs | null]` outcome.
struct ObsIn(Observation);

impl<'de> Deserialize<'de> for ObsIn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ObsIn, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ObsIn;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("[label, latencyMs | null]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ObsIn, A::Error> {
                let label: Cow<'de, str> =
                    seq.next_element()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let failure = match &*label {
                    "OK" => None,
                    other => Some(FailureType::parse(other).ok_or_else(|| {
                        de::Error::custom(
                            "label must be OK, BLOCKED, TLS_HANDSHAKE, CONNECTION_RESET, TIMEOUT or SLOW",
                        )
                    })?),
                };
                let latency: Option<Exact> =
                    seq.next_element()?.ok_or_else(|| de::Error::invalid_length(1, &self))?;
                let latency = latency.map(|l| l.0);
                if latency.is_some_and(|l| !(l.is_finite() && l >= 0.0)) {
                    return Err(de::Error::custom("latencyMs must be a non-negative number or null"));
                }
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(3, &self));
                }
                Ok(ObsIn(Observation::new(failure, latency)))
            }
        }
        d.deserialize_seq(V)
    }
}
