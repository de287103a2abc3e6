//! Read-side views: the dashboard (`resources`), one resource in detail (`resource`: its
//! cells with their windows), `stats` and `dueForRecoveryProbe` (for `nextChangeAt`, see
//! `next_change.rs`). Nothing here changes state.
//!
//! Output order is canonical: resources by (kind, value bytes), cells by context bytes.

use std::rc::Rc;

use super::core::Core;
use super::leases::Lease;
use crate::registry::blocklist::Block;
use crate::types::{FailureType, Kind, Millis, State, ViewState};
use crate::window::Window;

/// One cell as shown to readers.
#[derive(Debug, Clone, PartialEq)]
pub struct CellView {
    pub context: Rc<str>,
    pub state: ViewState,
    pub score: f64,
    pub consecutive_failures: u32,
    pub consecutive_successes: u32,
    pub cooldown_until: Option<Millis>,
    pub cooldown_cause: Option<FailureType>,
    pub updated_at: Millis,
    /// The end of the cell's pacing while it is paced (SPEC §3, pacing).
    pub paced_until: Option<Millis>,
    /// Kept in rotation by the cooling cap (SPEC §3, cooling cap).
    pub held: bool,
    pub p50_latency_ms: Option<f64>,
    pub p95_latency_ms: Option<f64>,
}

/// One resource with its block, capacity, leases and cells.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceView {
    pub kind: Kind,
    pub value: Rc<str>,
    pub group: Option<Rc<str>>,
    pub blocked: Option<Block>,
    /// The oldest live lease (`leases[0]`), if any.
    pub lease: Option<Lease>,
    /// How many leases it may hold at once (SPEC §3, capacity).
    pub max_leases: u32,
    /// Every live lease, oldest first.
    pub leases: Vec<Lease>,
    pub cells: Vec<CellView>,
}

/// One resource in detail: its view, and each cell's window (the last `windowSize` outcomes,
/// oldest first), in the order of `view.cells`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceDetail {
    pub view: ResourceView,
    pub windows: Vec<Window>,
}

/// Narrows `resources()`: `context` keeps only that context's cell; `state` keeps resources
/// with a cell in that state (`BLOCKLISTED`: blocked resources); `group` keeps that group's
/// resources (`Some(None)`: those with none).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    pub context: Option<String>,
    pub state: Option<ViewState>,
    pub group: Option<Option<String>>,
}

/// A probe-due cell: cooling, cooldown over, cause not half-open, resource free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeDue {
    pub kind: Kind,
    pub value: Rc<str>,
    pub group: Option<Rc<str>>,
    pub context: Rc<str>,
    pub cooldown_until: Millis,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stats {
    pub registered: usize,
    pub cells: usize,
    pub contexts: usize,
    pub leased: usize,
    pub blocked: usize,
    pub available: usize,
    pub revision: u64,
    pub fencing_high_water: u64,
    pub next_event_seq: u64,
    pub events_pending: usize,
    pub events_dropped: u64,
    pub now: Millis,
    /// Cells by stored state: HEALTHY, COOLING, RECOVERING.
    pub cells_by_state: [usize; 3],
}

impl Core {
    fn cell_view(&self, id: u32, blocked: bool, now: Millis) -> CellView {
        let slot = self.cells.get(id);
        let c = slot.cell();
        let [p50, p95] = c.window.percentiles([0.5, 0.95]);
        CellView {
            context: Rc::clone(&self.ctxs.get(slot.ctx).name),
            state: ViewState::of(c.state, blocked),
            score: c.score,
            consecutive_failures: c.consecutive_failures,
            consecutive_successes: c.consecutive_successes,
            cooldown_until: c.cooldown_until,
            cooldown_cause: c.cooldown_cause,
            updated_at: c.updated_at,
            paced_until: self.paced_until(id, now),
            held: c.held,
            p50_latency_ms: p50,
            p95_latency_ms: p95,
        }
    }

    /// Cell ids per resource slot, each list in context-name order.
    pub(crate) fn cells_by_resource(&self) -> Vec<Vec<u32>> {
        let mut by_res: Vec<Vec<u32>> = vec![Vec::new(); self.reg.slot_bound()];
        for id in self.cells.live_ids() {
            by_res[self.cells.get(id).res as usize].push(id);
        }
        for list in &mut by_res {
            crate::sort::sort_ids(list, &|a, b| {
                let name = |id: u32| self.ctxs.get(self.cells.get(id).ctx).name.as_bytes();
                name(a).cmp(name(b))
            });
        }
        by_res
    }

    /// The live leases on `slot`, oldest first.
    pub(crate) fn leases_of(&self, slot: u32) -> Vec<Lease> {
        let r = self.reg.get(slot);
        r.leases()
            .iter()
            .map(|l| Lease {
                id: Some(self.reg.id_of(slot)),
                kind: r.kind,
                value: Rc::clone(&r.value),
                group: l.group.clone(),
                context: Rc::clone(&l.context),
                token: l.token,
                leased_at: l.leased_at,
                expires_at: l.expires_at,
            })
            .collect()
    }

    fn resource_view(&self, slot: u32, cells: Vec<CellView>) -> ResourceView {
        let r = self.reg.get(slot);
        let leases = self.leases_of(slot);
        ResourceView {
            kind: r.kind,
            value: Rc::clone(&r.value),
            group: self.reg.group_name(r.group()).cloned(),
            blocked: r.block(),
            lease: leases.first().cloned(),
            max_leases: r.max_leases(),
            leases,
            cells,
        }
    }

