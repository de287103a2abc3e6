//! Test only: the serde-derived readers `json_read.rs` replaced, kept to check that the new
//! readers accept what they accepted and fail with the same messages at the same paths, on
//! valid documents and on thousands of random mutations of them.
#![allow(dead_code)]

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::json_number::parse;
use crate::json_read::{Category, JsonError};
use crate::types::FailureType;
use crate::window::Observation;

pub struct Exact(pub f64);

impl<'de> Deserialize<'de> for Exact {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Exact, D::Error> {
        let raw = <&'de RawValue>::deserialize(d)?;
        parse(raw.get()).filter(|v| v.is_finite()).map(Exact).ok_or_else(|| {
            let what = match raw.get().as_bytes().first() {
                Some(b'"') => "string",
                Some(b'{') => "map",
                Some(b'[') => "sequence",
                Some(b't' | b'f') => "boolean",
                Some(b'n') => "null",
                _ => "a number out of range",
            };
            de::Error::custom(format_args!("invalid type: {what}, expected a finite number"))
        })
    }
}

pub fn exact<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Exact::deserialize(d).map(|e| e.0)
}

pub fn some_exact<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Exact::deserialize(d).map(|e| Some(e.0))
}
pub(crate) fn some<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// Per-failure-type numbers in a patch; every key optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerFailurePatch {
    #[serde(rename = "BLOCKED", default, deserialize_with = "some_exact")]
    pub blocked: Option<f64>,
    #[serde(rename = "TLS_HANDSHAKE", default, deserialize_with = "some_exact")]
    pub tls_handshake: Option<f64>,
    #[serde(rename = "CONNECTION_RESET", default, deserialize_with = "some_exact")]
    pub connection_reset: Option<f64>,
    #[serde(rename = "TIMEOUT", default, deserialize_with = "some_exact")]
    pub timeout: Option<f64>,
    #[serde(rename = "SLOW", default, deserialize_with = "some_exact")]
    pub slow: Option<f64>,
}

/// A partial configuration, as given to `new Pool({config})` or `restore(.., {config})`.
/// Numbers are read as floats so that range errors are uniform; integer fields must be integral.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConfigPatch {
    #[serde(default, deserialize_with = "some")]
    pub cool_after: Option<f64>,
    #[serde(default, deserialize_with = "some")]
    pub recover_after: Option<f64>,
    #[serde(default, deserialize_with = "some_exact")]
    pub success_reward: Option<f64>,
    #[serde(default, deserialize_with = "some")]
    pub penalties: Option<PerFailurePatch>,
    #[serde(default, deserialize_with = "some")]
    pub cooldown_base_ms: Option<PerFailurePatch>,
    #[serde(default, deserialize_with = "some")]
    pub max_backoff_exponent: Option<f64>,
    #[serde(default, deserialize_with = "some_exact")]
    pub exploration_floor: Option<f64>,
    #[serde(default, deserialize_with = "some")]
    pub lease_ttl_ms: Option<f64>,
    #[serde(default, deserialize_with = "some")]
    pub window_size: Option<f64>,
    #[serde(default, deserialize_with = "some")]
    pub half_open_causes: Option<Vec<String>>,
    #[serde(default, deserialize_with = "some")]
    pub max_resources: Option<f64>,
    #[serde(default, deserialize_with = "some")]
    pub max_cells: Option<f64>,
    #[serde(default, deserialize_with = "some")]
    pub event_buffer_size: Option<f64>,
    #[serde(default, deserialize_with = "some")]
    pub min_gap_ms: Option<f64>,
    /// Replaces the whole map when present (never merged key by key, unlike `penalties`).
    #[serde(default, deserialize_with = "some")]
    pub min_gap_ms_by_context: Option<ByContextPatch>,
    #[serde(default, deserialize_with = "some")]
    pub max_cooling_percent: Option<f64>,
}

/// The map as read: its entries in document order, values not yet checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ByContextPatch(pub Vec<(String, f64)>);

impl<'de> Deserialize<'de> for ByContextPatch {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ByContextPatch, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ByContextPatch;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object from context to milliseconds")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<ByContextPatch, A::Error> {
                // Repeated keys are kept here and refused by `to_map`, with the others.
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    entries.push((key, map.next_value::<f64>()?));
                }
                Ok(ByContextPatch(entries))
            }
        }
        d.deserialize_map(V)
    }
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
    #[serde(default, borrow, deserialize_with = "some")]
    pub group: Option<Cow<'a, str>>,
    /// Version 3: how many leases it may hold at once; left out when 1.
    #[serde(default, rename = "maxLeases", deserialize_with = "some")]
    pub max_leases: Option<f64>,
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
    #[serde(default, deserialize_with = "some")]
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

/// serde_json's error as `json_read` reports one.
pub fn read_error(text: &str, e: &serde_json::Error) -> JsonError {
    let start: usize = text.split_inclusive('\n').take(e.line().saturating_sub(1)).map(str::len).sum();
    let mut msg = e.to_string();
    if let Some(i) = msg.rfind(" at line ") {
        msg.truncate(i);
    }
    let category = if e.is_data() {
        Category::Data
    } else if e.is_eof() {
        Category::Eof
    } else {
        Category::Syntax
    };
    JsonError { at: (start + e.column()).min(text.len()), msg, category }
}
