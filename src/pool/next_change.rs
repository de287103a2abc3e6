//! `nextChangeAt`: `now` when a context has a candidate, else the earliest instant at which a
//! resource becomes one by time alone (its lease ends, its temporary block ends, its half-open
//! cooldown here ends, its pacing here ends — the latest of those that apply), `None` when
//! none can; with `groups`, over the listed groups' members only.
//!
//! Answering from scratch scans every resource. Hosts ask on every rejected acquire (an HTTP
//! host's `Retry-After`), so the answers of the last few contexts asked are kept, each with the
//! resource that gives it, and each change to one resource updates them in O(1) apiece: a
//! change to another resource can only bring a minimum down to that resource's instant; a
//! change to the one that gives it forgets that answer (the next question scans again).
//! Candidates are left out: an answer is read only when there are none.

use std::rc::Rc;

use super::core::Core;
use crate::registry::blocklist::Block;
use crate::types::{Millis, State};

use super::kept_answers::NextChange;
use crate::registry::{LeaseRec, same_text};

/// When a resource holding `leases` (each in force at `now`) has room for one more under
/// `max`: `now` if it has room already, else the end of the lease whose end leaves fewer than
/// `max` (the first to end, unless `maxLeases` was lowered below what it holds).
fn room_at(leases: &[LeaseRec], max: u32, now: Millis) -> Millis {
    let held = leases.len();
    let max = max as usize;
    if held < max {
        return now;
    }
    if held == 1 {
        return leases[0].expires_at;
    }
    let mut ends: Vec<Millis> = leases.iter().map(|l| l.expires_at).collect();
    let k = held - max; // this many must end first: the (k+1)-th end frees a place
    *ends.select_nth_unstable(k).1
}

impl Core {
    /// `nextChangeAt(context)` at `now` (applied).
    pub(crate) fn next_change_at(&mut self, context: &str, now: Millis) -> Option<Millis> {
        let (ctx, sum) = self.candidates(context);
        if sum.count > 0 {
            return Some(now);
        }
        if let Some(answer) = self.kept_answers().answer(context) {
            return answer;
        }
        let (answer, argmin) = self.scan_next_change(ctx, now);
        self.kept_answers_mut().keep(NextChange { context: Rc::from(context), ctx, answer, argmin });
        answer
    }

    /// When resource `slot` may next be a candidate of context `ctx` by time alone: the latest
    /// of the end of the lease that leaves it room for one more (with `maxLeases` held, the
    /// first to end), its temporary block's end, and there its pacing's end and its half-open
    /// cooldown's end (and then of every lease held there: one trial at a time); `None` when
    /// only an operator or a probe can make it one.
    fn resource_next_change(&self, slot: u32, ctx: Option<u32>, now: Millis) -> Option<Millis> {
        let r = self.reg.get(slot);
        let mut at = room_at(r.leases(), r.max_leases(), now);
        match r.block() {
            Some(Block::Permanent) => return None,
            Some(Block::Until(u)) => at = at.max(u),
            None => {}
        }
        if let Some(id) = ctx.and_then(|c| self.cells.find(slot, c)) {
            if let Some(end) = self.paced_until(id, now) {
                at = at.max(end);
            }
            let c = self.cells.get(id).cell();
            if c.state == State::Cooling {
                match c.cooldown_cause {
                    Some(cause) if self.config().half_open_causes.contains(cause) => {
                        at = at.max(c.cooldown_until.unwrap_or(now));
                        let here = &self.ctxs.get(self.cells.get(id).ctx).name;
                        for l in r.leases().iter().filter(|l| same_text(&l.context, here)) {
                            at = at.max(l.expires_at);
                        }
                    }
                    _ => return None,
                }
            }
        }
        Some(at)
    }

    /// `nextChangeAt(context, { groups })` at `now` (applied), for groups `groups` (ids of
    /// the listed groups that exist): `now` if one has a candidate, else the earliest instant
    /// over their members (scanned: asked only when an acquire found nothing).
    pub(crate) fn next_change_at_grouped(
        &mut self,
        context: &str,
        groups: &[u32],
        now: Millis,
    ) -> Option<Millis> {
        let ctx = self.ctxs.find(context);
        let mut best: Option<Millis> = None;
        for &g in groups {
            let (count, _) = self.group_candidates(ctx, g);
            if count > 0 {
                return Some(now);
            }
            let (seq, _) = self.reg.groups().order(g);
            for (slot, _) in seq.order_iter() {
                if let Some(at) = self.resource_next_change(slot, ctx, now) {
                    best = Some(best.map_or(at, |b| b.min(at)));
                }
            }
        }
        best
    }

    /// The earliest instant over every resource, and the resource giving it.
    fn scan_next_change(&self, ctx: Option<u32>, now: Millis) -> (Option<Millis>, Option<u32>) {
        let mut best: (Option<Millis>, Option<u32>) = (None, None);
        for slot in self.reg.live_slots() {
            if let Some(at) = self.resource_next_change(slot, ctx, now)
                && best.0.is_none_or(|b| at < b)
            {
                best = (Some(at), Some(slot));
            }
        }
        best
    }

    /// Resource `slot` changed (already applied): its lease or block (`cell_ctx` `None`), or
    /// only its cell in context `cell_ctx`, which no other context's answer depends on. Keeps
    /// the kept answers exact.
    #[inline]
    pub(crate) fn next_change_touched(&mut self, slot: u32, cell_ctx: Option<u32>) {
        if !self.kept_answers().is_empty() {
            self.update_next_change(slot, cell_ctx);
        }
    }

    #[inline(never)]
    fn update_next_change(&mut self, slot: u32, cell_ctx: Option<u32>) {
        let mut kept = std::mem::take(self.kept_answers_mut());
        let now = self.now();
        kept.retain_mut(|n| {
            if cell_ctx.is_some() && n.ctx != cell_ctx {
                return true;
            }
            if n.argmin == Some(slot) {
                return false;
            }
            // A resource whose instant is now is a candidate: while it is one the answer is
            // not read, and it cannot stop being one without another change to it (which
            // comes here).
            if let Some(at) = self.resource_next_change(slot, n.ctx, now).filter(|&at| at > now)
                && n.answer.is_none_or(|a| at < a)
            {
                n.answer = Some(at);
                n.argmin = Some(slot);
            }
            true
        });
        *self.kept_answers_mut() = kept;
    }

    /// Forgets kept answers: those resource `slot` gives (it is leaving), or (`None`) all of
    /// them (the context table changed).
    pub(crate) fn next_change_forget(&mut self, slot: Option<u32>) {
        match slot {
            None => self.kept_answers_mut().forget_all(),
            Some(slot) => self.kept_answers_mut().forget_given_by(slot),
        }
    }
}
