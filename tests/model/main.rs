//! Stateful model test: random sequences of every pool operation, run on the engine (twice, in
//! lockstep) and on the naive reference pool (`reference.rs`). After every step it asserts:
//! identical results, events and dashboard views against the reference; the engine's indexes
//! agree with a from-scratch recomputation; never two live leases on one resource; never a
//! lease on a blocklisted resource; never a lease inside a cooldown (half-open trials are
//! after it); a cell never both a candidate and probe-due; scores within [-100, 100]; tokens
//! strictly increasing; snapshot → restore → snapshot byte-identical; the twin engine's
//! snapshot byte-identical (same seed and calls ⇒ same bytes).
//!
//! Version 2: resources register into groups (and move between them), acquires and
//! `nextChangeAt` list groups, the config paces contexts and caps cooling (at creation and
//! through `setConfig`); the views' groups, `pacedUntil` and `held` are compared too.
//!
//! Version 3: registrations set and change `maxLeases` (out of range too), `finish` (by lease
//! and by id, with and without `next`, repeated, after a lapse, of a deregistered resource, of
//! a token never issued) and `try_acquire` join the operations; the views' `maxLeases` and live
//! leases and `stats().leased` are compared. At every grant it asserts: fewer live leases than
//! `maxLeases` before it (never more than `maxLeases` by a grant; lowering it ends none); no
//! other live lease in the context of a cell due for recovery (one trial or probe at a time);
//! tokens strictly increasing; never a blocked resource.

// Native only, as proptest is (Cargo.toml): property tests do not run in wasm32.
#![cfg(not(target_arch = "wasm32"))]

mod reference;

#[path = "../common/mod.rs"]
mod common;

use common::{ClockedPool, ManualClock};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use proptest::prelude::*;
use reference::{Key, RefBlock, RefEvent, RefGrant, RefNext, RefPool, key};
use repute::{
    BlockSpec, Config, ConfigPatch, Error, FailureType, Filter, Kind, Lease, Next, Outcome, PoolEvent,
    Registration,
};

const T0: u64 = 1_700_000_000_000;

#[derive(Debug, Clone)]
enum Op {
    Register(usize),
    /// Register with a group key: `None` null, `Some(i)` the world's group `i`.
    RegisterIn(usize, Option<usize>),
    /// Acquire listing groups: `None` null, `Some(i)` the world's group `i` (one past the last
    /// names a group no resource has).
    AcquireIn(usize, Vec<Option<usize>>),
    /// minGapMs, minGapMsByContext, maxCoolingPercent (indexes into `config_patch`'s tables).
    SetConfig(u8, u8, u8),
    Deregister(usize),
    Acquire(usize),
    AcquireResource(usize, usize),
    Report(usize, usize, Option<FailureType>, Option<u16>),
    Renew(usize),
    Release(usize),
    Block(usize, u32),
    BlockPermanent(usize),
    Unblock(usize),
    Advance(u64),
    AdvanceToNext(usize),
    ClockBack(u64),
    Restore,
    /// Register with `maxLeases` (0 and 1025 are out of range).
    RegisterMax(usize, u32),
    /// `try_acquire` in a context, with a group list or none.
    TryAcquire(usize, Option<Vec<Option<usize>>>),
    /// `finish` of grant `i` (one past the grants: a token never issued), with an outcome, a
    /// `next` or none, by lease or (`true`) by id.
    Finish(usize, Option<FailureType>, Option<NextOp>, bool),
}

/// `finish`'s `next`: a context index (default the lease's), a group list, quiet.
#[derive(Debug, Clone)]
struct NextOp {
    context: Option<usize>,
    groups: Option<Vec<Option<usize>>>,
    quiet: bool,
}

fn next_op(nc: usize) -> impl Strategy<Value = Option<NextOp>> {
    prop::option::weighted(
        0.7,
        (prop::option::of(0..nc), prop::option::weighted(0.3, group_list()), prop::bool::weighted(0.3))
            .prop_map(|(context, groups, quiet)| NextOp { context, groups, quiet }),
    )
}

/// The world of one sequence: which resources and contexts exist.
#[derive(Debug, Clone)]
struct World {
    resources: Vec<(Kind, String)>,
    contexts: Vec<String>,
    /// Group names resources register into; "zz" (never registered into) follows them.
    groups: Vec<String>,
}

fn groups() -> Vec<String> {
    vec!["dc".into(), "res".into(), "é".into()]
}

fn small_world() -> World {
    World {
        resources: vec![
            (Kind::Proxy, "a".into()),
            (Kind::Proxy, "B".into()),
            (Kind::Proxy, "é".into()),
            (Kind::Account, "a".into()),
            (Kind::Session, "z".into()),
            (Kind::Proxy, "http://u:pw@h:1".into()),
        ],
        contexts: vec!["checkout-us".into(), "search-eu".into(), "é-ctx".into()],
        groups: groups(),
    }
}

/// 60 resources whose canonical order interleaves reported and never-reported ones: the
/// reported third sorts first within each kind, so the tail of every context stays fresh.
fn sparse_world() -> World {
    let kinds = [Kind::Proxy, Kind::Account];
    let mut resources: Vec<(Kind, String)> = (0..20).map(|i| (kinds[i % 2], format!("a{i:02}"))).collect();
    resources.extend((0..40).map(|i| (kinds[i % 2], format!("m{i:02}"))));
    World { resources, contexts: (0..2).map(|i| format!("ctx-{i}")).collect(), groups: groups() }
}

