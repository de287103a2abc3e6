//! Pool configuration: the defaults of SPEC §3, partial overrides, and validation.
//!
//! Owns [`Config`] (always complete and valid once built), [`ConfigPatch`] (a partial config as
//! read from JSON: nested maps may be partial too) and the canonical JSON form used by snapshots
//! and `config()`. A patch is validated as a whole before anything is applied, and every error
//! names the field and its allowed range.

use crate::check::{float_in, int_in};
use crate::error::{Error, Result};
use serde::{Deserialize, Deserializer};

use crate::json::{Obj, array, float, per_failure, string, uint};
use crate::json_in::{MapOnly, some, some_exact};
use crate::json_path::{self, JsonError};
use crate::types::{CauseSet, FailureType, Millis, PerFailure};

mod by_context;

pub use by_context::{ByContextPatch, ContextGaps, MAX_ENTRIES as MAX_GAP_CONTEXTS};

/// A complete, validated pool configuration.
/// The smallest `explorationFloor`: one unit of the selection index's fixed-point weights
/// (`index::weights::SCALE`), so every allowed floor is represented without being raised (a
/// smaller one would be rounded up to this and change picks the spec's rule gives).
pub const MIN_EXPLORATION_FLOOR: f64 = 1.0 / (1u64 << 20) as f64;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub cool_after: u32,
    pub recover_after: u32,
    pub success_reward: f64,
    pub penalties: PerFailure<f64>,
    pub cooldown_base_ms: PerFailure<Millis>,
    pub max_backoff_exponent: u32,
    pub exploration_floor: f64,
    pub lease_ttl_ms: Millis,
    pub window_size: u32,
    pub half_open_causes: CauseSet,
    pub max_resources: u32,
    pub max_cells: u32,
    pub event_buffer_size: u32,
    /// Pacing (version 2): a cell is not leased again until this long after its last report;
    /// 0 is off. `min_gap_for` gives the gap in force for a context.
    pub min_gap_ms: Millis,
    /// Per-context gaps overriding `min_gap_ms`, keys in canonical (UTF-8 byte) order.
    pub min_gap_ms_by_context: ContextGaps,
    /// The cooling cap (version 2): the percentage of registered resources that may be cooling
    /// in one context; 100 is no cap.
    pub max_cooling_percent: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            cool_after: 2,
            recover_after: 2,
            success_reward: 5.0,
            // BLOCKED, TLS_HANDSHAKE, CONNECTION_RESET, TIMEOUT, SLOW
            penalties: PerFailure([30.0, 15.0, 10.0, 5.0, 2.0]),
            cooldown_base_ms: PerFailure([3_600_000, 300_000, 120_000, 60_000, 30_000]),
            max_backoff_exponent: 6,
            exploration_floor: 1.0,
            lease_ttl_ms: 30_000,
            window_size: 10,
            half_open_causes: CauseSet::ALL,
            max_resources: 100_000,
            max_cells: 500_000,
            event_buffer_size: 65_536,
            min_gap_ms: 0,
            min_gap_ms_by_context: ContextGaps::default(),
            max_cooling_percent: 100,
        }
    }
}

const MAX_MS_FIELD: u64 = 1 << 31;

/// Per-failure-type numbers in a patch; every key optional (present means a number: an
/// explicit `null` is an error naming the field, not "use the default"). Read exactly.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
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

impl<'de> Deserialize<'de> for PerFailurePatch {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PerFailurePatch, D::Error> {
        PerFailurePatch::deserialize(MapOnly(d))
    }
}

impl PerFailurePatch {
    fn entries(&self) -> [(FailureType, Option<f64>); 5] {
        [
            (FailureType::Blocked, self.blocked),
            (FailureType::TlsHandshake, self.tls_handshake),
            (FailureType::ConnectionReset, self.connection_reset),
            (FailureType::Timeout, self.timeout),
            (FailureType::Slow, self.slow),
        ]
    }
}

/// A partial configuration, as given to `new Pool({config})` or `restore(.., {config})`.
/// Numbers are read as floats so that range errors are uniform; integer fields must be integral.
/// A field present is a value: an explicit `null` is an error (naming the field) rather than
/// "use the default", which would silently ignore a bad value.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, rename_all = "camelCase")]
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

