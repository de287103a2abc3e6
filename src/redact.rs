//! Redaction of secrets inside resource values, for every place a value is shown rather than
//! used: events, error messages, logs.
//!
//! The engine never parses values to act on them; this is display only. Two shapes are
//! recognised: a URL with userinfo (`scheme://user:pass@host`, `scheme://token@host`) and a
//! scheme-less `user:pass@host`. The password (or a lone token) becomes `***`; the user name is
//! kept so that sticky-session proxies that differ only by user stay distinguishable. Anything
//! else (an e-mail address used as an account id, say) is shown as is.

use std::borrow::Cow;

pub const MASK: &str = "***";

/// The value with credentials masked; borrowed unchanged when there is nothing to hide.
pub fn redact(value: &str) -> Cow<'_, str> {
    let (auth_start, has_scheme) = match value.find("://") {
        Some(i) => (i + 3, true),
        None => (0, false),
    };
    let rest = &value[auth_start..];
    // The authority ends at the first '/', '?' or '#'.
    let auth_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..auth_len];
    let Some(at) = authority.rfind('@') else {
        return Cow::Borrowed(value);
    };
    let userinfo = &authority[..at];
    let masked = match userinfo.find(':') {
        Some(colon) => format!("{}:{MASK}", &userinfo[..colon]),
        // A lone token in a URL is a secret; a scheme-less `name@host` is an address, not one.
        None if has_scheme => MASK.to_owned(),
        None => return Cow::Borrowed(value),
    };
    Cow::Owned(format!("{}{}{}", &value[..auth_start], masked, &value[auth_start + at..]))
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn masks_passwords_and_url_tokens_only() {
        let cases = [
            ("http://user:pa55@proxy.example:8080", "http://user:***@proxy.example:8080"),
            ("socks5://tok3n@10.0.0.1:1080/x", "socks5://***@10.0.0.1:1080/x"),
            ("user-session-1:secret@gate.example:7777", "user-session-1:***@gate.example:7777"),
            ("http://a:b:c@h/p@q", "http://a:***@h/p@q"),
            ("http://h/p?u=a@b", "http://h/p?u=a@b"),
            ("alice@example.com", "alice@example.com"),
            ("proxy-1.example.net:8080", "proxy-1.example.net:8080"),
            ("http://u:p@x@host", "http://u:***@host"),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want, "{input}");
        }
    }

    #[test]
    fn never_leaks_the_password() {
        for v in ["http://u:hunter2@h", "u:hunter2@h:1", "https://x:hunter2@y@z/w"] {
            assert!(!redact(v).contains("hunter2"), "{v}");
        }
    }
}
