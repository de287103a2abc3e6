//! Drained events packed for a JavaScript host: numbers in one `f64` array and every distinct
//! string once, so the host builds its event objects directly instead of parsing JSON (which
//! cost it about a quarter of an acquire + report + release cycle).
//!
//! Layout of `numbers`: `[events, strings, then FIELDS per event, then len_0 … len_{strings−1}]`,
//! each event `seq, at, type, kind, value, context, cause, until, permanent, token, unmasked,
//! group, maxLeases`. `type`, `kind`, `value` (masked), `context`, `cause`, `unmasked` (the value as
//! registered, for a host that names resources by an id of its own; the same index as `value`
//! when nothing is masked) and `group` are indexes into the string table (`-1`: absent; for
//! `group`, `-2`: `null`, no group);
//! `until`, `token` and `maxLeases` are `-1` when absent, `permanent` is 0 or 1. The string table is
//! `strings` cut at the given lengths, counted in UTF-16 code units (what JavaScript's `slice`
//! counts). Keys present in an event are those of `views_json::write_event`, in the same order.
//! The lengths come last so the events are written straight into the one array (the table is
//! known only once every event is packed).

use rustc_hash::FxHashMap;

use crate::events::{EventType, PoolEvent};
use crate::types::{FailureType, Kind};

/// Numbers per event.
pub const FIELDS: usize = 13;

/// Drained events in the layout above.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Packed {
    pub numbers: Vec<f64>,
    pub strings: String,
}

/// The names of the vocabulary (event types, kinds, failure types): table slots by position,
/// no hashing.
const NAMES: usize = EventType::ALL.len() + Kind::ALL.len() + FailureType::ALL.len();
const KIND_AT: usize = EventType::ALL.len();
const CAUSE_AT: usize = KIND_AT + Kind::ALL.len();

/// Each distinct string once: names by their place in the vocabulary, shared strings (values
/// and contexts, `Rc`s) by address, so equal addresses are equal strings (an equal string at
/// another address is only stored twice).
struct Table<'a> {
    names: [f64; NAMES],
    index: FxHashMap<usize, f64>,
    order: Vec<&'a str>,
}

impl<'a> Table<'a> {
    fn new() -> Table<'a> {
        Table { names: [-1.0; NAMES], index: FxHashMap::default(), order: Vec::new() }
    }

    fn push(&mut self, s: &'a str) -> f64 {
        self.order.push(s);
        (self.order.len() - 1) as f64
    }

    fn name(&mut self, slot: usize, s: &'static str) -> f64 {
        if self.names[slot] < 0.0 {
            self.names[slot] = self.push(s);
        }
        self.names[slot]
    }

    /// A shared string; an empty one (whose address may be any) by content.
    fn shared(&mut self, s: &'a str) -> f64 {
        if s.is_empty() {
            return self.push(s);
        }
        let next = self.order.len() as f64;
        let id = *self.index.entry(s.as_ptr() as usize).or_insert(next);
        if id == next {
            self.order.push(s);
        }
        id
    }
}

fn or_none(v: Option<f64>) -> f64 {
    v.unwrap_or(-1.0)
}

pub fn pack_events(events: &[PoolEvent]) -> Packed {
    let mut numbers = Vec::new();
    let strings = pack_events_into(&mut numbers, events);
    Packed { numbers, strings }
}

/// `pack_events` into a buffer the caller keeps between drains (cleared first): returns the
/// string table.
pub fn pack_events_into(numbers: &mut Vec<f64>, events: &[PoolEvent]) -> String {
    let mut table = Table::new();
    numbers.clear();
    numbers.reserve(2 + events.len() * (FIELDS + 1));
    numbers.extend([events.len() as f64, 0.0]);
    for e in events {
        let (kind, value) = match &e.resource {
            Some((k, v)) => (table.name(KIND_AT + *k as usize, k.as_str()), table.shared(v)),
            None => (-1.0, -1.0),
        };
        let unmasked = match (&e.unmasked, &e.resource) {
            (Some(u), Some((_, v))) if u.expose().as_ptr() == v.as_ptr() => value,
            (u, _) => or_none(u.as_ref().map(|u| table.shared(u.expose()))),
        };
        numbers.extend_from_slice(&[
            e.seq as f64,
            e.at as f64,
            table.name(e.ty as usize, e.ty.as_str()),
            kind,
            value,
            or_none(e.context.as_deref().map(|c| table.shared(c))),
            or_none(e.cause.map(|c| table.name(CAUSE_AT + c as usize, c.as_str()))),
            or_none(e.until.map(|u| u as f64)),
            f64::from(u8::from(e.permanent)),
            or_none(e.token.map(|t| t as f64)),
            unmasked,
            match &e.group {
                None => -1.0,
                Some(None) => -2.0,
                Some(Some(g)) => table.shared(g),
            },
            or_none(e.max_leases.map(f64::from)),
        ]);
    }
    numbers[1] = table.order.len() as f64;
    numbers.extend(table.order.iter().map(|s| s.encode_utf16().count() as f64));
    table.order.concat()
}
