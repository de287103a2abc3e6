//! The shape of a snapshot as parsed: serde-derived readers with unknown-field and
//! duplicate-key detection, strings borrowed from the input, and windows read straight into
//! `WindowIn`s (no per-cell allocation; each outcome checked as it is read).
//!
//! Semantic checks that need more than one field (ranges, references between sections) are
//! `restore.rs`'s; naming the path of a field serde_json refused is `json_path.rs`'s.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

use crate::config::{self, ConfigPatch};
use crate::json_in::{Exact, MapOnly, exact, nullable, some};
use crate::json_path::JsonError;
use crate::types::FailureType;
use crate::window::Observation;

/// Whether `k` is a key of the format: a field any of the snapshot's readers (the config's
/// included) takes. These are the names an error message may quote
/// (`json_path::describe_private`); any other key in a document is text from the file, which
/// may be a fragment of a resource value.
pub fn is_key(k: &str) -> bool {
    [SNAPSHOT_FIELDS, RESOURCE_FIELDS, BLOCK_FIELDS, CELL_FIELDS, config::FIELDS, config::FAILURE_FIELDS]
        .iter()
        .any(|names| names.contains(&k))
}

const SNAPSHOT_FIELDS: &[&str] = &[
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
];

const RESOURCE_FIELDS: &[&str] = &["kind", "value", "group", "maxLeases"];
const BLOCK_FIELDS: &[&str] = &["kind", "value", "until", "permanent"];

/// The fields of a cell (as the derive below names them).
const CELL_FIELDS: &[&str] = &[
    "kind",
    "value",
    "context",
    "score",
    "consecutiveFailures",
    "consecutiveSuccesses",
    "state",
    "cooldownUntil",
    "cooldownCause",
    "updatedAt",
    "window",
    "held",
];

/// Derives a `Deserialize` that reads the struct from a JSON object only (`MapOnly`), for a
/// struct that derives with `#[serde(remote = "Self")]`.
macro_rules! object_only {
    ($name:ident) => {
        impl<'de: 'a, 'a> Deserialize<'de> for $name<'a> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name<'a>, D::Error> {
                $name::deserialize(MapOnly(d))
            }
        }
    };
}

#[derive(Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, rename_all = "camelCase")]
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
object_only!(SnapshotIn);

impl<'a> SnapshotIn<'a> {
    /// Parses a whole document.
    pub fn parse(json: &'a str) -> Result<SnapshotIn<'a>, JsonError> {
        serde_json::from_str(json).map_err(|e| JsonError::of(json, &e))
    }
}

#[derive(Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct ResourceIn<'a> {
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
    #[serde(borrow)]
    pub value: Cow<'a, str>,
    /// Version 2: the resource's group; left out when it has none (`null` is refused).
    #[serde(default, borrow, deserialize_with = "some")]
    pub group: Option<Cow<'a, str>>,
    /// Version 3: how many leases it may hold at once; left out when 1.
    #[serde(default, rename = "maxLeases", deserialize_with = "some")]
    pub max_leases: Option<f64>,
}
object_only!(ResourceIn);

#[derive(Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
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
object_only!(BlockIn);

#[derive(Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, rename_all = "camelCase")]
pub struct CellIn<'a> {
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
    #[serde(borrow)]
    pub value: Cow<'a, str>,
    #[serde(borrow)]
    pub context: Cow<'a, str>,
    /// Read exactly, and a refused value is not quoted (`json_in::Exact`).
    #[serde(deserialize_with = "exact")]
    pub score: f64,
    pub consecutive_failures: f64,
    pub consecutive_successes: f64,
    #[serde(borrow)]
    pub state: Cow<'a, str>,
    /// Both keys are required, `null` when the cell never cooled.
    #[serde(deserialize_with = "nullable")]
    pub cooldown_until: Option<f64>,
    #[serde(deserialize_with = "nullable")]
    pub cooldown_cause: Option<CauseIn>,
    pub updated_at: f64,
    pub window: WindowIn,
    /// Version 2: `true` while the cell is held; left out otherwise.
    #[serde(default, deserialize_with = "some")]
    pub held: Option<bool>,
}
object_only!(CellIn);

/// A failure type by its name (no allocation: the name is matched as it is read).
pub struct CauseIn(pub FailureType);

impl<'de> Deserialize<'de> for CauseIn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CauseIn, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
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
        d.deserialize_str(Name)
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
        struct Outcomes;
        impl<'de> Visitor<'de> for Outcomes {
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
        d.deserialize_seq(Outcomes)
    }
}

/// One `[label, latencyMs | null]` outcome.
struct ObsIn(Observation);

impl<'de> Deserialize<'de> for ObsIn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ObsIn, D::Error> {
        struct Pair;
        impl<'de> Visitor<'de> for Pair {
            type Value = ObsIn;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("[label, latencyMs | null]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ObsIn, A::Error> {
                let LabelIn(label) =
                    seq.next_element()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
                // Refused here rather than by the label's reader, so the error is placed (and
                // its path named) as the window's readers always placed it.
                let failure = label.ok_or_else(|| {
                    de::Error::custom(
                        "label must be OK, BLOCKED, TLS_HANDSHAKE, CONNECTION_RESET, TIMEOUT or SLOW",
                    )
                })?;
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
        d.deserialize_seq(Pair)
    }
}

/// An outcome's label as read: `Some(None)` for `OK`, `Some(Some(t))` for a failure type,
/// `None` for any other string (matched as it is read, no allocation).
struct LabelIn(Option<Option<FailureType>>);

impl<'de> Deserialize<'de> for LabelIn {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LabelIn, D::Error> {
        struct Label;
        impl Visitor<'_> for Label {
            type Value = LabelIn;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<LabelIn, E> {
                Ok(LabelIn(if s == "OK" { Some(None) } else { FailureType::parse(s).map(Some) }))
            }
        }
        d.deserialize_str(Label)
    }
}

/// A document's `format` and `version` only, read leniently (other keys skipped whatever they
/// hold), so a document of another version gets the version error.
#[derive(Deserialize)]
#[serde(remote = "Self")]
pub struct Header<'a> {
    #[serde(default, borrow, deserialize_with = "some")]
    pub format: Option<Loose<'a>>,
    #[serde(default, borrow, deserialize_with = "some")]
    pub version: Option<Loose<'a>>,
}
object_only!(Header);

/// Any value, kept only when it is a string or a number.
pub enum Loose<'a> {
    Str(Cow<'a, str>),
    Num(f64),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Loose<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Loose<'a>, D::Error> {
        struct Any;
        impl<'de> Visitor<'de> for Any {
            type Value = Loose<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Loose<'de>, E> {
                Ok(Loose::Str(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Loose<'de>, E> {
                Ok(Loose::Str(Cow::Owned(s.to_owned())))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Loose<'de>, E> {
                Ok(Loose::Num(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Loose<'de>, E> {
                Ok(Loose::Num(v as f64))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Loose<'de>, E> {
                Ok(Loose::Num(v as f64))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Loose<'de>, E> {
                Ok(Loose::Other)
            }
            fn visit_unit<E>(self) -> Result<Loose<'de>, E> {
                Ok(Loose::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Loose<'de>, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Loose::Other)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Loose<'de>, A::Error> {
                while map.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
                Ok(Loose::Other)
            }
        }
        d.deserialize_any(Any)
    }
}
