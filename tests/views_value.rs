//! `config()` crosses the wasm boundary as a serde-wasm-bindgen value (`src/wasm/views_value.rs`)
//! while snapshots keep the canonical text (`Config::write_json`): the two must describe the same
//! object, key order included. Checked natively through serde_json: the same keys in the same
//! order, and every number equal (serde_json prints an integral float as `1.0` where the
//! canonical text prints `1`; `JSON.parse` reads both as the same number).

use repute::config::{Config, ConfigPatch};
use repute::wasm::views_value::ConfigV;
use serde_json::Value;

/// The object keys of a JSON text in the order they appear, at every depth.
fn keys_in_order(text: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("\":") {
        let start = rest[..i].rfind('"').expect("a key's opening quote");
        keys.push(rest[start + 1..i].to_string());
        rest = &rest[i + 2..];
    }
    keys
}

/// Numbers as f64 throughout, so `5` and `5.0` compare equal.
fn numbers_as_f64(v: Value) -> Value {
    match v {
        Value::Number(n) => Value::from(n.as_f64().expect("a finite number")),
        Value::Array(a) => Value::Array(a.into_iter().map(numbers_as_f64).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, numbers_as_f64(v))).collect()),
        v => v,
    }
}

fn config(patch: &str) -> Config {
    Config::from_patch(&ConfigPatch::from_json(patch).expect("a valid patch")).expect("a valid config")
}

#[test]
fn the_config_value_is_the_canonical_json_object() {
    for patch in [
        "{}",
        r#"{"successReward":0.25,"explorationFloor":0.001,"penalties":{"SLOW":1.5}}"#,
        r#"{"minGapMsByContext":{"b.example":5,"a.example":7},"halfOpenCauses":["SLOW","BLOCKED"]}"#,
        r#"{"halfOpenCauses":[],"leaseTtlMs":86400000,"maxCoolingPercent":40,"cooldownBaseMs":{"TIMEOUT":1}}"#,
    ] {
        let c = config(patch);
        let canonical = c.to_json();
        let value = serde_json::to_string(&ConfigV(&c)).unwrap();
        assert_eq!(keys_in_order(&value), keys_in_order(&canonical), "{patch}: keys and their order");
        let parsed = |t: &str| numbers_as_f64(serde_json::from_str::<Value>(t).unwrap());
        assert_eq!(parsed(&value), parsed(&canonical), "{patch}: values");
    }
}
