//! The views that cross the wasm boundary as structured JS values (serde-wasm-bindgen) rather
//! than JSON text: `stats()` and `config()`, the two where building the object in the module
//! beats text and `JSON.parse` (BENCHMARKS.md, "Boundary calls": 0.68× and 0.81× the time).
//! The dashboard views and the probe list stay text (`views_json.rs`): with many strings,
//! `JSON.parse` is faster. The conversion itself is the facade's (`host.rs`, `to_js`): this
//! file is plain serde, compiled everywhere. Shapes, key order included, are those of the canonical JSON
//! (`Config::write_json`): a host sees the same object either way. Integers cross as numbers;
//! the engine keeps every count within 2^53 − 1, and one beyond would be an error, never a
//! silently rounded number.

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeStruct, Serializer};

use crate::config::Config;
use crate::pool::Stats;
use crate::types::{FailureType, PerFailure};

/// `stats()`: the counts, then `cellsByState`.
pub struct StatsV<'a>(pub &'a Stats);

impl Serialize for StatsV<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        let mut o = s.serialize_struct("Stats", 13)?;
        o.serialize_field("registered", &v.registered)?;
        o.serialize_field("cells", &v.cells)?;
        o.serialize_field("contexts", &v.contexts)?;
        o.serialize_field("leased", &v.leased)?;
        o.serialize_field("blocked", &v.blocked)?;
        o.serialize_field("available", &v.available)?;
        o.serialize_field("revision", &v.revision)?;
        o.serialize_field("fencingHighWater", &v.fencing_high_water)?;
        o.serialize_field("nextEventSeq", &v.next_event_seq)?;
        o.serialize_field("eventsPending", &v.events_pending)?;
        o.serialize_field("eventsDropped", &v.events_dropped)?;
        o.serialize_field("now", &v.now)?;
        o.serialize_field("cellsByState", &ByState(v.cells_by_state))?;
        o.end()
    }
}

struct ByState([usize; 3]);

impl Serialize for ByState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let [healthy, cooling, recovering] = self.0;
        let mut o = s.serialize_struct("CellsByState", 3)?;
        o.serialize_field("HEALTHY", &healthy)?;
        o.serialize_field("COOLING", &cooling)?;
        o.serialize_field("RECOVERING", &recovering)?;
        o.end()
    }
}

/// `config()`: every field, in the canonical order.
pub struct ConfigV<'a>(pub &'a Config);

impl Serialize for ConfigV<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let c = self.0;
        let causes: Vec<&str> = c.half_open_causes.iter().map(FailureType::as_str).collect();
        let mut o = s.serialize_struct("Config", 17)?;
        o.serialize_field("coolAfter", &c.cool_after)?;
        o.serialize_field("recoverAfter", &c.recover_after)?;
        o.serialize_field("successReward", &c.success_reward)?;
        o.serialize_field("penalties", &PerFailureV(&c.penalties))?;
        o.serialize_field("cooldownBaseMs", &PerFailureV(&c.cooldown_base_ms))?;
        o.serialize_field("maxBackoffExponent", &c.max_backoff_exponent)?;
        o.serialize_field("explorationFloor", &c.exploration_floor)?;
        o.serialize_field("leaseTtlMs", &c.lease_ttl_ms)?;
        o.serialize_field("windowSize", &c.window_size)?;
        o.serialize_field("halfOpenCauses", &causes)?;
        o.serialize_field("maxResources", &c.max_resources)?;
        o.serialize_field("maxCells", &c.max_cells)?;
        o.serialize_field("eventBufferSize", &c.event_buffer_size)?;
        o.serialize_field("minGapMs", &c.min_gap_ms)?;
        o.serialize_field("minGapMsByContext", &GapsV(c))?;
        o.serialize_field("maxCoolingPercent", &c.max_cooling_percent)?;
        o.end()
    }
}

/// A per-failure-type table, keys in canonical order (static names: no map of strings).
struct PerFailureV<'a, T>(&'a PerFailure<T>);

impl<T: Serialize> Serialize for PerFailureV<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut o = s.serialize_struct("PerFailure", FailureType::ALL.len())?;
        for t in FailureType::ALL {
            o.serialize_field(t.as_str(), &self.0[t])?;
        }
        o.end()
    }
}

/// `minGapMsByContext`: context names are data, so a map.
struct GapsV<'a>(&'a Config);

impl Serialize for GapsV<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (context, ms) in self.0.min_gap_ms_by_context.iter() {
            m.serialize_entry(context, &ms)?;
        }
        m.end()
    }
}
