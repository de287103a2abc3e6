//! The WebAssembly facade: `RawPool`, the engine's `Pool` as JavaScript sees it. It only
//! converts, shaped for a cheap hot path: every call takes the host clock's reading (read once
//! by the JS side) first and passes it to the engine; the only call back into JS is a host
//! `random` function, once per draw, when one was given instead of a seed. A grant answers its
//! resource's id (`Lease::id`, `ids.rs`), its numbers in `leaseFields`; `reportLease`,
//! `renewLease`, `releaseLease` and `finishLease` take the id and token back (no strings), the
//! calls by name take the strings. It keeps no table (ids come from the engine), only the last
//! hot-path error (until `takeError`), the last grant's numbers (`leaseFields`) and the last
//! drained events with their string table (until read). Bulk results
//! are JSON text, except drained events, packed (`packed.rs`): parsing their JSON cost the host
//! a quarter of a cycle. Object shapes and argument types are the JS wrapper's business
//! (`pkg-scripts/lib/pool.js`), which users import. No rule lives here.
//!
//! Codes: kind 0 PROXY, 1 ACCOUNT, 2 SESSION; outcome 0 success, 1..=5 the failure types in
//! SPEC order (BLOCKED, TLS_HANDSHAKE, CONNECTION_RESET, TIMEOUT, SLOW); a latency `undefined`
//! means "none"; a block duration of NaN means permanent; `nextChangeAt` returns -1 for null.
//! A `groups` list (SPEC §3, groups) crosses as its names run together in one string and each
//! name's length in UTF-16 code units (what JavaScript's `length` counts), `NULL_GROUP` for
//! `null`. A resource handle is the engine's `ResourceId` as one number (`ids.rs`: its low 32
//! bits are the registry slot plus one, so the JS side can keep values in a dense array): it
//! names the resource until it is deregistered; 0 means "no lease". The calls by a lease's id
//! answer `BY_NAME` when that lease is not held any more (nothing done): the JS side then
//! makes the call by name, with the same clock reading.

use std::rc::Rc;

use js_sys::{Float64Array, Function};
use wasm_bindgen::prelude::*;

use super::host::{draws, js_error, to_js};
use super::packed::pack_events_into;
use super::views_json;
use super::views_value::{ConfigV, StatsV};
use crate::check;
use crate::config::{Config, ConfigPatch};
use crate::error::{Error, invalid_argument};
use crate::ids::ResourceId;
use crate::pool::{BlockSpec, Filter, Floor, Lease, Next, Pool, Registration};
use crate::types::{FailureType, Kind, Outcome, ViewState};

type JsResult<T> = Result<T, JsValue>;

/// What a call by a lease's id answers when that lease is not held any more.
const BY_NAME: f64 = -1.0;
/// The length that stands for `null` in a `groups` list.
const NULL_GROUP: u32 = u32::MAX;

fn kind(code: u8) -> Result<Kind, Error> {
    Kind::ALL.get(usize::from(code)).copied().ok_or_else(|| invalid_argument("unknown kind"))
}

fn outcome(code: u8, latency_ms: Option<f64>) -> Result<Outcome, Error> {
    match code {
        0 => Ok(Outcome::Success { latency_ms }),
        c => FailureType::ALL
            .get(usize::from(c) - 1)
            .map(|&failure| Outcome::Failure { failure, latency_ms })
            .ok_or_else(|| invalid_argument("unknown failure type")),
    }
}

pub(super) fn patch(config: Option<String>) -> Result<Option<ConfigPatch>, Error> {
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

fn token_of(token: f64) -> Result<u64, Error> {
    check::int_in("token", token, 1, check::MAX_SAFE).map_err(invalid_argument)
}

/// The lease a grant gave, as its resource's id and its token.
fn grant(handle: f64, token: f64) -> Result<(ResourceId, u64), Error> {
    Ok((resource_id(handle)?, token_of(token)?))
}

/// The lease a call by name names (`Lease::id` `None`: the engine finds it by its strings).
fn named(kind_code: u8, value: &str, context: &str, token: f64) -> Result<Lease, Error> {
    Ok(Lease {
        id: None,
        kind: kind(kind_code)?,
        value: Rc::from(value),
        group: None,
        context: Rc::from(context),
        token: token_of(token)?,
        leased_at: 0,
        expires_at: 0,
    })
}

/// `finish`'s next step: none unless `next`; `context` `None` for the lease's.
fn next_of<'a>(
    next: bool,
    context: Option<&'a str>,
    groups: Option<&'a [Option<&'a str>]>,
    quiet: bool,
) -> Option<Next<'a>> {
    next.then_some(Next { context, groups, quiet })
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
    /// The last granted or renewed lease's kind code, token, leasedAt, expiresAt and whether it
    /// has a group (the call's answer, not state: read right after it), at a fixed address
    /// (`leaseFields` hands out a view of them).
    fields: Box<[f64; 5]>,
}

