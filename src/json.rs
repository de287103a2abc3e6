//! The engine's minimal JSON writer: string literals, numbers, objects and arrays, per-failure
//! tables. What is written with it lives with what it writes: the config (`config.rs`), a
//! window (`window.rs`), the snapshot (`pool/snapshot/write.rs`), the hosts' views (`wasm/views_json.rs`).
//!
//! Hand-written rather than derived so that key order is fixed by this file, integers print as
//! integers, floats print in their shortest round-trip form (`-34`, `12.345`), and large bulk
//! results are built without intermediate trees. Equal inputs give equal bytes on every host.

use std::fmt::Write;

use crate::types::{FailureType, PerFailure};

/// Writes a JSON string literal.
pub fn string(out: &mut String, s: &str) {
    out.push('"');
    // Most strings (values, contexts, names) need no escape: one tight scan, one copy.
    if !s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Writes a finite float in its shortest round-trip form (integral values without `.0`).
pub fn float(out: &mut String, v: f64) {
    debug_assert!(v.is_finite());
    let _ = write!(out, "{v}");
}

pub fn uint(out: &mut String, v: u64) {
    let _ = write!(out, "{v}");
}

pub fn opt_uint(out: &mut String, v: Option<u64>) {
    match v {
        Some(v) => uint(out, v),
        None => out.push_str("null"),
    }
}

pub fn opt_float(out: &mut String, v: Option<f64>) {
    match v {
        Some(v) => float(out, v),
        None => out.push_str("null"),
    }
}

/// An object writer that handles commas: `obj.key("a"); value...; obj.key("b"); ...`.
pub struct Obj<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Obj<'a> {
    pub fn open(out: &'a mut String) -> Obj<'a> {
        out.push('{');
        Obj { out, first: true }
    }

    pub fn key(&mut self, k: &str) -> &mut String {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        string(self.out, k);
        self.out.push(':');
        self.out
    }

    pub fn str(&mut self, k: &str, v: &str) {
        string(self.key(k), v);
    }

    pub fn uint(&mut self, k: &str, v: u64) {
        uint(self.key(k), v);
    }

    pub fn float(&mut self, k: &str, v: f64) {
        float(self.key(k), v);
    }

    pub fn raw(&mut self, k: &str, v: &str) {
        self.key(k).push_str(v);
    }

    pub fn close(self) {
        self.out.push('}');
    }
}

/// Writes `[item, item, ...]`.
pub fn array<T>(out: &mut String, items: &[T], mut each: impl FnMut(&mut String, &T)) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        each(out, item);
    }
    out.push(']');
}

pub fn per_failure<T: Copy>(out: &mut String, table: &PerFailure<T>, mut each: impl FnMut(&mut String, T)) {
    let mut o = Obj::open(out);
    for t in FailureType::ALL {
        each(o.key(t.as_str()), table[t]);
    }
    o.close();
}
