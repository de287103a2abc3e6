//! The host side of the facade: a JavaScript function as the engine's random source, and
//! engine errors as JavaScript `Error` objects with a stable `code`. (The clock's reading is an
//! argument of every call; see `mod.rs`.)

use js_sys::{Function, Reflect};
use wasm_bindgen::JsValue;

use crate::error::Error;
use crate::random::RandomSource;

/// A JavaScript function returning draws in [0, 1).
pub struct JsRandom(pub Function);

impl RandomSource for JsRandom {
    fn next_f64(&mut self) -> f64 {
        self.0.call0(&JsValue::NULL).ok().and_then(|v| v.as_f64()).unwrap_or(f64::NAN)
    }
}

/// The pool's random source as the host chose it.
pub enum HostRandom {
    Js(JsRandom),
    Seeded(crate::random::SeededRandom),
}

impl RandomSource for HostRandom {
    fn next_f64(&mut self) -> f64 {
        match self {
            HostRandom::Js(r) => r.next_f64(),
            HostRandom::Seeded(r) => r.next_f64(),
        }
    }
}

/// An `Error` whose `message` is the detail and whose `code` is the stable error code.
pub fn js_error(e: Error) -> JsValue {
    let err = js_sys::Error::new(e.detail());
    // Setting a property on a fresh Error cannot fail.
    let _ = Reflect::set(&err, &JsValue::from_str("code"), &JsValue::from_str(e.code()));
    err.into()
}
