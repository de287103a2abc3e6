//! The hosts' JSON of what the engine hands out: leases, events, dashboard views (resources,
//! one resource's detail) and the probe list (stats and the config cross as values:
//! `views_value.rs`). The wasm facade returns these texts; the
//! golden scenarios compare them across native, Node and the browser.
//!
//! Hand-written rather than derived so that key order is fixed by this file, integers print as
//! integers, floats print in their shortest round-trip form (`-34`, `12.345`), and large bulk
//! results are built without intermediate trees. Equal inputs give equal bytes on every host.

use std::fmt::Write;

use crate::events::PoolEvent;
use crate::json::{Obj, array, opt_float, opt_uint, string};
use crate::pool::{CellView, Lease, ProbeDue, ResourceDetail, ResourceView};
use crate::registry::blocklist::Block;
use crate::window::Window;

/// A group name, or `null` for none.
fn write_group(out: &mut String, g: Option<&str>) {
    match g {
        Some(g) => string(out, g),
        None => out.push_str("null"),
    }
}

pub fn write_lease(out: &mut String, l: &Lease) {
    let mut o = Obj::open(out);
    o.str("kind", l.kind.as_str());
    o.str("value", &l.value);
    write_group(o.key("group"), l.group.as_deref());
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
    if let Some(g) = &e.group {
        write_group(o.key("group"), g.as_deref());
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
    if let Some(max) = e.max_leases {
        o.uint("maxLeases", max.into());
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
    opt_uint(o.key("pacedUntil"), c.paced_until);
    o.raw("held", if c.held { "true" } else { "false" });
    opt_float(o.key("p50LatencyMs"), c.p50_latency_ms);
    opt_float(o.key("p95LatencyMs"), c.p95_latency_ms);
}

/// A resource view's fields before `cells`.
fn write_resource_head(o: &mut Obj, r: &ResourceView) {
    o.str("kind", r.kind.as_str());
    o.str("value", &r.value);
    write_group(o.key("group"), r.group.as_deref());
    write_block(o.key("blocked"), r.blocked);
    match &r.lease {
        Some(l) => write_lease(o.key("lease"), l),
        None => o.raw("lease", "null"),
    }
    o.uint("maxLeases", r.max_leases.into());
    array(o.key("leases"), &r.leases, write_lease);
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
        w.write_json(o.key("window"));
        o.close();
    });
    o.close();
    out
}

pub fn probe_due(list: &[ProbeDue]) -> String {
    let mut out = String::with_capacity(list.len() * 100 + 2);
    array(&mut out, list, |out, p| {
        let mut o = Obj::open(out);
        o.str("kind", p.kind.as_str());
        o.str("value", &p.value);
        write_group(o.key("group"), p.group.as_deref());
        o.str("context", &p.context);
        o.uint("cooldownUntil", p.cooldown_until);
        o.close();
    });
    out
}
