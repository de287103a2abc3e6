//! `RawPool`'s calls that read (the snapshot and its parts, drained events, the dashboard, one
//! resource, probe-due cells, `nextChangeAt`, the counts, the config), converted: bulk answers
//! as JSON text (`views_json.rs`), drained events packed (`packed.rs`), the counts and the
//! config as structured values (`views_value.rs`). The class itself is `facade.rs`'s.

use js_sys::Float64Array;
use wasm_bindgen::prelude::*;

use super::args::{filter_of, groups, kind};
use super::{JsResult, RawPool};
use crate::wasm::host::{js_error, to_js};
use crate::wasm::packed::pack_events_into;
use crate::wasm::views_json;
use crate::wasm::views_value::{ConfigV, StatsV};

#[wasm_bindgen]
impl RawPool {
    pub fn snapshot(&mut self, now: f64) -> JsResult<String> {
        self.pool.snapshot(now).map_err(js_error)
    }

    /// The snapshot in parts (`snapshot/write.rs`): with `value` undefined its head; else that
    /// resource's three lines, or undefined when it is not registered.
    #[wasm_bindgen(js_name = snapshotPart)]
    pub fn snapshot_part(
        &mut self,
        now: f64,
        kind_code: u8,
        value: Option<String>,
    ) -> JsResult<Option<String>> {
        let named = match value.as_deref() {
            None => None,
            Some(v) => Some((kind(kind_code).map_err(js_error)?, v)),
        };
        self.pool.snapshot_part(now, named).map_err(js_error)
    }

    /// Events since the last drain, packed (`packed.rs`): the numbers, as a view into the
    /// module's memory (no copy), valid only until the next call into the module (which may
    /// grow the memory or drain again): the JS side reads them at once or copies them.
    /// `drainedStrings` then gives their string table.
    #[wasm_bindgen(js_name = drainEvents)]
    pub fn drain_events(&mut self, now: f64) -> JsResult<Float64Array> {
        let events = self.pool.drain_events(now).map_err(js_error)?;
        self.drained = pack_events_into(&mut self.numbers, &events);
        drop(events);
        // SAFETY: the view aliases `self.numbers`, which nothing changes before the JS side's
        // next call into the module; it allocates nothing (so the memory does not grow) while
        // the view is live.
        Ok(unsafe { Float64Array::view(&self.numbers) })
    }

    /// The string table of the last `drainEvents` (once).
    #[wasm_bindgen(js_name = drainedStrings)]
    pub fn drained_strings(&mut self) -> String {
        std::mem::take(&mut self.drained)
    }

    /// The dashboard as a JSON array; `state` is a view state name; `by_group` filters by
    /// `group` (`None`: the resources with no group).
    pub fn resources(
        &mut self,
        now: f64,
        context: Option<String>,
        state: Option<String>,
        by_group: bool,
        group: Option<String>,
    ) -> JsResult<String> {
        let filter = filter_of(context, state, by_group, group).map_err(js_error)?;
        self.pool.resources(now, &filter).map(|v| views_json::resources(&v)).map_err(js_error)
    }

    /// A page of the dashboard (`resources` from after the resource `after_kind_code` /
    /// `after_value`, when given, at most `limit`), as a JSON array.
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = resourcesPage)]
    pub fn resources_page(
        &mut self,
        now: f64,
        context: Option<String>,
        state: Option<String>,
        by_group: bool,
        group: Option<String>,
        after_kind_code: Option<u8>,
        after_value: Option<String>,
        limit: u32,
    ) -> JsResult<String> {
        let filter = filter_of(context, state, by_group, group).map_err(js_error)?;
        let after = match (after_kind_code, after_value.as_deref()) {
            (Some(code), Some(value)) => Some((kind(code).map_err(js_error)?, value)),
            _ => None,
        };
        self.pool
            .resources_page(now, &filter, after, limit as usize)
            .map(|v| views_json::resources(&v))
            .map_err(js_error)
    }

    /// One resource with each cell's window, as JSON.
    #[wasm_bindgen(js_name = resource)]
    pub fn resource_detail(&mut self, now: f64, kind_code: u8, value: &str) -> JsResult<String> {
        let k = kind(kind_code).map_err(js_error)?;
        self.pool.resource(now, k, value).map(|d| views_json::resource_detail(&d)).map_err(js_error)
    }

    #[wasm_bindgen(js_name = dueForRecoveryProbe)]
    pub fn due_for_recovery_probe(&mut self, now: f64) -> JsResult<String> {
        self.pool.due_for_recovery_probe(now).map(|v| views_json::probe_due(&v)).map_err(js_error)
    }

    /// Epoch milliseconds, or -1 for null.
    #[wasm_bindgen(js_name = nextChangeAt)]
    pub fn next_change_at(&mut self, now: f64, context: &str) -> JsResult<f64> {
        self.pool.next_change_at(now, context).map(|t| t.map_or(-1.0, |t| t as f64)).map_err(js_error)
    }

    /// `nextChangeAt` for a `groups` list (see the header for `names` and `lens`).
    #[wasm_bindgen(js_name = nextChangeAtIn)]
    pub fn next_change_at_in(&mut self, now: f64, context: &str, names: &str, lens: &[u32]) -> JsResult<f64> {
        let at = self.pool.next_change_at_in(now, context, &groups(names, lens)).map_err(js_error)?;
        Ok(at.map_or(-1.0, |t| t as f64))
    }

    /// Registered resources of each kind: PROXY, ACCOUNT, SESSION.
    #[wasm_bindgen(js_name = registeredByKind)]
    pub fn registered_by_kind(&self) -> Vec<u32> {
        self.pool.registered_by_kind().iter().map(|&n| n as u32).collect()
    }

    /// The pool's counts as an object (a structured value: faster than JSON text here).
    pub fn stats(&mut self, now: f64) -> JsResult<JsValue> {
        let s = self.pool.stats(now).map_err(js_error)?;
        Ok(to_js(&StatsV(&s))?)
    }

    /// The config in force as an object, shaped as its canonical JSON (a structured value).
    pub fn config(&self) -> JsResult<JsValue> {
        Ok(to_js(&ConfigV(self.pool.config()))?)
    }
}
