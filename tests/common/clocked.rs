//! `ClockedPool`: a `Pool` with a test clock attached. The engine takes each call's clock
//! reading as its first argument (`now`); this wrapper reads its clock exactly once per call
//! and passes the reading, unvalidated, so tests written against a clock (a `ManualClock` they
//! move, or a closure returning NaN to see the reading refused) call the pool as they did.
//! Calls that read no time (`config`, `resource_id`, `core`, `check_invariants`, …) go
//! through `Deref` to the pool itself.

use repute::{
    BlockSpec, Config, ConfigPatch, Filter, Floor, Kind, Lease, Millis, Next, Outcome, Pool, PoolEvent,
    ProbeDue, Randomness, ResourceDetail, ResourceId, ResourceView, Result, Stats,
};
use std::ops::{Deref, DerefMut};

use super::clock::Clock;

pub struct ClockedPool {
    pub pool: Pool,
    clock: Box<dyn Clock>,
}

impl std::fmt::Debug for ClockedPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.pool.fmt(f)
    }
}

impl Deref for ClockedPool {
    type Target = Pool;
    fn deref(&self) -> &Pool {
        &self.pool
    }
}

impl DerefMut for ClockedPool {
    fn deref_mut(&mut self) -> &mut Pool {
        &mut self.pool
    }
}

impl ClockedPool {
    pub fn wrap(pool: Pool, clock: impl Clock + 'static) -> ClockedPool {
        ClockedPool { pool, clock: Box::new(clock) }
    }

    pub fn new(
        config: Config,
        clock: impl Clock + 'static,
        random: impl Into<Randomness>,
    ) -> Result<ClockedPool> {
        Ok(ClockedPool::wrap(Pool::new(config, random)?, clock))
    }

    pub fn with_seed(config: Config, clock: impl Clock + 'static, seed: u64) -> Result<ClockedPool> {
        Ok(ClockedPool::wrap(Pool::with_seed(config, seed)?, clock))
    }

    pub fn restore(
        json: &str,
        overrides: Option<&ConfigPatch>,
        clock: impl Clock + 'static,
        random: impl Into<Randomness>,
    ) -> Result<ClockedPool> {
        Ok(ClockedPool::wrap(Pool::restore(json, overrides, random)?, clock))
    }

    pub fn restore_above(
        json: &str,
        overrides: Option<&ConfigPatch>,
        floor: &Floor,
        clock: impl Clock + 'static,
        random: impl Into<Randomness>,
    ) -> Result<ClockedPool> {
        Ok(ClockedPool::wrap(Pool::restore_above(json, overrides, floor, random)?, clock))
    }

    /// The clock's reading for this call (read once).
    fn now(&mut self) -> f64 {
        self.clock.now_ms()
    }

    pub fn register(&mut self, kind: Kind, value: &str) -> Result<bool> {
        let now = self.now();
        self.pool.register(now, kind, value)
    }

    pub fn register_in(&mut self, kind: Kind, value: &str, group: Option<Option<&str>>) -> Result<bool> {
        let now = self.now();
        self.pool.register_in(now, kind, value, group)
    }

    pub fn register_with(&mut self, kind: Kind, value: &str, options: repute::Registration) -> Result<bool> {
        let now = self.now();
        self.pool.register_with(now, kind, value, options)
    }

    pub fn deregister(&mut self, kind: Kind, value: &str) -> Result<bool> {
        let now = self.now();
        self.pool.deregister(now, kind, value)
    }

    pub fn acquire(&mut self, context: &str) -> Result<Option<Lease>> {
        let now = self.now();
        self.pool.acquire(now, context)
    }

    pub fn acquire_in(&mut self, context: &str, groups: &[Option<&str>]) -> Result<Option<Lease>> {
        let now = self.now();
        self.pool.acquire_in(now, context, groups)
    }