fn large_world() -> World {
    let kinds = [Kind::Proxy, Kind::Account, Kind::Session];
    World {
        resources: (0..40).map(|i| (kinds[i % 3], format!("r{:02}", (i * 7) % 40))).collect(),
        contexts: (0..5).map(|i| format!("ctx-{i}")).collect(),
        groups: groups(),
    }
}

fn failure() -> impl Strategy<Value = Option<FailureType>> {
    prop_oneof![
        3 => Just(None),
        1 => prop::sample::select(FailureType::ALL.to_vec()).prop_map(Some),
    ]
}

/// Operations over `nr` resources and `nc` contexts; reports touch only the first `reported`
/// resources of the world (the rest stay fresh everywhere, so gaps and tails stay populated).
fn op(nr: usize, nc: usize, reported: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..nr).prop_map(Op::Register),
        1 => (0..nr).prop_map(Op::Deregister),
        6 => (0..nc).prop_map(Op::Acquire),
        2 => (0..nr, 0..nc).prop_map(|(r, c)| Op::AcquireResource(r, c)),
        8 => (0..reported, 0..nc, failure(), prop::option::of(0u16..2000))
            .prop_map(|(r, c, f, l)| Op::Report(r, c, f, l)),
        2 => (0..64usize).prop_map(Op::Renew),
        3 => (0..64usize).prop_map(Op::Release),
        1 => (0..nr, prop::sample::select(vec![1u32, 500, 1000, 1500, 30_000, 61_000]))
            .prop_map(|(r, ms)| Op::Block(r, ms)),
        1 => (0..nr).prop_map(Op::BlockPermanent),
        1 => (0..nr).prop_map(Op::Unblock),
        3 => prop::sample::select(vec![0u64, 1, 250, 999, 1000, 5000, 30_000, 120_000]).prop_map(Op::Advance),
        3 => (0..4usize).prop_map(Op::AdvanceToNext),
        1 => prop::sample::select(vec![1u64, 1000, 50_000]).prop_map(Op::ClockBack),
        1 => Just(Op::Restore),
        2 => (0..nr, prop::option::of(0..3usize)).prop_map(|(r, g)| Op::RegisterIn(r, g)),
        6 => (0..nc, group_list()).prop_map(|(c, g)| Op::AcquireIn(c, g)),
        1 => (0u8..3, 0u8..3, 0u8..4).prop_map(|(g, m, p)| Op::SetConfig(g, m, p)),
        2 => (0..nr, prop::sample::select(vec![1u32, 1, 2, 3, 5, 0, 1025])).prop_map(|(r, m)| Op::RegisterMax(r, m)),
        2 => (0..nc, prop::option::weighted(0.3, group_list())).prop_map(|(c, g)| Op::TryAcquire(c, g)),
        4 => (0..64usize, failure(), next_op(nc), any::<bool>()).prop_map(|(g, f, n, id)| Op::Finish(g, f, n, id)),
    ]
}

/// 1 to 4 distinct entries from null, the three groups and "zz", in any order.
fn group_list() -> impl Strategy<Value = Vec<Option<usize>>> {
    let all = vec![None, Some(0usize), Some(1), Some(2), Some(3)];
    prop::sample::subsequence(all, 1..=4).prop_shuffle()
}

/// A `setConfig` patch of the version 2 fields: pacing (the contexts named are those of every
/// world: `checkout-us` and `ctx-0`) and the cap.
fn config_patch(gap: u8, map: u8, cap: u8) -> String {
    let gap = [0, 500, 1500][gap as usize];
    let map =
        [r#"{}"#, r#"{"checkout-us":0,"ctx-0":2500}"#, r#"{"ctx-1":250,"search-eu":3000}"#][map as usize];
    let cap = [100, 50, 20, 1][cap as usize];
    format!(r#"{{"minGapMs":{gap},"minGapMsByContext":{map},"maxCoolingPercent":{cap}}}"#)
}

/// Small, integral configurations that reach every rule quickly (integral weights make the
/// engine's and the reference's picks identical, not just equal up to rounding).
/// `tight`: small capacity limits too (for the capacity rules); otherwise limits stay out of
/// the way so pools grow large enough to span many index blocks.
fn config(tight: bool) -> impl Strategy<Value = Config> {
    let (max_res, max_cells) =
        if tight { (vec![4u32, 8, 100], vec![5u32, 12, 1000]) } else { (vec![1000], vec![10_000]) };
    (
        1u32..=3,
        1u32..=3,
        prop::sample::select(vec![5.0, 40.0]),
        prop::sample::select(vec![1.0, 3.0]),
        0u32..=3,
        prop::sample::select(vec![1000u64, 2500]),
        1u32..=4,
        0u8..32,
        prop::sample::select(max_res),
        prop::sample::select(max_cells),
        prop::sample::select(vec![30.0, 70.0]),
        (prop::sample::select(vec![0u64, 0, 250, 1500]), prop::sample::select(vec![100u32, 50, 25, 1, 1])),
    )
        .prop_map(|(cool, recover, reward, floor, exp, ttl, window, causes, max_res, max_cells, blocked, v2)| {
            let (gap, cap) = v2;
            let names: Vec<String> = FailureType::ALL
                .iter()
                .enumerate()
                .filter(|(i, _)| causes & (1 << i) != 0)
                .map(|(_, t)| format!("\"{t}\""))
                .collect();
            let json = format!(
                r#"{{"coolAfter":{cool},"recoverAfter":{recover},"successReward":{reward},
                "explorationFloor":{floor},"maxBackoffExponent":{exp},"leaseTtlMs":{ttl},
                "windowSize":{window},"halfOpenCauses":[{}],"maxResources":{max_res},"maxCells":{max_cells},
                "penalties":{{"BLOCKED":{blocked}}},"minGapMs":{gap},"maxCoolingPercent":{cap},
                "cooldownBaseMs":{{"BLOCKED":4000,"TLS_HANDSHAKE":3000,"CONNECTION_RESET":2000,"TIMEOUT":1000,"SLOW":700}}}}"#,
                names.join(",")
            );
            Config::from_patch(&ConfigPatch::from_json(&json).unwrap()).unwrap()
        })
}

