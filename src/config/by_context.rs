//! `minGapMsByContext`: a config map from context to a pacing gap, as read from JSON and as
//! validated into the config.
//!
//! Owns reading the JSON object (entries kept as read) and checking it: no key twice, at most
//! [`MAX_ENTRIES`] entries, each key a valid context, each value an integer in 0..=2^31 ms. A patch replaces the whole map: nothing here merges. What a gap means for a
//! cell (pacing) is the engine's business, not this file's.

use std::fmt;
use std::rc::Rc;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};

use crate::check::{context_text, int_in};
use crate::types::Millis;

/// The most entries `minGapMsByContext` may hold.
pub const MAX_ENTRIES: usize = 4096;

/// The checked map: context → gap, in canonical key order (UTF-8 bytes), each key once. A
/// shared sorted list rather than a `BTreeMap`: it holds at most 4096 entries, is looked up by
/// binary search, and brings no tree code into the WebAssembly module; shared, so a config is
/// cloned and dropped without a loop over its entries (each early return of a config check
/// drops one); `None` when empty, so a default config allocates nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextGaps(Option<Rc<[Entry]>>);

/// A context and its gap.
type Entry = (Box<str>, Millis);

impl ContextGaps {
    /// The gap for `context`, if it has an entry.
    pub fn get(&self, context: &str) -> Option<Millis> {
        let entries = self.entries();
        let i = entries.binary_search_by(|(k, _)| k.as_bytes().cmp(context.as_bytes())).ok()?;
        Some(entries[i].1)
    }

    fn entries(&self) -> &[Entry] {
        self.0.as_deref().unwrap_or_default()
    }

    /// The entries in canonical key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Millis)> {
        self.entries().iter().map(|(k, v)| (&**k, *v))
    }

    pub fn len(&self) -> usize {
        self.entries().len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

/// The map as read: its entries in document order, values not yet checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ByContextPatch(pub Vec<(String, f64)>);

/// Reads the JSON object, entries as they come (a repeated key is kept here and refused by
/// `to_map`, with the other checks).
impl<'de> Deserialize<'de> for ByContextPatch {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ByContextPatch, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = ByContextPatch;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object from context to milliseconds")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ByContextPatch, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    entries.push((key, map.next_value::<f64>()?));
                }
                Ok(ByContextPatch(entries))
            }
        }
        d.deserialize_map(Entries)
    }
}

impl ByContextPatch {
    /// The patch that gives `map` back (to re-check a config built by hand).
    pub fn of(map: &ContextGaps) -> ByContextPatch {
        ByContextPatch(map.iter().map(|(k, v)| (k.to_owned(), v as f64)).collect())
    }

    /// The checked map, in canonical key order (UTF-8 bytes). `prefix` + `name` names the field
    /// in errors, followed by the key once it is known to be a valid context
    /// (`minGapMsByContext.checkout-us must be …`); an invalid key is not quoted.
    pub fn to_map(&self, prefix: &str, name: &str, max_ms: u64) -> Result<ContextGaps, String> {
        if self.0.len() > MAX_ENTRIES {
            let n = self.0.len();
            return Err(format!("{prefix}{name} must have at most {MAX_ENTRIES} entries (got {n})"));
        }
        // Sorted by insertion: a written config is already in order, so each entry goes last.
        let mut out: Vec<Entry> = Vec::with_capacity(self.0.len());
        for (key, v) in &self.0 {
            context_text("a key", key).map_err(|e| format!("{prefix}{name}: {e}"))?;
            let ms = int_in("", *v, 0, max_ms).map_err(|e| format!("{prefix}{name}.{key}{e}"))?;
            match out.binary_search_by(|(k, _)| k.as_bytes().cmp(key.as_bytes())) {
                Ok(_) => {
                    return Err(format!("{prefix}{name}.{key} repeats a context (keys must be distinct)"));
                }
                Err(at) => out.insert(at, (key.as_str().into(), ms)),
            }
        }
        Ok(ContextGaps((!out.is_empty()).then(|| out.into())))
    }
}
