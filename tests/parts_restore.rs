//! A restore from a snapshot's parts (`PartsRestore`, `Pool::from_parts`: a host's import in
//! steps) builds the state `Pool::restore` builds of the joined document: byte-equal snapshots
//! and the same answers afterwards, for random pools of several seeds (blocks, groups,
//! capacities, cooled and held cells, several contexts), with config overrides and a floor;
//! its checks refuse what `restore` refuses with the same messages, refuse parts out of
//! canonical order, and a refused session takes no further part.

use repute::pool::{Floor, PartsRestore, Registration};
use repute::{BlockSpec, ConfigPatch, Error, FailureType, Kind, Outcome, Pool, Randomness};

const T0: f64 = 1_700_000_000_000.0;
const CONTEXTS: [&str; 5] = ["checkout-us", "search-eu", "ä-utf8", "b", "zz"];

/// A small deterministic generator (the test's own draws, not the pool's).
struct Draws(u64);

impl Draws {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// A pool after `steps` random calls, and its resources' names.
fn random_pool(seed: u64, steps: u32) -> (Pool, Vec<(Kind, String)>) {
    let cfg = ConfigPatch::from_json(r#"{"maxCoolingPercent":10,"coolAfter":2,"windowSize":12}"#).unwrap();
    let mut pool = Pool::new(repute::Config::from_patch(&cfg).unwrap(), Randomness::seeded(seed)).unwrap();
    let mut d = Draws(seed);
    let kinds = [Kind::Proxy, Kind::Account, Kind::Session];
    let names: Vec<(Kind, String)> =
        (0..60).map(|i| (kinds[(i % 3) as usize], format!("res-{}-{i}.example:80", d.below(1000)))).collect();
    for (i, (kind, value)) in names.iter().enumerate() {
        let group = ["g1", "g2"].get(i % 4).copied();
        let max_leases = if i % 5 == 0 { Some(3) } else { None };
        pool.register_with(T0, *kind, value, Registration { group: Some(group), max_leases }).unwrap();
    }
    for step in 0..steps {
        let now = T0 + f64::from(step) * 700.0;
        let (kind, value) = &names[d.below(names.len() as u64) as usize];
        let context = CONTEXTS[d.below(CONTEXTS.len() as u64) as usize];
        match d.below(10) {
            0 => {
                let spec = if d.below(3) == 0 { BlockSpec::Permanent } else { BlockSpec::Seconds(60.0) };
                pool.block(now, *kind, value, spec).unwrap();
            }
            1 => {
                pool.unblock(now, *kind, value).unwrap();
            }
            2 => {
                let _ = pool.acquire(now, context).unwrap();
            }
            3..=5 => {
                let failure = FailureType::ALL[d.below(5) as usize];
                pool.report(
                    now,
                    *kind,
                    value,
                    context,
                    Outcome::Failure { failure, latency_ms: Some(900.0) },
                )
                .unwrap();
            }
            _ => {
                let latency = Some(d.below(400) as f64 + 0.25);
                pool.report(now, *kind, value, context, Outcome::Success { latency_ms: latency }).unwrap();
            }
        }
    }
    // An outage on one destination at the end: past the cooling cap, cells are held.
    let end = T0 + f64::from(steps) * 700.0;
    for (kind, value) in &names[..30] {
        for _ in 0..2 {
            let outcome = Outcome::Failure { failure: FailureType::Timeout, latency_ms: None };
            pool.report(end, *kind, value, "checkout-us", outcome).unwrap();
        }
    }
    (pool, names)
}

/// The head and every registered resource's part, in canonical order.
fn parts_of(pool: &mut Pool, names: &[(Kind, String)], now: f64) -> (String, Vec<String>) {
    let mut order: Vec<&(Kind, String)> = names.iter().collect();
    order.sort_by(|a, b| (a.0, a.1.as_bytes()).cmp(&(b.0, b.1.as_bytes())));
    let head = pool.snapshot_part(now, None).unwrap().unwrap();
    let parts =
        order.into_iter().filter_map(|(k, v)| pool.snapshot_part(now, Some((*k, v))).unwrap()).collect();
    (head, parts)
}

fn from_parts(
    head: &str,
    parts: &[String],
    overrides: Option<&ConfigPatch>,
    floor: &Floor,
    seed: u64,
) -> Result<Pool, Error> {
    from_batches(head, parts, 1, [0; 3], overrides, floor, seed)
}

/// `parts` added `batch` at a time (joined by line breaks, as a host sends them), after room
/// was made for `reserve` resources of each kind.
fn from_batches(
    head: &str,
    parts: &[String],
    batch: usize,
    reserve: [usize; 3],
    overrides: Option<&ConfigPatch>,
    floor: &Floor,
    seed: u64,
) -> Result<Pool, Error> {
    let mut session = PartsRestore::begin(head, overrides)?;
    session.reserve(reserve);
    for b in parts.chunks(batch) {
        session.add(&b.join("\n"))?;
    }
    while !session.step()? {}
    session.raise_to(floor);
    Pool::from_parts(session, Randomness::seeded(seed))
}

#[test]
fn equals_restore_for_random_pools() {
    let overrides = ConfigPatch::from_json(r#"{"windowSize":5,"coolAfter":3}"#).unwrap();
    let floor = Floor { revision: 5_000, fencing_high_water: 77, next_event_seq: 9_000 };
    let mut seen = String::new();
    for seed in 1..=6u64 {
        let (mut pool, names) = random_pool(seed, 600);
        let now = T0 + 600.0 * 700.0;
        let json = pool.snapshot(now).unwrap();
        seen.push_str(&json);
        let (head, parts) = parts_of(&mut pool, &names, now);
        let by_kind = pool.registered_by_kind();
        assert_eq!(by_kind, Kind::ALL.map(|k| names.iter().filter(|(n, _)| *n == k).count()));
        // The room made is the pool's counts, or counts off the mark: the pool is the same.
        let reserve = if seed % 2 == 1 { by_kind } else { [3, 0, 500] };
        for (patch, floor) in [(None, Floor::default()), (Some(&overrides), floor)] {
            let mut whole = Pool::restore_above(&json, patch, &floor, Randomness::seeded(seed)).unwrap();
            // One part at a time, and batches of 4 to 16.
            let batch = seed as usize * 3 - 2;
            let mut stepped = from_batches(&head, &parts, batch, reserve, patch, &floor, seed).unwrap();
            assert_eq!(stepped.snapshot(now).unwrap(), whole.snapshot(now).unwrap(), "seed {seed}");
            stepped.check_invariants().unwrap();
            // The same answers afterwards: the indexes were built alike.
            for step in 0..300u32 {
                let t = now + f64::from(step) * 900.0;
                let context = CONTEXTS[step as usize % CONTEXTS.len()];
                let a = whole.acquire(t, context).unwrap();
                let b = stepped.acquire(t, context).unwrap();
                assert_eq!(
                    a.as_ref().map(|l| (l.kind, l.value.to_string(), l.token)),
                    b.as_ref().map(|l| (l.kind, l.value.to_string(), l.token))
                );
                if let (Some(a), Some(b)) = (a, b) {
                    let outcome = if step % 4 == 0 {
                        Outcome::Failure { failure: FailureType::Timeout, latency_ms: None }
                    } else {
                        Outcome::Success { latency_ms: Some(50.0) }
                    };
                    whole.report(t, a.kind, &a.value, context, outcome).unwrap();
                    stepped.report(t, b.kind, &b.value, context, outcome).unwrap();
                    whole.release(t, &a).unwrap();
                    stepped.release(t, &b).unwrap();
                }
            }
            assert_eq!(
                stepped.snapshot(now).unwrap(),
                whole.snapshot(now).unwrap(),
                "seed {seed}, afterwards"
            );
            stepped.check_invariants().unwrap();
        }
    }
    // The pools held what a snapshot can hold.
    for field in [
        "\"held\":true",
        "\"until\":",
        "\"permanent\":true",
        "\"group\":",
        "\"maxLeases\":",
        "COOLING",
        "RECOVERING",
    ] {
        assert!(seen.contains(field), "no {field} in the random pools");
    }
}

#[test]
fn an_empty_pool_and_one_without_cells() {
    let mut pool = Pool::with_seed(repute::Config::default(), 1).unwrap();
    let (head, parts) = parts_of(&mut pool, &[], T0);
    let mut built = from_parts(&head, &parts, None, &Floor::default(), 1).unwrap();
    assert_eq!(built.snapshot(T0).unwrap(), pool.snapshot(T0).unwrap());
    let names: Vec<(Kind, String)> = (0..50).map(|i| (Kind::Proxy, format!("p{i}"))).collect();
    for (k, v) in &names {
        pool.register(T0, *k, v).unwrap();
    }
    let (head, parts) = parts_of(&mut pool, &names, T0);
    let mut built = from_parts(&head, &parts, None, &Floor::default(), 1).unwrap();
    assert_eq!(built.snapshot(T0).unwrap(), pool.snapshot(T0).unwrap());
}

fn message(e: Error) -> (String, String) {
    (e.code().to_owned(), e.detail().to_owned())
}

#[test]
fn refuses_what_restore_refuses_with_its_messages() {
    let (mut pool, names) = random_pool(3, 400);
    let now = T0 + 400.0 * 700.0;
    let (head, good) = parts_of(&mut pool, &names, now);
    let joined = |parts: &[String]| {
        let line = |i: usize| {
            parts
                .iter()
                .map(|p| p.split('\n').nth(i).unwrap())
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(",")
        };
        format!("{head},\"registered\":[{}],\"blocklist\":[{}],\"cells\":[{}]}}", line(0), line(1), line(2))
    };
    assert_eq!(
        Pool::restore(&joined(&good), None, Randomness::seeded(1)).unwrap().snapshot(now).unwrap(),
        pool.snapshot(now).unwrap()
    );
    // A cell out of range, a block that ended before takenAt, a bad kind: the same error.
    let with_cells = good.iter().position(|p| !p.ends_with('\n')).unwrap();
    let with_block = good.iter().position(|p| !p.split('\n').nth(1).unwrap().is_empty()).unwrap();
    let mut cases = Vec::new();
    let mut score_out = good.clone();
    score_out[with_cells] = rewrite_score(&good[with_cells], "200");
    cases.push(score_out);
    let mut block_ended = good.clone();
    block_ended[with_block] = rewrite_block(&good[with_block]);
    cases.push(block_ended);
    let mut bad_kind = good.clone();
    bad_kind[0] = good[0].replacen("\"kind\":\"PROXY\"", "\"kind\":\"BOAT\"", 1);
    cases.push(bad_kind);
    for case in cases {
        let whole = Pool::restore(&joined(&case), None, Randomness::seeded(1)).unwrap_err();
        let stepped = from_parts(&head, &case, None, &Floor::default(), 1).unwrap_err();
        assert_eq!(message(stepped), message(whole));
    }
    // The capacity, by an override: refused as the count passes it.
    let small = ConfigPatch::from_json(r#"{"maxResources":10}"#).unwrap();
    let e = from_parts(&head, &good, Some(&small), &Floor::default(), 1).unwrap_err();
    assert_eq!(
        message(e),
        ("CAPACITY_EXCEEDED".into(), "the snapshot holds more than 10 resources; maxResources is 10".into())
    );
    // Another version: the version error first, as restore gives it.
    let v9 = head.replacen("\"version\":3", "\"version\":9", 1).replacen(
        "\"config\":{",
        "\"config\":{\"nope\":1,",
        1,
    );
    let whole = Pool::restore(
        &format!("{v9},\"registered\":[],\"blocklist\":[],\"cells\":[]}}"),
        None,
        Randomness::seeded(1),
    )
    .unwrap_err();
    let stepped = PartsRestore::begin(&v9, None).unwrap_err();
    assert_eq!(message(stepped), message(whole));
    let negative = head.replacen("\"revision\":", "\"revision\":-", 1);
    let whole = Pool::restore(
        &format!("{negative},\"registered\":[],\"blocklist\":[],\"cells\":[]}}"),
        None,
        Randomness::seeded(1),
    )
    .unwrap_err();
    assert_eq!(message(PartsRestore::begin(&negative, None).unwrap_err()), message(whole));
}

/// `part` with its first cell's score set to `score`.
fn rewrite_score(part: &str, score: &str) -> String {
    let at = part.find("\"score\":").unwrap() + "\"score\":".len();
    let end = at + part[at..].find(',').unwrap();
    format!("{}{score}{}", &part[..at], &part[end..])
}

/// `part` with its block made a timed one that ended at 0.
fn rewrite_block(part: &str) -> String {
    let mut lines: Vec<String> = part.split('\n').map(str::to_owned).collect();
    let b = &lines[1];
    let cut = b.find(",\"until\"").or_else(|| b.find(",\"permanent\"")).unwrap();
    lines[1] = format!("{},\"until\":0}}", &b[..cut]);
    lines.join("\n")
}

#[test]
fn refuses_parts_out_of_order_and_then_everything() {
    let (mut pool, names) = random_pool(5, 200);
    let (head, mut parts) = parts_of(&mut pool, &names, T0 + 200.0 * 700.0);
    parts.swap(3, 4);
    let mut session = PartsRestore::begin(&head, None).unwrap();
    for p in &parts[..5] {
        if let Err(e) = session.add(p) {
            assert_eq!(e.code(), "INVALID_SNAPSHOT");
            assert_eq!(e.detail(), "registered[4]: must come after registered[3] (kind, then value bytes)");
            let again = session.add(&parts[5]).unwrap_err();
            assert_eq!(again.code(), "INVALID_ARGUMENT");
            assert!(session.step().is_err(), "a refused session builds nothing more");
            return;
        }
    }
    panic!("the swapped part was taken");
}

#[test]
fn a_second_cell_for_one_resource_and_context_is_refused() {
    let (mut pool, names) = random_pool(2, 300);
    let (head, mut parts) = parts_of(&mut pool, &names, T0 + 300.0 * 700.0);
    let i = parts.iter().position(|p| !p.ends_with('\n')).unwrap();
    let cells = parts[i].split('\n').nth(2).unwrap().to_owned();
    let first = cells.split(",{").next().unwrap().to_owned();
    let lines: Vec<&str> = parts[i].split('\n').collect();
    parts[i] = format!("{}\n{}\n{first},{first}", lines[0], lines[1]);
    let e = from_parts(&head, &parts, None, &Floor::default(), 1).unwrap_err();
    assert_eq!(
        message(e),
        ("INVALID_SNAPSHOT".into(), "cells: a second cell for the same resource and context".into())
    );
}

/// A block that comes in a later batch than its resource (a crafted document may place it
/// so; a host's parts never do): the resource, already in the orders as available, is read
/// again, and the pool is still the one-call restore's. Groups included.
#[test]
fn a_block_after_its_resource_was_added_is_read_again() {
    let now = T0 + 1_000.0;
    let mut pool = Pool::with_seed(repute::Config::default(), 1).unwrap();
    for (v, group) in [("a:1", Some("g")), ("b:1", Some("g")), ("c:1", None), ("d:1", None)] {
        let reg = Registration { group: Some(group), ..Registration::default() };
        pool.register_with(now, Kind::Proxy, v, reg).unwrap();
    }
    pool.block(now, Kind::Proxy, "b:1", BlockSpec::Permanent).unwrap();
    pool.block(now, Kind::Proxy, "c:1", BlockSpec::Seconds(60.0)).unwrap();
    let json = pool.snapshot(now).unwrap();
    let part = |v: &str| pool.snapshot_part(now, Some((Kind::Proxy, v))).unwrap().unwrap();
    let line = |p: &str, i: usize| p.split('\n').nth(i).unwrap().to_owned();
    let [a, b, c, d] = ["a:1", "b:1", "c:1", "d:1"].map(part);
    let head = pool.snapshot_part(now, None).unwrap().unwrap();
    let mut session = PartsRestore::begin(&head, None).unwrap();
    // Batch 1: a and b, no block; batch 2: c and d, with b's block and c's.
    let registered = format!("{},{}", line(&a, 0), line(&b, 0));
    session.add_sections(&registered, "", "").unwrap();
    let registered = format!("{},{}", line(&c, 0), line(&d, 0));
    let blocks = format!("{},{}", line(&b, 1), line(&c, 1));
    session.add_sections(&registered, &blocks, "").unwrap();
    while !session.step().unwrap() {}
    let mut stepped = Pool::from_parts(session, Randomness::seeded(1)).unwrap();
    let mut whole = Pool::restore(&json, None, Randomness::seeded(1)).unwrap();
    stepped.check_invariants().unwrap();
    assert_eq!(stepped.snapshot(now).unwrap(), whole.snapshot(now).unwrap());
    // Only a and d are available; in group g, only a.
    for _ in 0..4 {
        let (x, y) = (whole.acquire(now, "site").unwrap(), stepped.acquire(now, "site").unwrap());
        assert_eq!(x.map(|l| l.value.to_string()), y.map(|l| l.value.to_string()));
    }
    assert_eq!(stepped.stats(now).unwrap().available, whole.stats(now).unwrap().available);
}
