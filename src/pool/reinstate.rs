//! `reinstate`: a resource put back into a live pool from its snapshot part
//! (`snapshot_part(kind, value)`, taken just before it was deregistered) — the inverse of a
//! deregistration, for a host whose write of that deregistration failed (the Node host's
//! operator undo: it never copies the whole pool to make one resource's change durable).
//!
//! What comes back is what the part holds: the registration (group, capacity), the block (a
//! timed one that has ended meanwhile is left out) and every cell with its history, indexed as
//! a restore indexes them (pacing, running cooldowns, half-open trials). What does not: its
//! leases. They ended with the deregistration and stay ended — a snapshot part holds none, the
//! resource gets a new id (`ids.rs`: calls by the old lease's id find nothing) and the fencing
//! high-water mark never goes back, so no token is handed out twice. A reinstatement is a new
//! change, as any undo is: one revision step and a `RESOURCE_REGISTERED` event.

use super::Pool;
use super::core::Core;
use super::counters::CHANGES;
use super::snapshot;
use crate::check;
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::types::Millis;

impl Pool {
    /// Registers the resource `part` (its `snapshot_part`, three lines) describes with its
    /// block and cells as the part holds them. `false`, changing nothing, when that resource is
    /// registered already. A part that is not one resource's valid part is `INVALID_SNAPSHOT`;
    /// one that does not fit `maxResources` or `maxCells` is `CAPACITY_EXCEEDED`.
    pub fn reinstate(&mut self, now: f64, part: &str) -> Result<bool> {
        let t = check::clock_reading(now)?;
        let one = snapshot::read_part(part, self.core.config(), self.core.time_at(t))?;
        if one.reg.len() != 1 {
            return Err(Error::InvalidSnapshot("the resource's part: must hold one resource".into()));
        }
        let r = one.resource_record(one.reg.in_order()[0]);
        if self.core.reg.find(r.kind, r.value).is_some() {
            return self.read(t, |_, _| false);
        }
        self.core.check_resource_capacity(r.kind, r.value)?;
        let (cells, max) = (self.core.cells.len() + one.cells.len(), self.core.config().max_cells);
        if cells > max as usize {
            return Err(Error::CapacityExceeded(format!("the pool holds maxCells = {max} cells")));
        }
        self.apply(t, CHANGES, |c, now| c.reinstate(&one, now))?;
        Ok(true)
    }
}

impl Core {
    /// Adds the one resource `one` holds, with its block and cells.
    fn reinstate(&mut self, one: &Core, now: Millis) {
        let r = one.resource_record(one.reg.in_order()[0]);
        let slot = self.reg.add(r.kind, r.value, self.fencing());
        self.reg.init_group(slot, r.group);
        self.reg.set_max_leases(slot, r.max_leases);
        self.reg.order_insert(slot);
        if let Some(block) = r.block {
            self.blocked(slot, block);
        }
        self.sync_avail(slot);
        for c in one.cell_records() {
            let running = c.cell.cooling_at(now).then_some(c.cell.cooldown_until).flatten();
            let id = self.place_cell(slot, c.context, c.cell.clone());
            if let Some(end) = self.paced_until(id, now) {
                self.paced(id, end);
            }
            if let Some(until) = running {
                self.cooled(self.cells.get(id).ctx, id, until);
            }
            self.track_cooldown(id, None, now);
            self.refresh_cell(id, now);
        }
        let mut e = self.resource_event(EventType::ResourceRegistered, now, slot);
        e.group = Some(self.reg.group_name(self.reg.get(slot).group()).cloned());
        self.emit(e);
    }
}
