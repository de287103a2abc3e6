//! Snapshot v1 (SPEC §6): the whole durable state as one canonical JSON document, and the
//! strict, all-or-nothing restore.
//!
//! Canonical means fixed key order, resources in (kind, value bytes) order, blocklist likewise,
//! cells in (kind, value, context bytes) order, windows oldest first: equal states give equal
//! bytes. Restore parses with duplicate-key and unknown-field detection, validates everything
//! (each error names the JSON path), builds a complete new state and only then returns it.
//! Leases are not part of a snapshot; the fencing high-water mark is.

use std::borrow::Cow;
use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Deserialize;

use crate::cell::Cell;
use crate::check::{self, MAX_SAFE, int_in};
use crate::config::{Config, ConfigPatch};
use crate::error::{Error, Result};
use crate::events::EventBuffer;
use crate::index::cells::Context;
use crate::json::{self, Obj, array};
use crate::pool::Core;
use crate::registry::Block;
use crate::types::{FailureType, Kind, Millis, State};
use crate::window::{Observation, Window};

pub const FORMAT: &str = "repute-snapshot";
pub const VERSION: u64 = 1;

/// Writes the canonical snapshot of `core` (taken at `core.now`).
pub fn write(core: &Core) -> String {
    let mut out = String::with_capacity(512 + core.reg.len() * 64 + core.cells.len() * 320);
    let mut o = Obj::open(&mut out);
    o.str("format", FORMAT);
    o.uint("version", VERSION);
    o.uint("revision", core.revision);
    o.uint("takenAt", core.now);
    o.uint("fencingHighWater", core.fencing);
    o.uint("nextEventSeq", core.events.next_seq());
    json::write_config(o.key("config"), &core.cfg);
    let order = core.reg.in_order();
    array(o.key("registered"), &order, |out, &slot| {
        let r = core.reg.get(slot);
        let mut o = Obj::open(out);
        o.str("kind", r.kind.as_str());
        o.str("value", &r.value);
        o.close();
    });
    let blocked: Vec<u32> = order.iter().copied().filter(|&s| core.reg.get(s).block.is_some()).collect();
    array(o.key("blocklist"), &blocked, |out, &slot| {
        let r = core.reg.get(slot);
        let mut o = Obj::open(out);
        o.str("kind", r.kind.as_str());
        o.str("value", &r.value);
        match r.block {
            Some(Block::Until(u)) => o.uint("until", u),
            _ => o.raw("permanent", "true"),
        }
        o.close();
    });
    let by_res = core.cells_by_resource();
    let cells: Vec<u32> = order.iter().flat_map(|&s| by_res[s as usize].iter().copied()).collect();
    array(o.key("cells"), &cells, |out, &id| {
        let slot = core.cells.get(id);
        let r = core.reg.get(slot.res);
        let c = &slot.cell;
        let mut o = Obj::open(out);
        o.str("kind", r.kind.as_str());
        o.str("value", &r.value);
        o.str("context", &core.ctxs.get(slot.ctx).name);
        o.float("score", c.score);
        o.uint("consecutiveFailures", c.consecutive_failures.into());
        o.uint("consecutiveSuccesses", c.consecutive_successes.into());
        o.str("state", c.state.as_str());
        match c.cooldown_until {
            Some(u) => o.uint("cooldownUntil", u),
            None => o.raw("cooldownUntil", "null"),
        }
        match c.cooldown_cause {
            Some(t) => o.str("cooldownCause", t.as_str()),
            None => o.raw("cooldownCause", "null"),
        }
        o.uint("updatedAt", c.updated_at);
        let obs: Vec<Observation> = c.window.iter().collect();
        array(o.key("window"), &obs, |out, ob| {
            out.push('[');
            json::string(out, ob.label());
            out.push(',');
            match ob.latency_ms() {
                Some(ms) => json::float(out, ms),
                None => out.push_str("null"),
            }
            out.push(']');
        });
        o.close();
    });
    o.close();
    out
}

