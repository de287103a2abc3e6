//! The host side of the facade: the pool's draws as the host chose them (a JavaScript
//! function, a seed, or neither: a seed from the platform's entropy), engine errors as
//! JavaScript `Error` objects with a stable `code`, and views as structured values (`to_js`).
//! (The clock's reading is an argument of every call; see `mod.rs`.)

use js_sys::{Function, Reflect};
use wasm_bindgen::JsValue;

use crate::check;
use crate::error::{Error, invalid_argument};
use crate::randomness::Randomness;

/// The pool's draws: a JS function returning draws in [0, 1) (used as they are; the pool
/// checks each one, and one that is not a number or throws is NaN, refused), a seed, or
/// neither — then a seed from `getrandom` (`crypto.getRandomValues` in wasm), read here, when
/// a pool is made: never at module scope, which Workers refuse.
pub fn draws(random: Option<Function>, seed: Option<f64>) -> Result<Randomness, Error> {
    match (random, seed) {
        (Some(_), Some(_)) => Err(invalid_argument("give either random or seed, not both")),
        (Some(f), None) => Ok(Randomness::host(move || {
            f.call0(&JsValue::NULL).ok().and_then(|v| v.as_f64()).unwrap_or(f64::NAN)
        })),
        (None, Some(s)) => {
            let seed = check::int_in("seed", s, 0, check::MAX_SAFE).map_err(invalid_argument)?;
            Ok(Randomness::seeded(seed))
        }
        (None, None) => Ok(Randomness::seeded(entropy_seed()?)),
    }
}

/// 64 bits from the platform's cryptographic random source.
fn entropy_seed() -> Result<u64, Error> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| {
        invalid_argument(format!(
            "neither random nor seed was given, and no seed could be read from crypto.getRandomValues ({e})"
        ))
    })?;
    Ok(u64::from_le_bytes(bytes))
}

/// An `Error` whose `message` is the detail and whose `code` is the stable error code.
pub fn js_error(e: Error) -> JsValue {
    let err = js_sys::Error::new(e.detail());
    // Setting a property on a fresh Error cannot fail.
    let _ = Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(e.code()));
    err.into()
}

/// A view as a structured JS value (serde-wasm-bindgen) with the JSON-compatible settings: maps
/// as plain objects, `None` as `null` — the object `JSON.parse` would give of its JSON.
pub fn to_js<T: serde::Serialize + ?Sized>(value: &T) -> Result<JsValue, serde_wasm_bindgen::Error> {
    value.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
}
