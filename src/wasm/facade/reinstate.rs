//! `reinstate` as JavaScript calls it (`pool.js`): a resource put back from its snapshot part
//! (`pool/reinstate.rs`), the Node host's undo of a deregistration it could not store.

use wasm_bindgen::prelude::*;

use super::super::host::js_error;
use super::RawPool;

#[wasm_bindgen]
impl RawPool {
    /// `true` when the resource `part` describes was put back, `false` when it is registered.
    pub fn reinstate(&mut self, now: f64, part: &str) -> Result<bool, JsValue> {
        self.pool.reinstate(now, part).map_err(js_error)
    }
}