impl<'de> Deserialize<'de> for ConfigPatch {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ConfigPatch, D::Error> {
        ConfigPatch::deserialize(MapOnly(d))
    }
}

/// The keys of a per-failure-type object (`penalties`): names a snapshot error may quote.
pub(crate) const FAILURE_FIELDS: &[&str] =
    &["BLOCKED", "TLS_HANDSHAKE", "CONNECTION_RESET", "TIMEOUT", "SLOW"];

/// The keys of a config object: names a snapshot error may quote.
pub(crate) const FIELDS: &[&str] = &[
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
];

impl ConfigPatch {
    /// Parses a JSON object; unknown keys, duplicate keys and wrong types are `INVALID_CONFIG`
    /// naming the field.
    pub fn from_json(json: &str) -> Result<ConfigPatch> {
        serde_json::from_str(json)
            .map_err(|e| Error::InvalidConfig(json_path::describe(json, &JsonError::of(json, &e))))
    }

    /// The first absent field (or nested key), as a path; `None` when the patch is complete.
    /// Without `version_2`, the fields version 2 added are not asked for (a version 1 snapshot's
    /// complete config leaves them at their defaults).
    pub fn first_missing(&self, version_2: bool) -> Option<String> {
        let scalar = [
            ("coolAfter", self.cool_after.is_some()),
            ("recoverAfter", self.recover_after.is_some()),
            ("successReward", self.success_reward.is_some()),
        ];
        let tables = [("penalties", &self.penalties), ("cooldownBaseMs", &self.cooldown_base_ms)];
        let rest = [
            ("maxBackoffExponent", self.max_backoff_exponent.is_some()),
            ("explorationFloor", self.exploration_floor.is_some()),
            ("leaseTtlMs", self.lease_ttl_ms.is_some()),
            ("windowSize", self.window_size.is_some()),
            ("halfOpenCauses", self.half_open_causes.is_some()),
            ("maxResources", self.max_resources.is_some()),
            ("maxCells", self.max_cells.is_some()),
            ("eventBufferSize", self.event_buffer_size.is_some()),
            ("minGapMs", self.min_gap_ms.is_some() || !version_2),
            ("minGapMsByContext", self.min_gap_ms_by_context.is_some() || !version_2),
            ("maxCoolingPercent", self.max_cooling_percent.is_some() || !version_2),
        ];
        if let Some((name, _)) = scalar.iter().find(|(_, present)| !present) {
            return Some((*name).to_owned());
        }
        for (name, table) in tables {
            match table {
                None => return Some(name.to_owned()),
                Some(t) => {
                    if let Some((ty, _)) = t.entries().iter().find(|(_, v)| v.is_none()) {
                        return Some(format!("{name}.{ty}"));
                    }
                }
            }
        }
        rest.iter().find(|(_, present)| !present).map(|(name, _)| (*name).to_owned())
    }

