//! Properties of SPEC §3 "Capacity" over random histories: registrations that set, raise and
//! lower `maxLeases`, deregistrations, acquires (plain, grouped, quiet, by name), releases,
//! renewals, finishes (with and without `next`), reports that cool cells at once (so half-open
//! trials and probe-due cells come and go while leases are held), blocks, time and restores.
//!
//! Before each call that may grant, the dashboard view at the call's reading (which applies
//! the expiries due then) gives the expected candidates; after it, the properties:
//! - a grant never brings a resource past `maxLeases`: it held fewer before (lowering
//!   `maxLeases` ends no lease, so a resource may hold more, but then gains none);
//! - a grant in a context where the resource's cell is due for recovery (a half-open trial, or
//!   a probe-due cell leased by name) finds no other lease of it in that context;
//! - a blocked resource is never leased; fencing tokens strictly increase;
//! - an acquire grants exactly when the view shows a candidate (room, not blocked, its cell
//!   there fresh, `HEALTHY`, `RECOVERING` or a half-open trial nobody holds there, not paced),
//!   and the one granted is one; `acquireResource` grants exactly by the same two rules;
//! - views: `leases` oldest first (tokens ascending), `lease` the first, `stats().leased` their
//!   sum; and `check_invariants()` (the indexes against a from-scratch recomputation) after
//!   every step.

// Native only, as proptest is (Cargo.toml): property tests do not run in wasm32.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{ClockedPool, ManualClock, T0};
use proptest::prelude::*;
use repute::{
    BlockSpec, Config, ConfigPatch, FailureType, Filter, Kind, Lease, Next, Outcome, Randomness,
    Registration, ResourceView, ViewState,
};

const RESOURCES: u8 = 5;
const CONTEXTS: [&str; 3] = ["c0", "c1", "c2"];
const GROUPS: [&str; 2] = ["g0", "g1"];

#[derive(Debug, Clone)]
enum Op {
    /// Resource, `maxLeases` (`None`: left out), group index.
    Register(u8, Option<u32>, u8),
    Deregister(u8),
    Acquire(u8),
    /// Context, the groups listed (both, in the order given by the flag).
    AcquireIn(u8, bool),
    TryAcquire(u8),
    AcquireResource(u8, u8),
    Release(u8),
    Renew(u8),
    /// Lease index, success?, next in this context (`None`: no next).
    Finish(u8, bool, Option<u8>),
    Fail(u8, u8, u8),
    Succeed(u8, u8),
    Block(u8, u16),
    Unblock(u8),
    Advance(u16),
    Restore,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..RESOURCES, prop::option::weighted(0.8, 1u32..=4), 0u8..2).prop_map(|(r, m, g)| Op::Register(r, m, g)),
        1 => (0..RESOURCES).prop_map(Op::Deregister),
        6 => (0u8..3).prop_map(Op::Acquire),
        2 => (0u8..3, any::<bool>()).prop_map(|(c, f)| Op::AcquireIn(c, f)),
        2 => (0u8..3).prop_map(Op::TryAcquire),
        3 => (0..RESOURCES, 0u8..3).prop_map(|(r, c)| Op::AcquireResource(r, c)),
        3 => (0u8..24).prop_map(Op::Release),
        1 => (0u8..24).prop_map(Op::Renew),
        4 => (0u8..24, any::<bool>(), prop::option::of(0u8..3)).prop_map(|(i, ok, n)| Op::Finish(i, ok, n)),
        4 => (0..RESOURCES, 0u8..3, 0u8..5).prop_map(|(r, c, f)| Op::Fail(r, c, f)),
        2 => (0..RESOURCES, 0u8..3).prop_map(|(r, c)| Op::Succeed(r, c)),
        1 => (0..RESOURCES, 1u16..6).prop_map(|(r, s)| Op::Block(r, s)),
        1 => (0..RESOURCES).prop_map(Op::Unblock),
        // Quarter seconds, like every duration of the config: ends fall on call instants.
        4 => (0u16..12).prop_map(|q| Op::Advance(q * 250)),
        1 => Just(Op::Restore),
    ]
}

