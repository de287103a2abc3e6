//! The engine's JSON reader: a small pull parser for the two documents the engine reads (a
//! config patch, a snapshot), in place of serde's derived visitors and serde_json's
//! deserializer, which were a sixth of the WebAssembly module.
//!
//! It reads the grammar serde_json reads and fails where serde_json failed, with the same
//! messages at the same byte positions (`json_path.rs` turns a position into the field's path),
//! so errors did not change when it replaced them: syntax (`expected `,` or `}``), end of input
//! (`EOF while parsing an object`) and data (`invalid type: string "x", expected f64`, `unknown
//! field`, `missing field`, `duplicate field`). Numbers are read exactly (`json_number.rs`).
//! Which fields a document holds is the reader of that document's business (`config.rs`,
//! `config/by_context.rs`, `pool/snapshot/input.rs`).

use std::borrow::Cow;
use std::fmt::Write;

use crate::json_number;

/// What kind of failure, as serde_json classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Syntax,
    Eof,
    Data,
}

/// A failure at byte offset `at` (serde_json's position: `line` and `column` are derived
/// from it).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonError {
    pub at: usize,
    pub msg: String,
    pub category: Category,
}

impl JsonError {
    /// serde_json's 1-based line and 0-based byte column of `at` in `text`.
    pub fn line_column(&self, text: &str) -> (usize, usize) {
        let before = &text.as_bytes()[..self.at.min(text.len())];
        let start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        (1 + before[..start].iter().filter(|&&b| b == b'\n').count(), self.at - start)
    }
}

pub type Read<T> = Result<T, JsonError>;

const EOF_VALUE: &str = "EOF while parsing a value";
const EOF_OBJECT: &str = "EOF while parsing an object";
const EOF_LIST: &str = "EOF while parsing a list";
const EOF_STRING: &str = "EOF while parsing a string";
const INVALID_NUMBER: &str = "invalid number";
const INVALID_ESCAPE: &str = "invalid escape";
const LONE_SURROGATE: &str = "lone leading surrogate in hex escape";

/// A number token as read: its text, and whether it had a fraction or an exponent.
struct Number<'a> {
    text: &'a str,
    float: bool,
}

/// A cursor over the text.
pub struct Reader<'a> {
    text: &'a str,
    i: usize,
}

