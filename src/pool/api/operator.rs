//! `Pool`'s operator calls (SPEC §9): registering and deregistering resources, blocking and
//! unblocking them, changing the config. Each checks its arguments and the capacity before
//! anything changes, then runs the rule (`pool/admin.rs`, `reconfigure.rs`) through
//! `Pool::apply` (`pool/mod.rs`).

use crate::check;
use crate::config::ConfigPatch;
use crate::error::{Error, Result, invalid_argument};
use crate::pool::counters::{CHANGES, READS, REGISTERS};
use crate::pool::{BlockSpec, Pool, Registration};
use crate::registry::blocklist::Block;
use crate::types::{Kind, Millis};

impl Pool {
    /// Registers a resource; `true` when it was not registered before.
    pub fn register(&mut self, now: f64, kind: Kind, value: &str) -> Result<bool> {
        self.register_in(now, kind, value, None)
    }

    /// `register` with a group (SPEC §3, groups): `None` leaves a known resource's group as it
    /// is; `Some(g)` sets it (`Some(None)`: no group), moving a known resource whose group
    /// differs (a `RESOURCE_REGROUPED` event).
    pub fn register_in(
        &mut self,
        now: f64,
        kind: Kind,
        value: &str,
        group: Option<Option<&str>>,
    ) -> Result<bool> {
        self.register_with(now, kind, value, Registration { group, max_leases: None })
    }

    /// `register` with its options (SPEC §3, groups and capacity): a field left `None` leaves a
    /// known resource's setting as it is (a new one gets no group and `maxLeases` 1); one
    /// given sets it, changing a known resource's when it differs (`RESOURCE_REGROUPED`,
    /// `RESOURCE_RECONFIGURED`; one revision step for the call).
    pub fn register_with(
        &mut self,
        now: f64,
        kind: Kind,
        value: &str,
        options: Registration,
    ) -> Result<bool> {
        let t = check::clock_reading(now)?;
        check::value_arg(value)?;
        check::group_arg(options.group.flatten())?;
        check::max_leases_arg(options.max_leases)?;
        self.core.check_resource_capacity(kind, value)?;
        self.apply(t, REGISTERS, |c, now| c.register(kind, value, options.group, options.max_leases, now))
    }

    /// Removes a resource with its cells, block and lease; `false` when it was not registered.
    pub fn deregister(&mut self, now: f64, kind: Kind, value: &str) -> Result<bool> {
        let t = check::clock_reading(now)?;
        check::value_arg(value)?;
        let Some(slot) = self.core.reg.find(kind, value) else {
            return self.apply(t, READS, |_, _| false);
        };
        self.apply(t, CHANGES, |c, now| c.deregister(slot, now))?;
        Ok(true)
    }

    /// Blocks a resource in every context, replacing any existing block.
    pub fn block(&mut self, now: f64, kind: Kind, value: &str, spec: BlockSpec) -> Result<()> {
        let t = check::clock_reading(now)?;
        check::value_arg(value)?;
        let ms = match spec {
            BlockSpec::Permanent => None,
            BlockSpec::Seconds(s) => {
                let ms = (s * 1000.0).round();
                if !(s.is_finite() && s > 0.0 && ms <= check::MAX_INSTANT as f64) {
                    return Err(invalid_argument("seconds must be a finite number > 0 and at most 2^52 ms"));
                }
                Some((ms as Millis).max(1))
            }
        };
        let slot = self.find(kind, value)?;
        self.apply(t, CHANGES, |c, now| {
            let block = ms.map_or(Block::Permanent, |ms| Block::Until(now + ms));
            c.block(slot, block, now)
        })
    }

    /// Lifts a block; `true` when the resource was blocked.
    pub fn unblock(&mut self, now: f64, kind: Kind, value: &str) -> Result<bool> {
        let t = check::clock_reading(now)?;
        check::value_arg(value)?;
        let slot = self.find(kind, value)?;
        self.apply(t, CHANGES, |c, now| c.unblock(slot, now))
    }

    /// Changes the config in force: `patch` applied over it (nested maps key by key, as at
    /// creation). An invalid field is `INVALID_CONFIG` naming it; a `maxResources` or `maxCells`
    /// below what the pool holds is `CAPACITY_EXCEEDED`; either way nothing changes. Returns
    /// `false` when the result is the config already in force (no event, no revision step);
    /// otherwise one revision step and a `CONFIG_CHANGED` event (`reconfigure.rs` says what a
    /// new value means for state already held).
    pub fn set_config(&mut self, now: f64, patch: &ConfigPatch) -> Result<bool> {
        let t = check::clock_reading(now)?;
        let cfg = patch.apply(self.core.config(), "").map_err(Error::InvalidConfig)?;
        self.core.check_config_capacity(&cfg)?;
        self.apply(t, CHANGES, |c, now| c.set_config(cfg, now))
    }
}
