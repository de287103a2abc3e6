//! Drained events packed for a JavaScript host: numbers in one `f64` array and every distinct
//! string once, so the host builds its event objects directly instead of parsing JSON (which
//! cost it about a quarter of an acquire + report + release cycle).
//!
//! Layout of `numbers`: `[events, strings, len_0 … len_{strings−1}, then FIELDS per event]`,
//! each event `seq, at, type, kind, value, context, cause, until, permanent, token, unmasked`.
//! `type`, `kind`, `value` (masked), `context`, `cause` and `unmasked` (the value as registered,
//! for a host that names resources by an id of its own; the same index as `value` when nothing
//! is masked) are indexes into the string table (`-1`: absent);
//! `until` and `token` are `-1` when absent, `permanent` is 0 or 1. The string table is
//! `strings` cut at the given lengths, counted in UTF-16 code units (what JavaScript's `slice`
//! counts). Keys present in an event are those of `views_json::write_event`, in the same order.

use rustc_hash::FxHashMap;

use crate::events::PoolEvent;

/// Numbers per event.
pub const FIELDS: usize = 11;

/// Drained events in the layout above.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Packed {
    pub numbers: Vec<f64>,
    pub strings: String,
}

/// Each distinct string once, keyed by address (an event's strings are shared `Rc`s and
/// `'static` names, so equal addresses are equal strings; an equal string at another address
/// is only stored twice).
#[derive(Default)]
struct Table<'a> {
    index: FxHashMap<(usize, usize), usize>,
    order: Vec<&'a str>,
}

impl<'a> Table<'a> {
    fn id(&mut self, s: &'a str) -> f64 {
        let next = self.order.len();
        let id = *self.index.entry((s.as_ptr() as usize, s.len())).or_insert(next);
        if id == next {
            self.order.push(s);
        }
        id as f64
    }
}

fn or_none(v: Option<f64>) -> f64 {
    v.unwrap_or(-1.0)
}

pub fn pack_events(events: &[PoolEvent]) -> Packed {
    let mut table = Table::default();
    let mut fields = Vec::with_capacity(events.len() * FIELDS);
    for e in events {
        let (kind, value) = match &e.resource {
            Some((k, v)) => (table.id(k.as_str()), table.id(v)),
            None => (-1.0, -1.0),
        };
        fields.extend_from_slice(&[
            e.seq as f64,
            e.at as f64,
            table.id(e.ty.as_str()),
            kind,
            value,
            or_none(e.context.as_deref().map(|c| table.id(c))),
            or_none(e.cause.map(|c| table.id(c.as_str()))),
            or_none(e.until.map(|u| u as f64)),
            f64::from(u8::from(e.permanent)),
            or_none(e.token.map(|t| t as f64)),
            or_none(e.unmasked.as_ref().map(|u| table.id(u.expose()))),
        ]);
    }
    let mut numbers = Vec::with_capacity(2 + table.order.len() + fields.len());
    numbers.extend([events.len() as f64, table.order.len() as f64]);
    numbers.extend(table.order.iter().map(|s| s.encode_utf16().count() as f64));
    numbers.extend(fields);
    Packed { numbers, strings: table.order.concat() }
}
