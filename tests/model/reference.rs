//! A naive reference pool: the SPEC's rules written the obvious way — linear scans over
//! `BTreeMap`s in canonical order, no indexes, no lazy bookkeeping. It shares only the cell
//! report rules (`repute::cell::Cell::report`, covered rule by rule in `rules_report.rs`, which
//! applies a suppression when told the cap is reached), so the model test checks the engine's
//! selection, leases, blocks, expiries and views against it — and the version 2 rules: groups
//! (grouped acquire and `nextChangeAt`, regrouping), pacing and the cooling cap (whether a
//! cooldown is suppressed is decided here, by counting) — and the version 3 rules: `maxLeases`
//! (set at registration, reconfigured), a resource a candidate only with room for a lease, a
//! half-open trial (or a probe-due cell leased by name) one lease at a time in its context,
//! `finish` (report, release for the holder, next lease; at most once per lease for
//! `leaseTtlMs`) and the quiet acquire a waiting host retries.

use std::collections::{BTreeMap, HashMap};

use repute::cell::Cell;
use repute::redact::redact;
use repute::{Config, FailureType, Kind, Millis, Outcome, State, ViewState};

pub type Key = (Kind, Vec<u8>);

#[derive(Debug, Clone, PartialEq)]
pub enum RefBlock {
    Until(Millis),
    Permanent,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RefLease {
    pub context: String,
    pub token: u64,
    pub leased_at: Millis,
    pub expires_at: Millis,
}

#[derive(Debug, Clone)]
pub struct RefResource {
    /// Live leases, oldest first.
    pub leases: Vec<RefLease>,
    pub max_leases: u32,
    pub block: Option<RefBlock>,
    pub group: Option<String>,
}

impl RefResource {
    /// Whether a lease held in `ctx` is in force at `now`.
    fn leased_in(&self, ctx: &str, now: Millis) -> bool {
        self.leases.iter().any(|l| l.context == ctx && now < l.expires_at)
    }
}

/// An event as the engine reports it (value redacted).
#[derive(Debug, Clone, PartialEq)]
pub struct RefEvent {
    pub seq: u64,
    pub ty: &'static str,
    pub at: Millis,
    pub resource: Option<(Kind, String)>,
    pub context: Option<String>,
    pub cause: Option<FailureType>,
    pub until: Option<Millis>,
    pub permanent: bool,
    pub token: Option<u64>,
    pub group: Option<Option<String>>,
    pub max_leases: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct RefPool {
    pub cfg: Config,
    pub now: Millis,
    pub resources: BTreeMap<Key, RefResource>,
    /// (resource key, context bytes) → cell
    pub cells: BTreeMap<(Key, Vec<u8>), Cell>,
    pub fencing: u64,
    pub next_seq: u64,
    pub events: Vec<RefEvent>,
    /// Finished lease tokens → when (a repeat within `leaseTtlMs` is `LEASE_FINISHED`).
    pub finished: HashMap<u64, Millis>,
}

pub fn key(kind: Kind, value: &str) -> Key {
    (kind, value.as_bytes().to_vec())
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("utf-8")
}

/// A dashboard row: key, group, block, maxLeases, live lease tokens (oldest first), cells by
/// context (with `pacedUntil`).
pub type ViewRow =
    (Key, Option<String>, Option<RefBlock>, u32, Vec<u64>, Vec<(String, ViewState, Cell, Option<Millis>)>);

/// A candidate: key, score, held, group.
pub type Candidate = (Key, f64, bool, Option<String>);

#[derive(Debug, Clone, PartialEq)]
pub struct RefGrant {
    pub kind: Kind,
    pub value: String,
    pub group: Option<String>,
    pub context: String,
    pub token: u64,
    pub leased_at: Millis,
    pub expires_at: Millis,
}

impl RefPool {
    pub fn new(cfg: Config) -> RefPool {
        RefPool {
            cfg,
            now: 0,
            resources: BTreeMap::new(),
            cells: BTreeMap::new(),
            fencing: 0,
            next_seq: 1,
            events: Vec::new(),
            finished: HashMap::new(),
        }
    }

