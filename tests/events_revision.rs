//! Events and revision (SPEC §4, §6, "Precise details" on Revision and Event `seq`): event
//! `seq` values are consecutive from 1 and never restart (across drains and across snapshot →
//! restore, via `nextEventSeq`); `eventBufferSize` overflow drops the oldest and counts them in
//! `stats().eventsDropped`; `revision` rises by exactly one on each call that changes the
//! snapshot's content (register, deregister, report, block, unblock, acquire granted or
//! rejected, acquireResource granted, release, expiries) and not on renew, a repeated register,
//! a stale release, refusals, failed calls or read-only calls; deregister removes the
//! resource's cells, block and lease.

mod common;

use common::{ClockedPool, Draws, Harness, ManualClock, T0};
use repute::{BlockSpec, Error, EventType, FailureType, Filter, Kind, Outcome};

/// T0 as an integer instant.
const T: u64 = 1_700_000_000_000;

fn revision(h: &mut Harness) -> u64 {
    h.pool.stats().unwrap().revision
}

/// The snapshot without `takenAt` and `revision`: the content revision must track.
fn content(h: &mut Harness) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(&h.snapshot()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("takenAt");
    o.remove("revision");
    v
}

/// Runs `call` and checks that the revision moved by `delta` (0 or 1) and that the snapshot
/// content changed exactly when it moved.
fn step<R>(h: &mut Harness, what: &str, delta: u64, call: impl FnOnce(&mut Harness) -> R) -> R {
    let rev = revision(h);
    let before = content(h);
    let out = call(h);
    let after_rev = revision(h);
    assert_eq!(after_rev - rev, delta, "{what}: revision step");
    let after = content(h);
    assert_eq!(before != after, delta == 1, "{what}: content changed ⇔ revision moved");
    assert_eq!(revision(h), after_rev, "reading the snapshot moved the revision");
    out
}

// ---------------------------------------------------------------------------------------------
// seq

#[test]
fn event_seq_values_are_consecutive_from_1_across_drains() {
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    let l = h.pool.acquire_resource(Kind::Proxy, "a", "c").unwrap().unwrap();
    let mut seqs: Vec<u64> = h.events().iter().map(|e| e.seq).collect();
    assert_eq!(seqs.first(), Some(&1));
    h.fail("a", "c", FailureType::Timeout);
    h.fail("a", "c", FailureType::Timeout); // RESOURCE_COOLED
    h.pool.release(&l).unwrap();
    h.pool.block(Kind::Proxy, "b", BlockSpec::Permanent).unwrap();
    assert_eq!(h.acquire("c"), None); // ACQUISITION_REJECTED
    h.pool.unblock(Kind::Proxy, "b").unwrap();
    seqs.extend(h.events().iter().map(|e| e.seq));
    h.at(120_000.0);
    h.ok("a", "c");
    h.ok("a", "c"); // RESOURCE_RECOVERED
    seqs.extend(h.events().iter().map(|e| e.seq));
    let n = seqs.len() as u64;
    assert!(n >= 9, "{seqs:?}");
    assert_eq!(seqs, (1..=n).collect::<Vec<_>>());
    assert_eq!(h.pool.stats().unwrap().next_event_seq, n + 1);
    // Draining again gives nothing; the next event continues the sequence.
    assert!(h.events().is_empty());
    h.reg("z");
    assert_eq!(h.events()[0].seq, n + 1);
}

#[test]
fn events_carry_the_instant_of_the_call() {
    let mut h = Harness::new();
    h.at(1_500.0);
    h.reg("a");
    h.at(2_500.0);
    let l = h.acquire("c").unwrap();
    h.at(3_500.0);
    h.pool.release(&l).unwrap();
    let ev = h.events();
    let leased = ev.iter().find(|e| e.ty == EventType::ResourceLeased).unwrap();
    assert_eq!(leased.at, T + 2_500);
    assert_eq!(leased.token, Some(l.token));
    assert_eq!(leased.context.as_deref(), Some("c"));
    let released = ev.iter().find(|e| e.ty == EventType::LeaseReleased).unwrap();
    assert_eq!(released.at, T + 3_500);
    assert!(ev.windows(2).all(|w| w[0].at <= w[1].at && w[0].seq < w[1].seq));
}