    pub fn try_acquire(&mut self, context: &str, groups: Option<&[Option<&str>]>) -> Result<Option<Lease>> {
        let now = self.now();
        self.pool.try_acquire(now, context, groups)
    }

    pub fn finish(&mut self, lease: &Lease, outcome: Outcome, next: Option<&Next>) -> Result<Option<Lease>> {
        let now = self.now();
        self.pool.finish(now, lease, outcome, next)
    }

    pub fn finish_lease(
        &mut self,
        id: ResourceId,
        token: u64,
        outcome: Outcome,
        next: Option<&Next>,
    ) -> Result<Option<Option<Lease>>> {
        let now = self.now();
        self.pool.finish_lease(now, id, token, outcome, next)
    }

    pub fn acquire_resource(&mut self, kind: Kind, value: &str, context: &str) -> Result<Option<Lease>> {
        let now = self.now();
        self.pool.acquire_resource(now, kind, value, context)
    }

    pub fn report(&mut self, kind: Kind, value: &str, context: &str, outcome: Outcome) -> Result<()> {
        let now = self.now();
        self.pool.report(now, kind, value, context, outcome)
    }

    pub fn report_lease(&mut self, id: ResourceId, token: u64, outcome: Outcome) -> Result<bool> {
        let now = self.now();
        self.pool.report_lease(now, id, token, outcome)
    }

    pub fn renew(&mut self, lease: &Lease) -> Result<Option<Lease>> {
        let now = self.now();
        self.pool.renew(now, lease)
    }

    pub fn renew_lease(&mut self, id: ResourceId, token: u64) -> Result<Option<Lease>> {
        let now = self.now();
        self.pool.renew_lease(now, id, token)
    }

    pub fn release(&mut self, lease: &Lease) -> Result<bool> {
        let now = self.now();
        self.pool.release(now, lease)
    }

    pub fn release_lease(&mut self, id: ResourceId, token: u64) -> Result<bool> {
        let now = self.now();
        self.pool.release_lease(now, id, token)
    }

    pub fn block(&mut self, kind: Kind, value: &str, spec: BlockSpec) -> Result<()> {
        let now = self.now();
        self.pool.block(now, kind, value, spec)
    }

    pub fn unblock(&mut self, kind: Kind, value: &str) -> Result<bool> {
        let now = self.now();
        self.pool.unblock(now, kind, value)
    }

    pub fn snapshot(&mut self) -> Result<String> {
        let now = self.now();
        self.pool.snapshot(now)
    }

    pub fn snapshot_part(&mut self, resource: Option<(Kind, &str)>) -> Result<Option<String>> {
        let now = self.now();
        self.pool.snapshot_part(now, resource)
    }

    pub fn drain_events(&mut self) -> Result<Vec<PoolEvent>> {
        let now = self.now();
        self.pool.drain_events(now)
    }

    pub fn resources(&mut self, filter: &Filter) -> Result<Vec<ResourceView>> {
        let now = self.now();
        self.pool.resources(now, filter)
    }

    pub fn resource(&mut self, kind: Kind, value: &str) -> Result<ResourceDetail> {
        let now = self.now();
        self.pool.resource(now, kind, value)
    }

    pub fn due_for_recovery_probe(&mut self) -> Result<Vec<ProbeDue>> {
        let now = self.now();
        self.pool.due_for_recovery_probe(now)
    }

    pub fn next_change_at(&mut self, context: &str) -> Result<Option<Millis>> {
        let now = self.now();
        self.pool.next_change_at(now, context)
    }

    pub fn next_change_at_in(&mut self, context: &str, groups: &[Option<&str>]) -> Result<Option<Millis>> {
        let now = self.now();
        self.pool.next_change_at_in(now, context, groups)
    }

    pub fn stats(&mut self) -> Result<Stats> {
        let now = self.now();
        self.pool.stats(now)
    }

    pub fn set_config(&mut self, patch: &ConfigPatch) -> Result<bool> {
        let now = self.now();
        self.pool.set_config(now, patch)
    }
}
