//! Golden scenarios: runs every `tests/scenarios/*.json` against the native engine.
//!
//! The files are written against the JS API of SPEC §9 (camelCase calls, JSON arguments) so
//! that the Node and headless-Chromium runners can replay them unchanged; `README.md` beside
//! them defines the format. This runner maps each call onto `repute::Pool`, renders results
//! and drained events with the engine's canonical writers (`repute::json`), compares them as
//! parsed JSON values, and compares the final snapshot byte for byte.
//!
//! `REPUTE_BLESS=1 cargo test --test scenarios` rewrites every expected value from the actual
//! run (authoring aid only: blessed output must be reviewed by hand).
//!
//! Version 3: `register`'s `{maxLeases}` and the `finish` call (`[lease, outcome, {next?:
//! {context?, groups?}}]`, answering the next lease or `null`).
//!
//! Version 2 options: `register`'s third argument `{group}`, `acquire`'s and `nextChangeAt`'s
//! second `{groups}`, `resources`' `group` filter. The fields version 2 added to what the
//! engine hands out (a lease's, a view's and a probe entry's `group`, a cell's `pacedUntil` and
//! `held`, an event's `group`) are compared too: where the canonical writers do not write one
//! yet, this runner adds it from the typed value; where they do, the two must agree.

mod common;

use common::{ClockedPool, ManualClock};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::path::Path;
use std::rc::Rc;

use repute::wasm::views_json;
use repute::wasm::views_value::StatsV;
use repute::{
    BlockSpec, CellView, Config, ConfigPatch, Error, FailureType, Filter, Kind, Lease, Next, Outcome,
    PoolEvent, ProbeDue, Randomness, Registration, ResourceView, ViewState,
};
use serde_json::{Map, Value};

/// Scenario files that are correct but that the engine currently fails: `(file, reason)`.
/// Each is run and must still fail; once the engine is fixed, remove its entry.
const KNOWN_ENGINE_BUGS: &[(&str, &str)] = &[];

/// The calls a step may make: the JS API's method names, plus `restore`.
const CALLS: &str = "register deregister acquire acquireResource report renew release block unblock \
    resources dueForRecoveryProbe nextChangeAt stats finish restore";

#[test]
fn golden_scenarios() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let bless = std::env::var("REPUTE_BLESS").is_ok_and(|v| v == "1");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/scenarios exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no scenario files in {}", dir.display());
    let mut failures = Vec::new();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let known = KNOWN_ENGINE_BUGS.iter().find(|(f, _)| *f == name);
        let text = std::fs::read_to_string(&path).expect("readable scenario");
        match (run(&text, bless && known.is_none()), known) {
            (Ok(Some(blessed)), None) => std::fs::write(&path, blessed).expect("writable"),
            (Ok(_), None) | (Err(_), Some(_)) => {}
            (Err(e), None) => failures.push(format!("{name}: {e}")),
            (Ok(_), Some((_, why))) => {
                failures.push(format!("{name} passes now: remove it from KNOWN_ENGINE_BUGS ({why})"))
            }
        }
    }
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n\n"));
}

/// The host side of a scenario: the clock every call reads and the random source.
struct Host {
    clock: ManualClock,
    seed: Option<u64>,
    draws: Rc<RefCell<VecDeque<f64>>>,
    ran_out: Rc<Cell<bool>>,
    patch: Option<ConfigPatch>,
}

impl Host {
    /// A fresh random source: the seeded PRNG from its start, or the shared list of draws.
    fn random(&self) -> Randomness {
        if let Some(seed) = self.seed {
            return Randomness::seeded(seed);
        }
        let (draws, ran_out) = (Rc::clone(&self.draws), Rc::clone(&self.ran_out));
        Randomness::host(move || {
            draws.borrow_mut().pop_front().unwrap_or_else(|| {
                ran_out.set(true);
                f64::NAN // fails the call; reported as "ran out of draws"
            })
        })
    }
}

