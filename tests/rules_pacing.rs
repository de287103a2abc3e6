//! Pacing rules of SPEC §3 "Groups, pacing and the cooling cap" (the Pacing paragraph) and the
//! "Precise details" lines that name it, one test per sentence: `minGapMs` (default 0: off),
//! `minGapMsByContext` (at most 4,096 entries, keys valid contexts, an entry overriding
//! `minGapMs`, replaced as a whole by a config patch or a restore override), a cell paced while
//! `now < updatedAt + gap` (a gap ending exactly at `now` is over), `updatedAt` being the last
//! report, a paced cell out of `acquire` (grouped or not), refused by `acquireResource` (`null`,
//! no event) and left out of `dueForRecoveryProbe`, a resource without a cell never paced,
//! `nextChangeAt` counting a pacing end, `CellView.pacedUntil`, a config change re-pacing the
//! cells already there, and pacing across a snapshot round trip.

mod common;

use common::{ClockedPool, Harness, ManualClock, T0};
use repute::{ConfigPatch, EventType, FailureType, Kind};

use FailureType::Timeout;

/// T0 as an integer instant.
const T: u64 = 1_700_000_000_000;

fn with_p(patch: &str) -> Harness {
    let mut h = Harness::with_patch(patch);
    h.reg("p");
    h.events();
    h
}

fn set_config(h: &mut Harness, json: &str) -> bool {
    h.pool.set_config(&ConfigPatch::from_json(json).unwrap()).unwrap()
}

/// Acquires in `ctx` (at most one candidate: no draw) and releases; the value or `None`.
fn only(h: &mut Harness, ctx: &str) -> Option<String> {
    let l = h.acquire(ctx)?;
    assert!(h.pool.release(&l).unwrap());
    Some(l.value.to_string())
}

// ---------------------------------------------------------------------------------------------
// The config fields

#[test]
fn pacing_is_off_by_default() {
    let mut h = with_p("{}");
    assert_eq!(h.pool.config().min_gap_ms, 0);
    assert!(h.pool.config().min_gap_ms_by_context.is_empty());
    h.ok("p", "c");
    assert_eq!(h.cell("p", "c").paced_until, None);
    assert_eq!(only(&mut h, "c").as_deref(), Some("p"), "reported and leased again at once");
}

