//! Test only: `json_read.rs` against the serde readers it replaced (`old_serde.rs`): on a full
//! config and a full snapshot, and on random mutations of them (bytes dropped, inserted,
//! replaced; spans cut and repeated; text truncated), both accept the same documents with the
//! same values, and refuse the others with the same message at the same path.
//!
//! One difference is deliberate: serde's derived structs also accepted an array of the fields'
//! values in declaration order (`[2, 2, 5]` as a config); the reader asks for an object.

use super::input::{SnapshotIn, is_key};
use super::old_serde as old;
use crate::config::ConfigPatch;
use crate::error::Error;
use crate::json_path::{describe, describe_private};

const CONFIG: &str = r#"{
  "coolAfter": 3, "recoverAfter": 2, "successReward": 0.1,
  "penalties": {"BLOCKED": 30, "TLS_HANDSHAKE": 15.5, "CONNECTION_RESET": 1e1, "TIMEOUT": 5, "SLOW": 2},
  "cooldownBaseMs": {"BLOCKED": 3600000, "SLOW": 30000},
  "maxBackoffExponent": 6, "explorationFloor": 0.25, "leaseTtlMs": 30000, "windowSize": 10,
  "halfOpenCauses": ["TIMEOUT", "SLOW", "t\u00e9"],
  "maxResources": 100000, "maxCells": 500000, "eventBufferSize": 65536, "minGapMs": 0,
  "minGapMsByContext": {"checkout-us": 250, "a\"b": -1.5e-3},
  "maxCoolingPercent": 100
}"#;

const SNAPSHOT: &str = r#"{"format":"repute-snapshot","version":2,"revision":12,"takenAt":1700000000000,
"fencingHighWater":7,"nextEventSeq":40,
"config":{"coolAfter":2,"recoverAfter":2,"successReward":5,"penalties":{"BLOCKED":30,"TLS_HANDSHAKE":15,"CONNECTION_RESET":10,"TIMEOUT":5,"SLOW":2},"cooldownBaseMs":{"BLOCKED":3600000,"TLS_HANDSHAKE":300000,"CONNECTION_RESET":120000,"TIMEOUT":60000,"SLOW":30000},"maxBackoffExponent":6,"explorationFloor":1,"leaseTtlMs":30000,"windowSize":10,"halfOpenCauses":["BLOCKED","TIMEOUT"],"maxResources":100000,"maxCells":500000,"eventBufferSize":65536,"minGapMs":0,"minGapMsByContext":{"x":5},"maxCoolingPercent":100},
"registered":[{"kind":"PROXY","value":"http://u:p@h:1"},{"kind":"ACCOUNT","value":"b\u00e9\n","group":"g1"}],
"blocklist":[{"kind":"PROXY","value":"x","until":1700000009000},{"kind":"SESSION","value":"y","permanent":true}],
"cells":[{"kind":"PROXY","value":"http://u:p@h:1","context":"c","score":0.9999999999999999,"consecutiveFailures":1,"consecutiveSuccesses":0,"state":"COOLING","cooldownUntil":1700000060000,"cooldownCause":"TIMEOUT","updatedAt":1700000000000,"window":[["OK",12.5],["TIMEOUT",null],["SLOW",3000]],"held":true},
{"kind":"ACCOUNT","value":"b\u00e9\n","context":"\ud83d\ude00","score":-2,"consecutiveFailures":0,"consecutiveSuccesses":3,"state":"HEALTHY","cooldownUntil":null,"cooldownCause":null,"updatedAt":1,"window":[]}]}"#;

/// What the old and the new config readers say about `text`: the patch (in a comparable
/// form) or the message.
fn configs(text: &str) -> (Result<String, String>, Result<String, String>) {
    let old = serde_json::from_str::<old::ConfigPatch>(text)
        .map(|p| format!("{p:?}"))
        .map_err(|e| describe(text, &old::read_error(text, &e)));
    let new = ConfigPatch::from_json(text).map(|p| format!("{p:?}")).map_err(|e| match e {
        Error::InvalidConfig(m) => m,
        other => panic!("{other:?}"),
    });
    (old, new)
}

