//! Regressions found by code review, each a small scenario that once failed: a lease renewed
//! at its grant's instant, passwords holding `/` or `#`, a hand-built config out of range,
//! instants and latencies at the edge of what a snapshot can carry.

mod common;

use common::{ClockedPool, Harness, ManualClock, T0};
use repute::{BlockSpec, Config, Error, FailureType, Kind, Outcome};

#[test]
fn renewing_at_the_grant_instant_then_churning_leases_does_not_break_expiry() {
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    let a = h.pool.acquire_resource(Kind::Proxy, "a", "c").unwrap().unwrap();
    assert!(h.pool.renew(&a).unwrap().is_some(), "renew at the same instant");
    for _ in 0..1100 {
        let b = h.pool.acquire_resource(Kind::Proxy, "b", "c").unwrap().unwrap();
        assert!(h.pool.release(&b).unwrap());
    }
    h.advance(30_000.0);
    let stats = h.pool.stats().unwrap();
    assert_eq!(stats.leased, 0, "a's lease expired once, at its TTL");
    let expired: Vec<_> = h.events().into_iter().filter(|e| e.ty.as_str() == "LEASE_EXPIRED").collect();
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].token, Some(a.token));
    h.pool.check_invariants().unwrap();
}

#[test]
fn passwords_with_slashes_and_hashes_stay_out_of_events_and_errors() {
    let mut h = Harness::new();
    for (value, secret) in [("user:s3cr/et+tok=@gate.example:7777", "s3cr"), ("http://u:p#ss@h:1/x", "p#ss")]
    {
        h.pool.register(Kind::Proxy, value).unwrap();
        let shown = h.events().last().unwrap().resource.clone().unwrap().1;
        assert!(!shown.contains(secret), "event shows {shown}");
        let err = h.pool.report(Kind::Account, value, "c", Outcome::success()).unwrap_err();
        assert_eq!(err.code(), "UNKNOWN_RESOURCE");
        assert!(!err.to_string().contains(secret), "error says {err}");
    }
}

#[test]
fn a_hand_built_config_out_of_range_is_refused() {
    for (cfg, field) in [
        (Config { window_size: 0, ..Config::default() }, "windowSize"),
        (Config { event_buffer_size: 0, ..Config::default() }, "eventBufferSize"),
        (Config { exploration_floor: f64::NAN, ..Config::default() }, "explorationFloor"),
        (Config { cool_after: 1001, ..Config::default() }, "coolAfter"),
    ] {
        match ClockedPool::with_seed(cfg, || T0, 1) {
            Err(Error::InvalidConfig(msg)) => assert!(msg.contains(field), "{msg}"),
            other => panic!("{field}: {other:?}"),
        }
    }
}

#[test]
fn the_latest_block_and_cooldown_ends_survive_a_snapshot() {
    let clock = ManualClock::new((1u64 << 52) as f64);
    let cfg = Config::from_patch(
        &repute::ConfigPatch::from_json(
            r#"{"cooldownBaseMs":{"BLOCKED":2147483648},"maxBackoffExponent":21}"#,
        )
        .unwrap(),
    )
    .unwrap();
    let mut pool = ClockedPool::with_seed(cfg, clock.clone(), 1).unwrap();
    pool.register(Kind::Proxy, "p").unwrap();
    pool.register(Kind::Proxy, "q").unwrap();
    pool.block(Kind::Proxy, "p", BlockSpec::Seconds((1u64 << 52) as f64 / 1000.0)).unwrap();
    for _ in 0..30 {
        pool.report(Kind::Proxy, "q", "c", Outcome::failure(FailureType::Blocked)).unwrap();
    }
    let snap = pool.snapshot().unwrap();
    assert!(snap.contains(&format!("\"until\":{}", 1u64 << 53)), "{snap}");
    let mut restored = ClockedPool::restore(&snap, None, clock, repute::Randomness::host(|| 0.5)).unwrap();
    assert_eq!(restored.snapshot().unwrap(), snap);
}

#[test]
fn huge_latencies_are_capped_and_round_trip() {
    let mut h = Harness::new();
    h.reg("p");
    for ms in [1e15, 1_125_899_906_842.624, 0.001] {
        h.pool.report(Kind::Proxy, "p", "c", Outcome::Success { latency_ms: Some(ms) }).unwrap();
    }
    let snap = h.snapshot();
    let mut restored = ClockedPool::restore(&snap, None, || T0, repute::Randomness::host(|| 0.5)).unwrap();
    assert_eq!(restored.snapshot().unwrap(), snap);
    let cell = h.cell("p", "c");
    assert_eq!(cell.p95_latency_ms, Some((1u64 << 50) as f64 / 1000.0), "capped at 2^50 µs");
}

// ---------------------------------------------------------------------------------------------
// Found when the engine was tried against SPEC (issue 13)

