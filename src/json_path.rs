//! Names the JSON path (`cells[3].score`) where serde_json failed to read a document, from the
//! line and column it reports, by scanning the text up to that point.
//!
//! Restore and config errors must name the offending field (SPEC §6). This scan is the
//! "equivalent" of a path-tracking deserializer (`serde_path_to_error`) that issue 22 allows:
//! it gives every message the path it had before serde came back (a syntax error after an
//! entry names that entry's key, as the scan always did), and it costs nothing until a
//! document is refused, where a tracking wrapper would run around every value of every restore
//! and add a wrapped copy of each reader to the WebAssembly module.
//!
//! A snapshot holds resource values, so an error about one must not quote its text
//! (`describe_private`): keys show only when they are names of the format, and the parser's
//! message loses whatever it quotes from the input (`invalid type: string "hunter2"` becomes
//! `invalid type: string`). A config is the operator's own text and is quoted as it is.

/// What kind of failure, as serde_json classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Syntax,
    Eof,
    Data,
}

/// A serde_json failure at byte offset `at` of the text, its message without serde_json's
/// ` at line … column …`.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonError {
    pub at: usize,
    pub msg: String,
    pub category: Category,
}

impl JsonError {
    /// The failure serde_json reports for `text` (its line is 1-based, its column the byte
    /// offset in that line).
    pub fn of(text: &str, e: &serde_json::Error) -> JsonError {
        let start: usize = text.split_inclusive('\n').take(e.line().saturating_sub(1)).map(str::len).sum();
        let mut msg = e.to_string();
        if let Some(i) = rfind(&msg, " at line ") {
            msg.truncate(i);
        }
        let category = if e.is_data() {
            Category::Data
        } else if e.is_eof() {
            Category::Eof
        } else {
            Category::Syntax
        };
        JsonError { at: (start + e.column()).min(text.len()), msg, category }
    }

    /// serde_json's 1-based line and 0-based byte column of `at` in `text`.
    pub fn line_column(&self, text: &str) -> (usize, usize) {
        let before = &text.as_bytes()[..self.at.min(text.len())];
        let start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        (1 + before[..start].iter().filter(|&&b| b == b'\n').count(), self.at - start)
    }
}

/// One level of nesting while scanning.
enum Frame {
    Object { key: Option<String> },
    Array { index: usize },
}

/// The path of the value being read at byte `at`, e.g. `cells[3].score`; empty at the top
/// level.
pub fn path_at(text: &str, at: usize) -> String {
    path_where(text, at, &|_| true)
}