    fn emit(&mut self, ty: &'static str, at: Millis, res: Option<&Key>) -> &mut RefEvent {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.events.push(RefEvent {
            seq,
            ty,
            at,
            resource: res.map(|(k, v)| (*k, redact(*k, &text(v)).into_owned())),
            context: None,
            cause: None,
            until: None,
            permanent: false,
            token: None,
            group: None,
            max_leases: None,
        });
        self.events.last_mut().unwrap()
    }

    /// Time passes to `reading` (monotonic), expiring leases and blocks in (time, blocks
    /// first, key) order.
    pub fn advance(&mut self, reading: Millis) -> Millis {
        self.now = self.now.max(reading);
        let now = self.now;
        // (instant, blocks first, key, token)
        let mut due: Vec<(Millis, u8, Key, u64)> = Vec::new();
        for (k, r) in &self.resources {
            if let Some(RefBlock::Until(u)) = r.block
                && u <= now
            {
                due.push((u, 0, k.clone(), 0));
            }
            for l in r.leases.iter().filter(|l| l.expires_at <= now) {
                due.push((l.expires_at, 1, k.clone(), l.token));
            }
        }
        due.sort();
        for (at, what, k, token) in due {
            let r = self.resources.get_mut(&k).unwrap();
            if what == 0 {
                r.block = None;
                self.emit("BLOCK_EXPIRED", at, Some(&k));
            } else {
                r.leases.retain(|l| l.token != token);
                self.emit("LEASE_EXPIRED", at, Some(&k)).token = Some(token);
            }
        }
        now
    }

    /// `register(kind, value, { group })`: `group` `None` is the key left out.
    pub fn register(&mut self, k: &Key, group: Option<Option<&str>>) -> bool {
        self.register_with(k, group, None)
    }

    /// `register(kind, value, { group, maxLeases })`: `None` is a key left out.
    pub fn register_with(&mut self, k: &Key, group: Option<Option<&str>>, max: Option<u32>) -> bool {
        if let Some(r) = self.resources.get_mut(k) {
            if let Some(g) = group
                && r.group.as_deref() != g
            {
                r.group = g.map(str::to_owned);
                self.emit("RESOURCE_REGROUPED", self.now, Some(k)).group = Some(g.map(str::to_owned));
            }
            let r = self.resources.get_mut(k).unwrap();
            if let Some(m) = max
                && r.max_leases != m
            {
                r.max_leases = m;
                self.emit("RESOURCE_RECONFIGURED", self.now, Some(k)).max_leases = Some(m);
            }
            return false;
        }
        let group = group.flatten().map(str::to_owned);
        let r = RefResource {
            leases: Vec::new(),
            max_leases: max.unwrap_or(1),
            block: None,
            group: group.clone(),
        };
        self.resources.insert(k.clone(), r);
        self.emit("RESOURCE_REGISTERED", self.now, Some(k)).group = Some(group);
        true
    }

    pub fn deregister(&mut self, k: &Key) -> bool {
        if self.resources.remove(k).is_none() {
            return false;
        }
        self.cells.retain(|(rk, _), _| rk != k);
        self.emit("RESOURCE_DEREGISTERED", self.now, Some(k));
        true
    }

    fn cell(&self, k: &Key, ctx: &str) -> Cell {
        self.cells.get(&(k.clone(), ctx.as_bytes().to_vec())).cloned().unwrap_or_else(|| Cell::fresh(0))
    }

    /// Not blocked, and room for one more lease.
    fn free(&self, k: &Key) -> bool {
        let r = &self.resources[k];
        (r.leases.len() as u32) < r.max_leases && r.block.is_none()
    }

    /// Whether `k`'s cell in `ctx` is due for recovery while a lease of `k` is held in `ctx`:
    /// one trial (or probe) at a time.
    fn trial_taken(&self, k: &Key, ctx: &str) -> bool {
        self.cell(k, ctx).due_for_recovery(self.now) && self.resources[k].leased_in(ctx, self.now)
    }

