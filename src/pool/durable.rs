//! The durable state as records: what the snapshot writer reads, in canonical order, and what
//! a restore builds a new state from (`Builder`), so `snapshot/` names no field of `Core`.
//!
//! Records only: the document's text and its checks are `snapshot/`; how a cell, a block or a
//! context index is kept is each owner's (`index/cells.rs`, `index/context.rs`, `registry/blocklist.rs`, …).

use std::rc::Rc;

use super::core::Core;
use super::floor::Floor;
use crate::cell::Cell;
use crate::config::Config;
use crate::registry::blocklist::Block;
use crate::types::{Kind, Millis};

/// The counters a snapshot carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    pub revision: u64,
    /// The instant of the state (the latest clock reading applied).
    pub taken_at: Millis,
    pub fencing_high_water: u64,
    pub next_event_seq: u64,
}

/// A registered resource with its capacity and block.
#[derive(Debug, Clone, Copy)]
pub struct ResourceRec<'a> {
    pub kind: Kind,
    pub value: &'a str,
    pub group: Option<&'a str>,
    pub max_leases: u32,
    pub block: Option<Block>,
}

/// A cell with its resource and context.
#[derive(Debug, Clone, Copy)]
pub struct CellRec<'a> {
    pub kind: Kind,
    pub value: &'a str,
    pub context: &'a str,
    pub cell: &'a Cell,
}

impl Core {
    pub(crate) fn counters(&self) -> Counters {
        Counters {
            revision: self.revision(),
            taken_at: self.now(),
            fencing_high_water: self.fencing(),
            next_event_seq: self.events().next_seq(),
        }
    }

    /// Every resource in canonical order (kind, then value bytes).
    pub(crate) fn resource_records(&self) -> Vec<ResourceRec<'_>> {
        self.reg.in_order().into_iter().map(|slot| self.resource_record(slot)).collect()
    }

    /// The resource in `slot`.
    pub(crate) fn resource_record(&self, slot: u32) -> ResourceRec<'_> {
        let r = self.reg.get(slot);
        ResourceRec {
            kind: r.kind,
            value: &r.value,
            group: self.reg.group_name(r.group()).map(|g| &**g),
            max_leases: r.max_leases(),
            block: r.block(),
        }
    }

    /// Every cell in canonical order (resource, then context name bytes).
    pub(crate) fn cell_records(&self) -> Vec<CellRec<'_>> {
        let by_res = self.cells_by_resource();
        let order = self.reg.in_order();
        order.into_iter().flat_map(|s| by_res[s as usize].iter().map(|&id| self.cell_record(id))).collect()
    }

    /// The cells of the resource in `slot`, in context-name order (a snapshot part).
    pub(crate) fn cell_records_of(&self, slot: u32) -> Vec<CellRec<'_>> {
        self.cells_of(slot).into_iter().map(|id| self.cell_record(id)).collect()
    }

    fn cell_record(&self, id: u32) -> CellRec<'_> {
        let c = self.cells.get(id);
        let r = self.reg.get(c.res);
        CellRec { kind: r.kind, value: &r.value, context: &self.ctxs.get(c.ctx).name, cell: c.cell() }
    }
}

/// A new state built from validated records, in this order: resources, blocks,
/// `resources_done`, then each context's cells; `finish` hands it over. A caller that stops
/// early drops it: nothing is half-built where anyone can see it.
pub(crate) struct Builder {
    core: Core,
}

impl Builder {
    pub fn new(cfg: Config, c: Counters) -> Builder {
        Builder { core: Core::restored(cfg, c.taken_at, c.revision, c.fencing_high_water, c.next_event_seq) }
    }

    pub fn config(&self) -> &Config {
        self.core.config()
    }

    pub fn find(&self, kind: Kind, value: &str) -> Option<u32> {
        self.core.reg.find(kind, value)
    }

    /// Stores a resource (not yet ordered); returns its slot.
    pub fn add_resource(&mut self, kind: Kind, value: &str, group: Option<&str>, max_leases: u32) -> u32 {
        let slot = self.core.reg.add(kind, value, 0);
        self.core.reg.init_group(slot, group);
        self.core.reg.set_max_leases(slot, max_leases);
        slot
    }

    /// Blocks resource `slot`; false when it was blocked already (left as it was).
    pub fn block(&mut self, slot: u32, block: Block) -> bool {
        let core = &mut self.core;
        if core.reg.get(slot).block().is_some() {
            return false;
        }
        core.blocked(slot, block);
        true
    }

    /// Derives every resource's availability and builds the resource order.
    pub fn resources_done(&mut self) {
        self.core.reg.restore_avail();
        self.core.reg.order_rebuild();
    }

    /// Appends resources stored in canonical order, after every one stored before them, to the
    /// orders with their availability: a restore fed parts builds as they come the orders
    /// `resources_done` builds at once. `appended_done` when all are in.
    pub fn resources_appended(&mut self, slots: &[u32]) {
        self.core.reg.order_extend(slots);
    }

    /// A resource appended earlier was blocked since: its availability is read again.
    pub fn block_after_append(&mut self, slot: u32) {
        self.core.reg.order_avail_reread(slot);
    }

    /// Every resource is appended: the orders' trees are brought up to date.
    pub fn appended_done(&mut self) {
        self.core.reg.order_ensure();
        self.core.reg.groups_ensure();
    }

    /// Each slot's position in canonical order (a table by slot).
    pub fn resource_ranks(&self) -> Vec<u32> {
        let mut rank = vec![0u32; self.core.reg.slot_bound()];
        for (i, slot) in self.core.reg.in_order().into_iter().enumerate() {
            rank[slot as usize] = i as u32;
        }
        rank
    }

    /// Room for `by_kind[k]` more resources of each kind (`Registry::reserve`).
    pub fn reserve_resources(&mut self, by_kind: [usize; 3]) {
        self.core.reg.reserve(by_kind);
    }

    /// Room for `n` more cells.
    pub fn reserve_cells(&mut self, n: usize) {
        self.core.cells.reserve(n);
    }

    /// Creates context `name` with its cells, given as (resource slot, cell) in canonical
    /// order, builds its index and queues their cooldowns.
    pub fn add_context(&mut self, name: Rc<str>, cells: impl ExactSizeIterator<Item = (u32, Cell)>) {
        let core = &mut self.core;
        let (now, half_open) = (core.now(), core.config().half_open_causes);
        let gap = core.config().min_gap_for(&name);
        let ctx = core.context_added(Rc::clone(&name), gap);
        let mut ids = Vec::with_capacity(cells.len());
        for (slot, cell) in cells {
            let paced = cell.paced_until(now, gap);
            let eligible = cell.selectable(now, half_open) && paced.is_none();
            let running = cell.cooling_at(now).then_some(cell.cooldown_until).flatten();
            let id = core.cells.add(slot, ctx, cell);
            if let Some(end) = paced {
                core.paced(id, end);
            }
            if let Some(until) = running {
                core.cooled(ctx, id, until);
            }
            ids.push((id, eligible));
        }
        core.context_built(ctx, &ids);
        for (id, _) in ids {
            core.track_cooldown(id, None, now);
        }
    }

    /// Raises the counters to at least `floor`'s (nothing else changes).
    pub fn raise_to(&mut self, floor: &Floor) {
        self.core.raise_to(floor);
    }

    /// The state so far, to read (its head, while it is being built).
    pub fn built(&self) -> &Core {
        &self.core
    }

    pub fn finish(self) -> Core {
        self.core
    }
}