#[test]
fn event_seq_never_restarts_across_snapshot_and_restore() {
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    h.block_secs("b", 60.0);
    let first = h.events();
    let n = first.len() as u64; // RESOURCE_REGISTERED × 2, RESOURCE_BLOCKLISTED
    assert_eq!(first.iter().map(|e| e.seq).collect::<Vec<_>>(), (1..=n).collect::<Vec<_>>());
    // Two more events, left undrained at snapshot time.
    h.ok("a", "c");
    let l = h.acquire("c").unwrap();
    h.pool.release(&l).unwrap();
    let json = h.snapshot();
    let snap: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(snap["nextEventSeq"], n + 3);

    let mut pool =
        ClockedPool::restore(&json, None, ManualClock::new(T0), Draws::default().source()).unwrap();
    assert!(pool.drain_events().unwrap().is_empty(), "events are not persisted");
    pool.register(Kind::Proxy, "c").unwrap();
    pool.unblock(Kind::Proxy, "b").unwrap();
    let seqs: Vec<u64> = pool.drain_events().unwrap().iter().map(|e| e.seq).collect();
    assert_eq!(seqs, vec![n + 3, n + 4]);
    // And again through a second round trip.
    let json2 = pool.snapshot().unwrap();
    let mut pool2 =
        ClockedPool::restore(&json2, None, ManualClock::new(T0), Draws::default().source()).unwrap();
    pool2.register(Kind::Proxy, "d").unwrap();
    assert_eq!(pool2.drain_events().unwrap()[0].seq, n + 5);
}

#[test]
fn buffer_overflow_drops_the_oldest_and_counts_them() {
    let mut h = Harness::with_patch(r#"{"eventBufferSize":3}"#);
    for v in ["a", "b", "c", "d", "e"] {
        h.reg(v);
    }
    let stats = h.pool.stats().unwrap();
    assert_eq!(stats.events_dropped, 2);
    let ev = h.events();
    assert_eq!(ev.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![3, 4, 5]);
    let values: Vec<&str> = ev.iter().map(|e| &*e.resource.as_ref().unwrap().1).collect();
    assert_eq!(values, vec!["c", "d", "e"], "the newest are kept");
    // Below capacity nothing more is dropped; seq continues.
    h.reg("f");
    assert_eq!(h.events()[0].seq, 6);
    assert_eq!(h.pool.stats().unwrap().events_dropped, 2);
    // Overflow again: the count accumulates.
    for v in ["g", "h", "i", "j"] {
        h.reg(v);
    }
    assert_eq!(h.pool.stats().unwrap().events_dropped, 3);
    assert_eq!(h.events().iter().map(|e| e.seq).collect::<Vec<_>>(), vec![8, 9, 10]);
}

#[test]
fn buffer_size_1_keeps_only_the_last_event() {
    let mut h = Harness::with_patch(r#"{"eventBufferSize":1}"#);
    h.reg("a");
    h.reg("b");
    h.draws.push(0.0);
    let l = h.acquire("c").unwrap();
    let ev = h.events();
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].ty, EventType::ResourceLeased);
    assert_eq!(ev[0].seq, 3);
    assert_eq!(ev[0].token, Some(l.token));
    assert_eq!(h.pool.stats().unwrap().events_dropped, 2);
}

// ---------------------------------------------------------------------------------------------
// revision

