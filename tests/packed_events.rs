//! The packed event form the WebAssembly facade hands to JavaScript (`packed.rs`): decoded the
//! way `pkg-scripts/lib/pool.js` decodes it, it must give exactly the JSON of `views_json::events`
//! (same keys, same order, same values) for every event type, for redacted values, for
//! strings outside the Basic Multilingual Plane (UTF-16 lengths), for a group and for no group
//! (`null`), and for an empty drain; its `unmasked` field names the value as registered.

mod common;

use common::Harness;
use repute::wasm::packed::{FIELDS, pack_events};
use repute::wasm::views_json;
use repute::{BlockSpec, FailureType, Kind};

/// Rebuilds the JSON text from the packed form, as the JS host builds its objects; also returns
/// the string table.
fn decode(numbers: &[f64], strings: &str) -> (String, Vec<String>) {
    let (events, n) = (numbers[0] as usize, numbers[1] as usize);
    let units: Vec<u16> = strings.encode_utf16().collect();
    let mut table = Vec::new();
    let mut pos = 0;
    for len in &numbers[2 + events * FIELDS..] {
        let end = pos + *len as usize;
        table.push(String::from_utf16(&units[pos..end]).expect("whole UTF-16 units"));
        pos = end;
    }
    assert_eq!(pos, units.len(), "the lengths cover the whole text");
    assert_eq!(table.len(), n);
    let fields = &numbers[2..2 + events * FIELDS];
    assert_eq!(fields.len(), events * FIELDS);
    let s = |ix: f64| serde_json::to_string(&table[ix as usize]).unwrap();
    let out: Vec<String> = fields
        .chunks(FIELDS)
        .map(|f| {
            let mut o = vec![
                format!("\"seq\":{}", f[0]),
                format!("\"type\":{}", s(f[2])),
                format!("\"at\":{}", f[1]),
            ];
            if f[3] >= 0.0 {
                o.push(format!("\"kind\":{}", s(f[3])));
                o.push(format!("\"value\":{}", s(f[4])));
            }
            match f[11] {
                -1.0 => {}
                -2.0 => o.push("\"group\":null".into()),
                g => o.push(format!("\"group\":{}", s(g))),
            }
            if f[5] >= 0.0 {
                o.push(format!("\"context\":{}", s(f[5])));
            }
            if f[6] >= 0.0 {
                o.push(format!("\"cause\":{}", s(f[6])));
            }
            if f[7] >= 0.0 {
                o.push(format!("\"until\":{}", f[7]));
            }
            if f[8] == 1.0 {
                o.push("\"permanent\":true".into());
            }
            if f[9] >= 0.0 {
                o.push(format!("\"token\":{}", f[9]));
            }
            if f[12] >= 0.0 {
                o.push(format!("\"maxLeases\":{}", f[12]));
            }
            format!("{{{}}}", o.join(","))
        })
        .collect();
    (format!("[{}]", out.join(",")), table)
}