fn snapshots(text: &str) -> (Result<(), String>, Result<(), String>) {
    let old = serde_json::from_str::<old::SnapshotIn>(text)
        .map(|_| ())
        .map_err(|e| describe_private(text, &old::read_error(text, &e), &is_key));
    let new = SnapshotIn::parse(text).map(|_| ()).map_err(|e| describe_private(text, &e, &is_key));
    (old, new)
}

/// Where serde would have read an array as a struct (which the reader does not copy).
fn array_as_struct(new: &Result<impl Sized, String>) -> bool {
    new.as_ref().err().is_some_and(|m| m.contains("invalid type: sequence, expected struct"))
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A random edit of `text` (on character boundaries).
fn mutate(text: &str, rng: &mut Rng) -> String {
    const ALPHABET: &[&str] = &[
        "{", "}", "[", "]", ",", ":", "\"", "\\", " ", "\n", "0", "1", "9", ".", "e", "-", "+", "n", "t",
        "f", "null", "true", "1.5", "-7", "1e400", "\"x\"", "\\u", "\\ud83d", "é", "\u{1}", "a",
    ];
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let at = |rng: &mut Rng| chars.get(rng.below(chars.len() + 1)).map_or(text.len(), |c| c.0);
    let (a, b) = (at(rng), at(rng));
    let (lo, hi) = (a.min(b), a.max(b));
    let short = (lo + 1..=(lo + 6).min(text.len())).find(|&i| text.is_char_boundary(i)).unwrap_or(lo);
    match rng.below(6) {
        0 => format!("{}{}", &text[..lo], &text[short..]),
        1 => format!("{}{}{}", &text[..lo], ALPHABET[rng.below(ALPHABET.len())], &text[lo..]),
        2 => format!("{}{}{}", &text[..lo], ALPHABET[rng.below(ALPHABET.len())], &text[short..]),
        3 => format!("{}{}", &text[..lo], &text[hi..]),
        4 => format!("{}{}{}", &text[..hi], &text[lo..hi], &text[hi..]),
        _ => text[..lo].to_owned(),
    }
}

#[test]
fn the_reader_accepts_and_refuses_what_serde_did_with_the_same_messages() {
    assert!(configs(CONFIG).1.is_ok(), "{:?}", configs(CONFIG));
    assert!(snapshots(SNAPSHOT).1.is_ok(), "{:?}", snapshots(SNAPSHOT));
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut refused, mut compared) = (0, 0);
    for round in 0..400_000 {
        let mut text = if round % 2 == 0 { CONFIG.to_owned() } else { SNAPSHOT.to_owned() };
        for _ in 0..=rng.below(3) {
            text = mutate(&text, &mut rng);
        }
        if round % 2 == 0 {
            let (old, new) = configs(&text);
            if array_as_struct(&new) {
                continue;
            }
            assert_eq!(old, new, "config {text}");
            refused += usize::from(new.is_err());
        } else {
            let (old, new) = snapshots(&text);
            if array_as_struct(&new) {
                continue;
            }
            assert_eq!(old, new, "snapshot {text}");
            refused += usize::from(new.is_err());
        }
        compared += 1;
    }
    // Most mutations break the document, and the messages compared above are of every kind.
    assert!(compared > 0 && refused > 0, "{compared} compared, {refused} refused");
}

#[test]
fn the_reader_does_not_take_an_array_for_a_struct() {
    assert!(serde_json::from_str::<old::ConfigPatch>("[2, 2]").is_ok());
    assert_eq!(configs("[2, 2]").1, Err("invalid type: sequence, expected struct ConfigPatch".to_owned()));
}

