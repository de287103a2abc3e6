//! Redaction of secrets inside resource values, for every place a value is shown rather than
//! used: events, error messages, logs.
//!
//! The engine never parses values to act on them; this is display only, and it errs on the side
//! of masking too much. Userinfo is everything up to the **last** `@` (after `scheme://` when
//! there is one), so a password holding `/`, `?`, `#` or `@` is still caught:
//! `user:pass@host` and `scheme://user:pass@host` show as `user:***@host`; a lone token in a URL
//! (`scheme://token@host`) shows as `***@host`. A scheme-less `name@host` without a colon (an
//! e-mail address used as an account id) is not a credential and is shown as is, and so is an
//! `@` after a path in a URL that has no userinfo (`https://h/p?u=a@b`).

use std::borrow::Cow;

pub const MASK: &str = "***";

/// The value with credentials masked; borrowed unchanged when there is nothing to hide.
pub fn redact(value: &str) -> Cow<'_, str> {
    let (start, has_scheme) = match value.find("://") {
        Some(i) => (i + 3, true),
        None => (0, false),
    };
    let Some(at) = value[start..].rfind('@').map(|i| start + i) else {
        return Cow::Borrowed(value);
    };
    let userinfo = &value[start..at];
    let masked = match userinfo.find(':') {
        Some(colon) => format!("{}:{MASK}", &userinfo[..colon]),
        // A bare token in a URL's userinfo is a secret; text with a path or query before the
        // `@` is not userinfo, and a scheme-less `name@host` is an address.
        None if has_scheme && !userinfo.contains(['/', '?', '#']) => MASK.to_owned(),
        None => return Cow::Borrowed(value),
    };
    Cow::Owned(format!("{}{}{}", &value[..start], masked, &value[at..]))
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
            ("http://a:b:c@h/p@q", "http://a:***@q"),
            ("user:s3cr/et+tok=@gate.example:7777", "user:***@gate.example:7777"),
            ("http://u:p?w#d@h:1/x", "http://u:***@h:1/x"),
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
        let cases = [
            ("http://u:hunter2@h", "hunter2"),
            ("u:hunter2@h:1", "hunter2"),
            ("https://x:hunter2@y@z/w", "hunter2"),
            ("u:hun/ter2@h", "hun/ter2"),
            ("u:hunter2/@h", "hunter2/"),
            ("socks5://u:h@unter2@h", "h@unter2"),
            ("http://u:a?hunter2@h", "a?hunter2"),
            ("http://u:#hunter2@h", "#hunter2"),
            ("http://t0k3n@h:8080", "t0k3n"),
        ];
        for (value, secret) in cases {
            let shown = redact(value);
            assert!(!shown.contains(secret), "{value} shows as {shown}");
        }
    }
}