/// Draws shared by every engine incarnation of one run, consumed in order (cycling).
#[derive(Clone)]
struct Tape(Rc<RefCell<(Vec<f64>, usize)>>);

impl Tape {
    fn new(draws: Vec<f64>) -> Tape {
        Tape(Rc::new(RefCell::new((draws, 0))))
    }
    fn next(&self) -> f64 {
        let mut t = self.0.borrow_mut();
        let v = t.0[t.1 % t.0.len()];
        t.1 += 1;
        v
    }
    fn used(&self) -> usize {
        self.0.borrow().1
    }
    fn source(&self) -> repute::Randomness {
        let t = self.clone();
        repute::Randomness::host(move || t.next())
    }
}

struct Engine {
    pool: ClockedPool,
    clock: ManualClock,
    tape: Tape,
}

impl Engine {
    fn new(cfg: &Config, clock: &ManualClock, draws: &[f64]) -> Engine {
        let tape = Tape::new(draws.to_vec());
        Engine {
            pool: ClockedPool::new(cfg.clone(), clock.clone(), tape.source()).unwrap(),
            clock: clock.clone(),
            tape,
        }
    }

    fn restore(&mut self) {
        let snap = self.pool.snapshot().unwrap();
        self.pool = ClockedPool::restore(&snap, None, self.clock.clone(), self.tape.source()).unwrap();
    }
}

fn to_grant(l: &Lease) -> RefGrant {
    RefGrant {
        kind: l.kind,
        value: l.value.to_string(),
        group: l.group.as_ref().map(|g| g.to_string()),
        context: l.context.to_string(),
        token: l.token,
        leased_at: l.leased_at,
        expires_at: l.expires_at,
    }
}

fn to_lease(g: &RefGrant) -> Lease {
    Lease {
        id: None,
        kind: g.kind,
        value: Rc::from(g.value.as_str()),
        group: g.group.as_deref().map(Rc::from),
        context: Rc::from(g.context.as_str()),
        token: g.token,
        leased_at: g.leased_at,
        expires_at: g.expires_at,
    }
}

fn to_ref_event(e: &PoolEvent) -> RefEvent {
    RefEvent {
        seq: e.seq,
        ty: e.ty.as_str(),
        at: e.at,
        resource: e.resource.as_ref().map(|(k, v)| (*k, v.to_string())),
        context: e.context.as_ref().map(|c| c.to_string()),
        cause: e.cause,
        until: e.until,
        permanent: e.permanent,
        token: e.token,
        group: e.group.as_ref().map(|g| g.as_ref().map(|g| g.to_string())),
        max_leases: e.max_leases,
    }
}

/// What a call returned, in a comparable form.
#[derive(Debug, PartialEq)]
enum Res {
    Unit,
    Bool(bool),
    Grant(Option<RefGrant>),
    Err(&'static str),
}

fn code(r: Result<Res, Error>) -> Res {
    r.unwrap_or_else(|e| Res::Err(e.code()))
}

struct Run {
    world: World,
    cfg: Config,
    reading: u64,
    clock: ManualClock,
    a: Engine,
    b: Engine,
    reference: RefPool,
    ref_tape: Tape,
    grants: Vec<RefGrant>,
    /// Live leases per resource, `(token, context)`, as the grants, releases and expiries
    /// seen so far leave them.
    held: HashMap<Key, Vec<(u64, String)>>,
    max_token: u64,
    /// State checks so far (their parity orders the `nextChangeAt` questions).
    checks: usize,
}

impl Run {
    fn new(world: World, cfg: Config, draws: Vec<f64>) -> Run {
        let clock = ManualClock::new(T0 as f64);
        Run {
            a: Engine::new(&cfg, &clock, &draws),
            b: Engine::new(&cfg, &clock, &draws),
            reference: RefPool::new(cfg.clone()),
            ref_tape: Tape::new(draws),
            world,
            cfg,
            reading: T0,
            clock,
            grants: Vec::new(),
            held: HashMap::new(),
            max_token: 0,
            checks: 0,
        }
    }

    fn res(&self, i: usize) -> (Kind, String) {
        self.world.resources[i].clone()
    }