/// Runs one scenario. `Ok(Some(text))` is the blessed file (bless mode only).
fn run(text: &str, bless: bool) -> Result<Option<String>, String> {
    let mut sc: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let patch = match sc.get("config") {
        Some(c) => Some(ConfigPatch::from_json(&c.to_string()).map_err(|e| e.to_string())?),
        None => None,
    };
    let config = Config::from_patch(&patch.clone().unwrap_or_default()).map_err(|e| e.to_string())?;
    let draws = match (sc.get("seed"), sc.get("draws")) {
        (Some(_), None) => VecDeque::new(),
        (None, Some(Value::Array(d))) => {
            d.iter().map(|u| u.as_f64().ok_or("bad draw")).collect::<Result<_, _>>()?
        }
        _ => return Err("give exactly one of `seed` and `draws`".into()),
    };
    let host = Host {
        clock: ManualClock::new(0.0),
        seed: sc.get("seed").map(|s| s.as_u64().ok_or("seed must be an integer")).transpose()?,
        draws: Rc::new(RefCell::new(draws)),
        ran_out: Rc::new(Cell::new(false)),
        patch,
    };
    let first_at = sc.pointer("/steps/0/at").and_then(Value::as_f64);
    let mut pool = match sc.get("from") {
        None => ClockedPool::new(config, host.clock.clone(), host.random()).unwrap(),
        // The pool starts as a restore of `from` (a stored snapshot, of any version), with the
        // same options; the clock reads the first step's `at`.
        Some(from) => {
            let from = from.as_str().ok_or("`from` must be a snapshot string")?;
            host.clock.set(first_at.ok_or("`from` needs a first step with a numeric `at`")?);
            ClockedPool::restore(from, host.patch.as_ref(), host.clock.clone(), host.random())
                .map_err(|e| format!("`from` does not restore: {e}"))?
        }
    };
    let steps = sc.get_mut("steps").and_then(Value::as_array_mut).ok_or("no `steps` array")?;
    for (i, step) in steps.iter_mut().enumerate() {
        let call = step.get("call").and_then(Value::as_str).unwrap_or_default().to_owned();
        let at = step.get("at").and_then(Value::as_f64);
        let where_ = format!("steps[{i}] ({call} at {})", at.unwrap_or(f64::NAN));
        if !CALLS.split_whitespace().any(|c| c == call) || at.is_none() {
            return Err(format!("{where_}: needs a known `call` and a numeric `at`"));
        }
        host.clock.set(at.unwrap_or_default());
        let no_args = Vec::new();
        let args = step.get("args").and_then(Value::as_array).unwrap_or(&no_args);
        let got = perform(&mut pool, &host, &call, args).map_err(|e| format!("{where_}: {e}"))?;
        if host.ran_out.get() {
            return Err(format!("{where_}: ran out of draws"));
        }
        if bless {
            got.write_into(step);
        } else {
            got.check(step).map_err(|e| format!("{where_}: {e}"))?;
        }
    }
    let left = host.draws.borrow().len();
    if left > 0 {
        return Err(format!("{left} draw(s) left unused"));
    }
    let snapshot = pool.snapshot().map_err(|e| e.to_string())?;
    if bless {
        sc["snapshot"] = Value::String(snapshot);
        return Ok(Some(layout(&sc)));
    }
    match sc.get("snapshot").and_then(Value::as_str) {
        Some(want) if want == snapshot => Ok(None),
        Some(want) => Err(format!("final snapshot differs:\n  want {want}\n  got  {snapshot}")),
        None => Err(format!("no `snapshot` (bless to fill it in); got {snapshot}")),
    }
}

/// Makes a step's call and drains the events it caused. `restore` takes the snapshot, drains
/// the old pool, and continues on `Pool.restore(snapshot, options)` with the same options.
fn perform(pool: &mut ClockedPool, host: &Host, call: &str, args: &[Value]) -> Result<Actual, Error> {
    if call != "restore" {
        let result = invoke(pool, call, args).map(Some);
        return Ok(Actual { result, events: drained(pool)? });
    }
    let snapshot = pool.snapshot()?;
    let events = drained(pool)?;
    let (patch, clock) = (host.patch.as_ref(), host.clock.clone());
    let result = ClockedPool::restore(&snapshot, patch, clock, host.random()).map(|restored| {
        *pool = restored;
        None
    });
    Ok(Actual { result, events })
}

fn drained(pool: &mut ClockedPool) -> Result<Value, Error> {
    let events = pool.drain_events()?;
    let mut v = parse(&views_json::events(&events));
    for (out, e) in v.as_array_mut().expect("an array").iter_mut().zip(&events) {
        event_v2(out, e);
    }
    Ok(v)
}

// ---------------------------------------------------------------------------------------------
// Version 2 fields: added from the typed values where the canonical writer has none.

