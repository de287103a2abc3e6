//! Masking of secrets inside resource values, for every place a value is shown rather than
//! used: events, error messages, logs, a viewer's dashboard. The one place this rule lives; the
//! hosts call it (`Pool.maskValue` in JavaScript) rather than keep a copy.
//!
//! The engine never parses values to act on them; this is display only, and it errs on the side
//! of masking too much. It shows what it *recognises* as not secret — a scheme, a host, a port, a
//! user or login name, query keys — and replaces everything else with `***` (a run of masked
//! fields is one `***`, so not even their number shows). What it recognises, by kind:
//!
//! - `SESSION`: nothing. A session value is a cookie, a bearer token or an API key; it shows as
//!   `***` whatever its form.
//! - `PROXY`, the common forms of proxy lists:
//!   - `scheme://user:pass@host:port` and `user:pass@host:port` → `user:***@host:port`; a lone
//!     token (`scheme://token@host`, `token@host:port`) or a user with an empty password (an
//!     API key as the user name: `http://KEY:@host`) → `***@host…`. The userinfo runs to the
//!     **last** `@`, so a password holding `@ / ? # :` is still caught.
//!   - `host:port:user:pass` → `host:port:user:***`; `user:pass:host:port` → `user:***:host:port`;
//!     `host:port@user:pass` → `host:port@user:***`. When both readings fit (a numeric password
//!     looks like a port), everything either reading calls secret is masked.
//!   - after a host: a path shows as `/***`, every query value as `key=***` (a key without `=`
//!     as `***`), a fragment as `#***`.
//!   - `host:port`, `host`, an IPv4 or IPv6 address, and a plain name (`proxy-1`) show as they
//!     are. A host is an IP address, `localhost` or a dotted DNS name: a single label followed
//!     by digits (`squid:3128`) could be `user:pin`, so it shows as `squid:***`.
//! - `ACCOUNT`: a login shows, and everything after it is masked. A login is a name (ASCII
//!   letters and digits, `-`, `_`, `.`, letters of other scripts) or an e-mail address
//!   (`name@host`, `+` allowed before the `@`); it ends at the first character that cannot be
//!   part of one — `:`, `/`, `=`, `\`, `|`, `;`, `,`, `+`, any other ASCII punctuation, white
//!   space, a control character or common non-ASCII punctuation — so `login:pass`,
//!   `login/pass`, `login=pass`, `login\pass` show as `login:***`, `login/***`… A login alone
//!   (`buyer-17`, `alice@example.com`) shows as is; a value that does not start with one
//!   (`login@pass`, a token) shows as `***`. Proxy-shaped values (`token@host:port`, URLs) are
//!   masked as proxies.
//! - A field that looks like a token — 16 or more bytes with a digit, or with both upper
//!   and lower case ASCII letters — is masked even where a name would show (a user name that is an API
//!   key, a bare key given as an account or a proxy), unless it is a host.
//! - Anything else, anything not recognised, shows as `***`.
//!
//! A value that is shown unchanged is borrowed; a masked one is owned (so `Borrowed` always
//! means "nothing was hidden").
//!
//! Nothing here is hot (a value is masked once, when it is registered), so the small tests are
//! kept out of line (`#[inline(never)]`): inlined into every caller at opt-level 3 they cost
//! the WebAssembly module 0.4 kB gzip more.

use crate::types::Kind;
use std::borrow::Cow;

pub const MASK: &str = "***";

/// The value as it may be shown: credentials masked.
pub fn redact(kind: Kind, value: &str) -> Cow<'_, str> {
    let mut out = String::with_capacity(value.len());
    match kind {
        Kind::Session => out.push_str(MASK),
        Kind::Proxy => proxy(value, &mut out),
        Kind::Account => account(value, &mut out),
    }
    if out == value { Cow::Borrowed(value) } else { Cow::Owned(out) }
}

// Each form below appends what it shows of its input to `out`. (Built with `push_str` rather
// than `format!`: this module is in the WebAssembly module, and every `format!` costs bytes.)

fn proxy(v: &str, out: &mut String) {
    if let Some(i) = scheme_end(v) {
        url(v, i, out)
    } else if v.contains('@') {
        at_form(v, out)
    } else {
        address(v, out)
    }
}