    /// The group a list or a registration names: `None` null; one past the world's groups is
    /// "zz".
    fn group(&self, g: Option<usize>) -> Option<&str> {
        g.map(|i| self.world.groups.get(i).map_or("zz", String::as_str))
    }

    fn groups(&self, gs: &[Option<usize>]) -> Vec<Option<&str>> {
        gs.iter().map(|g| self.group(*g)).collect()
    }

    /// Applies `op` to one engine.
    fn engine_call(&self, e: &mut Engine, op: &Op) -> Res {
        let p = &mut e.pool;
        match op {
            Op::Register(i) => {
                let (k, v) = self.res(*i);
                code(p.register(k, &v).map(Res::Bool))
            }
            Op::RegisterIn(i, g) => {
                let (k, v) = self.res(*i);
                code(p.register_in(k, &v, Some(self.group(*g))).map(Res::Bool))
            }
            Op::Deregister(i) => {
                let (k, v) = self.res(*i);
                code(p.deregister(k, &v).map(Res::Bool))
            }
            Op::Acquire(c) => {
                code(p.acquire(&self.world.contexts[*c]).map(|l| Res::Grant(l.as_ref().map(to_grant))))
            }
            Op::AcquireIn(c, gs) => code(
                p.acquire_in(&self.world.contexts[*c], &self.groups(gs))
                    .map(|l| Res::Grant(l.as_ref().map(to_grant))),
            ),
            Op::SetConfig(g, m, c) => {
                let patch = ConfigPatch::from_json(&config_patch(*g, *m, *c)).unwrap();
                code(p.set_config(&patch).map(Res::Bool))
            }
            Op::AcquireResource(i, c) => {
                let (k, v) = self.res(*i);
                code(
                    p.acquire_resource(k, &v, &self.world.contexts[*c])
                        .map(|l| Res::Grant(l.as_ref().map(to_grant))),
                )
            }
            Op::Report(i, c, f, lat) => {
                let (k, v) = self.res(*i);
                let latency_ms = lat.map(|l| f64::from(l) / 4.0);
                let o = match f {
                    None => Outcome::Success { latency_ms },
                    Some(t) => Outcome::Failure { failure: *t, latency_ms },
                };
                code(p.report(k, &v, &self.world.contexts[*c], o).map(|_| Res::Unit))
            }
            Op::Renew(g) => match self.grants.get(*g) {
                Some(g) => code(p.renew(&to_lease(g)).map(|l| Res::Grant(l.as_ref().map(to_grant)))),
                None => code(p.stats().map(|_| Res::Unit)),
            },
            Op::Release(g) => match self.grants.get(*g) {
                Some(g) => code(p.release(&to_lease(g)).map(Res::Bool)),
                None => code(p.stats().map(|_| Res::Unit)),
            },
            Op::Block(i, ms) => {
                let (k, v) = self.res(*i);
                code(p.block(k, &v, BlockSpec::Seconds(f64::from(*ms) / 1000.0)).map(|_| Res::Unit))
            }
            Op::BlockPermanent(i) => {
                let (k, v) = self.res(*i);
                code(p.block(k, &v, BlockSpec::Permanent).map(|_| Res::Unit))
            }
            Op::Unblock(i) => {
                let (k, v) = self.res(*i);
                code(p.unblock(k, &v).map(Res::Bool))
            }
            Op::Advance(_) | Op::AdvanceToNext(_) | Op::ClockBack(_) => code(p.stats().map(|_| Res::Unit)),
            Op::Restore => {
                e.restore();
                Res::Unit
            }
            Op::RegisterMax(i, m) => {
                let (k, v) = self.res(*i);
                let options = Registration { group: None, max_leases: Some(*m) };
                code(p.register_with(k, &v, options).map(Res::Bool))
            }
            Op::TryAcquire(c, gs) => {
                let gs = gs.as_ref().map(|gs| self.groups(gs));
                code(
                    p.try_acquire(&self.world.contexts[*c], gs.as_deref())
                        .map(|l| Res::Grant(l.as_ref().map(to_grant))),
                )
            }
            Op::Finish(i, f, next, by_id) => {
                let g = self.finished_grant(*i);
                let o = match f {
                    None => Outcome::Success { latency_ms: Some(12.5) },
                    Some(t) => Outcome::Failure { failure: *t, latency_ms: None },
                };
                let groups = next.as_ref().and_then(|n| n.groups.as_ref()).map(|gs| self.groups(gs));
                let n = next.as_ref().map(|n| Next {
                    context: n.context.map(|c| self.world.contexts[c].as_str()),
                    groups: groups.as_deref(),
                    quiet: n.quiet,
                });
                // By the grant as the JS `Pool` calls it: by the lease's id and token, and by
                // name when that lease is not held any more.
                let by_grant = match p.resource_id(g.kind, &g.value) {
                    Some(id) if *by_id => p.finish_lease(id, g.token, o, n.as_ref()).transpose(),
                    _ => None,
                };
                let out = by_grant.unwrap_or_else(|| p.finish(&to_lease(&g), o, n.as_ref()));
                code(out.map(|l| Res::Grant(l.as_ref().map(to_grant))))
            }
        }
    }