impl RawPool {
    pub(super) fn wrap(pool: Pool) -> RawPool {
        RawPool {
            pool,
            failed: None,
            drained: String::new(),
            numbers: Vec::new(),
            fields: Box::new([0.0; 5]),
        }
    }

    /// Puts a granted lease's numbers where `leaseFields` shows them; returns its handle, the
    /// id the grant gave (0 for no lease). The rest (value, group name) the JS side asks for
    /// by handle.
    fn keep(&mut self, lease: Option<Lease>) -> f64 {
        let Some(lease) = lease else {
            return 0.0;
        };
        *self.fields = [
            f64::from(lease.kind as u8),
            lease.token as f64,
            lease.leased_at as f64,
            lease.expires_at as f64,
            f64::from(u8::from(lease.group.is_some())),
        ];
        lease.id.map_or(0.0, ResourceId::to_f64)
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
    pub fn acquire(&mut self, now: f64, context: &str, quiet: bool) -> f64 {
        let lease =
            if quiet { self.pool.try_acquire(now, context, None) } else { self.pool.acquire(now, context) };
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

    /// `finish` (SPEC §3, finishing a step) of the lease `(handle, token)` a grant gave, with
    /// the outcome `(code, latency)`; with `next`, a next lease in `next_context` (`None`: the
    /// lease's), from the `groups` list `names` / `lens` when given, `quiet` as in `acquire`.
    /// Answers the next lease's handle (0: none), `BY_NAME`, or NaN on an error.
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = finishLease)]
    pub fn finish_lease(
        &mut self,
        now: f64,
        handle: f64,
        token: f64,
        code: u8,
        latency: Option<f64>,
        next: bool,
        next_context: Option<String>,
        names: Option<String>,
        lens: Option<Box<[u32]>>,
        quiet: bool,
    ) -> f64 {
        let mut call = || -> Result<f64, Error> {
            let ((id, token), o) = (grant(handle, token)?, outcome(code, latency)?);
            let groups = names.as_deref().map(|n| groups(n, lens.as_deref().unwrap_or_default()));
            let n = next_of(next, next_context.as_deref(), groups.as_deref(), quiet);
            let got = self.pool.finish_lease(now, id, token, o, n.as_ref())?;
            Ok(got.map_or(BY_NAME, |l| self.keep(l)))
        };
        let answer = call();
        self.answer(answer)
    }

    /// `finish` of the lease named by its strings and token; as `finishLease` (no `BY_NAME`).
    #[allow(clippy::too_many_arguments)]
    pub fn finish(
        &mut self,
        now: f64,
        kind_code: u8,
        value: &str,
        context: &str,
        token: f64,
        code: u8,
        latency: Option<f64>,
        next: bool,
        next_context: Option<String>,
        names: Option<String>,
        lens: Option<Box<[u32]>>,
        quiet: bool,
    ) -> f64 {
        let mut call = || -> Result<Option<Lease>, Error> {
            let (lease, o) = (named(kind_code, value, context, token)?, outcome(code, latency)?);
            let groups = names.as_deref().map(|n| groups(n, lens.as_deref().unwrap_or_default()));
            let n = next_of(next, next_context.as_deref(), groups.as_deref(), quiet);
            self.pool.finish(now, &lease, o, n.as_ref())
        };
        let answer = call().map(|l| self.keep(l));
        self.answer(answer)
    }

    #[wasm_bindgen(js_name = acquireResource)]
    pub fn acquire_resource(&mut self, now: f64, kind_code: u8, value: &str, context: &str) -> JsResult<f64> {
        let k = kind(kind_code).map_err(js_error)?;
        let lease = self.pool.acquire_resource(now, k, value, context).map_err(js_error)?;
        Ok(self.keep(lease))
    }