impl<'a> Reader<'a> {
    pub fn new(text: &'a str) -> Reader<'a> {
        Reader { text, i: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek();
        if b.is_some() {
            self.i += 1;
        }
        b
    }

    /// An error at the current position (after the byte that caused it).
    #[cold]
    #[inline(never)]
    fn error(&self, msg: &str) -> JsonError {
        JsonError { at: self.i, msg: msg.to_owned(), category: category(msg) }
    }

    /// An error caused by the byte not yet consumed.
    #[cold]
    #[inline(never)]
    fn peek_error(&self, msg: &str) -> JsonError {
        JsonError { at: (self.i + 1).min(self.text.len()), msg: msg.to_owned(), category: category(msg) }
    }

    /// A data error (a value of the wrong type or content) at the current position.
    #[cold]
    #[inline(never)]
    pub fn data(&self, msg: String) -> JsonError {
        JsonError { at: self.i, msg, category: Category::Data }
    }

    /// A data error raised by a reader of an array's or an object's contents (or of a number
    /// inside one): serde_json places it where the enclosing array or object was left, after
    /// reading on to its closing bracket (see `place`).
    #[cold]
    #[inline(never)]
    pub fn unplaced(msg: String) -> JsonError {
        JsonError { at: UNPLACED, msg, category: Category::Data }
    }

    /// Gives an unplaced error the current position.
    fn place<T>(&self, mut r: Read<T>) -> Read<T> {
        if let Err(e) = &mut r
            && e.at == UNPLACED
        {
            e.at = self.i;
        }
        r
    }

    /// The next byte that is not whitespace, not consumed.
    fn ws(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.i += 1;
        }
        self.peek()
    }

    /// The first byte of a value, not consumed.
    fn value_start(&mut self) -> Read<u8> {
        self.ws().ok_or_else(|| self.peek_error(EOF_VALUE))
    }

    /// After the whole document: only whitespace may follow.
    pub fn end(&mut self) -> Read<()> {
        match self.ws() {
            Some(_) => Err(self.peek_error("trailing characters")),
            None => Ok(()),
        }
    }

    /// The rest of `null`, `true` or `false` after its first byte.
    fn ident(&mut self, rest: &[u8]) -> Read<()> {
        for &want in rest {
            match self.next() {
                None => return Err(self.error(EOF_VALUE)),
                Some(b) if b != want => return Err(self.error("expected ident")),
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// A number token starting at the current byte (`-` or a digit). `raw` reads it as
    /// serde_json skipped a value (a truncated number is then "invalid number" rather than
    /// end of input).
    fn number(&mut self, raw: bool) -> Read<Number<'a>> {
        let start = self.i;
        let eof = if raw { INVALID_NUMBER } else { EOF_VALUE };
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.next() {
            None => return Err(self.error(eof)),
            Some(b'0') => {
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(self.peek_error(INVALID_NUMBER));
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            Some(_) => return Err(self.error(INVALID_NUMBER)),
        }
        let mut float = false;
        if self.peek() == Some(b'.') {
            float = true;
            self.i += 1;
            let at = self.i;
            self.digits();
            if self.i == at {
                let msg = if self.peek().is_some() { INVALID_NUMBER } else { eof };
                return Err(self.peek_error(msg));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            float = true;
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            match self.next() {
                None => return Err(self.error(eof)),
                Some(b'0'..=b'9') => self.digits(),
                Some(_) => return Err(self.error(INVALID_NUMBER)),
            }
        }
        Ok(Number { text: &self.text[start..self.i], float })
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
    }

    /// A number's value, exactly; a value beyond `f64` is "number out of range".
    fn number_value(&mut self, n: &Number) -> Read<f64> {
        match json_number::parse(n.text) {
            Some(v) if v.is_finite() => Ok(v),
            _ => Err(self.error("number out of range")),
        }
    }

    /// A string's contents, after its opening quote; borrowed when it holds no escape.
    fn string_body(&mut self) -> Read<Cow<'a, str>> {
        let b = self.bytes();
        let mut start = self.i;
        let mut owned: Option<String> = None;
        loop {
            while self.i < b.len() && !matches!(b[self.i], b'"' | b'\\' | 0..=0x1f) {
                self.i += 1;
            }
            if self.i == b.len() {
                return Err(self.error(EOF_STRING));
            }
            let run = &self.text[start..self.i];
            match b[self.i] {
                b'"' => {
                    self.i += 1;
                    return Ok(match owned {
                        None => Cow::Borrowed(run),
                        Some(mut s) => {
                            s.push_str(run);
                            Cow::Owned(s)
                        }
                    });
                }
                b'\\' => {
                    let s = owned.get_or_insert_with(String::new);
                    s.push_str(run);
                    self.i += 1;
                    self.escape(s)?;
                    start = self.i;
                }
                _ => {
                    self.i += 1;
                    return Err(self.error(CONTROL));
                }
            }
        }
    }

    /// One escape after its backslash, appended to `out`.
    fn escape(&mut self, out: &mut String) -> Read<()> {
        let c = match self.next() {
            None => return Err(self.error(EOF_STRING)),
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let n = self.hex4()?;
                if (0xDC00..=0xDFFF).contains(&n) {
                    return Err(self.error(LONE_SURROGATE));
                }
                let code = if (0xD800..=0xDBFF).contains(&n) {
                    for want in [b'\\', b'u'] {
                        match self.peek() {
                            None => return Err(self.error(EOF_STRING)),
                            Some(b) if b == want => self.i += 1,
                            Some(_) => {
                                self.i += 1;
                                return Err(self.error("unexpected end of hex escape"));
                            }
                        }
                    }
                    let n2 = self.hex4()?;
                    if !(0xDC00..=0xDFFF).contains(&n2) {
                        return Err(self.error(LONE_SURROGATE));
                    }
                    (((n - 0xD800) << 10) | (n2 - 0xDC00)) + 0x1_0000
                } else {
                    n
                };
                char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
            }
            Some(_) => return Err(self.error(INVALID_ESCAPE)),
        };
        out.push(c);
        Ok(())
    }

    /// Four hex digits after `\u`.
    fn hex4(&mut self) -> Read<u32> {
        let Some(digits) = self.bytes().get(self.i..self.i + 4) else {
            self.i = self.text.len();
            return Err(self.error(EOF_STRING));
        };
        self.i += 4;
        let mut n = 0;
        for &d in digits {
            n = n * 16 + (d as char).to_digit(16).ok_or_else(|| self.error(INVALID_ESCAPE))?;
        }
        Ok(n)
    }

    /// Skips a string after its opening quote (escapes checked for form only).
    fn skip_string(&mut self) -> Read<()> {
        loop {
            if let Some(0..=0x1f) = self.peek() {
                // (serde_json's skipping points at the character, its reading after it)
                return Err(self.error(CONTROL));
            }
            match self.next() {
                None => return Err(self.error(EOF_STRING)),
                Some(b'"') => return Ok(()),
                Some(b'\\') => match self.next() {
                    None => return Err(self.error(EOF_STRING)),
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {}
                    Some(b'u') => {
                        self.hex4()?;
                    }
                    Some(_) => return Err(self.error(INVALID_ESCAPE)),
                },
                Some(_) => {}
            }
        }
    }

    /// Skips one value of any shape, checking its syntax (serde_json's `ignore_value`).
    pub fn skip(&mut self) -> Read<()> {
        let mut open: Vec<u8> = Vec::new();
        loop {
            let opened = match self.value_start()? {
                b'n' => self.literal(b"ull").map(|_| None)?,
                b't' => self.literal(b"rue").map(|_| None)?,
                b'f' => self.literal(b"alse").map(|_| None)?,
                b'-' | b'0'..=b'9' => self.number(true).map(|_| None)?,
                b'"' => {
                    self.i += 1;
                    self.skip_string()?;
                    None
                }
                b @ (b'[' | b'{') => {
                    self.i += 1;
                    Some(b)
                }
                _ => return Err(self.peek_error(EXPECTED_VALUE)),
            };
            let (mut comma, mut frame) = match opened {
                Some(f) => (false, f),
                None => match open.pop() {
                    Some(f) => (true, f),
                    None => return Ok(()),
                },
            };
            loop {
                match self.ws() {
                    Some(b',') if comma => {
                        self.i += 1;
                        break;
                    }
                    Some(b']') if frame == b'[' => {}
                    Some(b'}') if frame == b'{' => {}
                    Some(_) if comma => {
                        return Err(self.peek_error(if frame == b'[' { COMMA_LIST } else { COMMA_OBJECT }));
                    }
                    Some(_) => break,
                    None => return Err(self.peek_error(if frame == b'[' { EOF_LIST } else { EOF_OBJECT })),
                }
                self.i += 1;
                frame = match open.pop() {
                    Some(f) => f,
                    None => return Ok(()),
                };
                comma = true;
            }
            if frame == b'{' {
                match self.ws() {
                    Some(b'"') => self.i += 1,
                    Some(_) => return Err(self.peek_error(KEY_STRING)),
                    None => return Err(self.peek_error(EOF_OBJECT)),
                }
                self.skip_string()?;
                self.colon()?;
            }
            open.push(frame);
        }
    }

    /// `null`, `true` or `false` from its first byte.
    fn literal(&mut self, rest: &[u8]) -> Read<()> {
        self.i += 1;
        self.ident(rest)
    }

    fn colon(&mut self) -> Read<()> {
        match self.ws() {
            Some(b':') => {
                self.i += 1;
                Ok(())
            }
            Some(_) => Err(self.peek_error("expected `:`")),
            None => Err(self.peek_error(EOF_OBJECT)),
        }
    }

    /// The error for a value that is not what `expected` names (serde_json's
    /// `peek_invalid_type`): the value is read to say what it is.
    #[cold]
    #[inline(never)]
    pub fn invalid_type(&mut self, expected: &str) -> JsonError {
        match self.describe_value() {
            Ok(what) => self.data(format!("invalid type: {what}, expected {expected}")),
            Err(e) => e,
        }
    }

    /// What the value at the cursor is, in serde's words (`string "x"`, `integer `3``, `map`).
    fn describe_value(&mut self) -> Read<String> {
        Ok(match self.peek().unwrap_or(0) {
            b'n' => self.literal(b"ull").map(|_| "null".to_owned())?,
            b't' => self.literal(b"rue").map(|_| "boolean `true`".to_owned())?,
            b'f' => self.literal(b"alse").map(|_| "boolean `false`".to_owned())?,
            b'-' | b'0'..=b'9' => {
                let n = self.number(false)?;
                let v = self.number_value(&n)?;
                let digits = n.text.trim_start_matches('-');
                let negative = n.text.len() > digits.len();
                let int = if n.float { None } else { digits.parse::<u64>().ok() };
                match int {
                    Some(u) if !negative => format!("integer `{u}`"),
                    Some(u) if (1..=1 << 63).contains(&u) => {
                        format!("integer `{}`", (u as i64).wrapping_neg())
                    }
                    _ => format!("floating point `{}`", zmij::Buffer::new().format(v)),
                }
            }
            b'"' => {
                self.i += 1;
                format!("string {:?}", self.string_body()?)
            }
            b'[' => "sequence".to_owned(),
            b'{' => "map".to_owned(),
            _ => return Err(self.peek_error(EXPECTED_VALUE)),
        })
    }

    /// A number (serde's `f64`).
    pub fn f64(&mut self) -> Read<f64> {
        match self.value_start()? {
            b'-' | b'0'..=b'9' => {
                let n = self.number(false)?;
                self.number_value(&n)
            }
            _ => Err(self.invalid_type("f64")),
        }
    }

    /// A number that must be finite, read as serde_json read a raw value: any value is
    /// skipped first, then refused without quoting it (snapshot numbers may sit next to
    /// secrets).
    pub fn exact(&mut self) -> Read<f64> {
        self.ws();
        let start = self.i;
        self.skip()?;
        let text = &self.text[start..self.i];
        json_number::parse(text).filter(|v| v.is_finite()).ok_or_else(|| {
            let what = match text.as_bytes()[0] {
                b'"' => "string",
                b'{' => "map",
                b'[' => "sequence",
                b't' | b'f' => "boolean",
                b'n' => "null",
                _ => "a number out of range",
            };
            Reader::unplaced(format!("invalid type: {what}, expected a finite number"))
        })
    }

    /// A string (serde's `&str`/`String`: "a string").
    pub fn str(&mut self) -> Read<Cow<'a, str>> {
        self.str_as("a string")
    }

    /// A string, `expected` naming it in a type error.
    pub fn str_as(&mut self, expected: &str) -> Read<Cow<'a, str>> {
        match self.value_start()? {
            b'"' => {
                self.i += 1;
                self.string_body()
            }
            _ => Err(self.invalid_type(expected)),
        }
    }

    /// `true` or `false` (serde's `bool`).
    pub fn bool(&mut self) -> Read<bool> {
        match self.value_start()? {
            b't' => self.literal(b"rue").map(|_| true),
            b'f' => self.literal(b"alse").map(|_| false),
            _ => Err(self.invalid_type("a boolean")),
        }
    }

    /// `null` (then `None`) or what `read` reads (serde's `Option`).
    pub fn nullable<T>(&mut self, read: impl FnOnce(&mut Self) -> Read<T>) -> Read<Option<T>> {
        if self.ws() == Some(b'n') {
            return self.literal(b"ull").map(|_| None);
        }
        read(self).map(Some)
    }

    /// Whether `null` is next (consumed), or another value.
    pub fn null_or_any(&mut self) -> Read<Loose<'a>> {
        Ok(match self.value_start()? {
            b'n' => self.literal(b"ull").map(|_| Loose::Other)?,
            b't' => self.literal(b"rue").map(|_| Loose::Other)?,
            b'f' => self.literal(b"alse").map(|_| Loose::Other)?,
            b'-' | b'0'..=b'9' => {
                let n = self.number(false)?;
                Loose::Num(self.number_value(&n)?)
            }
            b'"' => {
                self.i += 1;
                Loose::Str(self.string_body()?)
            }
            b'[' => {
                self.seq("any value", &mut |r| r.skip())?;
                Loose::Other
            }
            b'{' => {
                self.map("any value", &mut |r, _| {
                    r.colon()?;
                    r.skip()
                })?;
                Loose::Other
            }
            _ => return Err(self.peek_error(EXPECTED_VALUE)),
        })
    }

