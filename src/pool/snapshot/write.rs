//! Writing snapshot v1: the canonical JSON document of the durable state.
//!
//! Canonical means fixed key order, resources in (kind, value bytes) order, blocklist likewise,
//! cells in (kind, value, context bytes) order, windows oldest first: equal states give equal
//! bytes. Leases are not part of a snapshot; the fencing high-water mark is.

use crate::json::{Obj, array};
use crate::pool::core::Core;
use crate::registry::blocklist::Block;

/// The snapshot's `format` and `version` fields (what a restore accepts).
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
    core.cfg.write_json(o.key("config"));
    let order = core.reg.in_order();
    array(o.key("registered"), &order, |out, &slot| {
        let r = core.reg.get(slot);
        let mut o = Obj::open(out);
        o.str("kind", r.kind.as_str());
        o.str("value", &r.value);
        o.close();
    });
    let blocked: Vec<u32> = order.iter().copied().filter(|&s| core.reg.get(s).block().is_some()).collect();
    array(o.key("blocklist"), &blocked, |out, &slot| {
        let r = core.reg.get(slot);
        let mut o = Obj::open(out);
        o.str("kind", r.kind.as_str());
        o.str("value", &r.value);
        match r.block() {
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
        c.window.write_json(o.key("window"));
        o.close();
    });
    o.close();
    out
}