/// Sets `key` on object `o`, or checks that the writer's value equals it.
fn put(o: &mut Value, key: &str, v: Value) {
    let o = o.as_object_mut().expect("an object");
    match o.get(key) {
        Some(w) => assert!(same(w, &v), "the writer's {key} is {w}, the typed value {v}"),
        None => drop(o.insert(key.to_owned(), v)),
    }
}

fn name(g: Option<&Rc<str>>) -> Value {
    g.map_or(Value::Null, |g| Value::from(&**g))
}

fn event_v2(out: &mut Value, e: &PoolEvent) {
    if let Some(g) = &e.group {
        put(out, "group", name(g.as_ref()));
    }
}

fn lease_v2(out: &mut Value, l: &Lease) {
    put(out, "group", name(l.group.as_ref()));
}

fn cell_v2(out: &mut Value, c: &CellView) {
    put(out, "pacedUntil", c.paced_until.map_or(Value::Null, Value::from));
    put(out, "held", Value::Bool(c.held));
}

fn view_v2(out: &mut Value, r: &ResourceView) {
    put(out, "group", name(r.group.as_ref()));
    if let Some(l) = &r.lease {
        lease_v2(&mut out["lease"], l);
    }
    for (o, c) in out["cells"].as_array_mut().expect("cells").iter_mut().zip(&r.cells) {
        cell_v2(o, c);
    }
}

fn probe_v2(out: &mut Value, p: &ProbeDue) {
    put(out, "group", name(p.group.as_ref()));
}

/// Renders `items` with the canonical `writer`, then adds the version 2 fields with `v2`.
fn render<T>(items: &[T], writer: impl Fn(&[T]) -> String, v2: impl Fn(&mut Value, &T)) -> String {
    let mut v = parse(&writer(items));
    for (o, item) in v.as_array_mut().expect("an array").iter_mut().zip(items) {
        v2(o, item);
    }
    v.to_string()
}

/// What a step did: its result (`None` for restore) or error, and the drained events.
struct Actual {
    result: Result<Option<String>, Error>,
    events: Value,
}

impl Actual {
    fn check(&self, step: &Value) -> Result<(), String> {
        let want_events = match (step.get("events"), step.get("error")) {
            (Some(e), _) => e.clone(),
            (None, Some(_)) => Value::Array(Vec::new()), // a failed call changes nothing
            (None, None) => return Err("`events` missing".into()),
        };
        match (&self.result, step.get("error"), step.get("result")) {
            (Err(e), Some(code), _) if code == e.code() => {}
            (Err(e), Some(code), _) => return Err(format!("expected error {code}, got {e}")),
            (Err(e), None, _) => return Err(format!("failed with {e}")),
            (Ok(_), Some(code), _) => {
                return Err(format!("expected error {code}, but it succeeded"));
            }
            (Ok(None), None, None) => {}
            (Ok(Some(got)), None, Some(want)) if same(&parse(got), want) => {}
            (Ok(got), None, want) => {
                let want = want.map_or("nothing".into(), compact);
                let got = got.as_deref().map_or("nothing".into(), |g| compact(&parse(g)));
                return Err(format!("result differs:\n  want {want}\n  got  {got}"));
            }
        }
        if !same(&self.events, &want_events) {
            let (want, got) = (compact(&want_events), compact(&self.events));
            return Err(format!("events differ:\n  want {want}\n  got  {got}"));
        }
        Ok(())
    }

    fn write_into(self, step: &mut Value) {
        let step = step.as_object_mut().expect("step object");
        for key in ["result", "error", "events"] {
            step.remove(key);
        }
        match self.result {
            Err(e) => drop(step.insert("error".into(), e.code().into())),
            Ok(result) => {
                if let Some(r) = result {
                    step.insert("result".into(), parse(&r));
                }
                step.insert("events".into(), self.events);
            }
        }
    }
}

fn parse(json: &str) -> Value {
    serde_json::from_str(json).expect("the engine writes valid JSON")
}

/// Equal as JSON values, numbers compared numerically (`1` equals `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

// ---------------------------------------------------------------------------------------------
// Calls: JSON arguments as the JS API takes them, mapped onto `Pool`.