    /// The lease `finish` op `i` names: grant `i`, or past the grants one whose token the pool
    /// never issued.
    fn finished_grant(&self, i: usize) -> RefGrant {
        self.grants.get(i).cloned().unwrap_or_else(|| {
            let (kind, value) = self.res(0);
            RefGrant {
                kind,
                value,
                group: None,
                context: self.world.contexts[0].clone(),
                token: self.reference.fencing + 1,
                leased_at: 0,
                expires_at: 0,
            }
        })
    }

    /// Applies `op` to the reference, with the same error rules as the engine.
    fn reference_call(&mut self, op: &Op) -> Res {
        let r = &mut self.reference;
        let known = |r: &RefPool, i: usize, w: &World| {
            r.resources.contains_key(&key(w.resources[i].0, &w.resources[i].1))
        };
        let k = |i: usize| key(self.world.resources[i].0, &self.world.resources[i].1);
        let reading = self.reading;
        match op {
            Op::Register(i) => {
                if !known(r, *i, &self.world) && r.resources.len() >= self.cfg.max_resources as usize {
                    return Res::Err("CAPACITY_EXCEEDED");
                }
                r.advance(reading);
                Res::Bool(r.register(&k(*i), None))
            }
            Op::RegisterIn(i, g) => {
                if !known(r, *i, &self.world) && r.resources.len() >= self.cfg.max_resources as usize {
                    return Res::Err("CAPACITY_EXCEEDED");
                }
                r.advance(reading);
                let g = g.map(|i| self.world.groups.get(i).map_or("zz", String::as_str));
                Res::Bool(r.register(&k(*i), Some(g)))
            }
            Op::AcquireIn(c, gs) => {
                r.advance(reading);
                let tape = self.ref_tape.clone();
                let gs: Vec<Option<&str>> = gs
                    .iter()
                    .map(|g| g.map(|i| self.world.groups.get(i).map_or("zz", String::as_str)))
                    .collect();
                Res::Grant(r.acquire_in(&self.world.contexts[*c], &gs, &mut || tape.next()))
            }
            Op::SetConfig(g, m, c) => {
                r.advance(reading);
                let patch = ConfigPatch::from_json(&config_patch(*g, *m, *c)).unwrap();
                let cfg = patch.apply(&r.cfg, "").unwrap();
                Res::Bool(r.set_config(cfg))
            }
            Op::Deregister(i) => {
                r.advance(reading);
                Res::Bool(r.deregister(&k(*i)))
            }
            Op::Acquire(c) => {
                r.advance(reading);
                let tape = self.ref_tape.clone();
                Res::Grant(r.acquire(&self.world.contexts[*c], &mut || tape.next()))
            }
            Op::AcquireResource(i, c) => {
                if !known(r, *i, &self.world) {
                    return Res::Err("UNKNOWN_RESOURCE");
                }
                r.advance(reading);
                Res::Grant(r.acquire_resource(&k(*i), &self.world.contexts[*c]))
            }
            Op::Report(i, c, f, lat) => {
                if !known(r, *i, &self.world) {
                    return Res::Err("UNKNOWN_RESOURCE");
                }
                let ctx = &self.world.contexts[*c];
                let exists = r.cells.contains_key(&(k(*i), ctx.as_bytes().to_vec()));
                if !exists && r.cells.len() >= self.cfg.max_cells as usize {
                    return Res::Err("CAPACITY_EXCEEDED");
                }
                r.advance(reading);
                let latency_ms = lat.map(|l| f64::from(l) / 4.0);
                let o = match f {
                    None => Outcome::Success { latency_ms },
                    Some(t) => Outcome::Failure { failure: *t, latency_ms },
                };
                r.report(&k(*i), ctx, &o);
                Res::Unit
            }
            Op::Renew(g) => {
                r.advance(reading);
                match self.grants.get(*g) {
                    Some(g) => Res::Grant(r.renew(g)),
                    None => Res::Unit,
                }
            }
            Op::Release(g) => {
                r.advance(reading);
                match self.grants.get(*g) {
                    Some(g) => Res::Bool(r.release(g)),
                    None => Res::Unit,
                }
            }
            Op::Block(i, ms) => {
                if !known(r, *i, &self.world) {
                    return Res::Err("UNKNOWN_RESOURCE");
                }
                let now = r.advance(reading);
                r.block(&k(*i), RefBlock::Until(now + u64::from(*ms)));
                Res::Unit
            }
            Op::BlockPermanent(i) => {
                if !known(r, *i, &self.world) {
                    return Res::Err("UNKNOWN_RESOURCE");
                }
                r.advance(reading);
                r.block(&k(*i), RefBlock::Permanent);
                Res::Unit
            }
            Op::Unblock(i) => {
                if !known(r, *i, &self.world) {
                    return Res::Err("UNKNOWN_RESOURCE");
                }
                r.advance(reading);
                Res::Bool(r.unblock(&k(*i)))
            }
            Op::Advance(_) | Op::AdvanceToNext(_) | Op::ClockBack(_) => {
                r.advance(reading);
                Res::Unit
            }
            Op::Restore => {
                // The snapshot reads the clock; the restored pool starts at its takenAt.
                r.advance(reading);
                r.drop_leases();
                Res::Unit
            }
            Op::RegisterMax(i, m) => {
                if !(1..=1024).contains(m) {
                    return Res::Err("INVALID_ARGUMENT");
                }
                if !known(r, *i, &self.world) && r.resources.len() >= self.cfg.max_resources as usize {
                    return Res::Err("CAPACITY_EXCEEDED");
                }
                r.advance(reading);
                Res::Bool(r.register_with(&k(*i), None, Some(*m)))
            }
            Op::TryAcquire(c, gs) => {
                r.advance(reading);
                let tape = self.ref_tape.clone();
                let gs: Option<Vec<Option<&str>>> = gs.as_ref().map(|gs| {
                    gs.iter()
                        .map(|g| g.map(|i| self.world.groups.get(i).map_or("zz", String::as_str)))
                        .collect()
                });
                Res::Grant(r.try_acquire(&self.world.contexts[*c], gs.as_deref(), &mut || tape.next()))
            }
            Op::Finish(i, f, next, _) => {
                let g = self.grants.get(*i).cloned().unwrap_or_else(|| {
                    let (kind, value) = self.world.resources[0].clone();
                    RefGrant {
                        kind,
                        value,
                        group: None,
                        context: self.world.contexts[0].clone(),
                        token: r.fencing + 1,
                        leased_at: 0,
                        expires_at: 0,
                    }
                });
                let o = match f {
                    None => Outcome::Success { latency_ms: Some(12.5) },
                    Some(t) => Outcome::Failure { failure: *t, latency_ms: None },
                };
                let group_name = |g: &Option<usize>| {
                    g.map(|i| self.world.groups.get(i).map_or("zz", String::as_str).to_owned())
                };
                let n = next.as_ref().map(|n| RefNext {
                    context: n.context.map(|c| self.world.contexts[c].clone()),
                    groups: n.groups.as_ref().map(|gs| gs.iter().map(group_name).collect()),
                    quiet: n.quiet,
                });
                let tape = self.ref_tape.clone();
                match r.finish(&g, &o, n.as_ref(), reading, &mut || tape.next()) {
                    Ok(l) => Res::Grant(l),
                    Err(code) => Res::Err(code),
                }
            }
        }
    }

    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match op {
            Op::Advance(ms) => self.reading += ms,
            Op::ClockBack(ms) => self.reading = self.reading.saturating_sub(*ms),
            Op::AdvanceToNext(n) => {
                if let Some(&t) = self.reference.pending_instants().get(*n) {
                    self.reading = self.reading.max(t);
                }
            }
            _ => {}
        }
        self.clock.set(self.reading as f64);
        if matches!(op, Op::Restore) {
            self.check_events()?;
        }
        let mut a = std::mem::replace(&mut self.a, Engine::new(&self.cfg, &self.clock, &[0.5]));
        let got = self.engine_call(&mut a, op);
        self.a = a;
        let mut b = std::mem::replace(&mut self.b, Engine::new(&self.cfg, &self.clock, &[0.5]));
        let twin = self.engine_call(&mut b, op);
        self.b = b;
        let want = self.reference_call(op);
        prop_assert_eq!(&got, &want, "result of {:?}", op);
        prop_assert_eq!(&twin, &got, "twin engine result of {:?}", op);
        prop_assert_eq!(self.a.tape.used(), self.ref_tape.used(), "random draws consumed by {:?}", op);
        if let Op::Restore = op {
            self.held.clear();
        }
        if let (Op::Deregister(i), Res::Bool(true)) = (op, &got) {
            let (k, v) = self.res(*i);
            self.held.remove(&key(k, &v));
        }
        self.forget_ended();
        if let Res::Grant(Some(g)) = &got {
            self.on_grant(op, g)?;
        }
        self.check_events()?;
        self.check_state()
    }

