//! The WebAssembly facade: `RawPool`, the engine's `Pool` as JavaScript sees it. It converts
//! arguments and answers, and it is shaped for a cheap hot path: every call takes the host
//! clock's reading as its first argument and passes it straight to the engine's `Pool` (the JS
//! side reads `now()`; the only call back into JS is a host `random` function, once per draw,
//! when one was given instead of a seed). `acquire`, `report`, `renew` and `release` name the
//! resource and the context by the engine's ids (`ids.rs`), which the JS side caches
//! (`handle`, `context`), so the hot path passes no strings; a name is resolved by its own
//! export (`context`, `resourceId`). Some calls have a second export for their options
//! (`registerWith`, `acquireIn`, `finishIn`, `nextChangeAtIn`). Bulk results are JSON text,
//! except drained events, which are packed (`packed.rs`): parsing their JSON cost the host a
//! quarter of an acquire + report + release cycle. Object shapes and argument types are the
//! package's JS wrapper's business (`pkg-scripts/lib/pool.js`), which is what users import. No
//! rule lives here.
//!
//! State of its own, beside the `Pool`: the last hot-path error (until `takeError`), the last
//! granted lease's numbers (`leaseFields`), the last drained events and their string table
//! (until read), and a table numbering the group names leases have carried (`group_ids`, at
//! most `MAX_GROUP_IDS`). A granted lease's handle is found again by its kind and value
//! (`keep`): the engine's `Lease` does not carry its resource's id.
//!
//! Codes: kind 0 PROXY, 1 ACCOUNT, 2 SESSION; outcome 0 success, 1..=5 the failure types in
//! SPEC order (BLOCKED, TLS_HANDSHAKE, CONNECTION_RESET, TIMEOUT, SLOW); a latency or a block
//! duration of NaN means "none"; `nextChangeAt` returns -1 for null. A `groups` list (SPEC §3,
//! groups) crosses as its names run together in one string and each name's length in UTF-16
//! code units (what JavaScript's `length` counts), `NULL_GROUP` for `null`; a lease's group as
//! its number in `group_ids`, which the JS side caches the name of (`leaseFields`; -1 once the
//! table is full: the JS side then asks `resourceGroup`). A resource handle is the engine's
//! `ResourceId` as one number (`ids.rs`: its low 32 bits are the registry slot plus one, so
//! the JS side can keep values in a dense array): it names the resource until it is
//! deregistered, and calls by it are `UNKNOWN_RESOURCE` after that; 0 means "no lease".

use std::rc::Rc;

use js_sys::{Float64Array, Function};
use rustc_hash::FxHashMap;
use wasm_bindgen::prelude::*;

use super::host::{draws, js_error, to_js};
use super::packed::pack_events_into;
use super::views_json;
use super::views_value::{ConfigV, StatsV};
use crate::check;
use crate::config::{Config, ConfigPatch};
use crate::error::{Error, invalid_argument};
use crate::ids::{ContextId, ResourceId};
use crate::pool::{BlockSpec, Filter, Floor, Lease, Next, Pool, Registration};
use crate::types::{FailureType, Kind, Outcome, ViewState};

type JsResult<T> = Result<T, JsValue>;

/// Group names numbered for leases, at most; beyond that, a lease's group is read by name.
const MAX_GROUP_IDS: usize = 4096;
/// The length that stands for `null` in a `groups` list.
const NULL_GROUP: u32 = u32::MAX;

fn kind(code: u8) -> Result<Kind, Error> {
    Kind::ALL.get(usize::from(code)).copied().ok_or_else(|| invalid_argument("unknown kind"))
}

fn outcome(code: u8, latency: f64) -> Result<Outcome, Error> {
    let latency_ms = (!latency.is_nan()).then_some(latency);
    match code {
        0 => Ok(Outcome::Success { latency_ms }),
        c => FailureType::ALL
            .get(usize::from(c) - 1)
            .map(|&failure| Outcome::Failure { failure, latency_ms })
            .ok_or_else(|| invalid_argument("unknown failure type")),
    }
}

fn patch(config: Option<String>) -> Result<Option<ConfigPatch>, Error> {
    config.as_deref().map(ConfigPatch::from_json).transpose()
}

/// A `groups` list from its names run together and their UTF-16 lengths (`NULL_GROUP`: null).
fn groups<'a>(mut names: &'a str, lens: &[u32]) -> Vec<Option<&'a str>> {
    let mut cut = |units: u32| {
        let mut left = units as usize;
        let end = names.char_indices().find_map(|(i, c)| {
            let here = left == 0;
            left = left.saturating_sub(c.len_utf16());
            here.then_some(i)
        });
        let (name, rest) = names.split_at(end.unwrap_or(names.len()));
        names = rest;
        name
    };
    lens.iter().map(|&n| (n != NULL_GROUP).then(|| cut(n))).collect()
}

