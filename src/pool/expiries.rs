//! The expiry queues: leases and half-open cooldowns by the instant they end, the probe-only
//! cooling cells that `dueForRecoveryProbe` reads, pacing ends, every running cooldown (the
//! cooling cap's count), and a lower bound on the next instant
//! anything comes due (temporary blocks included: their queue is the blocklist's,
//! `registry/blocklist.rs`, and its next end is passed in). Data only: what an expiry does is
//! `expiry.rs`; the queues are `Core`'s, changed only through `core/queues.rs`.

use std::collections::{BTreeSet, VecDeque};

use crate::types::Millis;

#[derive(Debug, Clone, Default)]
pub struct Expiries {
    /// Leases by expiry: (expiry, resource slot, token). Every lease lasts `leaseTtlMs` from
    /// its grant or renewal and time only moves forward, so pushing at the back keeps the queue
    /// in time order. A released or renewed lease leaves its entry behind (`stale` counts
    /// them) unless it is the newest; entries are checked against the live lease when due,
    /// and the queue is compacted when stale entries outnumber live ones.
    leases: VecDeque<(Millis, u32, u64)>,
    stale: usize,
    /// Half-open cooldowns: (until, cell id); when due the cell becomes a candidate again.
    /// Entries may be stale (the cell re-cooled or left); re-evaluating one is harmless. An
    /// ordered set like the others (one copy of its code in the module), read in order
    /// without being taken apart.
    cooldowns: BTreeSet<(Millis, u32)>,
    /// Probe-only cooling cells: (until, cell id).
    probe_only: BTreeSet<(Millis, u32)>,
    /// Pacing ends: (end, cell id); when due the cell is re-evaluated. May be stale (a later
    /// report moved the end), which is harmless.
    paced: BTreeSet<(Millis, u32)>,
    /// Every running cooldown: (until, cell id), exact (never stale): when due, the cell's
    /// context counts one cooling cell fewer (the cooling cap's count).
    cooling: BTreeSet<(Millis, u32)>,
    /// Nothing in the queues above, nor a temporary block, comes due before this instant: a lower bound,
    /// lowered by every addition and recomputed after each processing (a removal may leave it
    /// early, which costs one look at the queues). Most calls then see no queue at all.
    due_from: Millis,
}

impl Expiries {
    pub fn add_lease(&mut self, at: Millis, slot: u32, token: u64) {
        debug_assert!(self.leases.back().is_none_or(|b| b.0 <= at), "lease expiries arrive in order");
        self.leases.push_back((at, slot, token));
        self.due_from = self.due_from.min(at);
    }

    /// Notes that the queued lease `(at, slot, token)` ended early (released, renewed, or its
    /// resource removed). The entry goes at once when it is the newest (a lease released
    /// before any other was granted: the usual acquire → report → release); otherwise it stays
    /// behind, counted stale.
    pub fn lease_ended(&mut self, at: Millis, slot: u32, token: u64) {
        if self.leases.back() == Some(&(at, slot, token)) {
            self.leases.pop_back();
        } else {
            self.stale += 1;
        }
    }

    /// Notes that something (a temporary block) comes due at `at`.
    pub fn note_due(&mut self, at: Millis) {
        self.due_from = self.due_from.min(at);
    }

    pub fn cooldown(&mut self, until: Millis, cell: u32) {
        self.cooldowns.insert((until, cell));
        self.due_from = self.due_from.min(until);
    }

    /// The earliest instant at which a queued lease or a block (the first of `block_end`)
    /// ends.
    fn next_end(&self, block_end: Option<Millis>) -> Option<Millis> {
        let l = self.leases.front().map(|d| d.0);
        block_end.into_iter().chain(l).min()
    }

    /// The earliest instant anything comes due (`Millis::MAX` when nothing is queued).
    fn earliest(&self, block_end: Option<Millis>) -> Millis {
        let c = self.cooldowns.first().map(|d| d.0);
        let p = self.paced.first().map(|d| d.0);
        let k = self.cooling.first().map(|d| d.0);
        self.next_end(block_end).into_iter().chain(c).chain(p).chain(k).min().unwrap_or(Millis::MAX)
    }

    /// Queues the end of cell `id`'s pacing.
    pub fn pace(&mut self, end: Millis, id: u32) {
        self.paced.insert((end, id));
        self.due_from = self.due_from.min(end);
    }

    /// Takes the first pacing end due by `now`: its cell id.
    pub(super) fn pop_paced_due(&mut self, now: Millis) -> Option<u32> {
        pop_due(&mut self.paced, now)
    }