    /// `report` on the resource and context of the lease `(handle, token)` a grant gave:
    /// answers 0, `BY_NAME`, or NaN on an error.
    #[wasm_bindgen(js_name = reportLease)]
    pub fn report_lease(&mut self, now: f64, handle: f64, token: f64, code: u8, latency: Option<f64>) -> f64 {
        let mut call = || -> Result<f64, Error> {
            let ((id, token), o) = (grant(handle, token)?, outcome(code, latency)?);
            Ok(if self.pool.report_lease(now, id, token, o)? { 0.0 } else { BY_NAME })
        };
        let answer = call();
        self.answer(answer)
    }

    /// `report` by name: answers 0, or NaN on an error.
    pub fn report(
        &mut self,
        now: f64,
        kind_code: u8,
        value: &str,
        context: &str,
        code: u8,
        latency: Option<f64>,
    ) -> f64 {
        let answer = kind(kind_code)
            .and_then(|k| Ok((k, outcome(code, latency)?)))
            .and_then(|(k, o)| self.pool.report(now, k, value, context, o))
            .map(|()| 0.0);
        self.answer(answer)
    }

    /// `renew` of the lease `(handle, token)` a grant gave: its resource's handle when renewed
    /// (the new expiry in `leaseFields`), 0 when not held (also once it was deregistered).
    #[wasm_bindgen(js_name = renewLease)]
    pub fn renew_lease(&mut self, now: f64, handle: f64, token: f64) -> f64 {
        let renewed = grant(handle, token).and_then(|(id, token)| self.pool.renew_lease(now, id, token));
        let answer = renewed.map(|l| self.keep(l));
        self.answer(answer)
    }

    /// `renew` of the lease named by its strings and token; as `renewLease`.
    pub fn renew(&mut self, now: f64, kind_code: u8, value: &str, context: &str, token: f64) -> f64 {
        let renewed = named(kind_code, value, context, token).and_then(|l| self.pool.renew(now, &l));
        let answer = renewed.map(|l| self.keep(l));
        self.answer(answer)
    }

    /// `release` of the lease `(handle, token)` a grant gave: 1 when released, 0 when not
    /// held (also once its resource was deregistered).
    #[wasm_bindgen(js_name = releaseLease)]
    pub fn release_lease(&mut self, now: f64, handle: f64, token: f64) -> f64 {
        let released = grant(handle, token).and_then(|(id, token)| self.pool.release_lease(now, id, token));
        let answer = released.map(f64::from);
        self.answer(answer)
    }

    /// `release` of the lease named by its strings and token; as `releaseLease`.
    pub fn release(&mut self, now: f64, kind_code: u8, value: &str, context: &str, token: f64) -> f64 {
        let released = named(kind_code, value, context, token).and_then(|l| self.pool.release(now, &l));
        let answer = released.map(f64::from);
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
    /// grouped]` (grouped: 1 when the lease has a group, which `resourceGroup` reads), at a
    /// fixed address for the pool's life: the JS side keeps it and reads each lease's
    /// numbers with no call. The module's memory growing detaches it (its length reads 0):
    /// the JS side asks again then.
    #[wasm_bindgen(js_name = leaseFields)]
    pub fn lease_fields(&self) -> Float64Array {
        // SAFETY: `fields` is boxed and lives as long as the pool; the JS side reads the view
        // only while the pool lives and asks again once memory growth detached it.
        unsafe { Float64Array::view(&self.fields[..]) }
    }

    /// The value of the resource `handle` names (the JS side keeps it by handle).
    #[wasm_bindgen(js_name = resourceValue)]
    pub fn resource_value(&self, handle: f64) -> JsResult<String> {
        let id = resource_id(handle).map_err(js_error)?;
        self.pool.resource_of(id).map(|(_, v)| v.to_string()).map_err(js_error)
    }

    /// The group of the resource `handle` names, `undefined` for none: right after a call that
    /// granted or renewed a lease on it, the lease's group.
    #[wasm_bindgen(js_name = resourceGroup)]
    pub fn resource_group(&self, handle: f64) -> JsResult<Option<String>> {
        let id = resource_id(handle).map_err(js_error)?;
        self.pool.resource_group(id).map(|g| g.map(|g| g.to_string())).map_err(js_error)
    }
}
