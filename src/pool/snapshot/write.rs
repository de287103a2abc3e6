//! Writing snapshot version 3: the canonical JSON document of the durable state.
//!
//! Canonical means fixed key order, resources in (kind, value bytes) order, blocklist likewise,
//! cells in (kind, value, context bytes) order, windows oldest first: equal states give equal
//! bytes. Leases are not part of a snapshot; the fencing high-water mark is. The records come
//! from the state's narrow reading API (`pool/durable.rs`), never from its fields.
//!
//! The document is also written in parts (`write_head`, `write_resource`), for a host that keeps
//! each resource's part and retakes only those that changed (the edge worker's records, the Node
//! host's stepped checkpoints): the head, then per resource its `registered` entry, its
//! `blocklist` entry and its cells, which the hosts join back into exactly the bytes `write`
//! gives (`pkg-scripts/lib/snapshot-parts.js`).

use crate::json::{Obj, array};
use crate::pool::core::Core;
use crate::pool::durable::{CellRec, ResourceRec};
use crate::registry::blocklist::Block;

/// The snapshot's `format` and the `version` this engine writes (a restore also reads versions
/// 1 and 2: see `restore.rs`).
pub const FORMAT: &str = "repute-snapshot";
pub const VERSION: u64 = 3;

/// Writes the canonical snapshot of `core` (taken at its latest clock reading).
pub fn write(core: &Core) -> String {
    let (resources, cells) = (core.resource_records(), core.cell_records());
    let mut out = String::with_capacity(512 + resources.len() * 64 + cells.len() * 320);
    let mut o = Obj::open(&mut out);
    head(&mut o, core);
    array(o.key("registered"), &resources, |out, r| registered(out, r));
    let blocked: Vec<&ResourceRec> = resources.iter().filter(|r| r.block.is_some()).collect();
    array(o.key("blocklist"), &blocked, |out, r| block(out, r));
    array(o.key("cells"), &cells, |out, c| cell(out, c));
    o.close();
    out
}

/// The document's head: `{"format":…,"config":{…}` — every field before `registered`, without
/// the comma that follows.
pub fn write_head(core: &Core) -> String {
    let mut out = String::with_capacity(1024);
    let mut o = Obj::open(&mut out);
    head(&mut o, core);
    out
}

/// The resource in `slot` as three lines: its `registered` entry; its `blocklist` entry or an
/// empty line; its cells, comma-separated, in context order (empty when it has none). Compact
/// JSON holds no raw line break, so the lines split cleanly.
pub fn write_resource(core: &Core, slot: u32) -> String {
    let mut out = String::with_capacity(512);
    let r = core.resource_record(slot);
    registered(&mut out, &r);
    out.push('\n');
    if r.block.is_some() {
        block(&mut out, &r);
    }
    out.push('\n');
    for (i, c) in core.cell_records_of(slot).iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        cell(&mut out, c);
    }
    out
}

fn head(o: &mut Obj, core: &Core) {
    let counters = core.counters();
    o.str("format", FORMAT);
    o.uint("version", VERSION);
    o.uint("revision", counters.revision);
    o.uint("takenAt", counters.taken_at);
    o.uint("fencingHighWater", counters.fencing_high_water);
    o.uint("nextEventSeq", counters.next_event_seq);
    core.config().write_json(o.key("config"));
}

fn registered(out: &mut String, r: &ResourceRec) {
    let mut o = Obj::open(out);
    o.str("kind", r.kind.as_str());
    o.str("value", r.value);
    if let Some(g) = r.group {
        o.str("group", g);
    }
    if r.max_leases != 1 {
        o.uint("maxLeases", r.max_leases.into());
    }
    o.close();
}

fn block(out: &mut String, r: &ResourceRec) {
    let mut o = Obj::open(out);
    o.str("kind", r.kind.as_str());
    o.str("value", r.value);
    match r.block {
        Some(Block::Until(u)) => o.uint("until", u),
        _ => o.raw("permanent", "true"),
    }
    o.close();
}

fn cell(out: &mut String, rec: &CellRec) {
    let c = rec.cell;
    let mut o = Obj::open(out);
    o.str("kind", rec.kind.as_str());
    o.str("value", rec.value);
    o.str("context", rec.context);
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
    c.window.write_json(o.key("window"));
    if c.held {
        o.raw("held", "true");
    }
    o.close();
}