fn account(v: &str, out: &mut String) {
    if let Some(i) = scheme_end(v) {
        return url(v, i, out);
    }
    // Proxy-shaped: credentials before an address with a port.
    if let Some((_, after)) = v.rsplit_once('@') {
        let (auth, tail) = split_authority(after);
        if (auth.contains(':') && shown_authority(auth)) || !tail.is_empty() {
            return at_form(v, out);
        }
    }
    // The login runs to the first separator; an e-mail address's name may hold `+`.
    let email_end = v.find(|c| c != '+' && is_account_separator(c)).unwrap_or(v.len());
    let end = if v[..email_end].contains('@') && is_login(&v[..email_end]) {
        email_end
    } else {
        v.find(is_account_separator).unwrap_or(v.len())
    };
    if !is_login(&v[..end]) {
        return out.push_str(MASK);
    }
    // The login, the separator if any, then the mask.
    let sep = v[end..].chars().next().map_or(0, char::len_utf8);
    out.push_str(&v[..end + sep]);
    if sep > 0 {
        out.push_str(MASK);
    }
}

/// Ends a login: anything that cannot be part of one but `@` (an e-mail address's, checked by
/// `is_login`).
fn is_account_separator(c: char) -> bool {
    c != '@' && !is_login_char(c)
}

/// A character of a login name: ASCII letters and digits, `-`, `_`, `.`, and non-ASCII
/// characters but white space and common punctuation (general punctuation, Latin-1 and CJK
/// symbols, fullwidth ASCII punctuation: `／`, `＝`, `、`… separate as their ASCII forms do).
#[inline(never)]
fn is_login_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    }
    !c.is_whitespace()
        && !matches!(c,
            '\u{80}'..='\u{BF}' | '\u{D7}' | '\u{F7}' | '\u{2000}'..='\u{206F}' | '\u{3000}'..='\u{303F}'
            | '\u{FF00}'..='\u{FF0F}' | '\u{FF1A}'..='\u{FF20}' | '\u{FF3B}'..='\u{FF40}' | '\u{FF5B}'..='\u{FF65}')
}

/// A login that may show: a name, or `name@host` (the name may hold `+`), not token-like.
fn is_login(s: &str) -> bool {
    let (name, host) = s.split_once('@').map_or((s, None), |(n, h)| (n, Some(h)));
    !name.is_empty()
        && name.chars().all(|c| is_login_char(c) || (c == '+' && host.is_some()))
        && host.is_none_or(is_host)
        && !token_like(s)
}

/// The index of `://` after a syntactically valid scheme (`[A-Za-z][A-Za-z0-9+.-]*`).
fn scheme_end(v: &str) -> Option<usize> {
    let i = v.as_bytes().windows(3).position(|w| w == b"://")?;
    let scheme = &v.as_bytes()[..i];
    let valid = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme.iter().all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    valid.then_some(i)
}

/// `scheme://[userinfo@]authority[tail]`; `i` is where `://` starts.
fn url(v: &str, i: usize, out: &mut String) {
    let (head, rest) = v.split_at(i + 3);
    out.push_str(head);
    if let Some((userinfo, after)) = rest.rsplit_once('@') {
        // An `@` after a path or query with no `:` before it is not the end of a userinfo.
        if userinfo.contains(':') || !userinfo.contains(['/', '?', '#']) {
            masked_userinfo(userinfo, out);
            out.push('@');
            return address(after, out);
        }
    }
    address(rest, out)
}

/// `userinfo@address`, or `host:port@user:pass`, without a scheme.
fn at_form(v: &str, out: &mut String) {
    let Some((userinfo, after)) = v.rsplit_once('@') else { return out.push_str(MASK) };
    if shown_authority(split_authority(after).0) {
        masked_userinfo(userinfo, out);
        out.push('@');
        return address(after, out);
    }
    match v.split_once('@') {
        Some((before, creds)) if before.contains(':') && shown_authority(before) => {
            out.push_str(before);
            out.push('@');
            masked_userinfo(creds, out);
        }
        _ => out.push_str(MASK),
    }
}

/// `user:***` when the user may show and there is a password; `***` otherwise.
#[inline(never)]
fn masked_userinfo(userinfo: &str, out: &mut String) {
    if let Some((user, pass)) = userinfo.split_once(':')
        && !pass.is_empty()
        && shown_field(user)
        && !user.contains(['/', '?', '#'])
    {
        out.push_str(user);
        out.push(':');
    }
    out.push_str(MASK);
}