    /// An array: `item` reads each element (serde's sequence access; the closing bracket is
    /// consumed even when an element failed, as serde_json does before placing the error).
    pub fn seq(&mut self, expected: &str, item: &mut dyn FnMut(&mut Self) -> Read<()>) -> Read<()> {
        if self.value_start()? != b'[' {
            return Err(self.invalid_type(expected));
        }
        self.i += 1;
        let mut first = true;
        let r = loop {
            match self.ws() {
                None => break Err(self.peek_error(EOF_LIST)),
                Some(b']') => break Ok(()),
                Some(_) if first => first = false,
                Some(b',') => {
                    self.i += 1;
                    match self.ws() {
                        Some(b']') => break Err(self.peek_error("trailing comma")),
                        Some(_) => {}
                        None => break Err(self.peek_error(EOF_VALUE)),
                    }
                }
                Some(_) => break Err(self.peek_error(COMMA_LIST)),
            }
            if let Err(e) = item(self) {
                break Err(e);
            }
        };
        let end = self.end_seq();
        self.place(r.and(end))
    }

    /// The end of an array whose elements were read (serde_json's `end_seq`).
    fn end_seq(&mut self) -> Read<()> {
        match self.ws() {
            Some(b']') => {
                self.i += 1;
                Ok(())
            }
            Some(b',') => {
                self.i += 1;
                match self.ws() {
                    Some(b']') => Err(self.peek_error("trailing comma")),
                    _ => Err(self.peek_error(TRAILING)),
                }
            }
            Some(_) => Err(self.peek_error(TRAILING)),
            None => Err(self.peek_error(EOF_LIST)),
        }
    }

