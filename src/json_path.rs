//! Names the JSON path (`cells[3].score`) where a parse failed, from the line and column the
//! JSON parser reports, by scanning the text up to that point.
//!
//! Restore and config errors must name the offending field. A path-tracking deserializer would
//! double the size of every deserialization routine in the WebAssembly module; failures are
//! rare, so re-reading the text on the error path costs nothing that matters.

/// One level of nesting while scanning.
enum Frame {
    Object { key: Option<String> },
    Array { index: usize },
}

/// The byte offset of 1-based `line` and `column` (in bytes) in `text` (not necessarily a
/// character boundary).
fn offset(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    (start + column).min(text.len())
}

/// The path of the value being read at (`line`, `column`), e.g. `cells[3].score`; empty at the
/// top level.
pub fn path_at(text: &str, line: usize, column: usize) -> String {
    let end = offset(text, line, column);
    let bytes = &text.as_bytes()[..end];
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
            Frame::Object { key: Some(k) } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
            }
            Frame::Object { key: None } => {}
            Frame::Array { index } => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

/// The path where a serde_json error in `text` happened, and its message without the position.
pub fn locate(text: &str, e: &serde_json::Error) -> (String, String) {
    let path = path_at(text, e.line(), e.column());
    let mut msg = e.to_string();
    if let Some((m, _)) = msg.rsplit_once(" at line ") {
        msg.truncate(m.len());
    }
    (path, msg)
}

/// `path: message` for a serde_json error in `text` (the message without its position).
pub fn describe(text: &str, e: &serde_json::Error) -> String {
    let (path, msg) = locate(text, e);
    if path.is_empty() { msg } else { format!("{path}: {msg}") }
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

    fn err(text: &str) -> String {
        describe(text, &serde_json::from_str::<Doc>(text).unwrap_err())
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

    #[test]
    fn strings_with_brackets_and_escapes_do_not_confuse_the_scan() {
        let text = r#"{"cells":[{"score":1,"tags":["[{,\"]"]},{"score":"bad","tags":[]}],"n":1}"#;
        assert!(err(text).starts_with("cells[1].score: invalid type"), "{}", err(text));
    }
}
