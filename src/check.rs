//! Small validators shared by calls, config and snapshot parsing: bounded integers and floats,
//! resource values and context names, host clock readings and random draws.
//!
//! Each returns a message naming the field (a JSON path or an argument name) and the allowed
//! range; callers wrap it in the error variant of their domain. No value is echoed back, so a
//! secret in a bad argument never reaches an error message.

use crate::error::{Result, invalid_argument};
use crate::redact::{colon_credentials, redact};
use crate::types::{Kind, Millis};

/// The largest instant or duration the engine accepts from outside: 2^52 ms.
pub const MAX_INSTANT: u64 = 1 << 52;
/// The largest integer every host represents exactly (JavaScript's `Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE: u64 = (1 << 53) - 1;
/// The latest instant the engine computes: a reading ≤ 2^52 plus a block or cooldown ≤ 2^52
/// (still exact in a JavaScript number).
pub const MAX_END: u64 = 1 << 53;
/// Resource values are at most this many UTF-8 bytes.
pub const MAX_VALUE_BYTES: usize = 1024;
/// Context names are at most this many UTF-8 bytes.
pub const MAX_CONTEXT_BYTES: usize = 256;

/// An integer-valued float in `lo..=hi`.
pub fn int_in(path: &str, v: f64, lo: u64, hi: u64) -> Result<u64, String> {
    if v.is_finite() && v.fract() == 0.0 && v >= lo as f64 && v <= hi as f64 {
        Ok(v as u64)
    } else {
        Err(format!("{path} must be an integer in {lo}..={hi}"))
    }
}

/// A finite float in `lo..=hi`.
pub fn float_in(path: &str, v: f64, lo: f64, hi: f64) -> Result<f64, String> {
    if v.is_finite() && v >= lo && v <= hi {
        Ok(v)
    } else {
        let (lo, hi) = (crate::json::float_text(lo), crate::json::float_text(hi));
        Err(format!("{path} must be a finite number in [{lo}, {hi}]"))
    }
}

/// Blank means empty or only Unicode `White_Space` characters.
pub fn is_blank(s: &str) -> bool {
    match s.as_bytes().first() {
        // The usual case, decided by one byte: a printable ASCII character that is not a space.
        Some(&b) if b.is_ascii_graphic() => false,
        _ => s.chars().all(char::is_whitespace),
    }
}