// ---------------------------------------------------------------------------------------------
// Restore

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SnapshotIn<'a> {
    #[serde(borrow)]
    format: Cow<'a, str>,
    version: f64,
    revision: f64,
    taken_at: f64,
    fencing_high_water: f64,
    next_event_seq: f64,
    config: ConfigPatch,
    #[serde(borrow)]
    registered: Vec<ResourceIn<'a>>,
    #[serde(borrow)]
    blocklist: Vec<BlockIn<'a>>,
    #[serde(borrow)]
    cells: Vec<CellIn<'a>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResourceIn<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    value: Cow<'a, str>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BlockIn<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    value: Cow<'a, str>,
    until: Option<f64>,
    permanent: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CellIn<'a> {
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    value: Cow<'a, str>,
    #[serde(borrow)]
    context: Cow<'a, str>,
    score: f64,
    consecutive_failures: f64,
    consecutive_successes: f64,
    #[serde(borrow)]
    state: Cow<'a, str>,
    cooldown_until: Option<f64>,
    #[serde(borrow)]
    cooldown_cause: Option<Cow<'a, str>>,
    updated_at: f64,
    #[serde(borrow)]
    window: Vec<(Cow<'a, str>, Option<f64>)>,
}

/// Only what is needed to tell a version mismatch from a malformed document.
#[derive(Deserialize)]
struct Header {
    format: Option<serde_json::Value>,
    version: Option<serde_json::Value>,
}

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidSnapshot(msg.into())
}

/// Checks `format` and `version` leniently, so that a document of another version gets the
/// version error rather than complaints about its fields.
fn check_header(json: &str) -> Result<()> {
    let h: Header = serde_json::from_str(json).map_err(|e| bad(format!("not a JSON object: {e}")))?;
    if h.format.as_ref().and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(bad(format!("format: expected \"{FORMAT}\"")));
    }
    match h.version.as_ref().and_then(serde_json::Value::as_f64) {
        Some(v) if v == VERSION as f64 => Ok(()),
        Some(v) => Err(Error::UnsupportedSnapshotVersion(format!(
            "version {v} is not supported (this engine reads version {VERSION})"
        ))),
        None => Err(bad("version: expected an integer")),
    }
}

fn kind_at(path: &str, s: &str) -> Result<Kind> {
    Kind::parse(s).ok_or_else(|| bad(format!("{path}: must be PROXY, ACCOUNT or SESSION")))
}

fn instant(path: &str, v: f64) -> Result<Millis> {
    int_in(path, v, 0, MAX_SAFE).map_err(bad)
}

fn failure_at(path: &str, s: &str) -> Result<FailureType> {
    FailureType::parse(s).ok_or_else(|| {
        bad(format!("{path}: must be BLOCKED, TLS_HANDSHAKE, CONNECTION_RESET, TIMEOUT or SLOW"))
    })
}