/// A resource id from the number `ResourceId::to_f64` gave (any other: `UNKNOWN_RESOURCE`).
fn resource_id(n: f64) -> Result<ResourceId, Error> {
    ResourceId::from_f64(n).ok_or_else(|| {
        Error::UnknownResource(format!("resource id {} names no resource", crate::json::float_text(n)))
    })
}

/// A resource id, or 0 for "not registered any more" (`None`): the JS side resolved the
/// lease's value and found no resource; the call still reads the clock.
fn optional_resource_id(n: f64) -> Result<Option<ResourceId>, Error> {
    if n == 0.0 { Ok(None) } else { resource_id(n).map(Some) }
}

/// The dashboard's filter from `resources`' arguments: `state` a view state name, `by_group`
/// filtering by `group` (`None`: the resources with no group).
fn filter_of(
    context: Option<String>,
    state: Option<String>,
    by_group: bool,
    group: Option<String>,
) -> JsResult<Filter> {
    let state = match state.as_deref() {
        None => None,
        Some(s) => Some(ViewState::parse(s).ok_or_else(|| js_error(invalid_argument("unknown state")))?),
    };
    Ok(Filter { context, state, group: by_group.then_some(group) })
}

/// A context id from the number `ContextId::to_f64` gave (any other: `INVALID_ARGUMENT`).
fn context_id(n: f64) -> Result<ContextId, Error> {
    ContextId::from_f64(n).ok_or_else(|| invalid_argument("unknown context id"))
}

fn token_of(token: f64) -> Result<u64, Error> {
    check::int_in("token", token, 1, check::MAX_SAFE).map_err(invalid_argument)
}

#[wasm_bindgen]
pub struct RawPool {
    pool: Pool,
    /// The error of the last hot-path call that failed, until `takeError` takes it.
    failed: Option<JsValue>,
    /// The string table of the last drained events, until read.
    drained: String,
    /// The numbers of the last drained events (`drainEvents` hands out a view of them).
    numbers: Vec<f64>,
    /// The last granted or renewed lease's kind code, token, leasedAt, expiresAt and group
    /// number (the call's answer, not state: read right after it), at a fixed address (`leaseFields` hands out a view of them).
    fields: Box<[f64; 5]>,
    /// Group names a lease has carried, numbered from 1 in order of first sight (0: no group).
    group_ids: FxHashMap<Rc<str>, u32>,
}

impl RawPool {
    fn wrap(pool: Pool) -> RawPool {
        RawPool {
            pool,
            failed: None,
            drained: String::new(),
            numbers: Vec::new(),
            fields: Box::new([0.0; 5]),
            group_ids: FxHashMap::default(),
        }
    }

    /// Puts a granted lease's numbers where `leaseFields` shows them; returns its handle (0
    /// for none). The rest (value, group name) the JS side asks for by handle, once.
    fn keep(&mut self, lease: Option<Lease>) -> f64 {
        let Some(lease) = lease else {
            return 0.0;
        };
        // The lease's resource is registered: it was just granted or renewed.
        let handle = self.pool.resource_id(lease.kind, &lease.value).map_or(0.0, ResourceId::to_f64);
        let group = match &lease.group {
            None => 0.0,
            Some(g) => self.group_number(g),
        };
        *self.fields = [
            f64::from(lease.kind as u8),
            lease.token as f64,
            lease.leased_at as f64,
            lease.expires_at as f64,
            group,
        ];
        handle
    }

    /// A hot-path call's answer as one number: `acquire`, `report`, `renew` and `release`
    /// return no `Result` (wasm-bindgen hands a `Result` back as a fresh JavaScript array per
    /// call); a failure answers NaN and leaves its error for `takeError`.
    fn answer(&mut self, answer: Result<f64, Error>) -> f64 {
        answer.unwrap_or_else(|e| self.failed(e))
    }

    #[cold]
    #[inline(never)]
    fn failed(&mut self, e: Error) -> f64 {
        self.failed = Some(js_error(e));
        f64::NAN
    }

    /// The number of a lease's group name (never reused for another name), or -1 once the
    /// table is full: the JS side then reads the name (`resourceGroup`).
    #[inline(never)]
    fn group_number(&mut self, g: &Rc<str>) -> f64 {
        if let Some(&id) = self.group_ids.get(g) {
            return f64::from(id);
        }
        if self.group_ids.len() >= MAX_GROUP_IDS {
            return -1.0;
        }
        let id = self.group_ids.len() as u32 + 1;
        self.group_ids.insert(Rc::clone(g), id);
        f64::from(id)
    }
}

