//! Test clocks: the engine takes each call's clock reading as an argument (`now`), so tests
//! that script time keep a clock here and `ClockedPool` (`clocked.rs`) reads it once per call.
//!
//! [`Clock`] is implemented for any `FnMut() -> f64` (milliseconds since the Unix epoch), so a
//! test passes `|| 42.0` (or `|| f64::NAN`, to see the reading refused).

/// A source of the current instant, in (possibly fractional) milliseconds since the Unix epoch.
pub trait Clock {
    fn now_ms(&mut self) -> f64;
}

impl<F: FnMut() -> f64> Clock for F {
    fn now_ms(&mut self) -> f64 {
        self()
    }
}

/// A clock that stays where it is put; tests move it by hand. Clones share the reading.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now: std::rc::Rc<std::cell::Cell<f64>>,
}

impl ManualClock {
    pub fn new(start_ms: f64) -> ManualClock {
        ManualClock { now: std::rc::Rc::new(std::cell::Cell::new(start_ms)) }
    }

    /// Sets the reading seen by every handle cloned from this one.
    pub fn set(&self, ms: f64) {
        self.now.set(ms);
    }

    pub fn advance(&self, ms: f64) {
        self.now.set(self.now.get() + ms);
    }

    pub fn get(&self) -> f64 {
        self.now.get()
    }
}

impl Clock for ManualClock {
    fn now_ms(&mut self) -> f64 {
        self.now.get()
    }
}
