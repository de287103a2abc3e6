//! Time passing: lease expiries, block expiries and cooldown expiries, processed lazily at each
//! call's `now` from priority queues (never by scanning).
//!
//! Queue entries may be stale (a lease renewed or released, a block replaced, a cell re-cooled);
//! each is checked against the live record when it comes due. Lease and block expiries are
//! processed in time order and emit `LEASE_EXPIRED` / `BLOCK_EXPIRED` stamped with the instant
//! they took effect; ties break on the canonical key, so the order is reproducible. A cooldown
//! expiry only re-indexes the cell (being due for recovery is derived, not an event). The queues
//! themselves are `expiries.rs` and, for blocks, `registry/blocklist.rs`; `Core::expire`
//! (`core/queues.rs`) drains them and hands the blocks and live leases ending at an instant
//! to `end_leases_and_blocks` here. The rest of this file answers what the expiries due at
//! `now` would change, without applying them (`candidates_after`, `due_slots`).

use super::core::Core;
use crate::events::EventType;
use crate::registry::blocklist::Block;
use crate::sort::sorted_positions;
use crate::types::Millis;

impl Core {
    /// `(slot, token)` pairs in the slots' canonical order, then by token.
    fn in_canonical_order(&self, v: Vec<(u32, u64)>) -> Vec<(u32, u64)> {
        let order =
            sorted_positions(v.len(), &|a, b| self.reg.order_cmp(v[a].0, v[b].0).then(v[a].1.cmp(&v[b].1)));
        order.into_iter().map(|i| v[i as usize]).collect()
    }

    /// Ends the blocks queued to end at `at`, then `leases`, the live leases queued to end
    /// then (`Core::expire` took them from the queue), in canonical key order: blocks first,
    /// each with its expiry event.
    #[inline(never)] // cold: most calls end none; kept out of every call's `advance`
    pub(super) fn end_leases_and_blocks(&mut self, at: Millis, leases: Vec<(u32, u64)>) {
        // Blocks carry token 0. Both lists sort with one comparator, unstably: keys are
        // unique (a slot has one block entry per instant, and its lease entries differ by
        // token).
        let blocks: Vec<(u32, u64)> = self.reg.blocks().ending_at(at).map(|s| (s, 0)).collect();
        let (blocks, leases) = (self.in_canonical_order(blocks), self.in_canonical_order(leases));
        for (slot, _) in blocks {
            let old = self.reg.set_block(slot, None);
            debug_assert_eq!(old, Some(Block::Until(at)));
            self.expired(EventType::BlockExpired, at, slot, None);
        }
        for (slot, token) in leases {
            let rec = self.reg.take_lease(slot, token).expect("a live lease, checked by Core::expire");
            self.expired(EventType::LeaseExpired, at, slot, Some(token));
            self.trial_lease_changed(rec.cell, self.now());
        }
    }

    /// How many candidates context `ctx` (`None`: a context without cells) will have once the
    /// expiries due at `now` are applied, given `count` candidates now, counted up to `limit`
    /// — without applying them, so that `acquire` knows whether it needs a random draw before
    /// anything changes (a bad draw then fails a call that changed nothing). Expiries only add
    /// candidates (a lease, a block or a half-open cooldown ends), so this counts the resources
    /// a due entry turns into one that the index does not count yet.
    #[inline(never)] // cold: only when something is due; kept out of `acquire`
    pub(crate) fn candidates_after(&self, ctx: Option<u32>, mut count: u64, now: Millis, limit: u64) -> u64 {
        if count >= limit || !self.expiries().maybe_due(now) {
            return count;
        }
        // A resource may be named by several due entries: count it once (at most `limit`
        // are ever counted, so a short list does).
        let mut counted: Vec<u32> = Vec::new();
        for slot in self.due_slots(ctx, now) {
            if count >= limit {
                break;
            }
            if !counted.contains(&slot) && self.becomes_candidate(ctx, slot, now) {
                counted.push(slot);
                count += 1;
            }
        }
        count
    }

    /// The resources named by an expiry due at `now` that may concern context `ctx`: ending
    /// blocks and leases, and the half-open cooldowns and pacing ends of `ctx`'s cells
    /// (repeats and stale entries included).
    pub(crate) fn due_slots(&self, ctx: Option<u32>, now: Millis) -> impl Iterator<Item = u32> + '_ {
        let q = self.expiries();
        let blocks = self.reg.blocks().ending_by(now);
        let leases = q.leases_ending_by(now);
        let of_ctx = move |id: u32| {
            let c = self.cells.is_live(id).then(|| self.cells.get(id))?;
            (Some(c.ctx) == ctx).then_some(c.res)
        };
        let cells = q.cooldowns_due_by(now).chain(q.paced_due_by(now)).filter_map(of_ctx);
        blocks.chain(leases).chain(cells)
    }

    /// Whether the expiries due at `now` make `slot` a candidate of `ctx` that the index does
    /// not count now.
    pub(crate) fn becomes_candidate(&self, ctx: Option<u32>, slot: u32, now: Millis) -> bool {
        let Some(r) = self.reg.try_get(slot) else {
            return false; // a stale entry of a removed resource
        };
        let live_then = r.leases().iter().filter(|l| now < l.expires_at).count();
        let free_then = (live_then as u32) < r.max_leases()
            && match r.block() {
                None => true,
                Some(Block::Until(t)) => t <= now,
                Some(Block::Permanent) => false,
            };
        let cell = ctx.and_then(|c| self.cells.find(slot, c));
        let eligible_then = cell.is_none_or(|id| self.eligible(id, now));
        let counted_now = r.is_available()
            && cell.is_none_or(|id| self.ctxs.get(self.cells.get(id).ctx).indexed_eligible(&self.cells, id));
        free_then && eligible_then && !counted_now
    }

    /// At most how many leases and blocks end at or before `now` (each an expiry event): none
    /// when the first queued end is later, else every one queued. Only for counters near
    /// their ceiling (`counters.rs`), where a few million events early is as good as exact.
    pub(crate) fn ends_due_at_most(&self, now: Millis) -> u64 {
        let (q, blocks) = (self.expiries(), self.reg.blocks());
        if q.next_due(now, blocks.next_end()).is_none() {
            return 0;
        }
        (blocks.queued() + q.live_leases()) as u64
    }

    fn expired(&mut self, ty: EventType, at: Millis, slot: u32, token: Option<u64>) {
        self.sync_avail(slot);
        let mut e = self.resource_event(ty, at, slot);
        e.token = token;
        self.emit(e);
    }
}