    /// The end of the pacing of the cell of `k` in `ctx`, while it is paced (a cell-less
    /// resource never is).
    pub fn paced_until(&self, k: &Key, ctx: &str) -> Option<Millis> {
        let c = self.cells.get(&(k.clone(), ctx.as_bytes().to_vec()))?;
        let end = c.updated_at + self.cfg.min_gap_for(ctx);
        (self.now < end).then_some(end)
    }

    /// Candidates of `ctx` in canonical order with their scores, held flags and groups.
    pub fn candidates(&self, ctx: &str) -> Vec<Candidate> {
        let half_open = self.cfg.half_open_causes;
        self.resources
            .iter()
            .filter(|(k, _)| self.free(k) && self.paced_until(k, ctx).is_none() && !self.trial_taken(k, ctx))
            .filter_map(|(k, r)| {
                let c = self.cell(k, ctx);
                c.selectable(self.now, half_open).then(|| (k.clone(), c.score, c.held, r.group.clone()))
            })
            .collect()
    }

    /// The candidates a grouped acquire picks among: those of the first listed group with one
    /// that is not held, else of the first with any.
    pub fn group_candidates(&self, ctx: &str, groups: &[Option<&str>]) -> Vec<Candidate> {
        let cands = self.candidates(ctx);
        let of = |g: &Option<&str>| -> Vec<Candidate> {
            cands.iter().filter(|c| c.3.as_deref() == *g).cloned().collect()
        };
        if let Some(g) = groups.iter().find(|g| of(g).iter().any(|c| !c.2)) {
            return of(g);
        }
        groups.iter().map(of).find(|c| !c.is_empty()).unwrap_or_default()
    }

    /// `acquire`: `draw` is called once when there are two or more candidates.
    pub fn acquire(&mut self, ctx: &str, draw: &mut dyn FnMut() -> f64) -> Option<RefGrant> {
        let cands = self.candidates(ctx);
        self.acquire_among(ctx, cands, false, draw)
    }

    /// `acquire(ctx, { groups })`.
    pub fn acquire_in(
        &mut self,
        ctx: &str,
        groups: &[Option<&str>],
        draw: &mut dyn FnMut() -> f64,
    ) -> Option<RefGrant> {
        let cands = self.group_candidates(ctx, groups);
        self.acquire_among(ctx, cands, false, draw)
    }

    /// `tryAcquire(ctx, { groups? })`: `acquire` with no `ACQUISITION_REJECTED`.
    pub fn try_acquire(
        &mut self,
        ctx: &str,
        groups: Option<&[Option<&str>]>,
        draw: &mut dyn FnMut() -> f64,
    ) -> Option<RefGrant> {
        let cands = match groups {
            None => self.candidates(ctx),
            Some(gs) => self.group_candidates(ctx, gs),
        };
        self.acquire_among(ctx, cands, true, draw)
    }

    fn acquire_among(
        &mut self,
        ctx: &str,
        cands: Vec<Candidate>,
        quiet: bool,
        draw: &mut dyn FnMut() -> f64,
    ) -> Option<RefGrant> {
        if cands.is_empty() {
            if !quiet {
                self.emit("ACQUISITION_REJECTED", self.now, None).context = Some(ctx.to_owned());
            }
            return None;
        }
        let pick = if cands.len() == 1 {
            0
        } else {
            let min = cands.iter().map(|c| c.1).fold(f64::INFINITY, f64::min);
            let floor = self.cfg.exploration_floor;
            let weights: Vec<f64> = cands.iter().map(|c| (c.1 - min) + floor).collect();
            let total: f64 = weights.iter().sum();
            let target = draw() * total;
            let mut running = 0.0;
            let mut chosen = cands.len() - 1;
            for (i, w) in weights.iter().enumerate() {
                running += w;
                if running > target {
                    chosen = i;
                    break;
                }
            }
            chosen
        };
        let k = cands[pick].0.clone();
        Some(self.grant(&k, ctx))
    }