    /// An object: `entry` gets each key and reads its value after the colon (serde's map
    /// access). A failure from `entry` before its value is positioned after the key.
    pub fn map(
        &mut self,
        expected: &str,
        entry: &mut dyn FnMut(&mut Self, Cow<'a, str>) -> Read<()>,
    ) -> Read<()> {
        if self.value_start()? != b'{' {
            return Err(self.invalid_type(expected));
        }
        self.i += 1;
        let mut first = true;
        let r = loop {
            match self.ws() {
                None => break Err(self.peek_error(EOF_OBJECT)),
                Some(b'}') => break Ok(()),
                Some(b'"') if first => first = false,
                Some(_) if first => break Err(self.peek_error(KEY_STRING)),
                Some(b',') => {
                    self.i += 1;
                    match self.ws() {
                        Some(b'"') => {}
                        Some(b'}') => break Err(self.peek_error("trailing comma")),
                        Some(_) => break Err(self.peek_error(KEY_STRING)),
                        None => break Err(self.peek_error(EOF_VALUE)),
                    }
                }
                Some(_) => break Err(self.peek_error(COMMA_OBJECT)),
            }
            self.i += 1;
            let key = match self.string_body() {
                Ok(k) => k,
                Err(e) => break Err(e),
            };
            if let Err(e) = entry(self, key) {
                break Err(e);
            }
        };
        let end = self.end_map();
        self.place(r.and(end))
    }

    /// The colon before an entry's value (for `map`'s `entry`).
    pub fn value_next(&mut self) -> Read<()> {
        self.colon()
    }

    /// The end of an object whose entries were read (serde_json's `end_map`).
    fn end_map(&mut self) -> Read<()> {
        match self.ws() {
            Some(b'}') => {
                self.i += 1;
                Ok(())
            }
            Some(b',') => Err(self.peek_error("trailing comma")),
            Some(_) => Err(self.peek_error(TRAILING)),
            None => Err(self.peek_error(EOF_OBJECT)),
        }
    }

    /// A struct's entries (serde's derived `Deserialize` with `deny_unknown_fields` when
    /// `fields` is given): `field` gets the index of each key in `names` and reads its value;
    /// `seen` refuses a key given twice; an unknown key is an error naming the others, or is
    /// skipped when `strict` is false.
    pub fn fields(
        &mut self,
        expected: &str,
        names: &'static [&'static str],
        strict: bool,
        field: &mut dyn FnMut(&mut Self, usize) -> Read<()>,
    ) -> Read<()> {
        let mut seen = 0u32; // bit k: names[k] read (structs have at most 32 fields)
        self.map(expected, &mut |r, key| {
            let Some(k) = names.iter().position(|n| **n == *key) else {
                if strict {
                    return Err(Reader::unplaced(unknown_field(&key, names)));
                }
                r.colon()?;
                return r.skip();
            };
            if seen & 1 << k != 0 {
                return Err(Reader::unplaced(format!("duplicate field `{}`", names[k])));
            }
            seen |= 1 << k;
            r.colon()?;
            field(r, k)
        })
    }