    /// The first of the fields version 2 added that this patch holds (a version 1 snapshot
    /// holds none of them).
    pub fn first_version_2_field(&self) -> Option<&'static str> {
        [
            ("minGapMs", self.min_gap_ms.is_some()),
            ("minGapMsByContext", self.min_gap_ms_by_context.is_some()),
            ("maxCoolingPercent", self.max_cooling_percent.is_some()),
        ]
        .into_iter()
        .find_map(|(name, present)| present.then_some(name))
    }

    /// Applies this patch on top of `base`, validating every given field first. `prefix` is put
    /// in front of field names in errors (`"config."` inside a snapshot).
    pub fn apply(&self, base: &Config, prefix: &str) -> Result<Config, String> {
        // Paths are formatted only for an error, in `int_at` / `float_at` (one copy of that code
        // in the module rather than one per field).
        let int = |name: &str, key: &str, v: f64, lo: u64, hi: u64| int_at(prefix, name, key, v, lo, hi);
        let mut c = base.clone();
        if let Some(v) = self.cool_after {
            c.cool_after = int("coolAfter", "", v, 1, 1000)? as u32;
        }
        if let Some(v) = self.recover_after {
            c.recover_after = int("recoverAfter", "", v, 1, 1000)? as u32;
        }
        if let Some(v) = self.success_reward {
            c.success_reward = float_at(prefix, "successReward", "", v)?;
        }
        if let Some(table) = &self.penalties {
            for (t, v) in table.entries() {
                if let Some(v) = v {
                    c.penalties[t] = float_at(prefix, "penalties.", t.as_str(), v)?;
                }
            }
        }
        if let Some(table) = &self.cooldown_base_ms {
            for (t, v) in table.entries() {
                if let Some(v) = v {
                    c.cooldown_base_ms[t] = int("cooldownBaseMs.", t.as_str(), v, 1, MAX_MS_FIELD)?;
                }
            }
        }
        if let Some(v) = self.max_backoff_exponent {
            c.max_backoff_exponent = int("maxBackoffExponent", "", v, 0, 21)? as u32;
        }
        if let Some(v) = self.exploration_floor {
            if !(v.is_finite() && (MIN_EXPLORATION_FLOOR..=1e6).contains(&v)) {
                return Err(format!(
                    "{prefix}explorationFloor must be a finite number in [2^-20, 1000000] (2^-20 = 9.5367431640625e-7)"
                ));
            }
            c.exploration_floor = v;
        }
        if let Some(v) = self.lease_ttl_ms {
            c.lease_ttl_ms = int("leaseTtlMs", "", v, 1, MAX_MS_FIELD)?;
        }
        if let Some(v) = self.window_size {
            c.window_size = int("windowSize", "", v, 1, 1024)? as u32;
        }
        if let Some(list) = &self.half_open_causes {
            let mut set = CauseSet::EMPTY;
            for (i, name) in list.iter().enumerate() {
                let t = FailureType::parse(name).ok_or_else(|| {
                    format!(
                        "{prefix}halfOpenCauses[{i}] must be one of BLOCKED, TLS_HANDSHAKE, CONNECTION_RESET, TIMEOUT, SLOW"
                    )
                })?;
                if !set.insert(t) {
                    return Err(format!("{prefix}halfOpenCauses[{i}] repeats {t} (halfOpenCauses is a set)"));
                }
            }
            c.half_open_causes = set;
        }
        if let Some(v) = self.max_resources {
            c.max_resources = int("maxResources", "", v, 1, 10_000_000)? as u32;
        }
        if let Some(v) = self.max_cells {
            c.max_cells = int("maxCells", "", v, 1, 100_000_000)? as u32;
        }
        if let Some(v) = self.event_buffer_size {
            c.event_buffer_size = int("eventBufferSize", "", v, 1, 10_000_000)? as u32;
        }
        if let Some(v) = self.min_gap_ms {
            c.min_gap_ms = int("minGapMs", "", v, 0, MAX_MS_FIELD)?;
        }
        if let Some(map) = &self.min_gap_ms_by_context {
            c.min_gap_ms_by_context = map.to_map(prefix, "minGapMsByContext", MAX_MS_FIELD)?;
        }
        if let Some(v) = self.max_cooling_percent {
            c.max_cooling_percent = int("maxCoolingPercent", "", v, 1, 100)? as u32;
        }
        Ok(c)
    }
}

/// `int_in` for the field at `prefix` + `name` + `key`, its path formatted only for an error.
#[inline(never)]
fn int_at(prefix: &str, name: &str, key: &str, v: f64, lo: u64, hi: u64) -> Result<u64, String> {
    int_in("", v, lo, hi).map_err(|e| format!("{prefix}{name}{key}{e}"))
}

/// A finite float in 0..=200 (rewards and penalties) at `prefix` + `name` + `key`.
#[inline(never)]
fn float_at(prefix: &str, name: &str, key: &str, v: f64) -> Result<f64, String> {
    float_in("", v, 0.0, 200.0).map_err(|e| format!("{prefix}{name}{key}{e}"))
}

impl Config {
    /// Defaults with `patch` applied; an invalid field is `INVALID_CONFIG` naming it.
    pub fn from_patch(patch: &ConfigPatch) -> Result<Config> {
        patch.apply(&Config::default(), "").map_err(Error::InvalidConfig)
    }

