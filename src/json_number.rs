//! Numbers read from JSON text exactly: the nearest `f64` to the decimal as written (ties to
//! even), whatever its length. serde_json's default reading rounds twice for long decimals (a
//! score written as `0.9999999999999999` came back as `1`), which broke snapshot → restore →
//! snapshot. Exact readers cost WebAssembly size: serde_json's `float_roundtrip` and core's
//! parser ~15 KB gzip each (their tables of 128-bit powers), `lexical-parse-float`'s compact
//! mode ~9 KB; this file ~2 KB. It takes the fast exact path when the digits fit in 2^53 and
//! the power of ten in ±22 (every default-config value), and otherwise the "simple decimal
//! conversion" (the decimal shifted by powers of two until it lies in [1/2, 1), as Go's strconv
//! does it): slower, but only long fractions take it. `tests/json_number.rs` checks it against
//! Rust's own parser on a million random inputs and on exact halfway cases.
//!
//! Every number the engine reads from JSON goes through it (`json_read.rs`); integers take the
//! fast path. Error messages never quote the text.

/// Digits kept: enough to decide every halfway case of an f64 (its exact decimal expansions
/// have at most 767 significant digits); dropped non-zero digits set `truncated`.
const MAX_DIGITS: usize = 800;

/// A decimal `0.d₁d₂d₃… × 10^dp` (digits as values 0–9, no leading or trailing zeros).
struct Decimal {
    digits: Vec<u8>,
    dp: i32,
    truncated: bool,
}

/// Parses JSON number text exactly; `None` for anything that is not a JSON number
/// (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`). Overflow gives ±∞.
pub fn parse(text: &str) -> Option<f64> {
    if let Some(v) = short(text.as_bytes()) {
        return Some(v);
    }
    let b = text.as_bytes();
    let negative = b.first() == Some(&b'-');
    let mut i = usize::from(negative);
    let mut d = Decimal { digits: Vec::new(), dp: 0, truncated: false };
    let mut int_digits = 0;
    let push = |d: &mut Decimal, c: u8, point: &mut i32, before_point: bool| {
        if c == 0 && d.digits.is_empty() {
            if !before_point {
                *point -= 1; // a leading zero after the point
            }
        } else if d.digits.len() < MAX_DIGITS {
            d.digits.push(c);
        } else if c != 0 {
            d.truncated = true;
        }
    };
    let mut point: i32 = 0;
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
                push(&mut d, c - b'0', &mut point, true);
                int_digits += 1;
                i += 1;
            }
        }
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            push(&mut d, c - b'0', &mut point, false);
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    let mut exp: i64 = 0;
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        let minus = b.get(i) == Some(&b'-');
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let start = i;
        while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            exp = (exp * 10 + i64::from(c - b'0')).min(1 << 40); // far beyond any f64
            i += 1;
        }
        if i == start {
            return None;
        }
        if minus {
            exp = -exp;
        }
    }
    if i != b.len() {
        return None;
    }
    while d.digits.last() == Some(&0) {
        d.digits.pop();
    }
    let dp = i64::from(int_digits) + i64::from(point) + exp;
    d.dp = dp.clamp(-100_000, 100_000) as i32;
    let v = d.nearest();
    Some(if negative { -v } else { v })
}

/// The common case without allocating: `-?digits(.digits)?`, at most 15 digits in all, no
/// leading zero before other digits (`None` for anything else: `parse` reads it). The digits
/// as an integer are below 2^53 and 10^fraction is exact, so one division is correctly rounded.
fn short(b: &[u8]) -> Option<f64> {
    let negative = b.first() == Some(&b'-');
    let digits = &b[usize::from(negative)..];
    if digits.len() > 16 || digits.first() == Some(&b'0') && digits.len() > 1 && digits[1] != b'.' {
        return None;
    }
    let (mut m, mut n, mut fraction) = (0u64, 0, None);
    for (i, &c) in digits.iter().enumerate() {
        match c {
            b'0'..=b'9' => {
                m = m * 10 + u64::from(c - b'0');
                n += 1;
            }
            b'.' if fraction.is_none() && i > 0 && i + 1 < digits.len() => {
                fraction = Some(digits.len() - i - 1)
            }
            _ => return None,
        }
    }
    if n == 0 || n > 15 {
        return None;
    }
    let v = m as f64 / POW10[fraction.unwrap_or(0)];
    Some(if negative { -v } else { v })
}

/// 10^0 … 10^22: exactly representable, so one correctly rounded product or quotient is exact.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
    1e19, 1e20, 1e21, 1e22,
];

/// `POWERS[i]`: a binary shift that moves the decimal point by at most `i` places (2^n < 10^i),
/// so the loops that bring the decimal into [1/2, 1) never overshoot it; 27 beyond (2^27 < 10^9).
const POWERS: [u32; 9] = [1, 3, 6, 9, 13, 16, 19, 23, 26];
const FAR: u32 = 27;

/// The largest shift done at once: a digit times 2^60 plus a carry fits in a u64.
const MAX_SHIFT: u32 = 60;

impl Decimal {
    fn nearest(mut self) -> f64 {
        if self.digits.is_empty() {
            return 0.0;
        }
        // Fast path: at most 2^53 as an integer and a power of ten in ±22.
        let n = self.digits.len() as i32;
        if n <= 16 && !self.truncated {
            let m = self.digits.iter().fold(0u64, |m, &c| m * 10 + u64::from(c));
            let e = self.dp - n; // value = m × 10^e
            if m <= 1 << 53 && (-22..=22).contains(&e) {
                let p = POW10[e.unsigned_abs() as usize];
                return if e >= 0 { m as f64 * p } else { m as f64 / p };
            }
        }
        self.slow()
    }