#[test]
fn packed_events_decode_to_the_json_of_every_event_type() {
    // A cooling cap of 1 % of four resources lets one cell of a context cool at once.
    let mut h = Harness::with_patch(r#"{"leaseTtlMs": 1000, "maxCoolingPercent": 1}"#);
    let crab = "http://🦀:s3cret@proxy-é.example.net:8080";
    for v in ["a", "b", crab] {
        h.reg(v); // RESOURCE_REGISTERED, group null
    }
    assert!(h.pool.register_in(Kind::Session, "tab-𝄞", Some(Some("dc-𝄞"))).unwrap()); // with a group
    assert!(!h.pool.register_in(Kind::Proxy, "b", Some(Some("dc-𝄞"))).unwrap()); // RESOURCE_REGROUPED
    assert!(!h.pool.register_in(Kind::Proxy, "b", Some(None)).unwrap()); // RESOURCE_REGROUPED to null
    let wide = repute::Registration { max_leases: Some(3), ..Default::default() };
    assert!(!h.pool.register_with(Kind::Proxy, "b", wide).unwrap()); // RESOURCE_RECONFIGURED
    let lease = h.pool.acquire_resource(Kind::Proxy, crab, "checkout-ü").unwrap().unwrap();
    h.pool.release(&lease).unwrap();
    h.pool.acquire_resource(Kind::Proxy, "a", "x").unwrap().unwrap();
    h.advance(1000.0); // LEASE_EXPIRED
    h.fail(crab, "checkout-ü", FailureType::Timeout);
    h.fail(crab, "checkout-ü", FailureType::Timeout); // RESOURCE_COOLED with cause and until
    h.fail("b", "checkout-ü", FailureType::Slow);
    h.fail("b", "checkout-ü", FailureType::Slow); // COOLDOWN_SUPPRESSED: crab is cooling there
    h.advance(120_000.0);
    h.ok(crab, "checkout-ü");
    h.ok(crab, "checkout-ü"); // RESOURCE_RECOVERED
    h.block_secs("a", 2.0);
    h.pool.block(Kind::Proxy, "b", BlockSpec::Permanent).unwrap();
    h.advance(2000.0); // BLOCK_EXPIRED
    h.pool.unblock(Kind::Proxy, "b").unwrap();
    h.pool.block(Kind::Proxy, "b", BlockSpec::Permanent).unwrap();
    h.pool.block(Kind::Proxy, "a", BlockSpec::Permanent).unwrap();
    h.pool.block(Kind::Proxy, crab, BlockSpec::Permanent).unwrap();
    h.pool.block(Kind::Session, "tab-𝄞", BlockSpec::Permanent).unwrap();
    assert_eq!(h.acquire("checkout-ü"), None); // ACQUISITION_REJECTED
    h.pool.deregister(Kind::Proxy, "a").unwrap();
    h.pool.set_config(&repute::ConfigPatch::from_json(r#"{"coolAfter": 3}"#).unwrap()).unwrap(); // CONFIG_CHANGED

    let events = h.events();
    let mut types: Vec<&str> = events.iter().map(|e| e.ty.as_str()).collect();
    types.sort_unstable();
    types.dedup();
    assert_eq!(types.len(), repute::EventType::ALL.len(), "every event type is covered: {types:?}");
    let packed = pack_events(&events);
    let (text, table) = decode(&packed.numbers, &packed.strings);
    assert_eq!(text, views_json::events(&events));
    // `value` is masked; `unmasked` is the value as registered, shared with `value` when
    // nothing is masked.
    let fields = &packed.numbers[2..packed.numbers.len() - table.len()];
    for (e, f) in events.iter().zip(fields.chunks(FIELDS)) {
        match &e.unmasked {
            Some(u) => {
                assert_eq!(table[f[10] as usize], u.expose(), "{e:?}");
                let masked = e.resource.as_ref().map(|(_, v)| &**v) != Some(u.expose());
                assert_eq!(f[4] != f[10], masked, "{e:?}");
            }
            None => assert_eq!(f[10], -1.0, "{e:?}"),
        }
        assert!(!table[f[4].max(0.0) as usize].contains("s3cret"), "values are packed masked");
    }
    assert!(format!("{events:?}").contains("Unmasked(..)") && !format!("{events:?}").contains("s3cret"));
    // Shared strings are sent once, not once per event.
    for name in ["PROXY", "RESOURCE_BLOCKLISTED", "http://🦀:***@proxy-é.example.net:8080", "dc-𝄞"] {
        assert_eq!(table.iter().filter(|s| *s == name).count(), 1, "{name}");
    }
}

#[test]
fn an_empty_drain_packs_to_two_zeros() {
    let packed = pack_events(&[]);
    assert_eq!(packed.numbers, [0.0, 0.0]);
    assert_eq!(packed.strings, "");
    assert_eq!(decode(&packed.numbers, &packed.strings).0, "[]");
}