/// Makes the call and renders its result as the engine's canonical JSON.
fn invoke(pool: &mut ClockedPool, call: &str, args: &[Value]) -> Result<String, Error> {
    let a = Args(args);
    let boolean = |b: bool| b.to_string();
    let lease = |l: Option<Lease>| {
        l.map_or("null".into(), |l| {
            let mut out = String::new();
            views_json::write_lease(&mut out, &l);
            let mut v = parse(&out);
            lease_v2(&mut v, &l);
            v.to_string()
        })
    };
    Ok(match call {
        "register" => {
            let options = Registration { group: a.group_key(2)?, max_leases: a.max_leases(2)? };
            boolean(pool.register_with(a.kind(0)?, a.text(1)?, options)?)
        }
        "deregister" => boolean(pool.deregister(a.kind(0)?, a.text(1)?)?),
        "acquire" => match a.groups(1)? {
            None => lease(pool.acquire(a.text(0)?)?),
            Some(groups) => {
                lease(pool.acquire_in(a.text(0)?, &groups.iter().map(Option::as_deref).collect::<Vec<_>>())?)
            }
        },
        "acquireResource" => lease(pool.acquire_resource(a.kind(0)?, a.text(1)?, a.text(2)?)?),
        "report" => {
            pool.report(a.kind(0)?, a.text(1)?, a.text(2)?, a.outcome(3)?)?;
            "null".into()
        }
        "renew" => lease(pool.renew(&a.lease(0)?)?),
        "release" => boolean(pool.release(&a.lease(0)?)?),
        "block" => {
            pool.block(a.kind(0)?, a.text(1)?, a.block(2)?)?;
            "null".into()
        }
        "unblock" => boolean(pool.unblock(a.kind(0)?, a.text(1)?)?),
        "resources" => render(&pool.resources(&a.filter(0)?)?, views_json::resources, view_v2),
        "dueForRecoveryProbe" => render(&pool.due_for_recovery_probe()?, views_json::probe_due, probe_v2),
        "nextChangeAt" => {
            let at = match a.groups(1)? {
                None => pool.next_change_at(a.text(0)?)?,
                Some(groups) => pool.next_change_at_in(
                    a.text(0)?,
                    &groups.iter().map(Option::as_deref).collect::<Vec<_>>(),
                )?,
            };
            at.map_or("null".into(), |t| t.to_string())
        }
        "stats" => serde_json::to_string(&StatsV(&pool.stats()?)).expect("stats serialize"),
        "finish" => {
            let (context, groups) = a.next(2)?;
            let groups: Option<Vec<Option<&str>>> =
                groups.as_ref().map(|gs| gs.iter().map(Option::as_deref).collect());
            let next = context.map(|context| Next { context, groups: groups.as_deref(), quiet: false });
            lease(pool.finish(&a.lease(0)?, a.outcome(1)?, next.as_ref())?)
        }
        other => unreachable!("call {other} is checked against CALLS"),
    })
}

/// Positional JSON arguments; a missing or mistyped one is `INVALID_ARGUMENT`, as in JS.
struct Args<'a>(&'a [Value]);

fn bad(i: usize, what: &str) -> Error {
    Error::InvalidArgument(format!("argument {i}: expected {what}"))
}