/// An authority and what follows it: the authority shown when recognised, else masked field by
/// field; then the tail masked.
fn address(s: &str, out: &mut String) {
    let (auth, tail) = split_authority(s);
    if shown_authority(auth) {
        out.push_str(auth);
    } else {
        colon_form(auth, out);
    }
    masked_tail(tail, out);
}

/// Splits at the first `/`, `?` or `#`.
#[inline(never)]
fn split_authority(s: &str) -> (&str, &str) {
    s.split_at(s.find(['/', '?', '#']).unwrap_or(s.len()))
}

/// Shown as it is: an IPv6 address, a host with or without a port, or a plain name.
#[inline(never)]
fn shown_authority(a: &str) -> bool {
    if is_ipv6(a) {
        return true;
    }
    match a.rsplit_once(':') {
        // host:port, the host without a `:` of its own outside brackets
        Some((host, port)) if is_port(port) && (host.starts_with('[') || !host.contains(':')) => {
            is_host(host)
        }
        _ => is_host(a) || (is_name(a) && !token_like(a)),
    }
}

/// Masks a path, query values and a fragment (see the header).
fn masked_tail(tail: &str, out: &mut String) {
    let (rest, fragment) = tail.split_once('#').map_or((tail, None), |(r, f)| (r, Some(f)));
    let (path, query) = rest.split_once('?').map_or((rest, None), |(p, q)| (p, Some(q)));
    out.push_str(if path.is_empty() || path == "/" { path } else { "/***" });
    if let Some(q) = query {
        out.push('?');
        for (i, pair) in q.split('&').enumerate() {
            if i > 0 {
                out.push('&');
            }
            match pair.split_once('=') {
                Some((key, _)) if shown_field(key) => {
                    out.push_str(key);
                    out.push('=');
                    out.push_str(MASK);
                }
                _ if pair.is_empty() => {}
                _ => out.push_str(MASK),
            }
        }
    }
    match fragment {
        Some("") => out.push('#'),
        Some(_) => out.push_str("#***"),
        None => {}
    }
}

/// Colon-separated fields without `@`: `host:port:user:pass`, `user:pass:host:port`, `a:b`.
fn colon_form(v: &str, out: &mut String) {
    let parts = split_colons(v);
    let n = parts.len();
    let mut masked = vec![false; n];
    let (starts, ends) = host_port_ends(&parts);
    if starts {
        // host:port:user:pass… (host:port:secret when there are three fields)
        let first_secret = if n >= 4 && shown_field(parts[2]) { 3 } else { 2 };
        masked[first_secret..].fill(true);
    }
    if ends {
        // user:pass…:host:port (secret:host:port when there are three fields)
        let first_secret = if n >= 4 && shown_field(parts[0]) { 1 } else { 0 };
        masked[first_secret..n - 2].fill(true);
    }
    if !starts && !ends {
        if n < 2 || !shown_field(parts[0]) {
            return out.push_str(MASK);
        }
        masked[1..].fill(true);
    }
    for (i, part) in parts.iter().enumerate() {
        if masked[i] && i > 0 && masked[i - 1] {
            continue;
        }
        if i > 0 {
            out.push(':');
        }
        out.push_str(if masked[i] { MASK } else { part });
    }
}

/// Whether three or more colon-separated fields start with `host:port` and whether they end
/// with it: the proxy list forms `host:port:user:pass` and `user:pass:host:port`.
fn host_port_ends(parts: &[&str]) -> (bool, bool) {
    let n = parts.len();
    let host_port = |i: usize| is_host(parts[i]) && is_port(parts[i + 1]);
    (n >= 3 && host_port(0), n >= 3 && host_port(n - 2))
}

/// A value in one of the proxy lists' colon forms, which carry a secret beside their
/// `host:port` (`host:port:user:pass`, `user:pass:host:port`, `host:port:token`): the forms a
/// name without `@` can hold a credential in (a context must not: `check::context_arg`).
pub fn colon_credentials(v: &str) -> bool {
    let (starts, ends) = host_port_ends(&split_colons(split_authority(v).0));
    starts || ends
}