/// Parses and validates a snapshot; returns a complete state or an error, never half of one.
pub fn restore(json: &str, overrides: Option<&ConfigPatch>) -> Result<Core> {
    let de = &mut serde_json::Deserializer::from_str(json);
    let snap: SnapshotIn = match serde_path_to_error::deserialize(de) {
        Ok(s) => s,
        Err(e) => {
            check_header(json)?;
            return Err(bad(format!("{}: {}", e.path(), e.inner())));
        }
    };
    if snap.format != FORMAT {
        return Err(bad(format!("format: expected \"{FORMAT}\"")));
    }
    if snap.version != VERSION as f64 {
        return Err(Error::UnsupportedSnapshotVersion(format!(
            "version {} is not supported (this engine reads version {VERSION})",
            snap.version
        )));
    }
    if let Some(field) = snap.config.first_missing() {
        return Err(bad(format!("config.{field}: missing (a snapshot holds the complete config)")));
    }
    let stored_cfg = snap.config.apply(&Config::default(), "config.").map_err(bad)?;
    let cfg = match overrides {
        Some(p) => p.apply(&stored_cfg, "").map_err(Error::InvalidConfig)?,
        None => stored_cfg.clone(),
    };
    let taken_at = instant("takenAt", snap.taken_at)?;
    if taken_at > check::MAX_INSTANT {
        return Err(bad("takenAt: must be at most 2^52"));
    }
    let mut core = Core::new(cfg, taken_at);
    core.revision = instant("revision", snap.revision)?;
    core.fencing = instant("fencingHighWater", snap.fencing_high_water)?;
    let next_seq = int_in("nextEventSeq", snap.next_event_seq, 1, MAX_SAFE).map_err(bad)?;
    core.events = EventBuffer::new(core.cfg.event_buffer_size as usize, next_seq);

    if snap.registered.len() > core.cfg.max_resources as usize {
        return Err(Error::CapacityExceeded(format!(
            "the snapshot holds {} resources; maxResources is {}",
            snap.registered.len(),
            core.cfg.max_resources
        )));
    }
    if snap.cells.len() > core.cfg.max_cells as usize {
        return Err(Error::CapacityExceeded(format!(
            "the snapshot holds {} cells; maxCells is {}",
            snap.cells.len(),
            core.cfg.max_cells
        )));
    }
    for (i, r) in snap.registered.iter().enumerate() {
        let kind = kind_at(&format!("registered[{i}].kind"), &r.kind)?;
        check::value_text(&format!("registered[{i}].value"), &r.value).map_err(bad)?;
        if core.reg.find(kind, &r.value).is_some() {
            return Err(bad(format!("registered[{i}]: duplicate resource")));
        }
        core.reg.add(kind, &r.value);
    }
    for (i, b) in snap.blocklist.iter().enumerate() {
        let path = format!("blocklist[{i}]");
        let kind = kind_at(&format!("{path}.kind"), &b.kind)?;
        let slot = core
            .reg
            .find(kind, &b.value)
            .ok_or_else(|| bad(format!("{path}.value: not a registered resource")))?;
        let block = match (b.until, b.permanent) {
            (Some(u), None) => {
                let until = instant(&format!("{path}.until"), u)?;
                if until <= taken_at {
                    return Err(bad(format!("{path}.until: must be after takenAt")));
                }
                Block::Until(until)
            }
            (None, Some(true)) => Block::Permanent,
            _ => {
                return Err(bad(format!("{path}: needs exactly one of until or permanent: true")));
            }
        };
        let r = core.reg.get_mut(slot);
        if r.block.is_some() {
            return Err(bad(format!("{path}: duplicate entry")));
        }
        r.block = Some(block);
        if let Block::Until(until) = block {
            let value = Rc::clone(&r.value);
            core.expiries.add_block(until, kind, &value);
        }
    }
    core.reg.order_rebuild();

    let window_cap = core.cfg.window_size as usize;
    let mut names: FxHashMap<&str, Rc<str>> = FxHashMap::default();
    let mut seen: FxHashSet<(u32, *const u8)> = FxHashSet::default();
    let mut placed: Vec<(u32, Rc<str>, Cell)> = Vec::with_capacity(snap.cells.len());
    for (i, c) in snap.cells.iter().enumerate() {
        let path = format!("cells[{i}]");
        let kind = kind_at(&format!("{path}.kind"), &c.kind)?;
        let slot = core
            .reg
            .find(kind, &c.value)
            .ok_or_else(|| bad(format!("{path}.value: not a registered resource")))?;
        check::context_text(&format!("{path}.context"), &c.context).map_err(bad)?;
        let name = Rc::clone(names.entry(&c.context).or_insert_with(|| Rc::from(&*c.context)));
        if !seen.insert((slot, name.as_ptr())) {
            return Err(bad(format!("{path}: a second cell for the same resource and context")));
        }
        let cell = cell_in(&path, c, taken_at, stored_cfg.window_size as usize, window_cap)?;
        placed.push((slot, name, cell));
    }
    build_cells(&mut core, placed);
    Ok(core)
}