#[test]
fn fractional_scores_survive_a_restore_exactly() {
    let mut h = Harness::with_patch(r#"{"successReward":0.1}"#);
    h.reg("a");
    for _ in 0..10 {
        h.ok("a", "c");
    }
    assert_eq!(h.cell("a", "c").score, 0.999_999_999_999_999_9);
    let json = h.snapshot();
    assert!(json.contains("\"score\":0.9999999999999999"), "{json}");
    let mut pool =
        ClockedPool::restore(&json, None, ManualClock::new(T0), repute::Randomness::host(|| 0.0)).unwrap();
    assert_eq!(pool.snapshot().unwrap(), json, "snapshot → restore → snapshot");
}

#[test]
fn a_failed_acquire_ends_no_lease_and_no_block() {
    let mut h = Harness::new();
    for v in ["a", "b", "c"] {
        h.reg(v);
    }
    let lease = h.pool.acquire_resource(Kind::Proxy, "a", "ctx").unwrap().unwrap();
    h.at(20_000.0);
    h.block_secs("b", 10.0);
    // Any call, reads included, ends what is due at its reading: the state is taken just before.
    h.at(29_999.0);
    h.events();
    let before = h.snapshot();
    let stats = h.pool.stats().unwrap();
    h.at(30_000.0); // a's lease and b's block end now
    h.draws.push(1.5);
    let err = h.pool.acquire("ctx").unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    assert_eq!(h.draws.remaining(), 0, "the bad draw was read");
    // Nothing ended and time did not move: read at the earlier instant, all is as before.
    h.at(29_999.0);
    assert_eq!(h.pool.stats().unwrap(), stats, "stats unchanged");
    assert_eq!(h.events(), vec![], "no LEASE_EXPIRED or BLOCK_EXPIRED");
    assert_eq!(h.snapshot(), before);
    h.at(30_000.0);
    // The next good call ends them, stamped with the instants they ended at.
    h.draws.push(0.0);
    let got = h.acquire("ctx").unwrap();
    assert_ne!(got.token, lease.token);
    let ended: Vec<_> = h.events().into_iter().map(|e| (e.ty.as_str(), e.at)).collect();
    assert_eq!(&ended[..2], &[("BLOCK_EXPIRED", T0 as u64 + 30_000), ("LEASE_EXPIRED", T0 as u64 + 30_000)]);
}

#[test]
fn config_and_snapshot_text_never_panic() {
    // Once a panic: the error path sliced a key inside a multi-byte character.
    for text in ["{\"\\é\":1}", "{\"é\\", "{\"\\", "[\"\\é", "{\"a\\\"é\":{\"\\ü\":2}}"] {
        let r = std::panic::catch_unwind(|| repute::ConfigPatch::from_json(text).map(|_| ()));
        assert!(matches!(r, Ok(Err(_))), "{text:?}: an error, not a panic");
        let r = std::panic::catch_unwind(|| {
            ClockedPool::restore(text, None, ManualClock::new(T0), repute::Randomness::host(|| 0.0))
                .map(|_| ())
        });
        assert!(matches!(r, Ok(Err(_))), "{text:?}: an error, not a panic");
    }
}

#[test]
fn a_failed_acquire_moves_no_counter_the_issues_scenario() {
    // Issue 13 as reported: lease at t; at t + 30 000 ms (the lease's end) an acquire whose
    // random() returns 1.5 must fail without moving revision, leased, nextEventSeq or takenAt.
    let mut h = Harness::new();
    for v in ["a", "b", "c"] {
        h.reg(v);
    }
    h.draws.push(0.0);
    let lease = h.acquire("ctx").unwrap();
    h.events();
    let before = h.pool.stats().unwrap();
    let snap = h.snapshot();
    h.at(30_000.0);
    h.draws.push(1.5);
    assert_eq!(h.pool.acquire("ctx").unwrap_err().code(), "INVALID_ARGUMENT");
    h.at(0.0);
    let after = h.pool.stats().unwrap();
    assert_eq!(
        (after.revision, after.leased, after.next_event_seq, after.now),
        (before.revision, before.leased, before.next_event_seq, before.now)
    );
    assert_eq!(h.snapshot(), snap, "takenAt and everything else as before");
    assert_eq!(h.events(), vec![], "no LEASE_EXPIRED");
    assert_eq!(h.view(&lease.value).lease, Some(lease));
}

#[test]
fn every_failing_call_at_a_due_expiry_changes_nothing() {
    // SPEC §9: a failed call changes nothing — whatever made it fail, and even when a lease
    // and a block are due at its reading (the next good call ends them).
    type Call = Box<dyn Fn(&mut ClockedPool) -> Result<(), Error>>;
    let ok = |r: Result<bool, Error>| r.map(drop);
    let calls: Vec<(&str, &str, Call)> = vec![
        ("bad draw", "INVALID_ARGUMENT", Box::new(|p| p.acquire("ctx").map(drop))),
        ("blank context", "INVALID_ARGUMENT", Box::new(|p| p.acquire(" ").map(drop))),
        (
            "unknown report",
            "UNKNOWN_RESOURCE",
            Box::new(|p| p.report(Kind::Proxy, "zz", "ctx", Outcome::success())),
        ),
        (
            "bad latency",
            "INVALID_ARGUMENT",
            Box::new(|p| p.report(Kind::Proxy, "a", "ctx", Outcome::Success { latency_ms: Some(-1.0) })),
        ),
        (
            "cell past maxCells",
            "CAPACITY_EXCEEDED",
            Box::new(|p| p.report(Kind::Proxy, "a", "new", Outcome::success())),
        ),
        (
            "resource past maxResources",
            "CAPACITY_EXCEEDED",
            Box::new(move |p| ok(p.register(Kind::Proxy, "d"))),
        ),
        ("block unknown", "UNKNOWN_RESOURCE", Box::new(|p| p.block(Kind::Proxy, "zz", BlockSpec::Permanent))),
        ("block 0 s", "INVALID_ARGUMENT", Box::new(|p| p.block(Kind::Proxy, "a", BlockSpec::Seconds(0.0)))),
        ("unblock unknown", "UNKNOWN_RESOURCE", Box::new(move |p| ok(p.unblock(Kind::Account, "a")))),
        (
            "acquireResource unknown",
            "UNKNOWN_RESOURCE",
            Box::new(|p| p.acquire_resource(Kind::Session, "a", "ctx").map(drop)),
        ),
        (
            "bad config",
            "INVALID_CONFIG",
            Box::new(move |p| {
                ok(p.set_config(&repute::ConfigPatch::from_json(r#"{"coolAfter":0}"#).unwrap()))
            }),
        ),
        (
            "config below what is held",
            "CAPACITY_EXCEEDED",
            Box::new(move |p| {
                ok(p.set_config(&repute::ConfigPatch::from_json(r#"{"maxResources":1}"#).unwrap()))
            }),
        ),
    ];
    for (what, code, call) in calls {
        let mut h = Harness::with_patch(r#"{"maxResources":3,"maxCells":1}"#);
        for v in ["a", "b", "c"] {
            h.reg(v);
        }
        h.ok("b", "ctx");
        h.at(10_000.0);
        let lease = h.pool.acquire_resource(Kind::Proxy, "a", "ctx").unwrap().unwrap();
        h.block_secs("c", 30.0);
        h.events();
        let snap = h.snapshot();
        h.at(40_000.0); // the lease and the block both end now
        h.draws.push(1.5);
        assert_eq!(call(&mut h.pool).map_err(|e| e.code()), Err(code), "{what}");
        h.at(10_000.0);
        assert_eq!(h.snapshot(), snap, "{what}: nothing changed, time did not move");
        assert_eq!(h.events(), vec![], "{what}: no event");
        assert_eq!(h.view("a").lease, Some(lease), "{what}");
    }
}

/// 2^53 − 1: the largest counter a snapshot holds (and a JavaScript number represents exactly).
const MAX_SAFE: u64 = (1 << 53) - 1;

/// `json` with top-level counter `key` set to `v`.
fn with_counter(json: &str, key: &str, v: u64) -> String {
    let mut d: serde_json::Value = serde_json::from_str(json).unwrap();
    d[key] = v.into();
    d.to_string()
}

fn refused_naming(r: Result<impl std::fmt::Debug, Error>, counter: &str, what: &str) {
    match r {
        Err(Error::CapacityExceeded(msg)) => assert!(msg.contains(counter), "{what}: {msg}"),
        other => panic!("{what}: expected CAPACITY_EXCEEDED naming {counter}, got {other:?}"),
    }
}

#[test]
fn a_token_past_2_to_the_53_is_refused_and_every_snapshot_restores() {
    // Issue 13: a snapshot with fencingHighWater 2^53 − 1 restored, the next token was 2^53
    // (not a safe integer), and the pool's own snapshot was then refused.
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    let at_edge = with_counter(&h.snapshot(), "fencingHighWater", MAX_SAFE - 1);
    let clock = ManualClock::new(T0);
    let mut pool =
        ClockedPool::restore(&at_edge, None, clock.clone(), repute::Randomness::host(|| 0.5)).unwrap();
    let last = pool.acquire_resource(Kind::Proxy, "a", "c").unwrap().unwrap();
    assert_eq!(last.token, MAX_SAFE, "the last safe token is issued");
    pool.drain_events().unwrap();
    let full = pool.snapshot().unwrap();
    // Every way to ask for a token now fails, and changes nothing.
    refused_naming(pool.acquire("c"), "fencingHighWater", "acquire");
    refused_naming(pool.acquire("elsewhere"), "fencingHighWater", "acquire, no cells");
    refused_naming(pool.acquire_resource(Kind::Proxy, "b", "c"), "fencingHighWater", "acquireResource");
    assert_eq!(pool.snapshot().unwrap(), full);
    assert_eq!(pool.drain_events().unwrap(), vec![]);
    // The rest of the pool works: reports, the lease's release, reads, and its snapshot restores.
    pool.report(Kind::Proxy, "a", "c", Outcome::success()).unwrap();
    assert!(pool.release(&last).unwrap());
    let snap = pool.snapshot().unwrap();
    let mut restored = ClockedPool::restore(&snap, None, clock, repute::Randomness::host(|| 0.5)).unwrap();
    assert_eq!(restored.snapshot().unwrap(), snap);
    assert_eq!(restored.stats().unwrap().fencing_high_water, MAX_SAFE);
    // Crossing 2^52 on the way (where the check turns exact) refuses nothing early.
    let near =
        with_counter(&with_counter(&at_edge, "fencingHighWater", (1 << 52) - 2), "revision", (1 << 52) - 2);
    let mut pool =
        ClockedPool::restore(&near, None, ManualClock::new(T0), repute::Randomness::host(|| 0.5)).unwrap();
    for i in 1..=4 {
        let l = pool.acquire_resource(Kind::Proxy, "a", "c").unwrap().unwrap();
        assert_eq!(l.token, (1 << 52) - 2 + i);
        assert!(pool.release(&l).unwrap());
    }
}

#[test]
fn an_event_seq_past_2_to_the_53_is_refused_counting_the_expiries_due() {
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    h.block_secs("b", 10.0);
    let clock = ManualClock::new(T0);
    let mut pool = ClockedPool::restore(
        &with_counter(&h.snapshot(), "nextEventSeq", MAX_SAFE - 1),
        None,
        clock.clone(),
        repute::Randomness::host(|| 0.5),
    )
    .unwrap();
    // Room for one event: the last seq a snapshot can hold next is 2^53 − 1.
    pool.block(Kind::Proxy, "a", BlockSpec::Permanent).unwrap();
    let events = pool.drain_events().unwrap();
    assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![MAX_SAFE - 1]);
    let full = pool.snapshot().unwrap();
    refused_naming(pool.unblock(Kind::Proxy, "a"), "nextEventSeq", "unblock");
    refused_naming(pool.report(Kind::Proxy, "a", "c", Outcome::success()), "nextEventSeq", "report");
    refused_naming(pool.register(Kind::Proxy, "c"), "nextEventSeq", "register");
    // Reads go on while nothing ends at their reading; once b's block is due (its
    // BLOCK_EXPIRED would need a seq), they are refused too and change nothing.
    assert_eq!(pool.stats().unwrap().next_event_seq, MAX_SAFE);
    clock.advance(10_000.0);
    refused_naming(pool.stats(), "nextEventSeq", "stats with an expiry due");
    refused_naming(pool.snapshot(), "nextEventSeq", "snapshot with an expiry due");
    clock.set(T0);
    assert_eq!(pool.snapshot().unwrap(), full, "nothing changed");
    let mut restored =
        ClockedPool::restore(&full, None, ManualClock::new(T0), repute::Randomness::host(|| 0.5)).unwrap();
    assert_eq!(restored.snapshot().unwrap(), full);
}

#[test]
fn a_revision_past_2_to_the_53_is_refused_reads_go_on() {
    let mut h = Harness::new();
    h.reg("a");
    h.block_secs("a", 10.0);
    let clock = ManualClock::new(T0);
    let snap = with_counter(&h.snapshot(), "revision", MAX_SAFE);
    let mut pool =
        ClockedPool::restore(&snap, None, clock.clone(), repute::Randomness::host(|| 0.5)).unwrap();
    let full = pool.snapshot().unwrap();
    refused_naming(pool.register(Kind::Proxy, "b"), "revision", "register");
    refused_naming(pool.report(Kind::Proxy, "a", "c", Outcome::success()), "revision", "report");
    refused_naming(
        pool.set_config(&repute::ConfigPatch::from_json(r#"{"coolAfter":3}"#).unwrap()),
        "revision",
        "setConfig",
    );
    assert_eq!(pool.acquire("c").unwrap_err().code(), "CAPACITY_EXCEEDED");
    assert_eq!(pool.resources(&repute::Filter::default()).unwrap().len(), 1);
    assert_eq!(pool.snapshot().unwrap(), full, "a read with nothing due changes nothing");
    clock.advance(10_000.0);
    refused_naming(pool.drain_events(), "revision", "a read with a block ending");
}