    /// Checks every field of a config built by hand (its fields are public) against the ranges
    /// `from_patch` enforces; the error names the first bad field.
    pub fn validate(&self) -> Result<()> {
        let table = |t: &PerFailure<f64>| {
            let v = |f: FailureType| Some(t[f]);
            PerFailurePatch {
                blocked: v(FailureType::Blocked),
                tls_handshake: v(FailureType::TlsHandshake),
                connection_reset: v(FailureType::ConnectionReset),
                timeout: v(FailureType::Timeout),
                slow: v(FailureType::Slow),
            }
        };
        let all = ConfigPatch {
            cool_after: Some(self.cool_after.into()),
            recover_after: Some(self.recover_after.into()),
            success_reward: Some(self.success_reward),
            penalties: Some(table(&self.penalties)),
            cooldown_base_ms: Some(table(&PerFailure(self.cooldown_base_ms.0.map(|v| v as f64)))),
            max_backoff_exponent: Some(self.max_backoff_exponent.into()),
            exploration_floor: Some(self.exploration_floor),
            lease_ttl_ms: Some(self.lease_ttl_ms as f64),
            window_size: Some(self.window_size.into()),
            half_open_causes: None, // a set by construction
            max_resources: Some(self.max_resources.into()),
            max_cells: Some(self.max_cells.into()),
            event_buffer_size: Some(self.event_buffer_size.into()),
            min_gap_ms: Some(self.min_gap_ms as f64),
            min_gap_ms_by_context: Some(ByContextPatch::of(&self.min_gap_ms_by_context)),
            max_cooling_percent: Some(self.max_cooling_percent.into()),
        };
        all.apply(&Config::default(), "").map(|_| ()).map_err(Error::InvalidConfig)
    }

    /// The canonical JSON form (fixed key order; integers printed as integers).
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(512);
        self.write_json(&mut out);
        out
    }

    /// Writes the canonical JSON form into `out` (the snapshot's `config`).
    pub fn write_json(&self, out: &mut String) {
        let mut o = Obj::open(out);
        o.uint("coolAfter", self.cool_after.into());
        o.uint("recoverAfter", self.recover_after.into());
        o.float("successReward", self.success_reward);
        per_failure(o.key("penalties"), &self.penalties, float);
        per_failure(o.key("cooldownBaseMs"), &self.cooldown_base_ms, uint);
        o.uint("maxBackoffExponent", self.max_backoff_exponent.into());
        o.float("explorationFloor", self.exploration_floor);
        o.uint("leaseTtlMs", self.lease_ttl_ms);
        o.uint("windowSize", self.window_size.into());
        let causes: Vec<FailureType> = self.half_open_causes.iter().collect();
        array(o.key("halfOpenCauses"), &causes, |out, t| string(out, t.as_str()));
        o.uint("maxResources", self.max_resources.into());
        o.uint("maxCells", self.max_cells.into());
        o.uint("eventBufferSize", self.event_buffer_size.into());
        o.uint("minGapMs", self.min_gap_ms);
        let mut gaps = Obj::open(o.key("minGapMsByContext"));
        for (context, ms) in self.min_gap_ms_by_context.iter() {
            gaps.uint(context, ms);
        }
        gaps.close();
        o.uint("maxCoolingPercent", self.max_cooling_percent.into());
        o.close();
    }

    /// The pacing gap in force for `context`: its `minGapMsByContext` entry, else `minGapMs`.
    pub fn min_gap_for(&self, context: &str) -> Millis {
        self.min_gap_ms_by_context.get(context).unwrap_or(self.min_gap_ms)
    }

    /// The cooldown for a cell that has failed `consecutive_failures` times in a row, ending on
    /// a failure of type `t`: `base(t) × 2^min(n − 1, maxBackoffExponent)`.
    pub fn cooldown_ms(&self, t: FailureType, consecutive_failures: u32) -> Millis {
        let exp = consecutive_failures.saturating_sub(1).min(self.max_backoff_exponent);
        self.cooldown_base_ms[t] << exp
    }
}