#[wasm_bindgen]
impl RawPool {
    /// `config`: partial config as JSON text; at most one of `random` and `seed` (neither: a
    /// seed from the platform, `host.rs`).
    #[wasm_bindgen(constructor)]
    pub fn new(config: Option<String>, rand: Option<Function>, seed: Option<f64>) -> JsResult<RawPool> {
        let build = || -> Result<RawPool, Error> {
            let cfg = Config::from_patch(&patch(config)?.unwrap_or_default())?;
            Ok(RawPool::wrap(Pool::new(cfg, draws(rand, seed)?)?))
        };
        build().map_err(js_error)
    }

    /// Restores a snapshot; `config` overrides fields of the snapshot's config; the counters
    /// are raised to at least the given floor (each optional).
    #[allow(clippy::too_many_arguments)]
    pub fn restore(
        snapshot: &str,
        config: Option<String>,
        rand: Option<Function>,
        seed: Option<f64>,
        min_revision: Option<f64>,
        min_fencing: Option<f64>,
        min_next_seq: Option<f64>,
    ) -> JsResult<RawPool> {
        let build = || -> Result<RawPool, Error> {
            let overrides = patch(config)?;
            let floor = Floor::from_host(min_revision, min_fencing, min_next_seq)?;
            let pool = Pool::restore_above(snapshot, overrides.as_ref(), &floor, draws(rand, seed)?)?;
            Ok(RawPool::wrap(pool))
        };
        build().map_err(js_error)
    }

    /// A value as events and errors show it, credentials masked (`redact.rs`).
    #[wasm_bindgen(js_name = maskValue)]
    pub fn mask_value(kind_code: u8, value: &str) -> JsResult<String> {
        let k = kind(kind_code).map_err(js_error)?;
        Ok(crate::redact::redact(k, value).into_owned())
    }

    /// The engine's id of a context name (`Pool::context_id`) as one number, checked once,
    /// here; the JS side caches it and the hot path passes it. Negative (the id's number,
    /// negated) when this call made the engine forget unused names: the JS side then forgets
    /// its cached ids, which may name nothing now.
    pub fn context(&mut self, name: &str) -> JsResult<f64> {
        let got = self.pool.context_id(name).map_err(js_error)?;
        let n = got.id.to_f64();
        Ok(if got.forgot { -n } else { n })
    }

    /// The new resource's handle, 0 when it was registered already: the JS side keeps the
    /// value it holds under that handle, so a lease never brings the string back across.
    pub fn register(&mut self, now: f64, kind_code: u8, value: &str) -> JsResult<f64> {
        let k = kind(kind_code).map_err(js_error)?;
        if !self.pool.register(now, k, value).map_err(js_error)? {
            return Ok(0.0);
        }
        Ok(self.pool.resource_id(k, value).map_or(0.0, ResourceId::to_f64))
    }

    /// `register` with options (SPEC §3, groups and capacity): `has_group` says whether the
    /// `group` key was given (`group` `None` then: `null`, no group); `max_leases` NaN when
    /// not given. Returns as `register` does.
    #[wasm_bindgen(js_name = registerWith)]
    pub fn register_with(
        &mut self,
        now: f64,
        kind_code: u8,
        value: &str,
        has_group: bool,
        group: Option<String>,
        max_leases: f64,
    ) -> JsResult<f64> {
        let k = kind(kind_code).map_err(js_error)?;
        let max_leases = if max_leases.is_nan() {
            None
        } else {
            let m = check::int_in("maxLeases", max_leases, 1, check::MAX_LEASES.into());
            Some(m.map_err(|e| js_error(invalid_argument(e)))? as u32)
        };
        let options = Registration { group: has_group.then_some(group.as_deref()), max_leases };
        if !self.pool.register_with(now, k, value, options).map_err(js_error)? {
            return Ok(0.0);
        }
        Ok(self.pool.resource_id(k, value).map_or(0.0, ResourceId::to_f64))
    }

    /// Removing a resource ends its id (`ids.rs`): calls by that id are `UNKNOWN_RESOURCE`
    /// from then on, even once its slot holds another resource.
    pub fn deregister(&mut self, now: f64, kind_code: u8, value: &str) -> JsResult<bool> {
        let k = kind(kind_code).map_err(js_error)?;
        self.pool.deregister(now, k, value).map_err(js_error)
    }

