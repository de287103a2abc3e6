//! A naive reference pool: the SPEC's rules written the obvious way — linear scans over
//! `BTreeMap`s in canonical order, no indexes, no lazy bookkeeping. It shares only the cell
//! report rules (`repute::cell::Cell::report`, covered rule by rule in `rules_report.rs`), so the
//! model test checks the engine's selection, leases, blocks, expiries and views against it.

use std::collections::BTreeMap;

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

#[derive(Debug, Clone, Default)]
pub struct RefResource {
    pub lease: Option<RefLease>,
    pub block: Option<RefBlock>,
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
}

pub fn key(kind: Kind, value: &str) -> Key {
    (kind, value.as_bytes().to_vec())
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("utf-8")
}

/// A dashboard row: key, block, lease token, cells by context.
pub type ViewRow = (Key, Option<RefBlock>, Option<u64>, Vec<(String, ViewState, Cell)>);

#[derive(Debug, Clone, PartialEq)]
pub struct RefGrant {
    pub kind: Kind,
    pub value: String,
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
        });
        self.events.last_mut().unwrap()
    }

    /// Time passes to `reading` (monotonic), expiring leases and blocks in (time, blocks
    /// first, key) order.
    pub fn advance(&mut self, reading: Millis) -> Millis {
        self.now = self.now.max(reading);
        let now = self.now;
        let mut due: Vec<(Millis, u8, Key)> = Vec::new();
        for (k, r) in &self.resources {
            if let Some(RefBlock::Until(u)) = r.block
                && u <= now
            {
                due.push((u, 0, k.clone()));
            }
            if let Some(l) = &r.lease
                && l.expires_at <= now
            {
                due.push((l.expires_at, 1, k.clone()));
            }
        }
        due.sort();
        for (at, what, k) in due {
            let r = self.resources.get_mut(&k).unwrap();
            if what == 0 {
                r.block = None;
                self.emit("BLOCK_EXPIRED", at, Some(&k));
            } else {
                let token = r.lease.take().unwrap().token;
                self.emit("LEASE_EXPIRED", at, Some(&k)).token = Some(token);
            }
        }
        now
    }

    pub fn register(&mut self, k: &Key) -> bool {
        if self.resources.contains_key(k) {
            return false;
        }
        self.resources.insert(k.clone(), RefResource::default());
        self.emit("RESOURCE_REGISTERED", self.now, Some(k));
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

    fn free(&self, k: &Key) -> bool {
        let r = &self.resources[k];
        r.lease.is_none() && r.block.is_none()
    }

    /// Candidates of `ctx` in canonical order with their scores.
    pub fn candidates(&self, ctx: &str) -> Vec<(Key, f64)> {
        let half_open = self.cfg.half_open_causes;
        self.resources
            .keys()
            .filter(|k| self.free(k))
            .filter_map(|k| {
                let c = self.cell(k, ctx);
                c.selectable(self.now, half_open).then(|| (k.clone(), c.score))
            })
            .collect()
    }

    /// `acquire`: `draw` is called once when there are two or more candidates.
    pub fn acquire(&mut self, ctx: &str, draw: &mut dyn FnMut() -> f64) -> Option<RefGrant> {
        let cands = self.candidates(ctx);
        if cands.is_empty() {
            self.emit("ACQUISITION_REJECTED", self.now, None).context = Some(ctx.to_owned());
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
        if !self.free(k) || !self.cell(k, ctx).leasable_by_name(self.now) {
            return None;
        }
        Some(self.grant(k, ctx))
    }

    fn grant(&mut self, k: &Key, ctx: &str) -> RefGrant {
        self.fencing += 1;
        let (token, now) = (self.fencing, self.now);
        let expires_at = now + self.cfg.lease_ttl_ms;
        self.resources.get_mut(k).unwrap().lease =
            Some(RefLease { context: ctx.to_owned(), token, leased_at: now, expires_at });
        let e = self.emit("RESOURCE_LEASED", now, Some(k));
        e.context = Some(ctx.to_owned());
        e.token = Some(token);
        e.until = Some(expires_at);
        RefGrant { kind: k.0, value: text(&k.1), context: ctx.to_owned(), token, leased_at: now, expires_at }
    }

    fn holder(&self, g: &RefGrant) -> Option<Key> {
        let k = key(g.kind, &g.value);
        let l = self.resources.get(&k)?.lease.as_ref()?;
        (l.token == g.token && l.context == g.context && self.now < l.expires_at).then_some(k)
    }

    pub fn renew(&mut self, g: &RefGrant) -> Option<RefGrant> {
        let k = self.holder(g)?;
        let now = self.now;
        let ttl = self.cfg.lease_ttl_ms;
        let r = self.resources.get_mut(&k).unwrap();
        if r.block.is_some() {
            return None;
        }
        let l = r.lease.as_mut().unwrap();
        l.expires_at = now + ttl;
        Some(RefGrant { expires_at: l.expires_at, leased_at: l.leased_at, ..g.clone() })
    }

    pub fn release(&mut self, g: &RefGrant) -> bool {
        let Some(k) = self.holder(g) else {
            return false;
        };
        self.resources.get_mut(&k).unwrap().lease = None;
        let e = self.emit("LEASE_RELEASED", self.now, Some(&k));
        e.context = Some(g.context.clone());
        e.token = Some(g.token);
        true
    }

    pub fn report(&mut self, k: &Key, ctx: &str, outcome: &Outcome) {
        let now = self.now;
        let blocked = self.resources[k].block.is_some();
        let cfg = self.cfg.clone();
        let cell = self.cells.entry((k.clone(), ctx.as_bytes().to_vec())).or_insert_with(|| Cell::fresh(now));
        let t = cell.report(outcome, now, blocked, false, &cfg);
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
            .filter(|((k, _), c)| self.free(k) && c.probe_due(self.now, half_open))
            .map(|((k, ctx), c)| (k.clone(), text(ctx), c.cooldown_until.unwrap()))
            .collect()
    }

    pub fn next_change_at(&self, ctx: &str) -> Option<Millis> {
        if !self.candidates(ctx).is_empty() {
            return Some(self.now);
        }
        let half_open = self.cfg.half_open_causes;
        self.resources
            .iter()
            .filter_map(|(k, r)| {
                let mut at = r.lease.as_ref().map_or(self.now, |l| l.expires_at);
                match r.block {
                    Some(RefBlock::Permanent) => return None,
                    Some(RefBlock::Until(u)) => at = at.max(u),
                    None => {}
                }
                let c = self.cell(k, ctx);
                if c.state == State::Cooling {
                    if !half_open.contains(c.cooldown_cause.unwrap()) {
                        return None;
                    }
                    at = at.max(c.cooldown_until.unwrap());
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
                    .map(|((_, ctx), c)| (text(ctx), ViewState::of(c.state, r.block.is_some()), c.clone()))
                    .collect();
                (k.clone(), r.block.clone(), r.lease.as_ref().map(|l| l.token), cells)
            })
            .collect()
    }

    /// Drops every lease (what a snapshot → restore does).
    pub fn drop_leases(&mut self) {
        for r in self.resources.values_mut() {
            r.lease = None;
        }
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
            if let Some(l) = &r.lease {
                out.push(l.expires_at);
            }
        }
        for c in self.cells.values() {
            if let Some(u) = c.cooldown_until {
                out.push(u);
            }
        }
        out.retain(|&t| t > self.now);
        out.sort_unstable();
        out
    }
}
