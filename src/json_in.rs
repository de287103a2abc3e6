//! What the engine's serde readers (the config in `config.rs`, the snapshot in
//! `pool/snapshot/input.rs`) share beyond serde's derives: documents that must be objects
//! ([`MapOnly`]), numbers read exactly that quote nothing of a refused value ([`Exact`]), and
//! fields that must be present when given ([`some`], [`nullable`]).
//!
//! Which fields a document holds is each reader's business; turning a serde_json error into a
//! message naming the field is `json_path.rs`'s.

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde_json::value::RawValue;

/// A deserializer that reads a struct only from a JSON object. serde's derived structs also
/// take an array of the fields' values in declaration order (`[2, 2, 5]` as a config); the
/// format has no such form, so a derived reader goes through this (`#[serde(remote = "Self")]`
/// and a `Deserialize` impl that wraps its deserializer).
pub struct MapOnly<D>(pub D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for MapOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// A finite number, the nearest `f64` to the decimal as written (serde_json's
/// `float_roundtrip`, on the value's own text: Rust's `str::parse` would bring a second exact
/// parser into the WebAssembly module). Any other value is refused
/// after it is read whole, naming only its type (snapshot numbers sit next to secrets):
/// `invalid type: string, expected a finite number`.
pub struct Exact(pub f64);

impl<'de> Deserialize<'de> for Exact {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Exact, D::Error> {
        let text = <&'de RawValue>::deserialize(d)?.get();
        let what = match text.as_bytes().first() {
            Some(b'-' | b'0'..=b'9') => match serde_json::from_str::<f64>(text) {
                Ok(v) if v.is_finite() => return Ok(Exact(v)),
                _ => "a number out of range",
            },
            Some(b'"') => "string",
            Some(b'{') => "map",
            Some(b'[') => "sequence",
            Some(b't' | b'f') => "boolean",
            _ => "null",
        };
        Err(de::Error::custom(format_args!("invalid type: {what}, expected a finite number")))
    }
}

/// An optional field read exactly (`Exact`); present means a number, `null` is refused.
pub fn some_exact<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Exact::deserialize(d).map(|e| Some(e.0))
}

/// A required field read exactly (`Exact`).
pub fn exact<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Exact::deserialize(d).map(|e| e.0)
}

/// An optional field that, when present, holds a value: `null` is refused (naming the field)
/// rather than taken for "absent", which would silently ignore a bad value.
pub fn some<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A field that must be present and may be `null` (serde alone takes a missing `Option` field
/// for `null`).
pub fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(d)
}