    pub fn acquire_resource(&mut self, k: &Key, ctx: &str) -> Option<RefGrant> {
        let paced = self.paced_until(k, ctx).is_some();
        if !self.free(k) || paced || !self.cell(k, ctx).leasable_by_name(self.now) || self.trial_taken(k, ctx)
        {
            return None;
        }
        Some(self.grant(k, ctx))
    }

    fn grant(&mut self, k: &Key, ctx: &str) -> RefGrant {
        self.fencing += 1;
        let (token, now) = (self.fencing, self.now);
        let expires_at = now + self.cfg.lease_ttl_ms;
        let r = self.resources.get_mut(k).unwrap();
        r.leases.push(RefLease { context: ctx.to_owned(), token, leased_at: now, expires_at });
        let group = r.group.clone();
        let e = self.emit("RESOURCE_LEASED", now, Some(k));
        e.context = Some(ctx.to_owned());
        e.token = Some(token);
        e.until = Some(expires_at);
        RefGrant {
            kind: k.0,
            value: text(&k.1),
            group,
            context: ctx.to_owned(),
            token,
            leased_at: now,
            expires_at,
        }
    }

    fn holder(&self, g: &RefGrant) -> Option<Key> {
        let k = key(g.kind, &g.value);
        let l = self.resources.get(&k)?.leases.iter().find(|l| l.token == g.token)?;
        (l.context == g.context && self.now < l.expires_at).then_some(k)
    }

    pub fn renew(&mut self, g: &RefGrant) -> Option<RefGrant> {
        let k = self.holder(g)?;
        let now = self.now;
        let ttl = self.cfg.lease_ttl_ms;
        let r = self.resources.get_mut(&k).unwrap();
        if r.block.is_some() {
            return None;
        }
        let group = r.group.clone();
        let l = r.leases.iter_mut().find(|l| l.token == g.token).unwrap();
        l.expires_at = now + ttl;
        Some(RefGrant { expires_at: l.expires_at, leased_at: l.leased_at, group, ..g.clone() })
    }

    pub fn release(&mut self, g: &RefGrant) -> bool {
        let Some(k) = self.holder(g) else {
            return false;
        };
        self.resources.get_mut(&k).unwrap().leases.retain(|l| l.token != g.token);
        let e = self.emit("LEASE_RELEASED", self.now, Some(&k));
        e.context = Some(g.context.clone());
        e.token = Some(g.token);
        true
    }

    /// Cells of `ctx` whose stored state is COOLING with a cooldown still running.
    pub fn cooling_in(&self, ctx: &str) -> u64 {
        let now = self.now;
        let running = |c: &Cell| c.state == State::Cooling && c.cooldown_until.is_some_and(|u| now < u);
        self.cells.iter().filter(|((_, c), cell)| c.as_slice() == ctx.as_bytes() && running(cell)).count()
            as u64
    }

    pub fn report(&mut self, k: &Key, ctx: &str, outcome: &Outcome) {
        let now = self.now;
        let blocked = self.resources[k].block.is_some();
        let cfg = self.cfg.clone();
        // The cooling cap: would this failure reach step 4 (not blocked, not inside a running
        // cooldown, enough consecutive failures), with `allowed` cooldowns already running?
        let before = self.cell(k, ctx);
        let running = before.state == State::Cooling && before.cooldown_until.is_some_and(|u| now < u);
        let step4 = outcome.failure_type().is_some()
            && !blocked
            && !running
            && u64::from(before.consecutive_failures) + 1 >= u64::from(cfg.cool_after);
        let allowed = (u64::from(cfg.max_cooling_percent) * self.resources.len() as u64 / 100).max(1);
        let capped = step4 && self.cooling_in(ctx) >= allowed;
        let cell = self.cells.entry((k.clone(), ctx.as_bytes().to_vec())).or_insert_with(|| Cell::fresh(now));
        let t = cell.report(outcome, now, blocked, capped, &cfg);
        use repute::cell::Transition;
        match t {
            Transition::Cooled { cause, until } => {
                let e = self.emit("RESOURCE_COOLED", now, Some(k));
                e.context = Some(ctx.to_owned());
                e.cause = Some(cause);
                e.until = Some(until);
            }
            Transition::Recovered => {
                self.emit("RESOURCE_RECOVERED", now, Some(k)).context = Some(ctx.to_owned());
            }
            Transition::Suppressed { cause } => {
                let e = self.emit("COOLDOWN_SUPPRESSED", now, Some(k));
                e.context = Some(ctx.to_owned());
                e.cause = Some(cause);
            }
            _ => {}
        }
    }

