//! `setConfig`: a running pool's config changed in place (an operator's policy change).
//!
//! Owns what a new config means for state the pool already holds: the limits must hold what
//! is there (checked first, `CAPACITY_EXCEEDED`), windows are cut to a smaller `windowSize`
//! (newest outcomes kept, as a restore does) or given room for a larger one, cooling cells are
//! re-filed between half-open trials and probe-only cells when `halfOpenCauses` changes, and
//! the event buffer takes its new bound, and contexts take their new pacing gap (their cells
//! re-indexed). Scores, states, cooldowns already running, leases and
//! blocks are kept as they are: the new penalties, rewards, curve and lease TTL apply from the
//! next report, cooldown and lease on. Validating the patch is `config.rs`'s business.

use super::core::Core;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::events::{EventType, PoolEvent};
use crate::types::{Millis, State};
use crate::window::Window;

impl Core {
    /// Fails with `CAPACITY_EXCEEDED` when `cfg`'s limits are below what the pool holds.
    pub(crate) fn check_config_capacity(&self, cfg: &Config) -> Result<()> {
        let (resources, cells) = (self.reg.len(), self.cells.len());
        if resources > cfg.max_resources as usize {
            return Err(Error::CapacityExceeded(format!(
                "maxResources = {} is below the {resources} resources the pool holds",
                cfg.max_resources
            )));
        }
        if cells > cfg.max_cells as usize {
            return Err(Error::CapacityExceeded(format!(
                "maxCells = {} is below the {cells} cells the pool holds",
                cfg.max_cells
            )));
        }
        Ok(())
    }

    /// Puts `cfg` (valid, within capacity) in force; `false`, changing nothing, when it is the
    /// config already in force. Otherwise emits `CONFIG_CHANGED` (one revision step).
    pub(crate) fn set_config(&mut self, cfg: Config, now: Millis) -> bool {
        if cfg == *self.config() {
            return false;
        }
        let old = self.configured(cfg);
        if old.window_size != self.config().window_size {
            self.resize_windows();
        }
        if old.half_open_causes != self.config().half_open_causes {
            self.refile_cooling_cells(now);
        }
        if (old.min_gap_ms, &old.min_gap_ms_by_context)
            != (self.config().min_gap_ms, &self.config().min_gap_ms_by_context)
        {
            self.repace_contexts(now);
        }
        self.emit(PoolEvent::new(EventType::ConfigChanged, now));
        true
    }

    /// Gives every context the pacing gap the new config sets for it and re-indexes the cells
    /// of each whose gap changed: a cell's pacing is measured from its last report, so a
    /// longer gap may pace it again and a shorter one free it at once.
    fn repace_contexts(&mut self, now: Millis) {
        let ids: Vec<u32> = self.ctxs.ids().collect();
        let mut changed = Vec::new();
        for ctx in ids {
            let gap = self.config().min_gap_for(&self.ctxs.get(ctx).name);
            if self.ctxs.get_mut(ctx).gap_configured(gap) {
                changed.push(ctx);
            }
        }
        if changed.is_empty() {
            return;
        }
        let changed: rustc_hash::FxHashSet<u32> = changed.into_iter().collect();
        let cells: Vec<u32> =
            self.cells.live_ids().filter(|&id| changed.contains(&self.cells.get(id).ctx)).collect();
        for id in cells {
            if let Some(end) = self.paced_until(id, now) {
                self.paced(id, end);
            }
            self.refresh_cell(id, now);
        }
    }

    /// Every window to the new `windowSize`, keeping its newest outcomes.
    fn resize_windows(&mut self) {
        let cap = self.config().window_size as usize;
        let ids: Vec<u32> = self.cells.live_ids().collect();
        for id in ids {
            self.cells
                .update(id, |c| c.window = Window::from_oldest_first(c.window.iter(), c.window.len(), cap));
        }
    }

    /// Files every cooling cell again under the new `halfOpenCauses` (a half-open trial's
    /// cooldown end in the queue, a probe-only cell in the probe set) and re-indexes it: an
    /// expired cooldown whose cause changed side becomes, or stops being, a candidate.
    fn refile_cooling_cells(&mut self, now: Millis) {
        let cooling: Vec<(u32, Option<Millis>)> = self
            .cells
            .live_ids()
            .filter_map(|id| {
                let c = self.cells.get(id).cell();
                (c.state == State::Cooling).then_some((id, c.cooldown_until))
            })
            .collect();
        for (id, until) in cooling {
            self.track_cooldown(id, until, now);
            // Re-indexes the cell and brings kept `nextChangeAt` answers up to date with it.
            self.refresh_cell(id, now);
        }
    }
}