    fn on_grant(&mut self, op: &Op, g: &RefGrant) -> Result<(), TestCaseError> {
        let k = key(g.kind, &g.value);
        let now = self.reference.now;
        if let Op::Renew(_) = op {
            return Ok(());
        }
        prop_assert!(g.token > self.max_token, "token {} not above {}", g.token, self.max_token);
        self.max_token = g.token;
        let max = self.reference.resources[&k].max_leases as usize;
        let held = self.held.entry(k.clone()).or_default();
        prop_assert!(held.len() < max, "{:?} leased with {} of maxLeases {} held", k, held.len(), max);
        prop_assert!(!self.reference.is_blocked(&k), "lease on a blocklisted resource");
        let cell = self.reference.cells.get(&(k.clone(), g.context.as_bytes().to_vec()));
        prop_assert!(!cell.is_some_and(|c| c.cooling_at(now)), "lease inside a cooldown");
        if cell.is_some_and(|c| c.due_for_recovery(now)) {
            prop_assert!(
                !held.iter().any(|(_, ctx)| *ctx == g.context),
                "two leases of {:?}'s cell due for recovery in {}",
                k,
                g.context
            );
        }
        held.push((g.token, g.context.clone()));
        self.grants.push(g.clone());
        Ok(())
    }

    /// Leases released or lapsed during this step are no longer held.
    fn forget_ended(&mut self) {
        for e in &self.reference.events {
            if e.ty == "LEASE_EXPIRED" || e.ty == "LEASE_RELEASED" {
                for held in self.held.values_mut() {
                    held.retain(|(token, _)| Some(*token) != e.token);
                }
            }
        }
    }