    /// The simple decimal conversion: exact for any input.
    fn slow(&mut self) -> f64 {
        if self.dp > 310 {
            return f64::INFINITY;
        }
        if self.dp < -330 {
            return 0.0;
        }
        let mut exp: i32 = 0;
        while self.dp > 0 {
            let n = POWERS.get(self.dp as usize).copied().unwrap_or(FAR);
            self.right_shift(n);
            exp += n as i32;
        }
        while self.dp < 0 || (self.dp == 0 && self.digits[0] < 5) {
            let n = POWERS.get((-self.dp) as usize).copied().unwrap_or(FAR);
            self.left_shift(n);
            exp -= n as i32;
        }
        // Now in [1/2, 1); an f64 significand is in [1, 2).
        exp -= 1;
        if exp < -1022 {
            // Subnormal: shift down to the smallest exponent.
            let mut n = (-1022 - exp) as u32;
            exp = -1022;
            while n > 0 {
                let k = n.min(MAX_SHIFT);
                self.right_shift(k);
                n -= k;
            }
        }
        if exp > 1023 {
            return f64::INFINITY;
        }
        self.left_shift(53);
        let mut mant = self.rounded_integer();
        if mant == 1 << 53 {
            mant >>= 1;
            exp += 1;
            if exp > 1023 {
                return f64::INFINITY;
            }
        }
        let biased = if mant & (1 << 52) == 0 { 0 } else { (exp + 1023) as u64 };
        f64::from_bits((biased << 52) | (mant & ((1 << 52) - 1)))
    }

    /// Divides by 2^k (k ≤ 60), dropping digits beyond `MAX_DIGITS` (noted in `truncated`).
    fn right_shift(&mut self, k: u32) {
        let mask = (1u64 << k) - 1;
        let mut read = 0;
        let mut n: u64 = 0;
        // Read digits until the accumulator holds at least 2^k.
        while n >> k == 0 {
            if read < self.digits.len() {
                n = n * 10 + u64::from(self.digits[read]);
            } else if n == 0 {
                self.digits.clear();
                return;
            } else {
                n *= 10;
            }
            read += 1;
        }
        self.dp -= read as i32 - 1;
        let mut out = Vec::with_capacity(self.digits.len() + 20);
        for &c in &self.digits[read.min(self.digits.len())..] {
            out.push((n >> k) as u8);
            n = (n & mask) * 10 + u64::from(c);
        }
        while n > 0 {
            let digit = (n >> k) as u8;
            if out.len() < MAX_DIGITS {
                out.push(digit);
            } else if digit > 0 {
                self.truncated = true;
            }
            n = (n & mask) * 10;
        }
        self.digits = out;
        self.trim();
    }

    /// Multiplies by 2^k (k ≤ 60).
    fn left_shift(&mut self, k: u32) {
        let mut reversed = Vec::with_capacity(self.digits.len() + 20);
        let mut carry: u64 = 0;
        for &c in self.digits.iter().rev() {
            let v = (u64::from(c) << k) + carry;
            reversed.push((v % 10) as u8);
            carry = v / 10;
        }
        while carry > 0 {
            reversed.push((carry % 10) as u8);
            carry /= 10;
        }
        self.dp += (reversed.len() - self.digits.len()) as i32;
        reversed.reverse();
        if reversed.len() > MAX_DIGITS {
            self.truncated |= reversed[MAX_DIGITS..].iter().any(|&c| c != 0);
            reversed.truncate(MAX_DIGITS);
        }
        self.digits = reversed;
        self.trim();
    }

    fn trim(&mut self) {
        while self.digits.last() == Some(&0) {
            self.digits.pop();
        }
        if self.digits.is_empty() {
            self.dp = 0;
        }
    }

    /// The integer part, rounded half to even (a truncated tail counts as above half).
    fn rounded_integer(&self) -> u64 {
        if self.dp < 0 {
            return 0; // below 0.1: nothing to round up to
        }
        let dp = self.dp as usize;
        let mut n: u64 = 0;
        for i in 0..dp {
            n = n * 10 + u64::from(self.digits.get(i).copied().unwrap_or(0));
        }
        let up = match self.digits.get(dp) {
            None => false,
            Some(&5) if dp + 1 == self.digits.len() => self.truncated || (n % 2 == 1),
            Some(&c) => c >= 5,
        };
        n + u64::from(up)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_json_numbers_exactly_and_nothing_else() {
        for (text, want) in [
            ("0.9999999999999999", 0.999_999_999_999_999_9),
            ("0.30000000000000004", 0.1 + 0.2),
            ("-0", -0.0),
            ("0", 0.0),
            ("1e2", 100.0),
            ("100e-2", 1.0),
            ("0.000123", 0.000123),
            ("5.551115123125783e-17", 0.1 + 0.2 - 0.3),
            ("2.2250738585072014e-308", f64::MIN_POSITIVE),
            ("5e-324", f64::from_bits(1)),
            ("1.7976931348623157e308", f64::MAX),
            ("1e309", f64::INFINITY),
            ("1e-400", 0.0),
        ] {
            assert_eq!(parse(text).map(f64::to_bits), Some(want.to_bits()), "{text}");
        }
        for bad in ["", "-", "01", "1.", ".5", "1e", "+1", "NaN", "inf", "1 ", "0x10", "1_0", "--1", "1e+"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