/// `coolAfter` 1 (every failure cools), short cooldowns and leases, some causes probe-only,
/// pacing on or off.
fn config(causes: u8, gap: u8) -> Config {
    let names: Vec<String> = FailureType::ALL
        .iter()
        .enumerate()
        .filter(|(i, _)| causes & (1 << i) != 0)
        .map(|(_, t)| format!("\"{t}\""))
        .collect();
    let gap = [0, 0, 250, 1000][gap as usize];
    let json = format!(
        r#"{{"coolAfter":1,"recoverAfter":2,"leaseTtlMs":3000,"halfOpenCauses":[{}],"minGapMs":{gap},
        "cooldownBaseMs":{{"BLOCKED":1500,"TLS_HANDSHAKE":2500,"CONNECTION_RESET":1000,"TIMEOUT":750,"SLOW":250}}}}"#,
        names.join(",")
    );
    Config::from_patch(&ConfigPatch::from_json(&json).unwrap()).unwrap()
}

fn value(i: u8) -> String {
    format!("r{i}")
}

fn find<'a>(view: &'a [ResourceView], v: &str) -> Option<&'a ResourceView> {
    view.iter().find(|r| &*r.value == v)
}

/// Whether `r`'s cell in `ctx` is due for recovery at `now` (COOLING, cooldown over).
fn due(r: &ResourceView, ctx: &str, now: u64) -> bool {
    r.cells.iter().any(|c| {
        &*c.context == ctx && c.state == ViewState::Cooling && c.cooldown_until.is_some_and(|u| u <= now)
    })
}

fn leased_in(r: &ResourceView, ctx: &str) -> bool {
    r.leases.iter().any(|l| &*l.context == ctx)
}

/// Whether `r` may be leased in `ctx` at `now` as the view shows it: room, not blocked, not
/// paced there, its cell there fresh, `HEALTHY`, `RECOVERING` or due for recovery (a trial
/// needs a half-open cause unless leased by name), and no lease held there on a cell due for
/// recovery.
fn leasable(r: &ResourceView, cfg: &Config, ctx: &str, now: u64, by_name: bool) -> bool {
    if r.blocked.is_some() || r.leases.len() >= r.max_leases as usize {
        return false;
    }
    let Some(c) = r.cells.iter().find(|c| &*c.context == ctx) else {
        return true;
    };
    let state_ok = match c.state {
        ViewState::Healthy | ViewState::Recovering => true,
        ViewState::Cooling => {
            c.cooldown_until.is_some_and(|u| u <= now)
                && (by_name || c.cooldown_cause.is_some_and(|t| cfg.half_open_causes.contains(t)))
        }
        ViewState::Blocklisted => false,
    };
    state_ok && c.paced_until.is_none() && !(due(r, ctx, now) && leased_in(r, ctx))
}

struct Run {
    cfg: Config,
    clock: ManualClock,
    pool: ClockedPool,
    leases: Vec<Lease>,
    last_token: u64,
    step: u64,
}

impl Run {
    fn now(&self) -> u64 {
        self.clock.get() as u64
    }

    fn view(&mut self) -> Vec<ResourceView> {
        self.pool.resources(&Filter::default()).unwrap()
    }

    /// Checks a grant against the view taken just before the call (at the same reading).
    fn granted(&mut self, before: &[ResourceView], l: &Lease) -> Result<(), TestCaseError> {
        prop_assert!(l.token > self.last_token, "token {} after {}", l.token, self.last_token);
        self.last_token = l.token;
        let r = find(before, &l.value).expect("a registered resource");
        prop_assert!(r.blocked.is_none(), "a blocked resource leased");
        prop_assert!(
            r.leases.len() < r.max_leases as usize,
            "{} leased holding {} of maxLeases {}",
            l.value,
            r.leases.len(),
            r.max_leases
        );
        if due(r, &l.context, self.now()) {
            prop_assert!(
                !leased_in(r, &l.context),
                "a second lease in {}, where {} is due for recovery",
                l.context,
                l.value
            );
        }
        self.leases.push(l.clone());
        Ok(())
    }