/// Unicode's format characters (general category Cf, Unicode 17): zero-width spaces and joiners,
/// bidirectional controls, the byte order mark, tag characters. Checked against the
/// platform's `\p{Cf}` by `tests/js/text-rules.test.mjs`.
const FORMAT_CHARS: &[(u32, u32)] = &[
    (0xAD, 0xAD),
    (0x600, 0x605),
    (0x61C, 0x61C),
    (0x6DD, 0x6DD),
    (0x70F, 0x70F),
    (0x890, 0x891),
    (0x8E2, 0x8E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
];

/// A character no value or context may hold: a control character (Cc: C0, DEL, C1 — NUL, CR,
/// LF, TAB among them), a format character (Cf, see above), or a line or paragraph separator
/// (U+2028, U+2029: line breaks to many log viewers). They forge log lines, hide text or
/// reorder it on screen, and make two values that look alike different resources.
pub fn is_hidden_char(c: char) -> bool {
    let u = c as u32;
    c.is_control()
        || u == 0x2028
        || u == 0x2029
        || FORMAT_CHARS
            .binary_search_by(|&(lo, hi)| {
                if hi < u {
                    std::cmp::Ordering::Less
                } else if lo > u {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
}

/// The first control, format or separator character in `s` (see `is_hidden_char`).
fn hidden_char(s: &str) -> Option<char> {
    // The usual case, decided without decoding: printable ASCII only.
    if printable_ascii(s.as_bytes()) {
        return None;
    }
    s.chars().find(|&c| is_hidden_char(c))
}

/// Every byte in 0x20..=0x7E, tested eight at a time (this runs on every call that names a
/// value or a context: a byte-at-a-time `all` cost 8 instructions a byte, a quarter of an
/// acquire + report + release cycle).
fn printable_ascii(s: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut words = s.chunks_exact(8);
    let mut bad = 0;
    for w in &mut words {
        let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        let del = w ^ (ONES * 0x7F);
        // A byte ≥ 0x80; a byte < 0x20 (for bytes < 0x80, the classic "has less than"); 0x7F.
        bad |= w | (w.wrapping_sub(ONES * 0x20) & !w) | (del.wrapping_sub(ONES) & !del);
    }
    bad & HIGH == 0 && words.remainder().iter().all(|&b| (0x20..0x7F).contains(&b))
}

fn text(what: &str, s: &str, max: usize) -> Result<(), String> {
    if is_blank(s) {
        Err(format!("{what} must not be blank"))
    } else if let Some(c) = hidden_char(s) {
        // The code point is named (it is not a secret); the value is not.
        Err(format!("{what} must not contain control or format characters (found U+{:04X})", c as u32))
    } else if s.len() > max {
        Err(format!("{what} must be at most {max} UTF-8 bytes (got {})", s.len()))
    } else {
        Ok(())
    }
}

pub fn value_text(what: &str, s: &str) -> Result<(), String> {
    text(what, s, MAX_VALUE_BYTES)
}

pub fn context_text(what: &str, s: &str) -> Result<(), String> {
    text(what, s, MAX_CONTEXT_BYTES)
}

/// A resource value passed to a call.
pub fn value_arg(s: &str) -> Result<()> {
    value_text("value", s).map_err(invalid_argument)
}

/// A context name passed to a call: also refused when it holds a credential (see below).
pub fn context_arg(s: &str) -> Result<()> {
    context_text("context", s).map_err(invalid_argument)?;
    if holds_credential(s) {
        return Err(invalid_argument(
            "context must not hold a credential (a user and password or a token, before `@` or beside `host:port`): name the destination, never the credential",
        ));
    }
    Ok(())
}

/// A context holding a credential — `user:pass@host`, a URL with a userinfo, `token@host:port`,
/// or a proxy list's colon form `host:port:user:pass` / `user:pass:host:port` — by the masking
/// rule of values (`redact.rs`): it has an `@`, and masked as a proxy and as an account it
/// would lose something either way; or it is a colon form, whose fields beside `host:port` the
/// proxy rule masks. A context is never masked (events, metric
/// labels, leases show it as it is, and it must stay distinct from its neighbours), so such a
/// context is refused instead. An e-mail address (`alice@example.com`: a login to the account
/// rule) and other names (`shop:eu`, `shop.example:443`, a URL without userinfo) are contexts.
/// Restores do not apply it: a snapshot written before keeps loading.
fn holds_credential(s: &str) -> bool {
    (s.contains('@') && redact(Kind::Proxy, s) != s && redact(Kind::Account, s) != s) || colon_credentials(s)
}

/// The longest group name, in UTF-8 bytes (SPEC §3, groups).
pub const MAX_GROUP_BYTES: usize = 64;

/// The most groups one call may list.
pub const MAX_GROUPS: usize = 16;

pub fn group_text(what: &str, s: &str) -> Result<(), String> {
    text(what, s, MAX_GROUP_BYTES)
}

/// A group passed to `register` (`None`: no group).
pub fn group_arg(g: Option<&str>) -> Result<()> {
    g.map_or(Ok(()), |g| group_text("group", g).map_err(invalid_argument))
}

/// The most leases one resource may hold at once (SPEC §3, capacity).
pub const MAX_LEASES: u32 = 1024;

/// A `maxLeases` passed to `register`: an integer in 1..=1024.
pub fn max_leases_arg(max: Option<u32>) -> Result<()> {
    match max {
        Some(m) if !(1..=MAX_LEASES).contains(&m) => {
            Err(invalid_argument(format!("maxLeases must be an integer in 1..={MAX_LEASES} (got {m})")))
        }
        _ => Ok(()),
    }
}

/// A `groups` list passed to `acquire` or `nextChangeAt`: 1 to 16 distinct groups.
pub fn groups_arg(gs: &[Option<&str>]) -> Result<()> {
    if gs.is_empty() || gs.len() > MAX_GROUPS {
        return Err(invalid_argument(format!(
            "groups must list 1 to {MAX_GROUPS} groups (got {})",
            gs.len()
        )));
    }
    for (i, g) in gs.iter().enumerate() {
        if let Some(g) = g {
            group_text(&format!("groups[{i}]"), g).map_err(invalid_argument)?;
        }
        if gs[..i].contains(g) {
            return Err(invalid_argument(format!("groups[{i}] repeats an earlier entry")));
        }
    }
    Ok(())
}

/// A host clock reading (every `Pool` call's `now`): finite, within [0, 2^52]; fractional
/// milliseconds are floored.
pub fn clock_reading(v: f64) -> Result<Millis> {
    if v.is_finite() && (0.0..=MAX_INSTANT as f64).contains(&v) {
        // Truncation is the floor: v is not negative. Through i64, which v fits: on x86-64
        // that is one instruction, where a float-to-u64 conversion takes a dozen.
        Ok(v as i64 as Millis)
    } else {
        Err(invalid_argument("the host clock returned a value that is not a finite number in [0, 2^52] ms"))
    }
}

/// A host random draw: in [0, 1).
pub fn random_draw(u: f64) -> Result<f64> {
    if (0.0..1.0).contains(&u) {
        Ok(u)
    } else {
        Err(invalid_argument("the host random source returned a value outside [0, 1)"))
    }
}

/// A reported latency: finite and non-negative.
pub fn latency_arg(v: Option<f64>) -> Result<Option<f64>> {
    match v {
        Some(l) if !(0.0..=f64::MAX).contains(&l) => {
            Err(invalid_argument("latencyMs must be a finite, non-negative number"))
        }
        _ => Ok(v),
    }
}

#[cfg(test)]
mod tests {
    use super::{hidden_char, printable_ascii};

    #[test]
    fn printable_ascii_agrees_with_a_byte_at_a_time_test_at_every_position() {
        for len in 0..=24 {
            for at in 0..len {
                for b in [0x00, 0x09, 0x0A, 0x1F, 0x20, 0x41, 0x7E, 0x7F, 0x80, 0xC3, 0xFF] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = b;
                    let want = bytes.iter().all(|&c| (0x20..0x7F).contains(&c));
                    assert_eq!(printable_ascii(&bytes), want, "{len} bytes, {b:#x} at {at}");
                }
            }
        }
        assert_eq!(hidden_char("proxy-1.example.net:8080"), None);
        assert_eq!(hidden_char("proxy-1.example.net:8080\u{200B}"), Some('\u{200B}'));
        assert_eq!(hidden_char("é-ß"), None);
    }
}
