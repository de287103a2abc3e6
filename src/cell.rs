//! A reputation cell (one resource × one context) and the exact report rules of SPEC §3:
//! penalties and reward, the cooldown curve, late failures during a cooldown, success-driven
//! recovery with probation, and outcomes on blocklisted resources.
//!
//! Pure: a report is a function of the cell, the outcome, `now`, whether the resource is
//! blocklisted and the config. Which cells are selectable is answered here too; how selectable
//! cells are indexed and picked is not (see `index/`).

use crate::config::Config;
use crate::types::{CauseSet, FailureType, Millis, Outcome, State};
use crate::window::{Observation, Window};

/// The durable part of a cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub score: f64,
    pub consecutive_failures: u32,
    pub consecutive_successes: u32,
    pub state: State,
    /// The end of the last cooldown (kept after recovery; a past value means not cooling).
    pub cooldown_until: Option<Millis>,
    /// The failure type that started the last cooldown; written only on entering `COOLING`.
    pub cooldown_cause: Option<FailureType>,
    pub updated_at: Millis,
    pub window: Window,
    /// The cooling cap kept a cooldown from starting (SPEC §3, cooling cap): until the next
    /// success or a real cooldown, a grouped acquire may escalate past this cell.
    pub held: bool,
}

/// What a report did to the cell's state, for the event it produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    None,
    Cooled {
        cause: FailureType,
        until: Millis,
    },
    /// The cooling cap suppressed a cooldown: the cell is held instead.
    Suppressed {
        cause: FailureType,
    },
    /// `COOLING` → `RECOVERING`: probation starts (no event of its own).
    Probation,
    Recovered,
}

pub const MIN_SCORE: f64 = -100.0;
pub const MAX_SCORE: f64 = 100.0;

/// Clamps to [-100, 100] and normalises `-0` to `0` so equal states print equal bytes.
pub fn clamp_score(s: f64) -> f64 {
    let s = s.clamp(MIN_SCORE, MAX_SCORE);
    if s == 0.0 { 0.0 } else { s }
}

impl Cell {
    /// The transient cell of a resource nobody has reported on in a context.
    pub fn fresh(now: Millis) -> Cell {
        Cell {
            score: 0.0,
            consecutive_failures: 0,
            consecutive_successes: 0,
            state: State::Healthy,
            cooldown_until: None,
            cooldown_cause: None,
            updated_at: now,
            window: Window::default(),
            held: false,
        }
    }

    /// The end of the cell's pacing at `now` with minimum gap `gap` (ms; 0 = off): its last
    /// report plus the gap while that is still ahead (`now < end`), else `None`.
    pub fn paced_until(&self, now: Millis, gap: Millis) -> Option<Millis> {
        let end = self.updated_at + gap;
        (gap > 0 && now < end).then_some(end)
    }

    /// Still inside its cooldown at `now` (expiry is exclusive: `now < until` is in force).
    pub fn cooling_at(&self, now: Millis) -> bool {
        self.state == State::Cooling && self.cooldown_until.is_some_and(|u| now < u)
    }

    /// `COOLING` with an expired cooldown: due for recovery, by half-open trial or by probe.
    pub fn due_for_recovery(&self, now: Millis) -> bool {
        self.state == State::Cooling && !self.cooling_at(now)
    }

    /// A candidate for `acquire`: `HEALTHY`, `RECOVERING`, or a half-open trial.
    pub fn selectable(&self, now: Millis, half_open: CauseSet) -> bool {
        match self.state {
            State::Healthy | State::Recovering => true,
            State::Cooling => {
                self.due_for_recovery(now) && self.cooldown_cause.is_some_and(|c| half_open.contains(c))
            }
        }
    }

    /// Grantable by `acquireResource`: `HEALTHY`, `RECOVERING`, or due for recovery (any cause).
    pub fn leasable_by_name(&self, now: Millis) -> bool {
        self.state != State::Cooling || self.due_for_recovery(now)
    }

    /// Listed by `dueForRecoveryProbe` (resource-level conditions aside).
    pub fn probe_due(&self, now: Millis, half_open: CauseSet) -> bool {
        self.due_for_recovery(now) && self.cooldown_cause.is_some_and(|c| !half_open.contains(c))
    }

    /// Applies one reported outcome (SPEC §3, steps in order). `capped`: the context's cooling
    /// cap is reached, so a cooldown this failure would start is suppressed.
    pub fn report(
        &mut self,
        outcome: &Outcome,
        now: Millis,
        blocked: bool,
        capped: bool,
        cfg: &Config,
    ) -> Transition {
        self.updated_at = now;
        self.window.push(Observation::from_outcome(outcome), cfg.window_size as usize);
        match outcome.failure_type() {
            Some(t) => self.fail(t, now, blocked, capped, cfg),
            None => self.succeed(now, blocked, cfg),
        }
    }

    /// Whether a failure reported now would reach step 4 and start a cooldown (so the cooling
    /// cap needs to be asked).
    pub fn would_cool(&self, now: Millis, blocked: bool, cfg: &Config) -> bool {
        !blocked && !self.cooling_at(now) && self.consecutive_failures.saturating_add(1) >= cfg.cool_after
    }

    fn fail(&mut self, t: FailureType, now: Millis, blocked: bool, capped: bool, cfg: &Config) -> Transition {
        let failures_before = self.consecutive_failures;
        // 1. score, counters (the window was appended by `report`).
        self.score = clamp_score(self.score - cfg.penalties[t]);
        self.consecutive_failures = self.consecutive_failures.saturating_add(1);
        self.consecutive_successes = 0;
        // 2. blocklisted: evidence only.
        if blocked {
            return Transition::None;
        }
        // 3. a late result during a running cooldown belongs to that incident.
        if self.cooling_at(now) {
            return Transition::None;
        }
        // 4. cool at the curve's step for this many consecutive failures.
        if self.consecutive_failures >= cfg.cool_after {
            if capped {
                // The cap: the failure is charged to the destination, not the resource.
                self.consecutive_failures = failures_before;
                self.held = true;
                return Transition::Suppressed { cause: t };
            }
            self.held = false;
            let until = now + cfg.cooldown_ms(t, self.consecutive_failures);
            self.state = State::Cooling;
            self.cooldown_until = Some(until);
            self.cooldown_cause = Some(t);
            return Transition::Cooled { cause: t, until };
        }
        Transition::None
    }

    fn succeed(&mut self, now: Millis, blocked: bool, cfg: &Config) -> Transition {
        // 1. score, counters, streak.
        self.score = clamp_score(self.score + cfg.success_reward);
        self.consecutive_failures = 0;
        self.consecutive_successes = self.consecutive_successes.saturating_add(1);
        self.held = false;
        // 2. blocklisted: evidence only.
        if blocked {
            return Transition::None;
        }
        let mut transition = Transition::None;
        // 3. the first success after the cooldown starts probation, counted from now.
        if self.due_for_recovery(now) {
            self.state = State::Recovering;
            self.consecutive_successes = 1;
            transition = Transition::Probation;
        }
        // 4. enough successes in probation: healthy again.
        if self.state == State::Recovering && self.consecutive_successes >= cfg.recover_after {
            self.state = State::Healthy;
            transition = Transition::Recovered;
        }
        // 5. a success while still cooling changes no state.
        transition
    }
}