impl Args<'_> {
    fn text(&self, i: usize) -> Result<&str, Error> {
        self.0.get(i).and_then(Value::as_str).ok_or_else(|| bad(i, "a string"))
    }

    fn kind(&self, i: usize) -> Result<Kind, Error> {
        Kind::parse(self.text(i)?).ok_or_else(|| bad(i, "PROXY, ACCOUNT or SESSION"))
    }

    fn object(&self, i: usize) -> Result<&Map<String, Value>, Error> {
        self.0.get(i).and_then(Value::as_object).ok_or_else(|| bad(i, "an object"))
    }

    /// `{ok: true, latencyMs?}` or `{ok: false, failure, latencyMs?}`.
    fn outcome(&self, i: usize) -> Result<Outcome, Error> {
        let o = self.object(i)?;
        let latency_ms = match o.get("latencyMs") {
            None => None,
            Some(v) => Some(v.as_f64().ok_or_else(|| bad(i, "a numeric latencyMs"))?),
        };
        match o.get("ok").and_then(Value::as_bool) {
            Some(true) => Ok(Outcome::Success { latency_ms }),
            Some(false) => {
                let failure = o.get("failure").and_then(Value::as_str).and_then(FailureType::parse);
                let failure = failure.ok_or_else(|| bad(i, "a known failure type"))?;
                Ok(Outcome::Failure { failure, latency_ms })
            }
            None => Err(bad(i, "an outcome with a boolean `ok`")),
        }
    }

    /// A lease object as `acquire` returned it.
    fn lease(&self, i: usize) -> Result<Lease, Error> {
        let o = self.object(i)?;
        let text = |k: &str| o.get(k).and_then(Value::as_str).ok_or_else(|| bad(i, k));
        let int = |k: &str| o.get(k).and_then(Value::as_u64).ok_or_else(|| bad(i, k));
        Ok(Lease {
            id: None,
            kind: Kind::parse(text("kind")?).ok_or_else(|| bad(i, "a lease kind"))?,
            value: Rc::from(text("value")?),
            group: o.get("group").and_then(Value::as_str).map(Rc::from),
            context: Rc::from(text("context")?),
            token: int("token")?,
            leased_at: int("leasedAt")?,
            expires_at: int("expiresAt")?,
        })
    }

    /// `{seconds: n}` or `{permanent: true}`.
    fn block(&self, i: usize) -> Result<BlockSpec, Error> {
        let o = self.object(i)?;
        match (o.get("seconds").and_then(Value::as_f64), o.get("permanent")) {
            (Some(s), None) => Ok(BlockSpec::Seconds(s)),
            (None, Some(Value::Bool(true))) => Ok(BlockSpec::Permanent),
            _ => Err(bad(i, "{seconds: n} or {permanent: true}")),
        }
    }

    /// Optional `{context?, state?, group?}` (`group`: a name or `null`).
    fn filter(&self, i: usize) -> Result<Filter, Error> {
        if self.0.get(i).is_none() {
            return Ok(Filter::default());
        }
        let o = self.object(i)?;
        let text = |k: &str| o.get(k).map(|v| v.as_str().ok_or_else(|| bad(i, k))).transpose();
        let state =
            text("state")?.map(|s| ViewState::parse(s).ok_or_else(|| bad(i, "a known state"))).transpose()?;
        let group = match o.get("group") {
            None => None,
            Some(Value::Null) => Some(None),
            Some(Value::String(g)) => Some(Some(g.clone())),
            Some(_) => return Err(bad(i, "a group name or null")),
        };
        Ok(Filter { context: text("context")?.map(str::to_owned), state, group })
    }

    /// An optional options object, which must be a plain object when given.
    fn options(&self, i: usize) -> Result<Option<&Map<String, Value>>, Error> {
        match self.0.get(i) {
            None => Ok(None),
            Some(_) => self.object(i).map(Some),
        }
    }

    /// `register`'s `{group}`: `None` when the key (or the whole argument) is absent,
    /// `Some(None)` for `null`.
    fn group_key(&self, i: usize) -> Result<Option<Option<&str>>, Error> {
        match self.options(i)?.and_then(|o| o.get("group")) {
            None => Ok(None),
            Some(Value::Null) => Ok(Some(None)),
            Some(Value::String(g)) => Ok(Some(Some(g))),
            Some(_) => Err(bad(i, "a group name or null")),
        }
    }

    /// `register`'s `{maxLeases}`: `None` when the key (or the whole argument) is absent.
    fn max_leases(&self, i: usize) -> Result<Option<u32>, Error> {
        match self.options(i)?.and_then(|o| o.get("maxLeases")) {
            None => Ok(None),
            Some(v) => {
                let m = v.as_u64().ok_or_else(|| bad(i, "maxLeases: an integer"))?;
                Ok(Some(u32::try_from(m).unwrap_or(u32::MAX)))
            }
        }
    }

    /// `finish`'s `{next?: {context?, groups?}}`: `None` without `next`, else its context
    /// (`Some(None)`: the lease's own) and groups.
    #[allow(clippy::type_complexity)]
    fn next(&self, i: usize) -> Result<(Option<Option<&str>>, Option<Vec<Option<String>>>), Error> {
        let Some(next) = self.options(i)?.and_then(|o| o.get("next")) else {
            return Ok((None, None));
        };
        let o = next.as_object().ok_or_else(|| bad(i, "next: an object"))?;
        if let Some(k) = o.keys().find(|k| *k != "context" && *k != "groups") {
            return Err(bad(i, &format!("next with context and groups only, not {k}")));
        }
        let context = match o.get("context") {
            None => None,
            Some(v) => Some(v.as_str().ok_or_else(|| bad(i, "next.context: a string"))?),
        };
        let groups = match o.get("groups") {
            None => None,
            Some(list) => {
                let list = list.as_array().ok_or_else(|| bad(i, "next.groups: an array"))?;
                let entry = |v: &Value| match v {
                    Value::Null => Ok(None),
                    Value::String(g) => Ok(Some(g.clone())),
                    _ => Err(bad(i, "next.groups: names or null")),
                };
                Some(list.iter().map(entry).collect::<Result<Vec<_>, _>>()?)
            }
        };
        Ok((Some(context), groups))
    }

    /// `acquire`'s and `nextChangeAt`'s `{groups}`: `None` when absent; entries are names or
    /// `null`.
    fn groups(&self, i: usize) -> Result<Option<Vec<Option<String>>>, Error> {
        let Some(list) = self.options(i)?.and_then(|o| o.get("groups")) else {
            return Ok(None);
        };
        let list = list.as_array().ok_or_else(|| bad(i, "groups: an array"))?;
        let entry = |v: &Value| match v {
            Value::Null => Ok(None),
            Value::String(g) => Ok(Some(g.clone())),
            _ => Err(bad(i, "groups: names or null")),
        };
        list.iter().map(entry).collect::<Result<Vec<_>, _>>().map(Some)
    }
}