/// Splits at `:` outside `[…]` (a bracketed IPv6 address is one field).
fn split_colons(v: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0u32;
    let mut start = 0;
    for (i, c) in v.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ':' if depth == 0 => {
                parts.push(&v[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&v[start..]);
    parts
}

/// 1 to 5 digits, at most 65535.
#[inline(never)]
fn is_port(s: &str) -> bool {
    (1..=5).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_digit())
        && s.bytes().fold(0u32, |n, b| n * 10 + u32::from(b - b'0')) <= 65535
}

/// Written like an IPv6 address: hex digits, `:` and `.` only, with `::` or seven `:`. (Loose,
/// and enough to tell an address from `user:pass`; `std::net`'s parser would cost the
/// WebAssembly module more than this whole file.)
fn is_ipv6(s: &str) -> bool {
    let colons = s.bytes().filter(|&b| b == b':').count();
    (2..=7).contains(&colons)
        && s.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        && (colons == 7 || s.as_bytes().windows(2).any(|w| w == b"::"))
}

/// Four decimal octets.
#[inline(never)]
fn is_ipv4(s: &str) -> bool {
    let mut n = 0;
    s.split('.').all(|o| {
        n += 1;
        (1..=3).contains(&o.len()) && o.bytes().all(|b| b.is_ascii_digit()) && o.parse::<u8>().is_ok()
    }) && n == 4
}

/// An IP address (IPv6 in brackets), `localhost`, or a DNS name of two or more labels whose
/// last label is not all digits.
#[inline(never)]
fn is_host(s: &str) -> bool {
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return is_ipv6(inner);
    }
    if is_ipv4(s) || s.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let labels: Vec<&str> = s.split('.').collect();
    labels.len() >= 2
        && labels.iter().all(|l| is_name(l))
        && !labels.last().is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()))
}

/// One label: the characters of a login but `.` (names in other scripts too; Unicode's letter
/// tables would double this module's size, so any non-ASCII character but white space and
/// common punctuation counts).
#[inline(never)]
fn is_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c != '.' && is_login_char(c))
}

/// A user or login name that may show: not empty, a host, or not token-like.
#[inline(never)]
fn shown_field(s: &str) -> bool {
    !s.is_empty() && (is_host(s) || !token_like(s))
}

/// 16 or more bytes with a digit, or with both upper and lower case (ASCII) letters.
#[inline(never)]
fn token_like(s: &str) -> bool {
    s.len() >= 16
        && (s.bytes().any(|b| b.is_ascii_digit())
            || (s.bytes().any(|b| b.is_ascii_uppercase()) && s.bytes().any(|b| b.is_ascii_lowercase())))
}

#[cfg(test)]
mod tests {
    use super::{MASK, redact};
    use crate::types::Kind::{self, Account, Proxy, Session};