#[test]
fn values_quoted_in_config_errors_read_as_serde_wrote_them() {
    let cases = [
        r#"{"halfOpenCauses":[1.5]}"#,
        r#"{"halfOpenCauses":[-3]}"#,
        r#"{"halfOpenCauses":[-0]}"#,
        r#"{"halfOpenCauses":[-9223372036854775808]}"#,
        r#"{"halfOpenCauses":[-9223372036854775809]}"#,
        r#"{"halfOpenCauses":[18446744073709551615]}"#,
        r#"{"halfOpenCauses":[18446744073709551616]}"#,
        r#"{"penalties":1e300}"#,
        r#"{"penalties":1e-7}"#,
        r#"{"penalties":123456789.125}"#,
        r#"{"penalties":1E400}"#,
        r#"{"penalties":"a\u0007\n\"é\ud83d\ude00\\"}"#,
        r#"{"penalties":true}"#,
        r#"{"minGapMsByContext":false}"#,
        r#"{"minGapMsByContext":{"a":null}}"#,
        r#"{"minGapMsByContext":{"a":1,"a":2}}"#,
        r#"{"coolAfter":"x"}"#,
        r#"{"coolAfter":00}"#,
        r#"{"coolAfter":1.}"#,
        r#"{"coolAfter":1.e5}"#,
        r#"{"successReward":1."#,
        r#"{"successReward":1e"#,
        r#"{"coolAfter":1e"#,
        r#"{"coolAfter":-"#,
        r#"{"successReward":-"#,
        r#"{"successReward":{"a":[1,{"b":"\x"}]}}"#,
        r#"{"successReward":{"a":[1,]}}"#,
        r#"{"successReward":[1,2}"#,
        r#"{"successReward":"\ud800"}"#,
        r#"{"successReward":"\ud800\u0041"}"#,
        "{\"coolAfter\":1}\n x",
        "{\"coolAfter\":1,}",
        "",
        " ",
        "nul",
        "{\"halfOpenCauses\":[\"a\",]}",
    ];
    for text in cases {
        let (old, new) = configs(text);
        assert_eq!(old, new, "{text}");
    }
    let snapshot_cases = [
        SNAPSHOT.replacen(r#"["OK",12.5]"#, r#"["OK",12.5,1]"#, 1),
        SNAPSHOT.replacen(r#"["OK",12.5]"#, r#"["OK"]"#, 1),
        SNAPSHOT.replacen(r#"["OK",12.5]"#, r#"["NO",12.5]"#, 1),
        SNAPSHOT.replacen(r#"["OK",12.5]"#, r#"["OK",-1]"#, 1),
        SNAPSHOT.replacen(r#"["OK",12.5]"#, r#"["OK","x"]"#, 1),
        SNAPSHOT.replacen(r#"["OK",12.5]"#, r#"[]"#, 1),
        SNAPSHOT.replacen(r#""score":-2"#, r#""score":"x""#, 1),
        SNAPSHOT.replacen(r#","window":[]}"#, r#","window":[],"score":1}"#, 1),
        SNAPSHOT.replacen(r#""cooldownCause":"TIMEOUT""#, r#""cooldownCause":"NOPE""#, 1),
        SNAPSHOT.replacen(r#""cooldownCause":"TIMEOUT""#, r#""cooldownCause":7"#, 1),
        SNAPSHOT.replacen(r#","held":true"#, r#","held":null"#, 1),
        SNAPSHOT.replacen(r#""permanent":true"#, r#""permanent":1"#, 1),
        SNAPSHOT.replacen(
            r#""window":[]"#,
            &format!(r#""window":[{}]"#, vec![r#"["OK",1]"#; 1025].join(",")),
            1,
        ),
        SNAPSHOT.replacen(
            r#""window":[]"#,
            &format!(r#""window":[{}]"#, vec![r#"["OK",1]"#; 1026].join(",")),
            1,
        ),
    ];
    for text in &snapshot_cases {
        let (old, new) = snapshots(text);
        assert_eq!(old, new, "{text}");
    }
}

/// The keys an error message may quote are exactly those of the format: every object key of a
/// full snapshot and config, except a `minGapMsByContext` map's (hostnames, text from the file).
#[test]
fn the_quotable_keys_are_the_readers_fields() {
    fn keys(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    out.push(k.clone());
                    if k != "minGapMsByContext" {
                        keys(v, out);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    for doc in [SNAPSHOT, CONFIG] {
        keys(&serde_json::from_str(doc).unwrap(), &mut all);
    }
    for k in &all {
        assert!(is_key(k), "{k} is a field of the format");
    }
    for k in ["x", "checkout-us", "a\"b", "http://u:p@h:1", "", "Kind"] {
        assert!(!is_key(k), "{k} is text from the file");
    }
}