    fn check_events(&mut self) -> Result<(), TestCaseError> {
        let got: Vec<RefEvent> = self.a.pool.drain_events().unwrap().iter().map(to_ref_event).collect();
        let twin: Vec<RefEvent> = self.b.pool.drain_events().unwrap().iter().map(to_ref_event).collect();
        let want = std::mem::take(&mut self.reference.events);
        prop_assert_eq!(&got, &want);
        prop_assert_eq!(&twin, &got);
        Ok(())
    }

    fn check_state(&mut self) -> Result<(), TestCaseError> {
        // Every view below reads the clock, which applies the current reading.
        self.reference.advance(self.reading);
        let pool = &mut self.a.pool;
        pool.check_invariants().map_err(TestCaseError::fail)?;
        // Dashboard equals the reference's.
        let views = pool.resources(&Filter::default()).unwrap();
        let want = self.reference.view();
        prop_assert_eq!(views.len(), want.len());
        prop_assert_eq!(pool.stats().unwrap().leased, self.reference.leased(), "stats().leased");
        for (v, (k, group, block, max, tokens, cells)) in views.iter().zip(&want) {
            prop_assert_eq!(&key(v.kind, &v.value), k);
            prop_assert_eq!(v.group.as_deref(), group.as_deref());
            let vb = v.blocked.map(|b| match b {
                repute::registry::blocklist::Block::Until(u) => RefBlock::Until(u),
                repute::registry::blocklist::Block::Permanent => RefBlock::Permanent,
            });
            prop_assert_eq!(&vb, block);
            prop_assert_eq!(v.max_leases, *max, "maxLeases");
            let live: Vec<u64> = v.leases.iter().map(|l| l.token).collect();
            prop_assert_eq!(&live, tokens, "live leases, oldest first");
            prop_assert_eq!(v.lease.as_ref().map(|l| l.token), tokens.first().copied(), "lease: the oldest");
            prop_assert_eq!(v.cells.len(), cells.len());
            for (cv, (ctx, state, c, paced)) in v.cells.iter().zip(cells) {
                prop_assert_eq!(cv.paced_until, *paced, "pacedUntil");
                prop_assert_eq!(cv.held, c.held, "held");
                prop_assert_eq!(&*cv.context, ctx.as_str());
                prop_assert_eq!(cv.state, *state);
                prop_assert_eq!(cv.score, c.score);
                prop_assert!((-100.0..=100.0).contains(&cv.score));
                prop_assert_eq!(cv.consecutive_failures, c.consecutive_failures);
                prop_assert_eq!(cv.consecutive_successes, c.consecutive_successes);
                prop_assert_eq!(cv.cooldown_until, c.cooldown_until);
                prop_assert_eq!(cv.cooldown_cause, c.cooldown_cause);
                prop_assert_eq!(cv.updated_at, c.updated_at);
                let [p50, p95] = c.window.percentiles([0.5, 0.95]);
                prop_assert_eq!((cv.p50_latency_ms, cv.p95_latency_ms), (p50, p95));
            }
        }
        // Probe-due lists agree, and no probe-due cell is a candidate.
        let due: Vec<(Key, String, u64)> = pool
            .due_for_recovery_probe()
            .unwrap()
            .iter()
            .map(|p| (key(p.kind, &p.value), p.context.to_string(), p.cooldown_until))
            .collect();
        prop_assert_eq!(&due, &self.reference.due_for_recovery_probe());
        for (k, ctx, _) in &due {
            prop_assert!(
                !self.reference.candidates(ctx).iter().any(|c| &c.0 == k),
                "probe-due and candidate"
            );
        }
        // The order alternates, so the context asked last before an operation is asked first
        // after it: that answer comes from the one kept and updated through the operation.
        self.checks += 1;
        let mut asked: Vec<&String> = self.world.contexts.iter().collect();
        if self.checks % 2 == 1 {
            asked.reverse();
        }
        for ctx in asked {
            prop_assert_eq!(
                pool.next_change_at(ctx).unwrap(),
                self.reference.next_change_at(ctx),
                "nextChangeAt({})",
                ctx
            );
        }
        // Grouped questions: nextChangeAt and resources({ group }).
        let lists: [&[Option<usize>]; 5] =
            [&[Some(0)], &[Some(1)], &[None], &[Some(0), None], &[Some(3), Some(2), Some(1)]];
        for ctx in &self.world.contexts {
            for gs in lists {
                let gs: Vec<Option<&str>> = gs
                    .iter()
                    .map(|g| g.map(|i| self.world.groups.get(i).map_or("zz", String::as_str)))
                    .collect();
                prop_assert_eq!(
                    pool.next_change_at_in(ctx, &gs).unwrap(),
                    self.reference.next_change_at_in(ctx, &gs),
                    "nextChangeAt({}, {:?})",
                    ctx,
                    gs
                );
            }
        }
        for g in [None, Some("dc"), Some("res"), Some("é"), Some("zz")] {
            let filter = Filter { group: Some(g.map(str::to_owned)), ..Filter::default() };
            let got: Vec<Key> =
                pool.resources(&filter).unwrap().iter().map(|v| key(v.kind, &v.value)).collect();
            let want: Vec<Key> = self
                .reference
                .resources
                .iter()
                .filter(|(_, r)| r.group.as_deref() == g)
                .map(|(k, _)| k.clone())
                .collect();
            prop_assert_eq!(got, want, "resources({{ group: {:?} }})", g);
        }
        // Snapshots: restore reproduces the bytes; the twin engine has the same bytes.
        let snap = pool.snapshot().unwrap();
        let mut restored =
            ClockedPool::restore(&snap, None, self.clock.clone(), repute::Randomness::host(|| 0.5)).unwrap();
        prop_assert_eq!(restored.snapshot().unwrap(), snap.clone());
        restored.check_invariants().map_err(TestCaseError::fail)?;
        prop_assert_eq!(self.b.pool.snapshot().unwrap(), snap);
        Ok(())
    }
}

