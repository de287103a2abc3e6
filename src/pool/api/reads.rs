//! `Pool`'s calls that change no durable state (SPEC §9): the snapshot and its parts, drained
//! events, the dashboard and one resource, probe-due cells, `nextChangeAt`, the counts, and a
//! resource's id, group and key. Those that read time apply it first (`Pool::read`,
//! `pool/mod.rs`), so what they return already shows it; the views themselves are
//! `pool/views.rs`'s, the snapshot's text `pool/snapshot/`'s.

use std::rc::Rc;

use crate::check;
use crate::error::Result;
use crate::events::PoolEvent;
use crate::ids::ResourceId;
use crate::pool::{Filter, Pool, ProbeDue, ResourceDetail, ResourceView, Stats, snapshot};
use crate::types::{Kind, Millis};

impl Pool {
    /// Registered resources of each kind, in `Kind::ALL` order (PROXY, ACCOUNT, SESSION): what
    /// a restore in parts of this pool's snapshot makes room for (`PartsRestore::reserve`).
    pub fn registered_by_kind(&self) -> [usize; 3] {
        self.core.reg.counts_by_kind()
    }

    /// The canonical JSON snapshot of the durable state.
    pub fn snapshot(&mut self, now: f64) -> Result<String> {
        let t = check::clock_reading(now)?;
        self.read(t, |c, _| snapshot::write(c))
    }

    /// The snapshot in parts (`snapshot/write.rs`): its head, and with `resource` that
    /// resource's three lines (`None` when it is not registered), for a host that stores each
    /// resource on its own.
    pub fn snapshot_part(&mut self, now: f64, resource: Option<(Kind, &str)>) -> Result<Option<String>> {
        let t = check::clock_reading(now)?;
        let slot = match resource {
            None => None,
            Some((kind, value)) => {
                check::value_arg(value)?;
                match self.core.reg.find(kind, value) {
                    Some(slot) => Some(slot),
                    None => return self.read(t, |_, _| None),
                }
            }
        };
        self.read(t, |c, _| {
            Some(match slot {
                None => snapshot::write_head(c),
                Some(slot) => snapshot::write_resource(c, slot),
            })
        })
    }

    /// Events since the last drain, in `seq` order.
    pub fn drain_events(&mut self, now: f64) -> Result<Vec<PoolEvent>> {
        let t = check::clock_reading(now)?;
        self.read(t, |c, _| c.drain_events())
    }

    /// The dashboard view, in canonical order.
    pub fn resources(&mut self, now: f64, filter: &Filter) -> Result<Vec<ResourceView>> {
        self.resources_page(now, filter, None, usize::MAX)
    }

    /// A page of the dashboard view: the resources `resources(filter)` lists that come after
    /// `after` (a kind and value, registered or not) in canonical order, at most `limit`.
    pub fn resources_page(
        &mut self,
        now: f64,
        filter: &Filter,
        after: Option<(Kind, &str)>,
        limit: usize,
    ) -> Result<Vec<ResourceView>> {
        if let Some((_, value)) = after {
            check::value_arg(value)?;
        }
        let t = check::clock_reading(now)?;
        if let Some(ctx) = &filter.context {
            check::context_arg(ctx)?;
        }
        if let Some(group) = &filter.group {
            check::group_arg(group.as_deref())?;
        }
        self.read(t, |c, _| c.resources_page(filter, after, limit))
    }

    /// One resource with every cell and its window (recent outcomes); `UNKNOWN_RESOURCE` when
    /// it is not registered.
    pub fn resource(&mut self, now: f64, kind: Kind, value: &str) -> Result<ResourceDetail> {
        let t = check::clock_reading(now)?;
        check::value_arg(value)?;
        let slot = self.find(kind, value)?;
        self.read(t, |c, _| c.resource_detail(slot))
    }

    /// Probe-due cells (cooldown over, cause not half-open, resource neither blocked nor leased).
    pub fn due_for_recovery_probe(&mut self, now: f64) -> Result<Vec<ProbeDue>> {
        let t = check::clock_reading(now)?;
        self.read(t, |c, now| c.due_for_recovery_probe(now))
    }

    /// The earliest instant at which something in `context` may become eligible.
    pub fn next_change_at(&mut self, now: f64, context: &str) -> Result<Option<Millis>> {
        let t = check::clock_reading(now)?;
        check::context_arg(context)?;
        self.read(t, |c, now| c.next_change_at(context, now))
    }

    /// `next_change_at` for the listed groups only (the same list rules as `acquire_in`).
    pub fn next_change_at_in(
        &mut self,
        now: f64,
        context: &str,
        groups: &[Option<&str>],
    ) -> Result<Option<Millis>> {
        let t = check::clock_reading(now)?;
        check::context_arg(context)?;
        check::groups_arg(groups)?;
        self.read(t, |c, now| {
            let ids: Vec<u32> = groups.iter().filter_map(|g| c.reg.groups().find(*g)).collect();
            c.next_change_at_grouped(context, &ids, now)
        })
    }

    pub fn stats(&mut self, now: f64) -> Result<Stats> {
        let t = check::clock_reading(now)?;
        self.read(t, |c, _| {
            c.sync_order();
            c.stats()
        })
    }

    /// The id of a registered resource, for hosts that name resources by number between calls
    /// (`ids.rs`): it names this resource until it is deregistered, and nothing after, even
    /// once its slot holds another resource. Reads no clock and changes nothing.
    pub fn resource_id(&self, kind: Kind, value: &str) -> Option<ResourceId> {
        self.core.reg.find(kind, value).map(|slot| self.core.reg.id_of(slot))
    }

    /// The group of the resource `id` names (`None`: ungrouped); `UNKNOWN_RESOURCE` once it was
    /// deregistered. Reads no clock.
    pub fn resource_group(&self, id: ResourceId) -> Result<Option<&Rc<str>>> {
        let slot = self.slot_of(id)?;
        Ok(self.core.reg.group_name(self.core.reg.get(slot).group()))
    }

    /// The resource `id` names; `UNKNOWN_RESOURCE` once it was deregistered. Reads no clock.
    pub fn resource_of(&self, id: ResourceId) -> Result<(Kind, &Rc<str>)> {
        let slot = self.slot_of(id)?;
        let r = self.core.reg.get(slot);
        Ok((r.kind, &r.value))
    }
}