// ---------------------------------------------------------------------------------------------
// Blessing: writes a scenario back in the layout of the hand-written files.

/// Key order for objects in blessed files (keys not listed follow in alphabetical order).
const KEY_ORDER: &str = "name description config seed draws from steps snapshot \
    seq type at call args result error events \
    kind value group groups context state cause until permanent token leasedAt expiresAt ok failure \
    latencyMs seconds blocked lease cells score consecutiveFailures consecutiveSuccesses \
    cooldownUntil cooldownCause updatedAt pacedUntil held p50LatencyMs p95LatencyMs \
    coolAfter recoverAfter successReward penalties cooldownBaseMs maxBackoffExponent \
    explorationFloor leaseTtlMs windowSize halfOpenCauses maxResources maxCells eventBufferSize \
    minGapMs minGapMsByContext maxCoolingPercent \
    BLOCKED TLS_HANDSHAKE CONNECTION_RESET TIMEOUT SLOW";

/// `stats()` puts `cells` before `blocked`, unlike a resource view: it gets its own order.
const STATS_ORDER: &str = "registered cells contexts leased blocked available revision \
    fencingHighWater nextEventSeq eventsPending eventsDropped now";

fn ordered(o: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let order = if o.contains_key("fencingHighWater") { STATS_ORDER } else { KEY_ORDER };
    let rank = |k: &str| order.split_whitespace().position(|x| x == k).unwrap_or(usize::MAX);
    let mut entries: Vec<_> = o.iter().collect();
    entries.sort_by(|a, b| (rank(a.0), a.0).cmp(&(rank(b.0), b.0)));
    entries
}

/// One-line JSON with `", "` and `": "` separators.
fn compact(v: &Value) -> String {
    match v {
        Value::Array(items) => format!("[{}]", items.iter().map(compact).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => {
            let fields: Vec<String> = ordered(o)
                .into_iter()
                .map(|(k, v)| format!("{}: {}", Value::from(k.as_str()), compact(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        leaf => leaf.to_string(),
    }
}

/// A non-empty array with one element per line, or `compact`.
fn block(v: &Value, indent: &str) -> String {
    match v {
        Value::Array(items) if !items.is_empty() => {
            let lines: Vec<String> = items.iter().map(|e| format!("\n{indent}{}", compact(e))).collect();
            format!("[{}]", lines.join(","))
        }
        other => compact(other),
    }
}

/// The file layout: top-level keys one per line, one step per line, and events (and array
/// results) one per line under their step.
fn layout(sc: &Value) -> String {
    let mut out = String::from("{\n");
    let top = ordered(sc.as_object().expect("scenario object"));
    for (n, (key, v)) in top.iter().enumerate() {
        out.push_str(&format!("  {}: ", Value::from(key.as_str())));
        if *key == "steps" {
            let steps: Vec<String> = v.as_array().unwrap().iter().map(step_line).collect();
            out.push_str(&format!("[\n{}\n  ]", steps.join(",\n")));
        } else {
            out.push_str(&compact(v));
        }
        out.push_str(if n + 1 < top.len() { ",\n" } else { "\n}\n" });
    }
    out
}

fn step_line(step: &Value) -> String {
    let fields: Vec<String> = ordered(step.as_object().expect("step object"))
        .into_iter()
        .map(|(k, v)| {
            let v = if k == "events" || k == "result" { block(v, "      ") } else { compact(v) };
            format!("{}: {v}", Value::from(k.as_str()))
        })
        .collect();
    format!("    {{{}}}", fields.join(", "))
}