#[test]
fn revision_steps_by_one_per_changing_call_and_not_otherwise() {
    let mut h = Harness::new();
    assert_eq!(revision(&mut h), 0);
    step(&mut h, "register a", 1, |h| h.reg("a"));
    step(&mut h, "register a again", 0, |h| assert!(!h.pool.register(Kind::Proxy, "a").unwrap()));
    step(&mut h, "register b", 1, |h| h.reg("b"));
    step(&mut h, "report success", 1, |h| h.ok("a", "c"));
    step(&mut h, "report failure", 1, |h| h.fail("a", "c", FailureType::Timeout));
    step(&mut h, "report failure that cools (cell + event)", 1, |h| h.fail("a", "c", FailureType::Timeout));
    step(&mut h, "late failure while cooling", 1, |h| h.fail("a", "c", FailureType::Slow));
    step(&mut h, "block", 1, |h| h.block_secs("b", 60.0));
    step(&mut h, "re-block", 1, |h| h.block_secs("b", 90.0));
    step(&mut h, "unblock", 1, |h| assert!(h.pool.unblock(Kind::Proxy, "b").unwrap()));
    step(&mut h, "unblock when not blocked", 0, |h| assert!(!h.pool.unblock(Kind::Proxy, "b").unwrap()));
    // a is cooling in c: b is the single candidate.
    let lease = step(&mut h, "acquire granted", 1, |h| h.acquire("c").unwrap());
    step(&mut h, "renew", 0, |h| {
        h.at(1_000.0);
        assert!(h.pool.renew(&lease).unwrap().is_some())
    });
    step(&mut h, "acquire rejected", 1, |h| assert_eq!(h.acquire("c"), None));
    step(&mut h, "acquireResource refused (leased)", 0, |h| {
        assert_eq!(h.pool.acquire_resource(Kind::Proxy, "b", "x").unwrap(), None)
    });
    step(&mut h, "acquireResource refused (cooling)", 0, |h| {
        assert_eq!(h.pool.acquire_resource(Kind::Proxy, "a", "c").unwrap(), None)
    });
    step(&mut h, "release", 1, |h| assert!(h.pool.release(&lease).unwrap()));
    step(&mut h, "release of a released (stale) lease", 0, |h| assert!(!h.pool.release(&lease).unwrap()));
    step(&mut h, "renew of a released lease", 0, |h| assert_eq!(h.pool.renew(&lease).unwrap(), None));
    let l2 = step(&mut h, "acquireResource granted", 1, |h| {
        h.pool.acquire_resource(Kind::Proxy, "a", "other").unwrap().unwrap()
    });
    step(&mut h, "read-only calls", 0, |h| {
        h.pool.stats().unwrap();
        h.pool.snapshot().unwrap();
        h.pool.resources(&Filter::default()).unwrap();
        h.pool.due_for_recovery_probe().unwrap();
        h.pool.next_change_at("c").unwrap();
        h.pool.drain_events().unwrap();
        let _ = h.pool.config();
    });
    step(&mut h, "failed calls", 0, |h| {
        assert!(h.pool.register(Kind::Proxy, " ").is_err());
        assert!(matches!(
            h.pool.report(Kind::Proxy, "ghost", "c", Outcome::success()),
            Err(Error::UnknownResource(_))
        ));
        assert!(h.pool.block(Kind::Proxy, "a", BlockSpec::Seconds(0.0)).is_err());
        assert!(h.pool.acquire("").is_err());
    });
    step(&mut h, "deregister unknown", 0, |h| assert!(!h.pool.deregister(Kind::Proxy, "ghost").unwrap()));
    step(&mut h, "deregister", 1, |h| assert!(h.pool.deregister(Kind::Proxy, "a").unwrap()));
    step(&mut h, "release after deregister", 0, |h| assert!(!h.pool.release(&l2).unwrap()));
}

#[test]
fn a_call_at_which_things_expire_counts_one_revision_step() {
    let mut h = Harness::new();
    h.reg("a");
    h.reg("b");
    let _l = h.pool.acquire_resource(Kind::Proxy, "a", "c").unwrap().unwrap();
    h.block_secs("b", 10.0);
    let rev = revision(&mut h);
    // At T + 30 s the lease and the block have both expired: their events change nextEventSeq,
    // so the first call that sees them (here a read) counts exactly one step.
    h.at(30_000.0);
    h.pool.resources(&Filter::default()).unwrap();
    assert_eq!(revision(&mut h), rev + 1);
    assert_eq!(revision(&mut h), rev + 1, "and only once");
    let types = h.event_types();
    assert!(types.contains(&"LEASE_EXPIRED") && types.contains(&"BLOCK_EXPIRED"), "{types:?}");
}

#[test]
fn a_snapshot_taken_when_an_expiry_fires_carries_the_new_revision() {
    let mut h = Harness::new();
    h.reg("a");
    let _l = h.acquire("c").unwrap();
    let a: serde_json::Value = serde_json::from_str(&h.snapshot()).unwrap();
    let rev = a["revision"].as_u64().unwrap();
    h.at(30_000.0);
    // The lease expires during this call: LEASE_EXPIRED advances nextEventSeq, so this
    // snapshot's content differs from `a`'s and its revision must be one higher.
    let b_json = h.snapshot();
    let b: serde_json::Value = serde_json::from_str(&b_json).unwrap();
    assert_ne!(a["nextEventSeq"], b["nextEventSeq"]);
    assert_eq!(b["revision"], rev + 1, "content changed, revision must too");
    // Nothing happened since: the next snapshot at the same instant is byte-identical.
    assert_eq!(h.snapshot(), b_json);
    // stats() in the call that sees an expiry is consistent with it as well.
    h.reg("b");
    let _l2 = h.pool.acquire_resource(Kind::Proxy, "b", "c").unwrap().unwrap();
    let rev = revision(&mut h);
    h.at(60_000.0);
    let s = h.pool.stats().unwrap();
    assert_eq!(s.leased, 0);
    assert_eq!(s.revision, rev + 1);
}

