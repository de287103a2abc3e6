//! The WebAssembly facade: `RawPool`, the engine's `Pool` as JavaScript sees it. It only
//! converts, shaped for a cheap hot path: every call takes the host clock's reading (read once
//! by the JS side) first and passes it to the engine; the only call back into JS is a host
//! `random` function, once per draw, when one was given instead of a seed. A grant answers its
//! resource's id (`Lease::id`, `ids.rs`), its numbers in `leaseFields`; `reportLease`,
//! `renewLease`, `releaseLease` and `finishLease` take the id and token back (no strings), the
//! calls by name take the strings — or, on the hot path, find them in a buffer the JS side
//! wrote (`facade/text_args.rs`; the bodies both run, `facade/by_name.rs`). It keeps no table (ids come from the engine), only the last
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
//! names the resource until it is deregistered; 0 means "no lease". `reportLease` and
//! `finishLease` answer `BY_NAME` when that lease is not held any more (nothing done): the JS
//! side then makes the call by name, with the same clock reading (a report still counts after
//! its lease ended). `renewLease` and `releaseLease` answer 0 then: nothing to renew or release.
//!
//! This file holds the class, its constructors and the calls that change the pool (register,
//! the lease calls, block, config); the calls that read are `facade/reads.rs`'s, the decoding
//! of the codes and lists above `facade/args.rs`'s.

mod args;
mod by_name;
mod parts_restore;
mod reads;
mod text_args;

use js_sys::{Float64Array, Function};
use wasm_bindgen::prelude::*;

use super::host::{draws, js_error};
use crate::check;
use crate::config::{Config, ConfigPatch};
use crate::error::{Error, invalid_argument};
use crate::ids::ResourceId;
use crate::pool::{BlockSpec, Floor, Lease, Pool, Registration};
use args::{grant, groups, kind, named, next_of, outcome, patch, resource_id};
use by_name::TextArgs;

mod reinstate;

type JsResult<T> = Result<T, JsValue>;

/// What a call by a lease's id answers when that lease is not held any more.
const BY_NAME: f64 = -1.0;

#[wasm_bindgen]
pub struct RawPool {
    pool: Pool,
    /// The hot path's strings, written by the JS side (`by_name.rs`, `text_args.rs`).
    text: TextArgs,
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
    fn wrap(pool: Pool) -> RawPool {
        RawPool {
            pool,
            text: TextArgs::default(),
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
        let answer = by_name::acquire(&mut self.pool, now, context, quiet).map(|l| self.keep(l));
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
        let answer = by_name::report(&mut self.pool, now, kind_code, (value, context), code, latency);
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
        let renewed = by_name::renew(&mut self.pool, now, kind_code, (value, context), token);
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
        let answer = by_name::release(&mut self.pool, now, kind_code, (value, context), token);
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