    /// Returns the lease's handle, 0 when nothing was granted. `quiet`: no
    /// `ACQUISITION_REJECTED` then (`Pool::try_acquire`, for a waiting host's retries).
    pub fn acquire(&mut self, now: f64, context: f64, quiet: bool) -> f64 {
        let lease = context_id(context).and_then(|c| {
            if quiet { self.pool.try_acquire_by_id(now, c) } else { self.pool.acquire_by_id(now, c) }
        });
        let answer = lease.map(|l| self.keep(l));
        self.answer(answer)
    }

    /// `acquire` with a `groups` list (see the header for `names` and `lens`).
    #[wasm_bindgen(js_name = acquireIn)]
    pub fn acquire_in(
        &mut self,
        now: f64,
        context: &str,
        names: &str,
        lens: &[u32],
        quiet: bool,
    ) -> JsResult<f64> {
        let groups = groups(names, lens);
        let lease = if quiet {
            self.pool.try_acquire(now, context, Some(&groups))
        } else {
            self.pool.acquire_in(now, context, &groups)
        };
        Ok(self.keep(lease.map_err(js_error)?))
    }

    /// `finish` (SPEC §3, finishing a step) of the lease `(handle, context, token)` (`handle`
    /// 0: its resource is not registered any more) with the outcome `(code, latency)`; `next`
    /// -1 for no next lease, 0 for one in the same context, else the context id to lease in,
    /// `quiet` as in `acquire`. Answers the next lease's handle (0: none), NaN on an error.
    #[allow(clippy::too_many_arguments)]
    pub fn finish(
        &mut self,
        now: f64,
        handle: f64,
        context: f64,
        token: f64,
        code: u8,
        latency: f64,
        next: f64,
        quiet: bool,
    ) -> f64 {
        let mut call = || -> Result<Option<Lease>, Error> {
            let id = optional_resource_id(handle)?;
            let (context, token, o) = (context_id(context)?, token_of(token)?, outcome(code, latency)?);
            let name =
                if next > 0.0 { Some(Rc::clone(self.pool.context_name(context_id(next)?)?)) } else { None };
            let n = Next { context: name.as_deref(), groups: None, quiet };
            self.pool.finish_by_id(now, id, context, token, o, (next >= 0.0).then_some(&n))
        };
        let answer = call().map(|l| self.keep(l));
        self.answer(answer)
    }