    pub fn block(&mut self, k: &Key, b: RefBlock) {
        let now = self.now;
        self.resources.get_mut(k).unwrap().block = Some(b.clone());
        let e = self.emit("RESOURCE_BLOCKLISTED", now, Some(k));
        match b {
            RefBlock::Until(u) => e.until = Some(u),
            RefBlock::Permanent => e.permanent = true,
        }
    }

    pub fn unblock(&mut self, k: &Key) -> bool {
        if self.resources.get_mut(k).unwrap().block.take().is_none() {
            return false;
        }
        self.emit("RESOURCE_UNBLOCKED", self.now, Some(k));
        true
    }

    pub fn due_for_recovery_probe(&self) -> Vec<(Key, String, Millis)> {
        let half_open = self.cfg.half_open_causes;
        self.cells
            .iter()
            .filter(|((k, ctx), c)| {
                let ctx = text(ctx);
                self.free(k)
                    && c.probe_due(self.now, half_open)
                    && self.paced_until(k, &ctx).is_none()
                    && !self.resources[k].leased_in(&ctx, self.now)
            })
            .map(|((k, ctx), c)| (k.clone(), text(ctx), c.cooldown_until.unwrap()))
            .collect()
    }

    pub fn next_change_at(&self, ctx: &str) -> Option<Millis> {
        if !self.candidates(ctx).is_empty() {
            return Some(self.now);
        }
        self.earliest(ctx, |_| true)
    }

    /// `nextChangeAt(ctx, { groups })`.
    pub fn next_change_at_in(&self, ctx: &str, groups: &[Option<&str>]) -> Option<Millis> {
        let listed = |r: &RefResource| groups.contains(&r.group.as_deref());
        if self.candidates(ctx).iter().any(|c| groups.contains(&c.3.as_deref())) {
            return Some(self.now);
        }
        self.earliest(ctx, listed)
    }

    /// The earliest instant at which a resource `keep` admits could become a candidate of
    /// `ctx` by time alone.
    fn earliest(&self, ctx: &str, keep: impl Fn(&RefResource) -> bool) -> Option<Millis> {
        let half_open = self.cfg.half_open_causes;
        self.resources
            .iter()
            .filter(|(_, r)| keep(r))
            .filter_map(|(k, r)| {
                // Room for one more lease: once all but maxLeases − 1 of the leases held ended.
                let mut ends: Vec<Millis> = r.leases.iter().map(|l| l.expires_at).collect();
                ends.sort_unstable();
                let must_end = (r.leases.len() + 1).saturating_sub(r.max_leases as usize);
                let mut at = if must_end == 0 { self.now } else { ends[must_end - 1] };
                match r.block {
                    Some(RefBlock::Permanent) => return None,
                    Some(RefBlock::Until(u)) => at = at.max(u),
                    None => {}
                }
                if let Some(end) = self.paced_until(k, ctx) {
                    at = at.max(end);
                }
                let c = self.cell(k, ctx);
                if c.state == State::Cooling {
                    if !half_open.contains(c.cooldown_cause.unwrap()) {
                        return None;
                    }
                    at = at.max(c.cooldown_until.unwrap());
                    // One trial at a time: every lease held here must end first.
                    for l in r.leases.iter().filter(|l| l.context == ctx) {
                        at = at.max(l.expires_at);
                    }
                }
                Some(at)
            })
            .min()
    }