    /// The error for a required field left out (after its object's closing brace).
    #[cold]
    #[inline(never)]
    pub fn missing(&self, name: &str) -> JsonError {
        self.data(format!("missing field `{name}`"))
    }
}

/// Any value, kept only when it is a string or a number.
pub enum Loose<'a> {
    Str(Cow<'a, str>),
    Num(f64),
    Other,
}

/// The position of an error not yet placed (`Reader::unplaced`).
const UNPLACED: usize = usize::MAX;

const CONTROL: &str = "control character (\\u0000-\\u001F) found while parsing a string";
const EXPECTED_VALUE: &str = "expected value";
const COMMA_LIST: &str = "expected `,` or `]`";
const COMMA_OBJECT: &str = "expected `,` or `}`";
const KEY_STRING: &str = "key must be a string";
const TRAILING: &str = "trailing characters";

fn category(msg: &str) -> Category {
    if msg.starts_with("EOF") { Category::Eof } else { Category::Syntax }
}

/// serde's `unknown field `x`, expected one of `a`, `b``.
fn unknown_field(key: &str, names: &[&str]) -> String {
    let mut msg = format!("unknown field `{key}`, expected ");
    if names.len() > 2 {
        msg.push_str("one of ");
    }
    for (i, n) in names.iter().enumerate() {
        let sep = match i {
            0 => "",
            1 if names.len() == 2 => " or ",
            _ => ", ",
        };
        let _ = write!(msg, "{sep}`{n}`");
    }
    msg
}