    /// An acquire in `ctx` among the resources `keep` admits: grants exactly when the view
    /// shows a candidate, and one of them.
    fn acquired(
        &mut self,
        before: &[ResourceView],
        ctx: &str,
        keep: impl Fn(&ResourceView) -> bool,
        got: Option<Lease>,
    ) -> Result<(), TestCaseError> {
        let now = self.now();
        let cands: Vec<&str> = before
            .iter()
            .filter(|r| keep(r) && leasable(r, &self.cfg, ctx, now, false))
            .map(|r| &*r.value)
            .collect();
        match got {
            None => prop_assert!(cands.is_empty(), "nothing granted in {} with candidates {:?}", ctx, cands),
            Some(l) => {
                prop_assert!(
                    cands.contains(&&*l.value),
                    "{} granted in {}, candidates {:?}",
                    l.value,
                    ctx,
                    cands
                );
                self.granted(before, &l)?;
            }
        }
        Ok(())
    }

    fn apply(&mut self, op: &Op) -> Result<(), TestCaseError> {
        self.step += 1;
        if let Op::Advance(ms) = op {
            self.clock.advance(f64::from(*ms));
        }
        let before = self.view();
        let lease = |i: u8, leases: &[Lease]| leases.get(i as usize % leases.len().max(1)).cloned();
        match op {
            Op::Register(r, m, g) => {
                let options = Registration { group: Some(Some(GROUPS[*g as usize])), max_leases: *m };
                self.pool.register_with(Kind::Proxy, &value(*r), options).unwrap();
            }
            Op::Deregister(r) => {
                self.pool.deregister(Kind::Proxy, &value(*r)).unwrap();
            }
            Op::Acquire(c) => {
                let ctx = CONTEXTS[*c as usize];
                let got = self.pool.acquire(ctx).unwrap();
                self.acquired(&before, ctx, |_| true, got)?;
            }
            Op::TryAcquire(c) => {
                let ctx = CONTEXTS[*c as usize];
                let got = self.pool.try_acquire(ctx, None).unwrap();
                self.acquired(&before, ctx, |_| true, got)?;
            }
            Op::AcquireIn(c, flip) => {
                let ctx = CONTEXTS[*c as usize];
                let list = if *flip {
                    [Some(GROUPS[1]), Some(GROUPS[0])]
                } else {
                    [Some(GROUPS[0]), Some(GROUPS[1])]
                };
                let got = self.pool.acquire_in(ctx, &list).unwrap();
                // No cell is held (no cap): the first listed group with a candidate.
                let now = self.now();
                let first = list.iter().find(|g| {
                    before
                        .iter()
                        .any(|r| r.group.as_deref() == **g && leasable(r, &self.cfg, ctx, now, false))
                });
                let in_group = |r: &ResourceView| first.is_some_and(|g| r.group.as_deref() == *g);
                self.acquired(&before, ctx, in_group, got)?;
            }
            Op::AcquireResource(r, c) => {
                let (v, ctx) = (value(*r), CONTEXTS[*c as usize]);
                match (self.pool.acquire_resource(Kind::Proxy, &v, ctx), find(&before, &v)) {
                    (Err(e), None) => prop_assert_eq!(e.code(), "UNKNOWN_RESOURCE"),
                    (Ok(got), Some(rv)) => {
                        let want = leasable(rv, &self.cfg, ctx, self.now(), true);
                        prop_assert_eq!(got.is_some(), want, "acquireResource({}, {})", v, ctx);
                        if let Some(l) = got {
                            self.granted(&before, &l)?;
                        }
                    }
                    (got, rv) => prop_assert!(false, "acquireResource: {:?} for {:?}", got, rv.is_some()),
                }
            }
            Op::Release(i) => {
                if let Some(l) = lease(*i, &self.leases) {
                    self.pool.release(&l).unwrap();
                }
            }
            Op::Renew(i) => {
                if let Some(l) = lease(*i, &self.leases) {
                    self.pool.renew(&l).unwrap();
                }
            }
            Op::Finish(i, ok, next) => {
                if let Some(l) = lease(*i, &self.leases) {
                    let o = if *ok { Outcome::success() } else { Outcome::failure(FailureType::Timeout) };
                    let ctx = next.map(|c| CONTEXTS[c as usize]);
                    let n = Next { context: ctx, groups: None, quiet: false };
                    match self.pool.finish(&l, o, next.map(|_| &n)) {
                        Err(e) => prop_assert_eq!(e.code(), "LEASE_FINISHED"),
                        Ok(got) => {
                            if let Some(ctx) = ctx {
                                // The view after the report and the release (no time passes).
                                let mut after = self.view();
                                if let Some(g) = &got {
                                    let r = after.iter_mut().find(|r| r.value == g.value).expect("leased");
                                    r.leases.retain(|x| x.token != g.token);
                                }
                                self.acquired(&after, ctx, |_| true, got)?;
                            }
                        }
                    }
                }
            }
            Op::Fail(r, c, f) => {
                let t = FailureType::ALL[*f as usize];
                let _ = self.pool.report(Kind::Proxy, &value(*r), CONTEXTS[*c as usize], Outcome::failure(t));
            }
            Op::Succeed(r, c) => {
                let _ = self.pool.report(Kind::Proxy, &value(*r), CONTEXTS[*c as usize], Outcome::success());
            }
            Op::Block(r, s) => {
                let _ = self.pool.block(Kind::Proxy, &value(*r), BlockSpec::Seconds(f64::from(*s)));
            }
            Op::Unblock(r) => {
                let _ = self.pool.unblock(Kind::Proxy, &value(*r));
            }
            Op::Advance(_) => {}
            Op::Restore => {
                let snap = self.pool.snapshot().unwrap();
                let random = Randomness::seeded(self.step);
                self.pool = ClockedPool::restore(&snap, None, self.clock.clone(), random).unwrap();
                self.leases.clear();
            }
        }
        self.check()
    }

