//! `json::float` (zmij's shortest digits, the point placed by the engine) prints every float
//! exactly as Rust's `{}` does, which it replaced in snapshots, views and messages: on edge
//! values and on two million random bit patterns and decimals.

use repute::json::float_text;

#[test]
fn prints_floats_as_rusts_display_does() {
    let edges = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        0.1 + 0.2,
        0.9999999999999999,
        1e-7,
        1e15,
        1e16,
        1e21,
        1e22,
        1e300,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        9.5367431640625e-7,
        123456789.125,
        9007199254740991.0,
        9007199254740993.0,
        (1u64 << 53) as f64,
        30000.0,
        2.35,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    for v in edges {
        assert_eq!(float_text(v), format!("{v}"), "{v:e}");
    }
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for i in 0..2_000_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let v = match i % 4 {
            0 => f64::from_bits(x),
            1 => (x % 1_000_000_000) as f64 / 1000.0,
            2 => (x >> 11) as f64 * 2f64.powi(-53) * 10f64.powi((x % 40) as i32 - 20),
            _ => (x % (1 << 53)) as f64,
        };
        if v.is_finite() {
            assert_eq!(float_text(v), format!("{v}"), "{:?}", v.to_bits());
        }
    }
}