fn run(world: World, cfg: Config, draws: Vec<f64>, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut run = Run::new(world, cfg, draws);
    for op in &ops {
        run.step(op)?;
    }
    Ok(())
}

/// Sequences per run: `REPUTE_MODEL_CASES` overrides the default (for longer soak runs).
fn cases(default: u32) -> u32 {
    std::env::var("REPUTE_MODEL_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1000), max_shrink_iters: 20_000, ..ProptestConfig::default() })]

    #[test]
    fn engine_matches_reference_on_small_pools(
        cfg in config(true),
        draws in prop::collection::vec(0.0f64..1.0, 1..64),
        ops in prop::collection::vec(op(6, 3, 6), 1..100),
    ) {
        run(small_world(), cfg, draws, ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1000) / 20, ..ProptestConfig::default() })]

    #[test]
    fn engine_matches_reference_on_larger_pools(
        cfg in config(false),
        draws in prop::collection::vec(0.0f64..1.0, 1..64),
        ops in prop::collection::vec(op(40, 5, 40), 100..400),
    ) {
        run(large_world(), cfg, draws, ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1000) / 20, ..ProptestConfig::default() })]

    #[test]
    fn engine_matches_reference_with_fresh_tails(
        cfg in config(false),
        draws in prop::collection::vec(0.0f64..1.0, 1..64),
        ops in prop::collection::vec(prop_oneof![
            3 => op(60, 2, 20),
            2 => (0..20usize, 0..2usize).prop_map(|(r, c)| Op::Report(r, c, None, None)),
            1 => (0..20usize).prop_map(Op::Register),
        ], 150..500),
    ) {
        run(sparse_world(), cfg, draws, ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1000) / 4, max_shrink_iters: 20_000, ..ProptestConfig::default() })]

    /// Version 2 rules under pressure: every failure reaches step 4 (`coolAfter` 1), the cap
    /// is low, failures are as frequent as successes and acquires mostly list groups, so held
    /// cells, escalation past all-held groups and picks among held ones are common.
    #[test]
    fn engine_matches_reference_with_groups_under_the_cap(
        cfg in (config(true), prop::sample::select(vec![1u32, 20, 40]))
            .prop_map(|(mut c, p)| { c.cool_after = 1; c.max_cooling_percent = p; c }),
        draws in prop::collection::vec(0.0f64..1.0, 1..64),
        ops in prop::collection::vec(prop_oneof![
            4 => op(6, 3, 6),
            3 => (0..6usize, 0..3usize, prop::sample::select(FailureType::ALL.to_vec()))
                .prop_map(|(r, c, f)| Op::Report(r, c, Some(f), None)),
            3 => (0..3usize, group_list()).prop_map(|(c, g)| Op::AcquireIn(c, g)),
            2 => (0..6usize, prop::option::of(0..3usize)).prop_map(|(r, g)| Op::RegisterIn(r, g)),
            2 => (0..64usize).prop_map(Op::Release),
        ], 1..120),
    ) {
        run(small_world(), cfg, draws, ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1000) / 4, max_shrink_iters: 20_000, ..ProptestConfig::default() })]

    /// Version 3 rules under pressure: resources with room for several leases, failures that
    /// cool at once (`coolAfter` 1) so trials and probe-due cells are common while leases are
    /// held in their contexts, and steps finished (often with `next`) as a worker does.
    #[test]
    fn engine_matches_reference_with_capacity_trials_and_finishes(
        cfg in config(true).prop_map(|mut c| { c.cool_after = 1; c }),
        draws in prop::collection::vec(0.0f64..1.0, 1..64),
        ops in prop::collection::vec(prop_oneof![
            4 => op(6, 3, 6),
            3 => (0..6usize, prop::sample::select(vec![1u32, 2, 3, 5])).prop_map(|(r, m)| Op::RegisterMax(r, m)),
            4 => (0..3usize).prop_map(Op::Acquire),
            2 => (0..6usize, 0..3usize).prop_map(|(r, c)| Op::AcquireResource(r, c)),
            2 => (0..3usize, prop::option::of(group_list())).prop_map(|(c, g)| Op::TryAcquire(c, g)),
            6 => (0..48usize, failure(), next_op(3), any::<bool>()).prop_map(|(g, f, n, id)| Op::Finish(g, f, n, id)),
            2 => (0..6usize, 0..3usize, prop::sample::select(FailureType::ALL.to_vec()))
                .prop_map(|(r, c, f)| Op::Report(r, c, Some(f), None)),
            2 => (0..4usize).prop_map(Op::AdvanceToNext),
        ], 1..150),
    ) {
        run(small_world(), cfg, draws, ops)?;
    }
}
