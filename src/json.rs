//! Canonical JSON writers for everything the engine hands out as text: config, leases, events,
//! dashboard views, stats, probe lists (the snapshot uses them too).
//!
//! Hand-written rather than derived so that key order is fixed by this file, integers print as
//! integers, floats print in their shortest round-trip form (`-34`, `12.345`), and large bulk
//! results are built without intermediate trees. Equal inputs give equal bytes on every host.

use std::fmt::Write;

use crate::config::Config;
use crate::events::PoolEvent;
use crate::pool::{CellView, Lease, ProbeDue, ResourceDetail, ResourceView, Stats};
use crate::registry::Block;
use crate::types::{FailureType, PerFailure};
use crate::window::{Observation, Window};

/// Writes a JSON string literal.
pub fn string(out: &mut String, s: &str) {
    out.push('"');
    // Most strings (values, contexts, names) need no escape: one tight scan, one copy.
    if !s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Writes a finite float in its shortest round-trip form (integral values without `.0`).
pub fn float(out: &mut String, v: f64) {
    debug_assert!(v.is_finite());
    let _ = write!(out, "{v}");
}

pub fn uint(out: &mut String, v: u64) {
    let _ = write!(out, "{v}");
}

fn opt_uint(out: &mut String, v: Option<u64>) {
    match v {
        Some(v) => uint(out, v),
        None => out.push_str("null"),
    }
}

fn opt_float(out: &mut String, v: Option<f64>) {
    match v {
        Some(v) => float(out, v),
        None => out.push_str("null"),
    }
}

/// An object writer that handles commas: `obj.key("a"); value...; obj.key("b"); ...`.
pub struct Obj<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Obj<'a> {
    pub fn open(out: &'a mut String) -> Obj<'a> {
        out.push('{');
        Obj { out, first: true }
    }

    pub fn key(&mut self, k: &str) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        string(self.out, k);
        self.out.push(':');
        self.out
    }

    pub fn str(&mut self, k: &str, v: &str) {
        string(self.key(k), v);
    }

    pub fn uint(&mut self, k: &str, v: u64) {
        uint(self.key(k), v);
    }

    pub fn float(&mut self, k: &str, v: f64) {
        float(self.key(k), v);
    }

    pub fn raw(&mut self, k: &str, v: &str) {
        self.key(k).push_str(v);
    }

    pub fn close(self) {
        self.out.push('}');
    }
}

/// Writes `[item, item, ...]`.
pub fn array<T>(out: &mut String, items: &[T], mut each: impl FnMut(&mut String, &T)) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        each(out, item);
    }
    out.push(']');
}

fn per_failure<T: Copy>(out: &mut String, table: &PerFailure<T>, mut each: impl FnMut(&mut String, T)) {
    let mut o = Obj::open(out);
    for t in FailureType::ALL {
        each(o.key(t.as_str()), table[t]);
    }
    o.close();
}

pub fn write_config(out: &mut String, c: &Config) {
    let mut o = Obj::open(out);
    o.uint("coolAfter", c.cool_after.into());
    o.uint("recoverAfter", c.recover_after.into());
    o.float("successReward", c.success_reward);
    per_failure(o.key("penalties"), &c.penalties, float);
    per_failure(o.key("cooldownBaseMs"), &c.cooldown_base_ms, uint);
    o.uint("maxBackoffExponent", c.max_backoff_exponent.into());
    o.float("explorationFloor", c.exploration_floor);
    o.uint("leaseTtlMs", c.lease_ttl_ms);
    o.uint("windowSize", c.window_size.into());
    let causes: Vec<FailureType> = c.half_open_causes.iter().collect();
    array(o.key("halfOpenCauses"), &causes, |out, t| string(out, t.as_str()));
    o.uint("maxResources", c.max_resources.into());
    o.uint("maxCells", c.max_cells.into());
    o.uint("eventBufferSize", c.event_buffer_size.into());
    o.close();
}

pub fn write_lease(out: &mut String, l: &Lease) {
    let mut o = Obj::open(out);
    o.str("kind", l.kind.as_str());
    o.str("value", &l.value);
    o.str("context", &l.context);
    o.uint("token", l.token);
    o.uint("leasedAt", l.leased_at);
    o.uint("expiresAt", l.expires_at);
    o.close();
}

pub fn write_event(out: &mut String, e: &PoolEvent) {
    let mut o = Obj::open(out);
    o.uint("seq", e.seq);
    o.str("type", e.ty.as_str());
    o.uint("at", e.at);
    if let Some((kind, value)) = &e.resource {
        o.str("kind", kind.as_str());
        o.str("value", value);
    }
    if let Some(c) = &e.context {
        o.str("context", c);
    }
    if let Some(cause) = e.cause {
        o.str("cause", cause.as_str());
    }
    if let Some(until) = e.until {
        o.uint("until", until);
    }
    if e.permanent {
        o.raw("permanent", "true");
    }
    if let Some(token) = e.token {
        o.uint("token", token);
    }
    o.close();
}