    /// (kind, value, shown, the secret parts that must not show)
    const CASES: &[(Kind, &str, &str, &[&str])] = &[
        // URL form
        (Proxy, "http://user:pa55@proxy.example:8080", "http://user:***@proxy.example:8080", &["pa55"]),
        (Proxy, "socks5://tok3n@10.0.0.1:1080", "socks5://***@10.0.0.1:1080", &["tok3n"]),
        (Proxy, "socks5h://u:p@[2001:db8::1]:1080", "socks5h://u:***@[2001:db8::1]:1080", &[":p@"]),
        (Proxy, "http://a:b:c@h/p@q", "http://a:***@q", &["b:c", "h/p"]),
        (Proxy, "http://u:p?w#d@h:1/x", "http://u:***@h:***/***", &["p?w#d"]),
        (Proxy, "http://u:p@x@host", "http://u:***@host", &["p@x"]),
        (
            Proxy,
            "http://APIKEYabc123:@proxy.zenrows.com:8001",
            "http://***@proxy.zenrows.com:8001",
            &["APIKEYabc123"],
        ),
        (
            Proxy,
            "http://Kf93jd02LmQ81zzP:render_js=False@proxy.scrapingbee.com:8886",
            "http://***@proxy.scrapingbee.com:8886",
            &["Kf93jd02LmQ81zzP", "render_js"],
        ),
        (Proxy, "http://🦀:pw@proxy-é.example.net:8080", "http://🦀:***@proxy-é.example.net:8080", &["pw@"]),
        (Proxy, "http://h/p?u=a@b", "http://h/***?u=***", &["a@b"]),
        (Proxy, "http://1.2.3.4:8080:user:hunter2", "http://1.2.3.4:8080:user:***", &["hunter2"]),
        // query parameters, paths and fragments
        (
            Proxy,
            "https://gw.example.com:8443/?password=hunter2&pass=p1&pwd=p2&token=t1&key=k1&secret=s1&auth=a1",
            "https://gw.example.com:8443/?password=***&pass=***&pwd=***&token=***&key=***&secret=***&auth=***",
            &["hunter2", "=p1", "=p2", "=t1", "=k1", "=s1", "=a1"],
        ),
        (Proxy, "gw.example.com:8080?apikey=s3cr3t", "gw.example.com:8080?apikey=***", &["s3cr3t"]),
        (Proxy, "http://gw.example.com/v1/s3cr3t/", "http://gw.example.com/***", &["s3cr3t"]),
        (Proxy, "http://gw.example.com/#s3cr3t", "http://gw.example.com/#***", &["s3cr3t"]),
        (Proxy, "http://gw.example.com/?s3cr3t", "http://gw.example.com/?***", &["s3cr3t"]),
        // user:pass@host:port and host:port@user:pass
        (
            Proxy,
            "user-session-1:secret@gate.example:7777",
            "user-session-1:***@gate.example:7777",
            &["secret"],
        ),
        (Proxy, "user:s3cr/et+tok=@gate.example:7777", "user:***@gate.example:7777", &["s3cr/et+tok="]),
        (Proxy, "tok3n@gate.example:7777", "***@gate.example:7777", &["tok3n"]),
        (Proxy, "1.2.3.4:8080@carol:hunter2", "1.2.3.4:8080@carol:***", &["hunter2"]),
        (Proxy, "u:p@gate", "u:***@gate", &[":p@"]),
        (Proxy, "a@b.com:pw@gate.example:1", "a@b.com:***@gate.example:1", &["pw@"]),
        // host:port:user:pass and user:pass:host:port
        (Proxy, "proxy-c.example:8080:carol:Secret", "proxy-c.example:8080:carol:***", &["Secret"]),
        (Proxy, "1.2.3.4:8080:user:pa:ss", "1.2.3.4:8080:user:***", &["pa:ss", "ss"]),
        (Proxy, "carol:Secret:proxy-c.example:8080", "carol:***:proxy-c.example:8080", &["Secret"]),
        (Proxy, "carol:12345:1.2.3.4:8080", "carol:***:1.2.3.4:8080", &["12345"]),
        (Proxy, "1.2.3.4:8080:carol:1234", "1.2.3.4:8080:carol:***", &["1234"]),
        (Proxy, "1.2.3.4:8080:my.host:1234", "1.2.3.4:***:my.host:***", &["8080", "1234"]),
        (Proxy, "[2001:db8::1]:8080:carol:hunter2", "[2001:db8::1]:8080:carol:***", &["hunter2"]),
        (Proxy, "1.2.3.4:8080:s3cr3tt0k3n", "1.2.3.4:8080:***", &["s3cr3tt0k3n"]),
        (Proxy, "s3cr3tt0k3n:1.2.3.4:8080", "***:1.2.3.4:8080", &["s3cr3tt0k3n"]),
        (Proxy, "squid:3128", "squid:***", &["3128"]),
        (Proxy, "carol:hunter2", "carol:***", &["hunter2"]),
        // shown as they are
        (Proxy, "proxy-1.example.net:8080", "proxy-1.example.net:8080", &[]),
        (Proxy, "10.0.0.1:3128", "10.0.0.1:3128", &[]),
        (Proxy, "2001:db8::1", "2001:db8::1", &[]),
        (Proxy, "::1", "::1", &[]),
        (Proxy, "::ffff:10.0.0.1", "::ffff:10.0.0.1", &[]),
        (Proxy, "2001:db8:0:0:0:0:0:1", "2001:db8:0:0:0:0:0:1", &[]),
        (Proxy, "dead:beef", "dead:***", &["beef"]),
        (Proxy, "dead:be:ef", "dead:***", &["be:ef"]),
        (Proxy, "[2001:db8::1]:8080", "[2001:db8::1]:8080", &[]),
        (Proxy, "proxy-1", "proxy-1", &[]),
        (Proxy, "http://proxy-1.example.net:8080", "http://proxy-1.example.net:8080", &[]),
        (Proxy, "localhost:8080", "localhost:8080", &[]),
        // bare keys and unrecognised text
        (Proxy, "sk_live_51Hx9s8d7f6g5h", "***", &["51Hx9s8d7f6g5h"]),
        (Proxy, "host=1.2.3.4;pass=hunter2", "***", &["hunter2"]),
        (Proxy, "my proxy with spaces", "***", &["spaces"]),
        // accounts
        (Account, "carol:hunter2", "carol:***", &["hunter2"]),
        (Account, "carol:12345", "carol:***", &["12345"]),
        (Account, "carol:", "carol:***", &[]),
        (Account, "alice@example.com:hunter2", "alice@example.com:***", &["hunter2"]),
        (Account, "alice@example.com:hunter2:recovery", "alice@example.com:***", &["hunter2", "recovery"]),
        (Account, "carol|hunter2", "carol|***", &["hunter2"]),
        (Account, "carol;hunter2", "carol;***", &["hunter2"]),
        (Account, "carol hunter2", "carol ***", &["hunter2"]),
        (Account, "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "***", &["16C7e42F"]),
        (Account, "ghp_16C7e42F292c6912E7710c838347Ae178B4a:x", "***", &["16C7e42F"]),
        (Account, "tok3n@gate.example:8080", "***@gate.example:8080", &["tok3n"]),
        (Account, "https://carol:hunter2@shop.example/", "https://carol:***@shop.example/", &["hunter2"]),
        (Account, "alice@example.com", "alice@example.com", &[]),
        (Account, "buyer-17", "buyer-17", &[]),
        // any separator ends the login (issue 26): what is not a login is not shown
        (Account, "login57/qzx57pw", "login57/***", &["qzx57pw"]),
        (Account, "login58=qzx58pw", "login58=***", &["qzx58pw"]),
        (Account, "login56\\qzx56pw", "login56\\***", &["qzx56pw"]),
        (Account, "login+qzx59pw", "login+***", &["qzx59pw"]),
        (Account, "login'qzx60pw", "login'***", &["qzx60pw"]),
        (Account, "login\tqzx61pw", "login\t***", &["qzx61pw"]),
        (Account, "login／qzx62pw", "login／***", &["qzx62pw"]),
        (Account, "login、qzx63pw", "login、***", &["qzx63pw"]),
        (Account, "login@qzx64pw", "***", &["qzx64pw"]),
        (Account, "alice@example.com=qzx65pw", "alice@example.com=***", &["qzx65pw"]),
        (Account, "alice+crawl@example.com", "alice+crawl@example.com", &[]),
        (Account, "first.last_2", "first.last_2", &[]),
        (Account, "käufer-7", "käufer-7", &[]),
        // sessions: never shown
        (Session, "sess-1", MASK, &["sess-1"]),
        (Session, "sid=abc123; csrftoken=def456", MASK, &["abc123", "def456"]),
        (Session, "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", MASK, &["eyJ"]),
        (Session, MASK, MASK, &[]),
    ];

    #[test]
    fn shows_what_the_table_says_and_never_a_secret() {
        for &(kind, value, want, secrets) in CASES {
            let shown = redact(kind, value);
            assert_eq!(shown, want, "{kind} {value}");
            for secret in secrets {
                assert!(!shown.contains(secret), "{kind} {value} shows {secret} in {shown}");
            }
            // Borrowed means unchanged.
            assert_eq!(matches!(shown, std::borrow::Cow::Borrowed(_)), want == value, "{kind} {value}");
        }
    }

    #[test]
    fn masking_a_masked_value_reveals_nothing_more() {
        // Hosts re-mask what older versions logged; a masked value stays masked.
        for &(kind, value, _, secrets) in CASES {
            let once = redact(kind, value).into_owned();
            let twice = redact(kind, &once);
            for secret in secrets {
                assert!(!twice.contains(secret), "{kind} {value}: {twice}");
            }
            assert!(twice.len() <= once.len(), "{kind} {value}: {once} → {twice}");
        }
    }
}
