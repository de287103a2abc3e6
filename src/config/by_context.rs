//! `minGapMsByContext`: a config map from context to a pacing gap, as read from JSON and as
//! validated into the config.
//!
//! Owns reading the JSON object (entries kept as read) and checking it: no key twice, at most
//! [`MAX_ENTRIES`] entries, each key a valid context, each value an integer in 0..=2^31 ms. A patch replaces the whole map: nothing here merges. What a gap means for a
//! cell (pacing) is the engine's business, not this file's.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};

use crate::check::{context_text, int_in};
use crate::json::string;
use crate::types::Millis;

/// The most entries `minGapMsByContext` may hold.
pub const MAX_ENTRIES: usize = 4096;

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
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ByContextPatch, A::Error> {
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

impl ByContextPatch {
    /// The patch that gives `map` back (to re-check a config built by hand).
    pub fn of(map: &BTreeMap<String, Millis>) -> ByContextPatch {
        ByContextPatch(map.iter().map(|(k, &v)| (k.clone(), v as f64)).collect())
    }

    /// The checked map, in canonical key order (UTF-8 bytes). `path` names the field in errors;
    /// a valid key is quoted as a JSON string (`minGapMsByContext["checkout-us"]`), an invalid
    /// one is not quoted at all.
    pub fn to_map(&self, path: &str, max_ms: u64) -> Result<BTreeMap<String, Millis>, String> {
        if self.0.len() > MAX_ENTRIES {
            return Err(format!("{path} must have at most {MAX_ENTRIES} entries (got {})", self.0.len()));
        }
        let mut out = BTreeMap::new();
        for (key, v) in &self.0 {
            context_text("a key", key).map_err(|e| format!("{path}: {e}"))?;
            let mut at = format!("{path}[");
            string(&mut at, key);
            at.push(']');
            let ms = int_in(&at, *v, 0, max_ms)?;
            if out.insert(key.clone(), ms).is_some() {
                return Err(format!("{at} repeats a context (keys must be distinct)"));
            }
        }
        Ok(out)
    }
}