pub fn events(events: &[PoolEvent]) -> String {
    let mut out = String::with_capacity(events.len() * 120 + 2);
    array(&mut out, events, write_event);
    out
}

/// `{"until": n}`, `{"permanent": true}` or `null`.
pub fn write_block(out: &mut String, b: Option<Block>) {
    match b {
        None => out.push_str("null"),
        Some(Block::Permanent) => out.push_str("{\"permanent\":true}"),
        Some(Block::Until(u)) => {
            let _ = write!(out, "{{\"until\":{u}}}");
        }
    }
}

/// A window, oldest first, as `[["OK", 12.5], ["TIMEOUT", null], ...]` (label, latency in ms).
pub fn write_window(out: &mut String, w: &Window) {
    let obs: Vec<Observation> = w.iter().collect();
    array(out, &obs, |out, ob| {
        out.push('[');
        string(out, ob.label());
        out.push(',');
        opt_float(out, ob.latency_ms());
        out.push(']');
    });
}

fn write_cell_view(out: &mut String, c: &CellView) {
    let mut o = Obj::open(out);
    write_cell_fields(&mut o, c);
    o.close();
}

fn write_cell_fields(o: &mut Obj, c: &CellView) {
    o.str("context", &c.context);
    o.str("state", c.state.as_str());
    o.float("score", c.score);
    o.uint("consecutiveFailures", c.consecutive_failures.into());
    o.uint("consecutiveSuccesses", c.consecutive_successes.into());
    opt_uint(o.key("cooldownUntil"), c.cooldown_until);
    match c.cooldown_cause {
        Some(t) => o.str("cooldownCause", t.as_str()),
        None => o.raw("cooldownCause", "null"),
    }
    o.uint("updatedAt", c.updated_at);
    opt_float(o.key("p50LatencyMs"), c.p50_latency_ms);
    opt_float(o.key("p95LatencyMs"), c.p95_latency_ms);
}

/// A resource view's fields before `cells`.
fn write_resource_head(o: &mut Obj, r: &ResourceView) {
    o.str("kind", r.kind.as_str());
    o.str("value", &r.value);
    write_block(o.key("blocked"), r.blocked);
    match &r.lease {
        Some(l) => write_lease(o.key("lease"), l),
        None => o.raw("lease", "null"),
    }
}

pub fn resources(views: &[ResourceView]) -> String {
    let mut out = String::with_capacity(views.len() * 200 + 2);
    array(&mut out, views, |out, r| {
        let mut o = Obj::open(out);
        write_resource_head(&mut o, r);
        array(o.key("cells"), &r.cells, write_cell_view);
        o.close();
    });
    out
}

/// One resource as `resources` writes it, each cell with its `window` last.
pub fn resource_detail(d: &ResourceDetail) -> String {
    let mut out = String::with_capacity(256 + d.view.cells.len() * 400);
    let mut o = Obj::open(&mut out);
    write_resource_head(&mut o, &d.view);
    let cells: Vec<(&CellView, &Window)> = d.view.cells.iter().zip(&d.windows).collect();
    array(o.key("cells"), &cells, |out, (c, w)| {
        let mut o = Obj::open(out);
        write_cell_fields(&mut o, c);
        write_window(o.key("window"), w);
        o.close();
    });
    o.close();
    out
}

pub fn stats(s: &Stats) -> String {
    let mut out = String::with_capacity(256);
    let mut o = Obj::open(&mut out);
    o.uint("registered", s.registered as u64);
    o.uint("cells", s.cells as u64);
    o.uint("contexts", s.contexts as u64);
    o.uint("leased", s.leased as u64);
    o.uint("blocked", s.blocked as u64);
    o.uint("available", s.available as u64);
    o.uint("revision", s.revision);
    o.uint("fencingHighWater", s.fencing_high_water);
    o.uint("nextEventSeq", s.next_event_seq);
    o.uint("eventsPending", s.events_pending as u64);
    o.uint("eventsDropped", s.events_dropped);
    o.uint("now", s.now);
    let [healthy, cooling, recovering] = s.cells_by_state;
    let mut by = Obj::open(o.key("cellsByState"));
    by.uint("HEALTHY", healthy as u64);
    by.uint("COOLING", cooling as u64);
    by.uint("RECOVERING", recovering as u64);
    by.close();
    o.close();
    out
}

pub fn probe_due(list: &[ProbeDue]) -> String {
    let mut out = String::with_capacity(list.len() * 100 + 2);
    array(&mut out, list, |out, p| {
        let mut o = Obj::open(out);
        o.str("kind", p.kind.as_str());
        o.str("value", &p.value);
        o.str("context", &p.context);
        o.uint("cooldownUntil", p.cooldown_until);
        o.close();
    });
    out
}
