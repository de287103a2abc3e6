//! The masking rule for `ACCOUNT` values (`src/redact.rs`), as properties over random
//! credentials: a login, any separator that cannot be part of a login, a secret — the secret
//! never shows, whatever the separator (issue 26 found `login/pass`, `login=pass` and
//! `login\pass` shown in clear); a login alone shows as it is; masking twice hides no less.
//! Secrets start with `Q` (a login here never holds an upper-case letter, so a `Q` in the output
//! is the secret's) and hold no `@` or `:` (with them a value is proxy-shaped —
//! `login=pass:x@host:1` — which the proxy rule's own table covers).

// Native only, as proptest is (Cargo.toml): property tests do not run in wasm32.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use repute::Kind;
use repute::redact::redact;

/// A login: a name, or an e-mail address (`+` allowed in its name); under 16 bytes, so never
/// token-like (a token-like login is masked whole, which the table in redact.rs covers).
fn login() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z0-9][a-z0-9._-]{0,14}", "[a-z0-9][a-z0-9.+_-]{0,4}@[a-z0-9-]{1,4}\\.(com|net)",]
}

/// A separator: ASCII punctuation but the login's own `-_.` and `@`, white space, control
/// characters, and the non-ASCII punctuation the rule knows.
fn separator() -> impl Strategy<Value = char> {
    prop_oneof![
        prop::sample::select("!\"#$%&'()*+,/:;<=>?[\\]^`{|}~ \t\n\r\u{0}\u{7f}".chars().collect::<Vec<_>>()),
        prop::sample::select(vec![
            '\u{a0}', '\u{a7}', '\u{b7}', '\u{2013}', '\u{2016}', '\u{2044}', '\u{3000}', '\u{3001}',
            '\u{ff0f}', '\u{ff1d}', '\u{ff3c}', '\u{ff5c}'
        ]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn the_secret_after_a_separator_never_shows(login in login(), sep in separator(), secret in "Q[^@:]{0,24}") {
        // An e-mail address before `/`, `?` or `#` reads as `token@host/path…`: the proxy rule
        // (its table in redact.rs), which shows query keys.
        prop_assume!(!(login.contains('@') && "/?#".contains(sep)));
        let value = format!("{login}{sep}{secret}");
        let shown = redact(Kind::Account, &value);
        prop_assert!(!shown.contains('Q'), "{value:?} shows {shown:?}");
        // What shows is the login and its separator, or less of it (up to an earlier separator:
        // `+` in an e-mail's name; or nothing, when an e-mail address and what follows read as
        // `token@host/path`), then the mask; exactly the login and its separator for a name.
        let prefix = shown.strip_suffix("***");
        prop_assert!(prefix.is_some_and(|p| format!("{login}{sep}").starts_with(p)), "{value:?} shows {shown:?}");
        if !login.contains(['+', '@']) {
            prop_assert_eq!(shown.as_ref(), format!("{login}{sep}***"));
        }
        let twice = redact(Kind::Account, &shown);
        prop_assert!(!twice.contains('Q') && twice.len() <= shown.len(), "{shown:?} → {twice:?}");
    }

    #[test]
    fn a_login_alone_shows_as_it_is(login in login()) {
        prop_assert_eq!(redact(Kind::Account, &login), login.as_str());
    }

    #[test]
    fn a_value_with_no_login_before_its_first_separator_shows_nothing(sep in separator(), secret in "Q[^@:]{0,24}") {
        let value = format!("{sep}{secret}");
        prop_assert_eq!(redact(Kind::Account, &value), "***");
    }
}