/// `path_at` with only the keys for which `shown` holds (an unknown key is left out).
fn path_where(text: &str, at: usize, shown: &dyn Fn(&str) -> bool) -> String {
    let bytes = &text.as_bytes()[..at.min(text.len())];
    let mut stack: Vec<Frame> = Vec::new();
    let mut expect_key = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => {
                stack.push(Frame::Object { key: None });
                expect_key = true;
            }
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Array { index }) => *index += 1,
                Some(Frame::Object { .. }) => expect_key = true,
                None => {}
            },
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if expect_key && let Some(Frame::Object { key }) = stack.last_mut() {
                    // An escape skips two bytes and may end inside a multi-byte character, and
                    // so may the error position itself: cut at a character boundary.
                    let mut end = i.min(bytes.len());
                    while !text.is_char_boundary(end) {
                        end -= 1;
                    }
                    *key = Some(text[start.min(end)..end].to_owned());
                    expect_key = false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut path = String::new();
    for frame in &stack {
        match frame {
            Frame::Object { key: Some(k) } if shown(k) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
            }
            Frame::Object { .. } => {}
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

/// `path: message` for a read error in `text`.
pub fn describe(text: &str, e: &JsonError) -> String {
    join(&path_at(text, value_at(text, e)), &e.msg)
}

/// Where the refused value is, for naming its path. `json_in::Exact` refuses a scalar (a string,
/// `null`, a boolean, a number out of range) after reading it whole, and serde_json places such
/// an error only once it has closed the object or array around it: when the value was the
/// last in its container, `e.at` is past the closing bracket, whose path is the container's
/// parent (`{"penalties":{"SLOW":"1"}}` would name `penalties`, and a top-level last field
/// nothing at all). A scalar cannot end in a bracket, so a bracket just before `e.at` is the
/// container's: step back inside it. Every other error keeps its position (a missing field is
/// named on the object that lacks it, which is where it is).
fn value_at(text: &str, e: &JsonError) -> usize {
    const SCALARS: [&str; 4] = ["string", "null", "boolean", "a number out of range"];
    let exact_scalar = e.category == Category::Data
        && e.msg.ends_with(", expected a finite number")
        && e.msg.strip_prefix("invalid type: ").is_some_and(|t| SCALARS.iter().any(|s| t.starts_with(s)));
    let bytes = &text.as_bytes()[..e.at.min(text.len())];
    match bytes.iter().rposition(|b| !b.is_ascii_whitespace()) {
        Some(i) if exact_scalar && matches!(bytes[i], b'}' | b']') => i,
        _ => e.at,
    }
}

/// `describe` for text that may hold secrets: only keys for which `known` holds appear in the
/// path, and nothing the reader quotes from the text appears in the message.
pub fn describe_private(text: &str, e: &JsonError, known: &dyn Fn(&str) -> bool) -> String {
    let path = path_where(text, value_at(text, e), known);
    // Syntax and end-of-input messages never quote the input; data errors may.
    let msg = if e.category == Category::Data { scrub(&e.msg, known) } else { e.msg.clone() };
    join(&path, &msg)
}

fn join(path: &str, msg: &str) -> String {
    if path.is_empty() { msg.to_owned() } else { format!("{path}: {msg}") }
}

/// A serde data error's message without what it quotes from the input: cut at its first quote
/// (serde quotes input as `x` or "x": `unknown field `x`, expected …`, `invalid type: string
/// "x", expected …`), keeping serde's fixed words, the input's type and what was expected
/// (`, expected …` comes last, after any input). `missing field `x`` and `duplicate field `x``
/// name a field of the format: kept when `known` says so.
fn scrub(msg: &str, known: &dyn Fn(&str) -> bool) -> String {
    let Some(quote) = msg.find(['`', '"']) else { return msg.to_owned() };
    let (head, rest) = msg.split_at(quote);
    if head == "missing field " || head == "duplicate field " {
        if rest[1..].split('`').next().is_some_and(known) {
            return msg.to_owned();
        }
        return head.trim_end().to_owned();
    }
    let expected =
        rfind(msg, ", expected ").or_else(|| rfind(msg, ", there are no")).map_or("", |i| &msg[i..]);
    let mut out = head.trim_end().to_owned();
    out.push_str(expected);
    out
}

/// The last occurrence of `needle` (a byte search: `str::rfind` with a string pattern brings a
/// large searcher into the WebAssembly module).
fn rfind(haystack: &str, needle: &str) -> Option<usize> {
    haystack.as_bytes().windows(needle.len()).rposition(|w| w == needle.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        cells: Vec<Cell>,
        n: u32,
    }

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Cell {
        score: f64,
        tags: Vec<String>,
    }

    fn doc_error(text: &str) -> JsonError {
        JsonError::of(text, &serde_json::from_str::<Doc>(text).unwrap_err())
    }

    fn err(text: &str) -> String {
        describe(text, &doc_error(text))
    }

    #[test]
    fn names_the_field_of_each_kind_of_error() {
        let ok = r#"{"score":1,"tags":[]}"#;
        let wrong_type = format!(r#"{{"cells":[{ok},{{"score":"x","tags":[]}}],"n":1}}"#);
        assert!(err(&wrong_type).starts_with("cells[1].score: invalid type"), "{}", err(&wrong_type));
        let unknown = format!(r#"{{"cells":[{ok},{ok},{{"score":1,"tagz":[]}}],"n":1}}"#);
        assert!(err(&unknown).starts_with("cells[2].tagz: unknown field"), "{}", err(&unknown));
        let missing = format!(r#"{{"cells":[{ok},{{"score":1}}],"n":1}}"#);
        assert!(err(&missing).starts_with("cells[1]: missing field `tags`"), "{}", err(&missing));
        let duplicate = r#"{"n":1,"cells":[],"n":2}"#;
        assert!(err(duplicate).starts_with("n: duplicate field"), "{}", err(duplicate));
        let nested = r#"{"cells":[{"score":1,"tags":["a",3]}],"n":1}"#;
        assert!(err(nested).starts_with("cells[0].tags[1]: invalid type"), "{}", err(nested));
        let multiline = "{\n  \"n\": 1,\n  \"cells\": [\n    {\"score\": 1, \"tags\": [], \"x\": 0}\n  ]\n}";
        assert!(err(multiline).starts_with("cells[0].x: unknown field"), "{}", err(multiline));
    }

    fn private(text: &str) -> String {
        let known = |k: &str| ["cells", "score", "tags", "n"].contains(&k);
        describe_private(text, &doc_error(text), &known)
    }

    #[test]
    fn private_errors_name_known_fields_and_quote_nothing_of_the_text() {
        let ok = r#"{"score":1,"tags":[]}"#;
        // (text, what the message starts with, the text's secret)
        let cases = [
            (
                format!(r#"{{"cells":[{ok},{{"score":"hunter2","tags":[]}}],"n":1}}"#),
                "cells[1].score: invalid type: string, expected f64",
                "hunter2",
            ),
            (
                r#"{"cells":[{"score":1,"hunter2":[]}],"n":1}"#.to_owned(),
                "cells[0]: unknown field, expected `score` or `tags`",
                "hunter2",
            ),
            (
                r#"{"n":1,"cells":[{"score":1,"tags":[{"hunter2":1}]}]}"#.to_owned(),
                "cells[0].tags[0]: invalid type: map, expected a string",
                "hunter2",
            ),
            (r#""hunter2""#.to_owned(), "invalid type: string, expected struct Doc", "hunter2"),
            (
                r#"{"cells":[{"score":1,"tags":[]}],"n":1,"n":2}"#.to_owned(),
                "n: duplicate field `n`",
                "\u{0}",
            ),
            (
                r#"{"cells":[{"score":1,"tags":["a"]}]"hunter2"}"#.to_owned(),
                "cells: expected `,` or `}`",
                "hunter2",
            ),
            (
                r#"{"cells":[{"score":1,"tags":[]}],"n":"hunter2"}"#.to_owned(),
                "n: invalid type: string, expected u32",
                "hunter2",
            ),
        ];
        for (text, want, secret) in cases {
            let msg = private(&text);
            assert!(msg.starts_with(want), "{text}: {msg}");
            assert!(!msg.contains(secret), "{text}: {msg}");
        }
        // The same errors in a config (the operator's own text) quote it.
        assert!(err(r#"{"cells":[],"n":1,"tagz":1}"#).contains("tagz"));
    }

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Exactly {
        #[serde(deserialize_with = "crate::json_in::exact")]
        a: f64,
        inner: Inner,
    }

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        #[serde(deserialize_with = "crate::json_in::exact")]
        x: f64,
        #[serde(deserialize_with = "crate::json_in::exact")]
        y: f64,
    }

    fn exact_err(text: &str) -> String {
        let e = JsonError::of(text, &serde_json::from_str::<Exactly>(text).unwrap_err());
        describe(text, &e)
    }

    #[test]
    fn an_exact_number_refused_last_in_its_object_is_named_by_its_own_key() {
        // Last in the inner object, last at the top level, in the middle; with spaces.
        let cases = [
            (r#"{"a":1,"inner":{"x":1,"y":"2"}}"#, "inner.y: invalid type: string"),
            (r#"{"a":1,"inner":{"x":1,"y":null} }"#, "inner.y: invalid type: null"),
            (r#"{"a":1,"inner":{"y":true,"x":1}}"#, "inner.y: invalid type: boolean"),
            (r#"{"inner":{"x":1,"y":2},"a":"1"}"#, "a: invalid type: string"),
            (r#"{"inner":{"x":1,"y":2},"a":1e999 }"#, "a: invalid type: a number out of range"),
            (r#"{"a":"1","inner":{"x":1,"y":2}}"#, "a: invalid type: string"),
        ];
        for (text, want) in cases {
            assert!(exact_err(text).starts_with(want), "{text}: {}", exact_err(text));
        }
        // A missing field is still named on the object that lacks it.
        let missing = r#"{"a":1,"inner":{"x":1}}"#;
        assert!(exact_err(missing).starts_with("inner: missing field `y`"), "{}", exact_err(missing));
    }

    #[test]
    fn strings_with_brackets_and_escapes_do_not_confuse_the_scan() {
        let text = r#"{"cells":[{"score":1,"tags":["[{,\"]"]},{"score":"bad","tags":[]}],"n":1}"#;
        assert!(err(text).starts_with("cells[1].score: invalid type"), "{}", err(text));
    }
}
