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

/// Writes a finite float in its shortest round-trip form, as Rust's `{}` prints it: no
/// exponent, integral values without `.0` (`-34`, `12.345`, `0.0000001`).
///
/// The digits come from `zmij` (the shortest ones that read back to `v`, the nearest when
/// several are as short, as core's printing picks them); only the point is placed here. Core's
/// float printing (Grisu with its Dragon4 fallback and their big-number code) was the largest
/// single item in the WebAssembly module; `tests/float_text.rs` checks this against it.
pub fn float(out: &mut String, v: f64) {
    debug_assert!(v.is_finite());
    let mut buf = zmij::Buffer::new();
    // zmij writes `-1.25e-7`, `100.0`, `0.001`: read its significant digits (at most 17) and
    // where the point goes, value = 0.d₁d₂… × 10^point.
    let (mut digits, mut n, mut point, mut exp) = ([0u8; 20], 0, 0i32, 0i32);
    let (mut fraction, mut exponent, mut exp_negative) = (false, false, false);
    for &b in buf.format_finite(v).as_bytes() {
        match b {
            b'-' if exponent => exp_negative = true,
            b'-' => out.push('-'),
            b'.' => fraction = true,
            b'e' => exponent = true,
            b'+' => {}
            _ if exponent => exp = exp * 10 + i32::from(b - b'0'),
            b'0' if n == 0 => point -= i32::from(fraction),
            _ => {
                digits[n] = b - b'0';
                n += 1;
                point += i32::from(!fraction);
            }
        }
    }
    point += if exp_negative { -exp } else { exp };
    while n > 0 && digits[n - 1] == 0 {
        n -= 1;
    }
    let value = digits[..n].iter().fold(0u64, |acc, &d| acc * 10 + u64::from(d));
    if tie_above(v, value, n as i32 - point) {
        // Exactly halfway between two shortest candidates: zmij keeps the even one, core's
        // printing the one of larger magnitude.
        let mut i = n;
        while i > 0 && digits[i - 1] == 9 {
            i -= 1;
        }
        if i == 0 {
            digits[0] = 1; // 99.5 → 100: one digit, the point one place on
            n = 1;
            point += 1;
        } else {
            digits[i - 1] += 1;
            n = i;
        }
    }
    let digits = &digits[..n];
    let push_digits = |out: &mut String, ds: &[u8]| ds.iter().for_each(|&d| out.push(char::from(b'0' + d)));
    if n == 0 {
        out.push('0');
    } else if point <= 0 {
        out.push_str("0.");
        zeros(out, -point);
        push_digits(out, digits);
    } else if point as usize >= n {
        push_digits(out, digits);
        zeros(out, point - n as i32);
    } else {
        push_digits(out, &digits[..point as usize]);
        out.push('.');
        push_digits(out, &digits[point as usize..]);
    }
}

/// Whether |`v`| lies exactly halfway between `d` × 10^−k and the next candidate up,
/// (d + 1) × 10^−k: 2·|v|·10^k is then the odd integer 2·d + 1. Worked out on v's binary form
/// m·2^e (m odd), so no big numbers are needed.
fn tie_above(v: f64, d: u64, k: i32) -> bool {
    let bits = v.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    let (m, e) = if biased == 0 { (frac, -1074) } else { (frac | 1 << 52, biased - 1075) };
    if m == 0 {
        return false;
    }
    let t = m.trailing_zeros();
    let (m, e) = (m >> t, e + t as i32);
    // 2·v·10^k = m · 2^(e + 1 + k) · 5^k: an odd integer only when the power of two cancels.
    if e + 1 + k != 0 {
        return false;
    }
    let q = if k >= 0 {
        5u128.checked_pow(k as u32).and_then(|p| p.checked_mul(u128::from(m)))
    } else {
        5u64.checked_pow((-k) as u32).filter(|p| m % p == 0).map(|p| u128::from(m / p))
    };
    q == Some(2 * u128::from(d) + 1)
}

fn zeros(out: &mut String, n: i32) {
    for _ in 0..n {
        out.push('0');
    }
}

/// Any float as Rust's `{}` prints it, into a new string (for messages): `float`'s form, and
/// `NaN`, `inf`, `-inf`.
pub fn float_text(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    let mut out = String::new();
    float(&mut out, v);
    out
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
