//! `json_number::parse` against Rust's own (correctly rounded) float parser, natively: random
//! decimals of every length and exponent, the shortest text of random doubles, and exact
//! halfway points between neighbouring doubles (the hardest case: ties go to even), with a
//! nudge either side.

mod common;

use common::Rng;
use repute::json_number::parse;

fn check(text: &str) {
    let want: f64 = text.parse().unwrap();
    let got = parse(text).unwrap_or_else(|| panic!("{text} is a JSON number"));
    assert_eq!(got.to_bits(), want.to_bits(), "{text}: got {got:e}, want {want:e}");
}

fn digits(rng: &mut Rng, n: u64) -> String {
    (0..n).map(|_| char::from(b'0' + rng.below(10) as u8)).collect()
}

#[test]
fn random_decimals_match_the_standard_parser() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..200_000 {
        let int = match rng.below(3) {
            0 => "0".to_owned(),
            _ => {
                let (lead, n) = (1 + rng.below(9), rng.below(25));
                format!("{lead}{}", digits(&mut rng, n))
            }
        };
        let frac = if rng.below(2) == 0 {
            String::new()
        } else {
            let n = 1 + rng.below(30);
            format!(".{}", digits(&mut rng, n))
        };
        let exp = match rng.below(3) {
            0 => String::new(),
            1 => format!("e{}", rng.below(40) as i64 - 20),
            _ => format!("E{}{}", if rng.below(2) == 0 { "-" } else { "+" }, rng.below(360)),
        };
        let sign = if rng.below(4) == 0 { "-" } else { "" };
        check(&format!("{sign}{int}{frac}{exp}"));
    }
}

#[test]
fn the_shortest_text_of_random_doubles_reads_back_exactly() {
    let mut rng = Rng(7);
    for _ in 0..20_000 {
        let x = f64::from_bits(rng.next());
        if !x.is_finite() {
            continue;
        }
        for text in [format!("{x:?}"), format!("{x:e}")] {
            // Rust prints "1.0" and "1e0", both JSON.
            check(&text);
            assert_eq!(parse(&text).unwrap().to_bits(), x.to_bits(), "{text}");
        }
    }
}

/// The decimal digits (most significant first) of `m × 2^e`, and how many are after the point.
fn exact_decimal(m: u64, e: i32) -> (String, usize) {
    // Little-endian base-10 digits.
    let mut d: Vec<u32> = m.to_string().bytes().rev().map(|b| u32::from(b - b'0')).collect();
    let mul = |d: &mut Vec<u32>, k: u32| {
        let mut carry = 0;
        for x in d.iter_mut() {
            let v = *x * k + carry;
            *x = v % 10;
            carry = v / 10;
        }
        while carry > 0 {
            d.push(carry % 10);
            carry /= 10;
        }
    };
    let after_point = if e >= 0 {
        (0..e).for_each(|_| mul(&mut d, 2));
        0
    } else {
        // m / 2^k = m × 5^k / 10^k
        (0..-e).for_each(|_| mul(&mut d, 5));
        (-e) as usize
    };
    (d.iter().rev().map(|&x| char::from(b'0' + x as u8)).collect(), after_point)
}

/// The decimal digit string `digits` minus one (it is odd, so never zero).
fn minus_one(digits: &str) -> String {
    let mut v: Vec<u8> = digits.bytes().collect();
    let mut k = v.len() - 1;
    while v[k] == b'0' {
        v[k] = b'9';
        k -= 1;
    }
    v[k] -= 1;
    String::from_utf8(v).unwrap()
}

fn with_point(digits: &str, after_point: usize) -> String {
    if after_point == 0 {
        return digits.to_owned();
    }
    let padded = format!("{}{digits}", "0".repeat((after_point + 1).saturating_sub(digits.len())));
    let (int, frac) = padded.split_at(padded.len() - after_point);
    format!("{int}.{frac}")
}

#[test]
fn halfway_points_round_to_even_and_a_nudge_decides() {
    let mut rng = Rng(0xDEAD_BEEF);
    for i in 0..1500 {
        // Normal and subnormal doubles, with exponents across the range.
        let bits = if i % 4 == 0 { rng.below(1 << 52) } else { rng.next() & 0x7FEF_FFFF_FFFF_FFFF };
        let x = f64::from_bits(bits);
        let (mant, exp) = if bits >> 52 == 0 {
            (bits, -1074)
        } else {
            ((bits & ((1 << 52) - 1)) | (1 << 52), (bits >> 52) as i32 - 1075)
        };
        // Halfway between x and the next double up: (2m + 1) × 2^(e − 1).
        let (digits, after) = exact_decimal(2 * mant + 1, exp - 1);
        let half = with_point(&digits, after);
        check(&half);
        let even = if mant % 2 == 0 { x } else { f64::from_bits(bits + 1) };
        assert_eq!(parse(&half).unwrap().to_bits(), even.to_bits(), "tie to even at {half}");
        // A little above the tie goes up; a little below goes down.
        check(&format!("{half}{}1", if after == 0 { "." } else { "" }));
        let below = with_point(&minus_one(&digits), after);
        check(&format!("{below}{}9", if after == 0 { "." } else { "" }));
    }
}