#[test]
fn a_cooldown_ending_is_not_a_revision_step() {
    // The end of a cooldown changes nothing in the snapshot (no event): no step.
    let mut h = Harness::new();
    h.reg("a");
    h.fail("a", "c", FailureType::Timeout);
    h.fail("a", "c", FailureType::Timeout);
    let rev = revision(&mut h);
    h.at(120_000.0);
    assert_eq!(revision(&mut h), rev);
}

#[test]
fn the_snapshot_carries_the_revision_and_restore_keeps_it() {
    let mut h = Harness::new();
    h.reg("a");
    h.ok("a", "c");
    h.block_secs("a", 5.0);
    let json = h.snapshot();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["revision"], 3);
    let mut pool =
        ClockedPool::restore(&json, None, ManualClock::new(T0), Draws::default().source()).unwrap();
    assert_eq!(pool.stats().unwrap().revision, 3);
    pool.report(Kind::Proxy, "a", "c", Outcome::success()).unwrap();
    assert_eq!(pool.stats().unwrap().revision, 4);
}

// ---------------------------------------------------------------------------------------------
// deregister

#[test]
fn deregister_removes_cells_block_and_lease() {
    let mut h = Harness::new();
    h.reg("p");
    h.reg("q");
    h.ok("p", "c1");
    h.fail("p", "c2", FailureType::Blocked);
    h.fail("p", "c2", FailureType::Blocked);
    h.ok("q", "c1");
    let lease = h.pool.acquire_resource(Kind::Proxy, "p", "c3").unwrap().unwrap();
    h.pool.block(Kind::Proxy, "p", BlockSpec::Permanent).unwrap();
    let s = h.pool.stats().unwrap();
    assert_eq!((s.registered, s.cells, s.leased, s.blocked), (2, 3, 1, 1));

    assert!(h.pool.deregister(Kind::Proxy, "p").unwrap());
    let s = h.pool.stats().unwrap();
    assert_eq!((s.registered, s.cells, s.leased, s.blocked), (1, 1, 0, 0));
    let snap: serde_json::Value = serde_json::from_str(&h.snapshot()).unwrap();
    assert_eq!(snap["registered"], serde_json::json!([{"kind":"PROXY","value":"q"}]));
    assert_eq!(snap["blocklist"], serde_json::json!([]));
    assert_eq!(snap["cells"].as_array().unwrap().len(), 1);
    assert_eq!(snap["cells"][0]["value"], "q");
    let views = h.pool.resources(&Filter::default()).unwrap();
    assert_eq!(views.len(), 1);
    // Calls naming it now fail as unknown; its old lease is gone.
    assert!(matches!(
        h.pool.report(Kind::Proxy, "p", "c1", Outcome::success()),
        Err(Error::UnknownResource(_))
    ));
    assert!(!h.pool.release(&lease).unwrap());
    assert_eq!(h.pool.renew(&lease).unwrap(), None);

    // Registering it again starts from scratch: no cells, no block, no lease.
    assert!(h.pool.register(Kind::Proxy, "p").unwrap());
    let v = h.view("p");
    assert!(v.cells.is_empty());
    assert_eq!(v.blocked, None);
    assert_eq!(v.lease, None);
    assert!(h.pool.due_for_recovery_probe().unwrap().is_empty());
    h.ok("p", "c2");
    let c = h.cell("p", "c2");
    assert_eq!(c.score, 5.0, "a fresh cell, not the old −60");
    assert_eq!(c.cooldown_until, None);
    // It is leasable, and the old lease's token is not reused.
    h.at(10_000.0);
    let again = h.pool.acquire_resource(Kind::Proxy, "p", "c3").unwrap().unwrap();
    assert!(again.token > lease.token);
    // The old lease's expiry (T + 30 s) does not end the new one (T + 40 s).
    h.at(30_000.0);
    assert_eq!(h.view("p").lease.map(|l| l.token), Some(again.token));
}