    /// The cell ids of pacing ends due by `now` (stale ones included).
    pub(super) fn paced_due_by(&self, now: Millis) -> impl Iterator<Item = u32> + '_ {
        self.paced.iter().take_while(move |d| d.0 <= now).map(|d| d.1)
    }

    /// Files cell `id`'s running cooldown, ending at `until`.
    pub fn cooling_started(&mut self, until: Millis, id: u32) {
        self.cooling.insert((until, id));
        self.due_from = self.due_from.min(until);
    }

    /// Forgets cell `id`'s running cooldown (the cell is removed); true when it was filed.
    pub fn cooling_removed(&mut self, until: Millis, id: u32) -> bool {
        self.cooling.remove(&(until, id))
    }

    /// Takes the first running cooldown ending by `now`: its cell id.
    pub(super) fn pop_cooling_ended(&mut self, now: Millis) -> Option<u32> {
        pop_due(&mut self.cooling, now)
    }

    /// The earliest instant at or before `now` at which a lease or a block ends.
    pub(super) fn next_due(&self, now: Millis, block_end: Option<Millis>) -> Option<Millis> {
        self.next_end(block_end).filter(|&t| t <= now)
    }

    /// Whether anything may come due at `now` (cheap: the lower bound only).
    pub fn maybe_due(&self, now: Millis) -> bool {
        now >= self.due_from
    }

    /// Notes that everything due by now has been processed: the bound becomes exact again.
    pub(super) fn processed(&mut self, block_end: Option<Millis>) {
        self.due_from = self.earliest(block_end);
    }

    /// Takes the queued leases ending exactly at `at` (the front of the queue) as
    /// (slot, token), stale ones included.
    pub(super) fn take_leases_ending_at(&mut self, at: Millis) -> Vec<(u32, u64)> {
        let mut out = Vec::new();
        while let Some(&(t, slot, token)) = self.leases.front()
            && t == at
        {
            self.leases.pop_front();
            out.push((slot, token));
        }
        out
    }

    /// Notes that a taken entry was stale (its lease had ended early).
    pub(super) fn stale_taken(&mut self) {
        self.stale -= 1;
    }

    /// The slots of queued leases ending at or before `now` (stale ones included).
    pub(super) fn leases_ending_by(&self, now: Millis) -> impl Iterator<Item = u32> + '_ {
        self.leases.iter().take_while(move |l| l.0 <= now).map(|l| l.1)
    }

    /// Queued lease entries that are not stale.
    pub(super) fn live_leases(&self) -> usize {
        self.leases.len() - self.stale
    }

    /// Whether stale lease entries outnumber live ones enough to compact the queue.
    pub(super) fn wants_compaction(&self) -> bool {
        self.stale > 1024 && self.stale * 2 > self.leases.len()
    }

    /// Keeps only the lease entries `live(at, slot, token)` says are live; none is stale then.
    pub(super) fn compact_leases(&mut self, mut live: impl FnMut(Millis, u32, u64) -> bool) {
        self.leases.retain(|&(at, slot, token)| live(at, slot, token));
        self.stale = 0;
    }

    /// Takes the first half-open cooldown due by `now`: its cell id.
    pub(super) fn pop_cooldown_due(&mut self, now: Millis) -> Option<u32> {
        pop_due(&mut self.cooldowns, now)
    }

    /// The cell ids of half-open cooldowns due by `now` (stale ones included).
    pub(super) fn cooldowns_due_by(&self, now: Millis) -> impl Iterator<Item = u32> + '_ {
        self.cooldowns.iter().take_while(move |d| d.0 <= now).map(|d| d.1)
    }

    /// Files cell `id` as probe-only cooling until `until`.
    pub(super) fn add_probe_only(&mut self, until: Millis, id: u32) {
        self.probe_only.insert((until, id));
    }

    pub(super) fn remove_probe_only(&mut self, until: Millis, id: u32) {
        self.probe_only.remove(&(until, id));
    }

    /// Probe-only cooling cells whose cooldown ended by `now` (cell ids, earliest first).
    pub(super) fn probe_only_by(&self, now: Millis) -> impl Iterator<Item = u32> + '_ {
        self.probe_only.range(..=(now, u32::MAX)).map(|d| d.1)
    }
}

/// Takes the first `(instant, cell id)` of `set` due by `now`: its cell id. (One copy for the
/// cooldown, pacing and cooling queues.)
fn pop_due(set: &mut BTreeSet<(Millis, u32)>, now: Millis) -> Option<u32> {
    let &(at, id) = set.first()?;
    if at > now {
        return None;
    }
    set.pop_first();
    Some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_ended_while_newest_leaves_the_queue_at_once() {
        let mut q = Expiries::default();
        q.add_lease(10, 1, 1);
        q.add_lease(20, 2, 2);
        q.lease_ended(20, 2, 2);
        assert_eq!((q.leases.len(), q.stale), (1, 0));
        q.lease_ended(10, 1, 1);
        assert_eq!((q.leases.len(), q.stale), (0, 0));
    }

    #[test]
    fn an_older_lease_ended_stays_behind_counted_stale() {
        let mut q = Expiries::default();
        q.add_lease(10, 1, 1);
        q.add_lease(20, 2, 2);
        q.lease_ended(10, 1, 1);
        assert_eq!((q.leases.len(), q.stale), (2, 1));
        // Same slot and expiry but another token (a later lease of the resource): not the one.
        q.lease_ended(20, 2, 3);
        assert_eq!((q.leases.len(), q.stale), (2, 2));
    }
}