    /// Resource `slot` with every cell and its window, cells in context-name order. Looks in
    /// each context (O(contexts)), not at every cell.
    /// The cells of the resource in `slot`, in context-name byte order.
    pub(crate) fn cells_of(&self, slot: u32) -> Vec<u32> {
        let mut ids: Vec<u32> = self.ctxs.ids().filter_map(|ctx| self.cells.find(slot, ctx)).collect();
        let name = |id: u32| self.ctxs.get(self.cells.get(id).ctx).name.as_bytes();
        // The one shared copy of the id sort (a sort of its own costs the module kilobytes).
        crate::sort::sort_ids(&mut ids, &|a, b| name(a).cmp(name(b)));
        ids
    }

    pub(crate) fn resource_detail(&self, slot: u32) -> ResourceDetail {
        let blocked = self.reg.get(slot).block().is_some();
        let ids = self.cells_of(slot);
        let cells = ids.iter().map(|&id| self.cell_view(id, blocked, self.now())).collect();
        let windows = ids.iter().map(|&id| self.cells.get(id).cell().window.clone()).collect();
        ResourceDetail { view: self.resource_view(slot, cells), windows }
    }

    /// The dashboard view of `filter`, from the first resource after `after` (kind, value) in canonical
    /// order (registered or not), at most `limit` of them.
    pub(crate) fn resources_page(
        &self,
        filter: &Filter,
        after: Option<(Kind, &str)>,
        limit: usize,
    ) -> Vec<ResourceView> {
        // A short page without a state filter lists at most `limit` resources: their cells are
        // found context by context (O(contexts) each), not by listing every cell of the pool.
        let per_slot = filter.state.is_none() && limit.saturating_mul(self.ctxs.len()) < self.cells.len();
        let by_res = if per_slot { Vec::new() } else { self.cells_by_resource() };
        let mut out = Vec::new();
        let group = match &filter.group {
            None => None,
            Some(name) => match self.reg.groups().find(name.as_deref()) {
                Some(g) => Some(g),
                None => return out,
            },
        };
        let order = self.reg.in_order();
        let key = |slot: u32| {
            let r = self.reg.get(slot);
            (r.kind, r.value.as_bytes())
        };
        let start = after.map_or(0, |(k, v)| order.partition_point(|&slot| key(slot) <= (k, v.as_bytes())));
        for &slot in &order[start..] {
            if out.len() >= limit {
                break;
            }
            let r = self.reg.get(slot);
            if group.is_some_and(|g| g != r.group()) {
                continue;
            }
            let blocked = r.block().is_some();
            let found;
            let ids: &[u32] = if per_slot {
                found = self.cells_of(slot);
                &found
            } else {
                &by_res[slot as usize]
            };
            let mut cells: Vec<CellView> = ids
                .iter()
                .map(|&id| self.cell_view(id, blocked, self.now()))
                .filter(|v| filter.context.as_deref().is_none_or(|c| *v.context == *c))
                .collect();
            if let Some(state) = filter.state {
                if state == ViewState::Blocklisted && !blocked {
                    continue;
                }
                cells.retain(|v| v.state == state);
                if cells.is_empty() && state != ViewState::Blocklisted {
                    continue;
                }
            }
            out.push(self.resource_view(slot, cells));
        }
        out
    }

    pub(crate) fn stats(&self) -> Stats {
        Stats {
            registered: self.reg.len(),
            cells: self.cells.len(),
            contexts: self.ctxs.len(),
            leased: self.reg.leased(),
            blocked: self.reg.blocked(),
            available: self.reg.available() as usize,
            revision: self.revision(),
            fencing_high_water: self.fencing(),
            next_event_seq: self.events().next_seq(),
            events_pending: self.events().pending(),
            events_dropped: self.events().dropped(),
            now: self.now(),
            cells_by_state: [State::Healthy, State::Cooling, State::Recovering]
                .map(|s| self.cells.count_in(s)),
        }
    }

    pub(crate) fn due_for_recovery_probe(&self, now: Millis) -> Vec<ProbeDue> {
        let half_open = self.config().half_open_causes;
        let out: Vec<ProbeDue> = self
            .expiries()
            .probe_only_by(now)
            .filter_map(|id| {
                let slot = self.cells.get(id);
                let r = self.reg.get(slot.res);
                // Room for the probe's lease, and no lease trying the cell already.
                let context = &self.ctxs.get(slot.ctx).name;
                let free =
                    r.is_available() && self.paced_until(id, now).is_none() && !r.leased_in(context, now);
                (slot.cell().probe_due(now, half_open) && free).then(|| ProbeDue {
                    kind: r.kind,
                    value: Rc::clone(&r.value),
                    group: self.reg.group_name(r.group()).cloned(),
                    context: Rc::clone(&self.ctxs.get(slot.ctx).name),
                    cooldown_until: slot.cell().cooldown_until.unwrap_or(0),
                })
            })
            .collect();
        // (kind, value, context) is unique per cell: unstable gives the same order.
        let key = |i: usize| (out[i].kind, out[i].value.as_bytes(), out[i].context.as_bytes());
        let order = crate::sort::sorted_positions(out.len(), &|a, b| key(a).cmp(&key(b)));
        let mut out: Vec<Option<ProbeDue>> = out.into_iter().map(Some).collect();
        order.into_iter().map(|i| out[i as usize].take().expect("each once")).collect()
    }
}