fn cell_in(path: &str, c: &CellIn, taken_at: Millis, stored_cap: usize, cap: usize) -> Result<Cell> {
    let f = |name: &str| format!("{path}.{name}");
    if !(c.score.is_finite() && (-100.0..=100.0).contains(&c.score)) {
        return Err(bad(format!("{}: must be a number in [-100, 100]", f("score"))));
    }
    let cf = int_in(&f("consecutiveFailures"), c.consecutive_failures, 0, u32::MAX.into()).map_err(bad)?;
    let cs = int_in(&f("consecutiveSuccesses"), c.consecutive_successes, 0, u32::MAX.into()).map_err(bad)?;
    if cf > 0 && cs > 0 {
        return Err(bad(format!(
            "{path}: consecutiveFailures and consecutiveSuccesses cannot both be non-zero"
        )));
    }
    let state = State::parse(&c.state)
        .ok_or_else(|| bad(format!("{}: must be HEALTHY, COOLING or RECOVERING", f("state"))))?;
    let until = c.cooldown_until.map(|u| instant(&f("cooldownUntil"), u)).transpose()?;
    let cause = c.cooldown_cause.as_deref().map(|s| failure_at(&f("cooldownCause"), s)).transpose()?;
    if until.is_some() != cause.is_some() {
        return Err(bad(format!("{path}: cooldownUntil and cooldownCause must both be set or both null")));
    }
    if state == State::Cooling && until.is_none() {
        return Err(bad(format!("{path}: a COOLING cell needs cooldownUntil and cooldownCause")));
    }
    let updated_at = instant(&f("updatedAt"), c.updated_at)?;
    if updated_at > taken_at {
        return Err(bad(format!("{}: must not be after takenAt", f("updatedAt"))));
    }
    if c.window.len() > stored_cap {
        return Err(bad(format!("{}: holds more than windowSize = {stored_cap} outcomes", f("window"))));
    }
    let mut obs = Vec::with_capacity(c.window.len());
    for (j, (label, lat)) in c.window.iter().enumerate() {
        let failure = match &**label {
            "OK" => None,
            other => Some(failure_at(&format!("{path}.window[{j}][0]"), other)?),
        };
        if let Some(l) = lat
            && !(l.is_finite() && *l >= 0.0)
        {
            return Err(bad(format!("{path}.window[{j}][1]: must be a non-negative number or null")));
        }
        obs.push(Observation::new(failure, *lat));
    }
    Ok(Cell {
        score: crate::cell::clamp_score(c.score),
        consecutive_failures: cf as u32,
        consecutive_successes: cs as u32,
        state,
        cooldown_until: until,
        cooldown_cause: cause,
        updated_at,
        window: Window::from_oldest_first(obs, cap),
    })
}

/// Stores validated cells, creates their contexts and builds every index.
fn build_cells(core: &mut Core, mut placed: Vec<(u32, Rc<str>, Cell)>) {
    let reg = &core.reg;
    placed.sort_by(|a, b| {
        let (ra, rb) = (reg.get(a.0), reg.get(b.0));
        (a.1.as_bytes(), ra.kind, ra.value.as_bytes()).cmp(&(b.1.as_bytes(), rb.kind, rb.value.as_bytes()))
    });
    let now = core.now;
    let half_open = core.cfg.half_open_causes;
    let mut rest = placed.into_iter().peekable();
    while let Some((slot, name, cell)) = rest.next() {
        let ctx = core.ctxs.add(Context::new(Rc::clone(&name), &core.reg, &core.log));
        let mut ids = Vec::new();
        let mut next = Some((slot, cell));
        while let Some((slot, cell)) = next.take() {
            let eligible = cell.selectable(now, half_open);
            ids.push((core.cells.add(slot, ctx, cell), eligible));
            if rest.peek().is_some_and(|p| Rc::ptr_eq(&p.1, &name)) {
                next = rest.next().map(|(s, _, c)| (s, c));
            }
        }
        let c = core.ctxs.get_mut(ctx);
        c.build(&mut core.cells, &core.reg, &core.log, &ids);
        for (id, _) in ids {
            core.track_cooldown(id, None, now);
        }
    }
}