#[test]
fn min_gap_ms_by_context_is_checked_entry_by_entry() {
    let cfg = |json: &str| repute::Config::from_patch(&ConfigPatch::from_json(json)?);
    let map = |n: usize| {
        let entries: Vec<String> = (0..n).map(|i| format!(r#""ctx-{i}":{i}"#)).collect();
        format!(r#"{{"minGapMsByContext":{{{}}}}}"#, entries.join(","))
    };
    assert_eq!(cfg(&map(4096)).unwrap().min_gap_ms_by_context.len(), 4096);
    let long = "c".repeat(256);
    let ok = format!(r#"{{"minGapMsByContext":{{"{long}":0,"x":2147483648}}}}"#);
    assert_eq!(cfg(&ok).unwrap().min_gap_for(&long), 0);
    let too_long = format!(r#"{{"minGapMsByContext":{{"{long}c":1}}}}"#);
    let bad = [
        map(4097),
        too_long,
        r#"{"minGapMsByContext":{"":1}}"#.into(),
        r#"{"minGapMsByContext":{"  ":1}}"#.into(),
        r#"{"minGapMsByContext":{"c":-1}}"#.into(),
        r#"{"minGapMsByContext":{"c":2147483649}}"#.into(),
        r#"{"minGapMsByContext":{"c":1.5}}"#.into(),
        r#"{"minGapMsByContext":{"c":"1"}}"#.into(),
        r#"{"minGapMsByContext":[]}"#.into(),
        r#"{"minGapMsByContext":{"c":1,"c":2}}"#.into(),
    ];
    for json in &bad {
        let err = cfg(json).unwrap_err();
        assert_eq!(err.code(), "INVALID_CONFIG", "{json}");
        assert!(err.to_string().contains("minGapMsByContext"), "{json}: {err}");
    }
}

// ---------------------------------------------------------------------------------------------
// When a cell is paced

#[test]
fn a_cell_is_paced_while_now_is_before_its_last_report_plus_the_gap() {
    let mut h = with_p(r#"{"minGapMs":1000}"#);
    h.ok("p", "c");
    assert_eq!(h.cell("p", "c").paced_until, Some(T + 1000));
    h.at(999.0);
    h.events();
    assert_eq!(only(&mut h, "c"), None);
    let ev = h.events();
    assert_eq!(ev.iter().map(|e| e.ty).collect::<Vec<_>>(), vec![EventType::AcquisitionRejected]);
    assert_eq!(h.cell("p", "c").paced_until, Some(T + 1000));
    // A gap ending exactly now is over (exclusive, like every expiry).
    h.at(1000.0);
    assert_eq!(h.cell("p", "c").paced_until, None, "pacedUntil is null once not paced");
    assert_eq!(only(&mut h, "c").as_deref(), Some("p"));
}

#[test]
fn every_report_moves_the_pacing_end() {
    let mut h = with_p(r#"{"minGapMs":1000,"coolAfter":1000}"#);
    h.ok("p", "c");
    h.at(500.0);
    h.fail("p", "c", Timeout); // a failure is a report too: updatedAt = +500
    assert_eq!(h.cell("p", "c").updated_at, T + 500);
    assert_eq!(h.cell("p", "c").paced_until, Some(T + 1500));
    h.at(1000.0);
    assert_eq!(only(&mut h, "c"), None);
    h.at(1499.0);
    assert_eq!(only(&mut h, "c"), None);
    h.at(1500.0);
    assert_eq!(only(&mut h, "c").as_deref(), Some("p"));
}

#[test]
fn a_paced_cell_is_not_a_candidate_and_does_not_count_towards_a_draw() {
    let mut h = with_p(r#"{"minGapMs":10000}"#);
    h.reg("q");
    // acquire → report → release, then another worker asks: p is paced, q is the only
    // candidate (no draw scripted: a draw would panic).
    h.draws.push(0.0);
    let l = h.acquire("c").unwrap();
    assert_eq!(&*l.value, "p");
    h.ok("p", "c");
    h.pool.release(&l).unwrap();
    assert_eq!(only(&mut h, "c").as_deref(), Some("q"));
    assert_eq!(h.draws.remaining(), 0);
}

#[test]
fn a_resource_without_a_cell_in_a_context_is_never_paced_there() {
    let mut h = with_p(r#"{"minGapMs":60000}"#);
    h.ok("p", "c");
    assert_eq!(only(&mut h, "c"), None);
    assert_eq!(only(&mut h, "d").as_deref(), Some("p"));
    assert_eq!(h.view("p").cells.len(), 1, "acquire made no cell in d");
    let l = h.pool.acquire_resource(Kind::Proxy, "p", "d").unwrap().unwrap();
    assert!(h.pool.release(&l).unwrap());
}

#[test]
fn acquire_resource_refuses_a_paced_cell_with_no_event() {
    let mut h = with_p(r#"{"minGapMs":1000}"#);
    h.ok("p", "c");
    h.events();
    let (rev, snap) = (h.revision(), h.snapshot());
    h.at(999.0);
    assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", "c").unwrap(), None);
    assert_eq!(h.events(), vec![], "null, no event");
    assert_eq!(h.revision(), rev, "nothing durable changed");
    let snap_now = h.snapshot();
    assert_eq!(snap_now.replace(&format!("\"takenAt\":{}", T + 999), &format!("\"takenAt\":{T}")), snap);
    h.at(1000.0);
    let l = h.pool.acquire_resource(Kind::Proxy, "p", "c").unwrap().unwrap();
    assert_eq!(l.leased_at, T + 1000);
}

#[test]
fn due_for_recovery_probe_leaves_out_paced_cells() {
    // TIMEOUT cools for 60 s and is probe-only; the gap is 120 s from the report.
    let mut h = with_p(r#"{"coolAfter":1,"halfOpenCauses":[],"minGapMs":120000}"#);
    h.fail("p", "c", Timeout);
    h.at(60_000.0);
    assert_eq!(h.pool.due_for_recovery_probe().unwrap(), vec![], "due but paced");
    assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", "c").unwrap(), None);
    h.at(119_999.0);
    assert_eq!(h.pool.due_for_recovery_probe().unwrap(), vec![]);
    h.at(120_000.0);
    let due = h.pool.due_for_recovery_probe().unwrap();
    assert_eq!(due.iter().map(|d| (&*d.value, d.cooldown_until)).collect::<Vec<_>>(), [("p", T + 60_000)]);
    assert!(h.pool.acquire_resource(Kind::Proxy, "p", "c").unwrap().is_some());
}

#[test]
fn a_half_open_trial_waits_for_its_pacing_end_too() {
    let mut h = with_p(r#"{"coolAfter":1,"minGapMs":90000}"#);
    h.fail("p", "c", Timeout); // cooldown to +60 s, paced to +90 s
    assert_eq!(h.pool.next_change_at("c").unwrap(), Some(T + 90_000), "the later of the two");
    h.at(60_000.0);
    assert_eq!(only(&mut h, "c"), None);
    h.at(90_000.0);
    assert_eq!(only(&mut h, "c").as_deref(), Some("p"));
}

#[test]
fn next_change_at_counts_a_pacing_end() {
    let mut h = with_p(r#"{"minGapMs":5000}"#);
    h.ok("p", "c");
    assert_eq!(h.pool.next_change_at("c").unwrap(), Some(T + 5000));
    // Leased elsewhere until +31 s: the later of its lease end and its pacing end.
    h.at(1000.0);
    let l = h.pool.acquire_resource(Kind::Proxy, "p", "d").unwrap().unwrap();
    assert_eq!(h.pool.next_change_at("c").unwrap(), Some(T + 31_000));
    h.pool.release(&l).unwrap();
    assert_eq!(h.pool.next_change_at("c").unwrap(), Some(T + 5000));
    // A grouped question counts it the same way.
    h.pool.register_in(Kind::Proxy, "p", Some(Some("dc"))).unwrap();
    assert_eq!(h.pool.next_change_at_in("c", &[Some("dc")]).unwrap(), Some(T + 5000));
    assert_eq!(h.pool.next_change_at_in("c", &[None]).unwrap(), None, "nobody is ungrouped");
    h.at(5000.0);
    assert_eq!(h.pool.next_change_at("c").unwrap(), Some(T + 5000), "now: a candidate");
    assert_eq!(h.pool.next_change_at_in("c", &[Some("dc")]).unwrap(), Some(T + 5000));
}

#[test]
fn a_grouped_acquire_passes_over_a_group_whose_cells_are_paced() {
    let mut h = Harness::with_patch(r#"{"minGapMs":1000}"#);
    h.reg_in("d1", Some("dc"));
    h.reg_in("r1", Some("res"));
    h.ok("d1", "c");
    let l = h.acquire_in("c", &[Some("dc"), Some("res")]).unwrap();
    assert_eq!((&*l.value, l.group.as_deref()), ("r1", Some("res")));
    h.pool.release(&l).unwrap();
    h.at(1000.0);
    let l = h.acquire_in("c", &[Some("dc"), Some("res")]).unwrap();
    assert_eq!(&*l.value, "d1");
}

#[test]
fn the_end_of_pacing_is_neither_an_event_nor_a_revision_step() {
    let mut h = with_p(r#"{"minGapMs":1000}"#);
    h.ok("p", "c");
    h.events();
    let rev = h.revision();
    h.at(1000.0);
    assert_eq!(h.revision(), rev);
    assert_eq!(h.events(), vec![]);
}

// ---------------------------------------------------------------------------------------------
// minGapMsByContext

#[test]
fn an_entry_of_min_gap_ms_by_context_overrides_min_gap_ms_for_its_context() {
    let mut h = with_p(r#"{"minGapMs":1000,"minGapMsByContext":{"slow":5000,"fast":0}}"#);
    for ctx in ["c", "slow", "fast"] {
        h.ok("p", ctx);
    }
    let paced = |h: &mut Harness, ctx: &str| h.cell("p", ctx).paced_until;
    assert_eq!(paced(&mut h, "c"), Some(T + 1000));
    assert_eq!(paced(&mut h, "slow"), Some(T + 5000));
    assert_eq!(paced(&mut h, "fast"), None, "0 turns pacing off for that context");
    assert_eq!(only(&mut h, "fast").as_deref(), Some("p"));
    h.at(1000.0);
    assert_eq!(only(&mut h, "c").as_deref(), Some("p"));
    assert_eq!(only(&mut h, "slow"), None);
    h.at(5000.0);
    assert_eq!(only(&mut h, "slow").as_deref(), Some("p"));
}

#[test]
fn a_config_patch_replaces_the_by_context_map_as_a_whole() {
    let mut h = with_p(r#"{"minGapMsByContext":{"a":5000,"b":5000}}"#);
    assert!(set_config(&mut h, r#"{"minGapMsByContext":{"a":1000}}"#));
    let map: Vec<(&str, u64)> = h.pool.config().min_gap_ms_by_context.iter().collect();
    assert_eq!(map, vec![("a", 1000)], "b is gone, not kept");
    // A restore override likewise.
    let snap = h.snapshot();
    let o = ConfigPatch::from_json(r#"{"minGapMsByContext":{"z":7}}"#).unwrap();
    let r = ClockedPool::restore(&snap, Some(&o), ManualClock::new(T0), repute::Randomness::host(|| 0.5))
        .unwrap();
    let map: Vec<(&str, u64)> = r.config().min_gap_ms_by_context.iter().collect();
    assert_eq!(map, vec![("z", 7)]);
}

// ---------------------------------------------------------------------------------------------
// A config change re-paces what is there

#[test]
fn a_config_change_of_the_gap_re_paces_existing_cells() {
    let mut h = with_p("{}");
    h.ok("p", "c"); // updatedAt T, not paced
    h.at(5000.0);
    // A longer gap paces it again, measured from its last report: until +10 s.
    assert!(set_config(&mut h, r#"{"minGapMs":10000}"#));
    h.pool.check_invariants().unwrap();
    assert_eq!(h.cell("p", "c").paced_until, Some(T + 10_000));
    assert_eq!(only(&mut h, "c"), None);
    assert_eq!(h.pool.acquire_resource(Kind::Proxy, "p", "c").unwrap(), None);
    assert_eq!(h.pool.next_change_at("c").unwrap(), Some(T + 10_000));
    // ... and it ends by itself at the new end.
    h.at(10_000.0);
    assert_eq!(only(&mut h, "c").as_deref(), Some("p"));
    // Paced by a per-context entry, then freed at once by a shorter gap.
    h.ok("p", "c"); // updatedAt +10 s
    h.at(12_000.0);
    assert!(set_config(&mut h, r#"{"minGapMsByContext":{"c":20000}}"#));
    assert_eq!(h.cell("p", "c").paced_until, Some(T + 30_000));
    assert!(set_config(&mut h, r#"{"minGapMsByContext":{"c":2000}}"#));
    h.pool.check_invariants().unwrap();
    assert_eq!(h.cell("p", "c").paced_until, None, "+10 s + 2 s is not after +12 s");
    assert_eq!(only(&mut h, "c").as_deref(), Some("p"));
    // The map replaced by one without c: c falls back to minGapMs (10 s) → paced to +20 s.
    assert!(set_config(&mut h, r#"{"minGapMsByContext":{"d":1}}"#));
    assert_eq!(h.cell("p", "c").paced_until, Some(T + 20_000));
    assert_eq!(only(&mut h, "c"), None);
    h.pool.check_invariants().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Snapshots

#[test]
fn paced_cells_stay_paced_across_a_snapshot_round_trip() {
    let mut h = with_p(r#"{"minGapMs":10000,"minGapMsByContext":{"z":1,"a":2}}"#);
    h.ok("p", "c");
    h.at(3000.0);
    let snap = h.snapshot();
    assert!(
        snap.contains(r#""minGapMs":10000,"minGapMsByContext":{"a":2,"z":1},"#),
        "keys in canonical order"
    );
    let clock = ManualClock::new(T0 + 3000.0);
    let mut r = ClockedPool::restore(&snap, None, clock.clone(), repute::Randomness::host(|| 0.5)).unwrap();
    assert_eq!(r.snapshot().unwrap(), snap);
    assert_eq!(r.acquire("c").unwrap(), None);
    let v = r.resources(&repute::Filter::default()).unwrap();
    assert_eq!(v[0].cells[0].paced_until, Some(T + 10_000));
    clock.set(T0 + 10_000.0);
    assert_eq!(r.acquire("c").unwrap().map(|l| l.value.to_string()).as_deref(), Some("p"));
    r.check_invariants().unwrap();
}

#[test]
fn a_restore_override_of_the_gap_paces_restored_cells_by_it() {
    let mut h = with_p(r#"{"minGapMs":1000}"#);
    h.ok("p", "c");
    h.at(2000.0);
    let snap = h.snapshot();
    // 1 s after +0 is over at +2 s; with 10 s it runs to +10 s.
    let o = ConfigPatch::from_json(r#"{"minGapMs":10000}"#).unwrap();
    let clock = ManualClock::new(T0 + 2000.0);
    let mut r =
        ClockedPool::restore(&snap, Some(&o), clock.clone(), repute::Randomness::host(|| 0.5)).unwrap();
    assert_eq!(r.acquire("c").unwrap(), None);
    assert_eq!(r.next_change_at("c").unwrap(), Some(T + 10_000));
    clock.set(T0 + 10_000.0);
    assert!(r.acquire("c").unwrap().is_some());
    r.check_invariants().unwrap();
}