    /// The dashboard rows the engine should show.
    pub fn view(&self) -> Vec<ViewRow> {
        self.resources
            .iter()
            .map(|(k, r)| {
                let cells = self
                    .cells
                    .range((k.clone(), Vec::new())..)
                    .take_while(|((rk, _), _)| rk == k)
                    .map(|((_, ctx), c)| {
                        let paced = self.paced_until(k, &text(ctx));
                        (text(ctx), ViewState::of(c.state, r.block.is_some()), c.clone(), paced)
                    })
                    .collect();
                let tokens = r.leases.iter().map(|l| l.token).collect();
                (k.clone(), r.group.clone(), r.block.clone(), r.max_leases, tokens, cells)
            })
            .collect()
    }

    /// Drops every lease and the memory of finished ones (what a snapshot → restore does).
    pub fn drop_leases(&mut self) {
        for r in self.resources.values_mut() {
            r.leases.clear();
        }
        self.finished.clear();
    }

    /// Live leases over every resource.
    pub fn leased(&self) -> usize {
        self.resources.values().map(|r| r.leases.len()).sum()
    }

    pub fn is_blocked(&self, k: &Key) -> bool {
        self.resources.get(k).is_some_and(|r| r.block.is_some())
    }

    /// Every instant at which something expires, for stepping the clock exactly onto it.
    pub fn pending_instants(&self) -> Vec<Millis> {
        let mut out = Vec::new();
        for r in self.resources.values() {
            if let Some(RefBlock::Until(u)) = r.block {
                out.push(u);
            }
            out.extend(r.leases.iter().map(|l| l.expires_at));
        }
        for ((_, ctx), c) in &self.cells {
            if let Some(u) = c.cooldown_until {
                out.push(u);
            }
            out.push(c.updated_at + self.cfg.min_gap_for(&text(ctx)));
        }
        out.retain(|&t| t > self.now);
        out.sort_unstable();
        out
    }
}

/// `finish`'s `next`: a context (default: the lease's), groups, quiet.
#[derive(Debug, Clone, PartialEq)]
pub struct RefNext {
    pub context: Option<String>,
    pub groups: Option<Vec<Option<String>>>,
    pub quiet: bool,
}

impl RefPool {
    /// `finish(lease, outcome, { next })` at the clock reading `reading`, with the engine's
    /// error rules for arguments that are valid: a token never issued, a lease finished less
    /// than `leaseTtlMs` ago, a report that would create a cell past `maxCells`.
    pub fn finish(
        &mut self,
        g: &RefGrant,
        outcome: &Outcome,
        next: Option<&RefNext>,
        reading: Millis,
        draw: &mut dyn FnMut() -> f64,
    ) -> Result<Option<RefGrant>, &'static str> {
        if g.token == 0 || g.token > self.fencing {
            return Err("INVALID_ARGUMENT");
        }
        let then = self.now.max(reading);
        if self.finished.get(&g.token).is_some_and(|&at| then < at + self.cfg.lease_ttl_ms) {
            return Err("LEASE_FINISHED");
        }
        let k = key(g.kind, &g.value);
        let registered = self.resources.contains_key(&k);
        let cell_key = (k.clone(), g.context.as_bytes().to_vec());
        if registered
            && !self.cells.contains_key(&cell_key)
            && self.cells.len() >= self.cfg.max_cells as usize
        {
            return Err("CAPACITY_EXCEEDED");
        }
        let now = self.advance(reading);
        self.finished.insert(g.token, now);
        if registered {
            self.report(&k, &g.context, outcome);
            self.release(g);
        }
        let Some(n) = next else {
            return Ok(None);
        };
        let ctx = n.context.clone().unwrap_or_else(|| g.context.clone());
        let groups: Option<Vec<Option<&str>>> =
            n.groups.as_ref().map(|gs| gs.iter().map(|g| g.as_deref()).collect());
        let cands = match &groups {
            None => self.candidates(&ctx),
            Some(gs) => self.group_candidates(&ctx, gs),
        };
        Ok(self.acquire_among(&ctx, cands, n.quiet, draw))
    }

    /// `setConfig(patch)`: `CONFIG_CHANGED` and `true` unless the result is the config in force.
    pub fn set_config(&mut self, cfg: Config) -> bool {
        if cfg == self.cfg {
            return false;
        }
        self.cfg = cfg;
        self.emit("CONFIG_CHANGED", self.now, None);
        true
    }
}