    /// `finish` with a next lease from a `groups` list (see the header for `names` and
    /// `lens`), in `next_context` (`None`: the lease's).
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = finishIn)]
    pub fn finish_in(
        &mut self,
        now: f64,
        handle: f64,
        context: f64,
        token: f64,
        code: u8,
        latency: f64,
        next_context: Option<String>,
        names: &str,
        lens: &[u32],
        quiet: bool,
    ) -> JsResult<f64> {
        let mut call = || -> Result<Option<Lease>, Error> {
            let id = optional_resource_id(handle)?;
            let (context, token, o) = (context_id(context)?, token_of(token)?, outcome(code, latency)?);
            let groups = groups(names, lens);
            let n = Next { context: next_context.as_deref(), groups: Some(&groups), quiet };
            self.pool.finish_by_id(now, id, context, token, o, Some(&n))
        };
        let lease = call().map_err(js_error)?;
        Ok(self.keep(lease))
    }

    #[wasm_bindgen(js_name = acquireResource)]
    pub fn acquire_resource(&mut self, now: f64, kind_code: u8, value: &str, context: &str) -> JsResult<f64> {
        let k = kind(kind_code).map_err(js_error)?;
        let lease = self.pool.acquire_resource(now, k, value, context).map_err(js_error)?;
        Ok(self.keep(lease))
    }

    /// The id of a registered resource (`Pool::resolve_resource`) for the calls by id; 0 when
    /// it is not registered and not `required`.
    #[wasm_bindgen(js_name = resourceId)]
    pub fn resource_id(&self, kind_code: u8, value: &str, required: bool) -> JsResult<f64> {
        let k = kind(kind_code).map_err(js_error)?;
        let id = self.pool.resolve_resource(k, value, required).map_err(js_error)?;
        Ok(id.map_or(0.0, ResourceId::to_f64))
    }

    /// `report` by resource id and context id: a stale id is `UNKNOWN_RESOURCE`.
    pub fn report(&mut self, now: f64, handle: f64, context: f64, code: u8, latency: f64) -> f64 {
        let mut call = || -> Result<f64, Error> {
            let o = outcome(code, latency)?;
            self.pool.report_by_id(now, resource_id(handle)?, context_id(context)?, o).map(|()| 0.0)
        };
        let answer = call();
        self.answer(answer)
    }

    /// `renew` by resource id and context id: a stale id is `UNKNOWN_RESOURCE`. True when
    /// renewed (read the new expiry with `leaseFields`).
    pub fn renew(&mut self, now: f64, handle: f64, context: f64, token: f64) -> f64 {
        let mut call = || -> Result<Option<Lease>, Error> {
            let (id, token) = (optional_resource_id(handle)?, token_of(token)?);
            self.pool.renew_by_id(now, id, context_id(context)?, token)
        };
        let answer = call().map(|renewed| if self.keep(renewed) != 0.0 { 1.0 } else { 0.0 });
        self.answer(answer)
    }

    /// `release` by resource id and context id: a stale id is `UNKNOWN_RESOURCE`.
    pub fn release(&mut self, now: f64, handle: f64, context: f64, token: f64) -> f64 {
        let mut call = || -> Result<bool, Error> {
            let (id, token) = (optional_resource_id(handle)?, token_of(token)?);
            self.pool.release_by_id(now, id, context_id(context)?, token)
        };
        let answer = call().map(f64::from);
        self.answer(answer)
    }

    /// The error of the last hot-path call that answered NaN (once; `undefined` after).
    #[wasm_bindgen(js_name = takeError)]
    pub fn take_error(&mut self) -> JsValue {
        self.failed.take().unwrap_or(JsValue::UNDEFINED)
    }

    /// `seconds` NaN blocks permanently.
    pub fn block(&mut self, now: f64, kind_code: u8, value: &str, seconds: f64) -> JsResult<()> {
        let spec = if seconds.is_nan() { BlockSpec::Permanent } else { BlockSpec::Seconds(seconds) };
        let k = kind(kind_code).map_err(js_error)?;
        self.pool.block(now, k, value, spec).map_err(js_error)
    }

    pub fn unblock(&mut self, now: f64, kind_code: u8, value: &str) -> JsResult<bool> {
        let k = kind(kind_code).map_err(js_error)?;
        self.pool.unblock(now, k, value).map_err(js_error)
    }

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
        let filter = filter_of(context, state, by_group, group)?;
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
        let filter = filter_of(context, state, by_group, group)?;
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

    /// The pool's counts as an object (a structured value: faster than JSON text here).
    pub fn stats(&mut self, now: f64) -> JsResult<JsValue> {
        let s = self.pool.stats(now).map_err(js_error)?;
        Ok(to_js(&StatsV(&s))?)
    }

    /// The config in force as an object, shaped as its canonical JSON (a structured value).
    pub fn config(&self) -> JsResult<JsValue> {
        Ok(to_js(&ConfigV(self.pool.config()))?)
    }

    /// `config`: a partial config as JSON text; true when the config in force changed.
    #[wasm_bindgen(js_name = setConfig)]
    pub fn set_config(&mut self, now: f64, config: &str) -> JsResult<bool> {
        let p = ConfigPatch::from_json(config).map_err(js_error)?;
        self.pool.set_config(now, &p).map_err(js_error)
    }

    /// A view of the last granted or renewed lease's `[kind code, token, leasedAt, expiresAt,
    /// group]` (group: 0 none, n > 0 a number that names one group name for the pool's life,
    /// -1 read `leaseGroup`),
    /// at a fixed address for the pool's life: the JS side keeps it and reads each lease's
    /// numbers with no call. The module's memory growing detaches it (its length reads 0):
    /// the JS side asks again then.
    #[wasm_bindgen(js_name = leaseFields)]
    pub fn lease_fields(&self) -> Float64Array {
        // SAFETY: `fields` is boxed and lives as long as the pool; the JS side reads the view
        // only while the pool lives and asks again once memory growth detached it.
        unsafe { Float64Array::view(&self.fields[..]) }
    }

    /// The value of the resource `handle` names (the JS side keeps it by handle, asking once).
    #[wasm_bindgen(js_name = resourceValue)]
    pub fn resource_value(&self, handle: f64) -> JsResult<String> {
        let id = resource_id(handle).map_err(js_error)?;
        self.pool.resource_of(id).map(|(_, v)| v.to_string()).map_err(js_error)
    }

    /// The group of the resource `handle` names, `undefined` for none: right after a call that
    /// granted or renewed a lease on it, the lease's group (the JS side caches it by number).
    #[wasm_bindgen(js_name = resourceGroup)]
    pub fn resource_group(&self, handle: f64) -> JsResult<Option<String>> {
        let id = resource_id(handle).map_err(js_error)?;
        self.pool.resource_group(id).map(|g| g.map(|g| g.to_string())).map_err(js_error)
    }
}