    /// What holds after every step.
    fn check(&mut self) -> Result<(), TestCaseError> {
        self.pool.check_invariants().map_err(TestCaseError::fail)?;
        let view = self.view();
        let mut total = 0;
        for r in &view {
            let tokens: Vec<u64> = r.leases.iter().map(|l| l.token).collect();
            prop_assert!(tokens.windows(2).all(|w| w[0] < w[1]), "leases oldest first: {:?}", tokens);
            prop_assert_eq!(r.lease.as_ref(), r.leases.first(), "lease: the oldest");
            prop_assert!((1..=1024).contains(&r.max_leases));
            prop_assert!(r.leases.iter().all(|l| l.value == r.value && self.now() < l.expires_at));
            total += r.leases.len();
        }
        prop_assert_eq!(self.pool.stats().unwrap().leased, total, "stats().leased");
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, max_shrink_iters: 10_000, ..ProptestConfig::default() })]

    #[test]
    fn capacity_and_one_trial_per_context_hold_over_random_histories(
        causes in 0u8..32,
        gap in 0u8..4,
        seed in any::<u64>(),
        ops in prop::collection::vec(op(), 1..160),
    ) {
        let cfg = config(causes, gap);
        let clock = ManualClock::new(T0);
        let pool = ClockedPool::new(cfg.clone(), clock.clone(), Randomness::seeded(seed)).unwrap();
        let mut run = Run { cfg, clock, pool, leases: Vec::new(), last_token: 0, step: 0 };
        for op in &ops {
            run.apply(op)?;
        }
    }
}
