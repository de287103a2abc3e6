//! Restoring a snapshot (version 1, 2 or 3): validate everything, build a complete new state, and
//! only then return it. Any problem is an error naming the JSON path of the offending field; nothing is
//! half-built. A document of another `version` gets its own error before any field complaint.
//! The new state is built through `pool/durable.rs`'s `Builder`, never by setting its fields.
//!
//! Fast on large pools: paths are worked out only for errors (`json_path.rs`, from serde_json's position) and formatted only
//! then, and cells are ordered by
//! integer ranks rather than string comparisons.

use std::rc::Rc;

use super::input::{self, BlockIn, CellIn, Header, Loose, ResourceIn, SnapshotIn};
use super::write::{FORMAT, VERSION};
use crate::cell::{Cell, clamp_score};
use crate::check::{self, MAX_SAFE, int_in};
use crate::config::{Config, ConfigPatch};
use crate::error::{Error, Result};
use crate::json_path::{self, Category, JsonError};
use crate::pool::core::Core;
use crate::pool::durable::{Builder, Counters};
use crate::registry::blocklist::Block;
use crate::sort::sort_ids;
use crate::types::{Kind, Millis, State};
use crate::window::Window;
use rustc_hash::FxHashMap;

pub(super) fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidSnapshot(msg.into())
}

/// The snapshot versions a restore reads. A version 1 document holds none of the keys version
/// 2 added: the config's `minGapMs`, `minGapMsByContext` and `maxCoolingPercent` (checked by
/// `stored_config`), a `registered` entry's `group` and a cell's `held` (checked where those
/// sections are read); its resources have no group and its cells are not held. Neither a
/// version 1 nor a version 2 document holds the key version 3 added, a `registered` entry's
/// `maxLeases`: their resources hold one lease at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    V1,
    V2,
    V3,
}

/// The format and version checks, shared by the lenient header read and the full parse.
fn check_format_version(format: Option<&str>, version: Option<f64>) -> Result<Version> {
    if format != Some(FORMAT) {
        return Err(bad(format!("format: expected \"{FORMAT}\"")));
    }
    match version {
        Some(1.0) => Ok(Version::V1),
        Some(2.0) => Ok(Version::V2),
        Some(v) if v == VERSION as f64 => Ok(Version::V3),
        Some(v) => Err(Error::UnsupportedSnapshotVersion(format!(
            "version {} is not supported (this engine reads versions 1 to {VERSION})",
            crate::json::float_text(v)
        ))),
        None => Err(bad("version: expected an integer")),
    }
}

/// Reads `format` and `version` leniently, so that a document of another version gets the
/// version error rather than complaints about its fields (other keys are skipped, whatever
/// they hold).
fn check_header(json: &str) -> Result<()> {
    let header = serde_json::from_str::<Header>(json).map_err(|e| {
        let e = JsonError::of(json, &e);
        if e.category != Category::Data {
            // Where it broke: the path being read (known keys only) and the position; the
            // message quotes nothing of the text, which may hold credentials.
            let at = json_path::describe_private(json, &e, &input::is_key);
            let (line, column) = e.line_column(json);
            bad(format!("{at} (not valid JSON, at line {line} column {column})"))
        } else if json.bytes().find(|b| !b" \t\n\r".contains(b)) != Some(b'{') {
            bad("the document must be a JSON object")
        } else {
            bad(json_path::describe_private(json, &e, &input::is_key))
        }
    })?;
    let format = match &header.format {
        Some(Loose::Str(s)) => Some(&**s),
        _ => None,
    };
    let version = match header.version {
        Some(Loose::Num(v)) => Some(v),
        _ => None,
    };
    check_format_version(format, version).map(|_| ())
}

/// Parses the document; a failure names the JSON path, unless the document is of another
/// version (then that is the error).
pub(super) fn parse(json: &str) -> Result<SnapshotIn<'_>> {
    SnapshotIn::parse(json).or_else(|e| {
        check_header(json)?;
        Err(bad(json_path::describe_private(json, &e, &input::is_key)))
    })
}

pub(super) fn kind_at(s: &str, path: impl FnOnce() -> String) -> Result<Kind> {
    Kind::parse(s).ok_or_else(|| bad(format!("{}: must be PROXY, ACCOUNT or SESSION", path())))
}

fn instant(path: &str, v: f64) -> Result<Millis> {
    int_in(path, v, 0, MAX_SAFE).map_err(bad)
}

/// Parses and validates a snapshot; returns a complete state or an error, never half of one.
pub fn restore(json: &str, overrides: Option<&ConfigPatch>) -> Result<Core> {
    let snap = parse(json)?;
    let head = HeadFields {
        format: &snap.format,
        version: snap.version,
        revision: snap.revision,
        taken_at: snap.taken_at,
        fencing_high_water: snap.fencing_high_water,
        next_event_seq: snap.next_event_seq,
        config: &snap.config,
    };
    let Start { mut core, stored_cfg, taken_at, version } = start(&head, overrides)?;
    check_capacity(core.config(), &snap)?;
    restore_resources(&mut core, &snap, taken_at, version)?;
    let cells = validate_cells(&core, &snap.cells, 0, taken_at, stored_cfg.window_size as usize, version)?;
    build_cells(&mut core, cells)?;
    Ok(core.finish())
}

/// The fields before `registered`: a whole document's, or a head's (`session.rs`).
pub(super) struct HeadFields<'a> {
    pub format: &'a str,
    pub version: f64,
    pub revision: f64,
    pub taken_at: f64,
    pub fencing_high_water: f64,
    pub next_event_seq: f64,
    pub config: &'a ConfigPatch,
}

/// A restore's start: an empty new state with the head's counters and config (the overrides
/// applied), and what the checks of the sections need.
pub(super) struct Start {
    pub core: Builder,
    pub stored_cfg: Config,
    pub taken_at: Millis,
    pub version: Version,
}

/// Checks the head's fields and makes the empty new state.
pub(super) fn start(head: &HeadFields, overrides: Option<&ConfigPatch>) -> Result<Start> {
    // `version` goes to every section that may hold a key version 2 added: the config here;
    // `restore_resources` (a resource's `group`) and `validate_cells` (a cell's `held`) are to
    // take it when they read those keys, refusing them in a version 1 document.
    let version = check_format_version(Some(head.format), Some(head.version))?;
    let stored_cfg = stored_config(head.config, version)?;
    let cfg = match overrides {
        Some(p) => p.apply(&stored_cfg, "").map_err(Error::InvalidConfig)?,
        None => stored_cfg.clone(),
    };
    let taken_at = instant("takenAt", head.taken_at)?;
    if taken_at > check::MAX_INSTANT {
        return Err(bad("takenAt: must be at most 2^52"));
    }
    let counters = Counters {
        revision: instant("revision", head.revision)?,
        taken_at,
        fencing_high_water: instant("fencingHighWater", head.fencing_high_water)?,
        next_event_seq: int_in("nextEventSeq", head.next_event_seq, 1, MAX_SAFE).map_err(bad)?,
    };
    Ok(Start { core: Builder::new(cfg, counters), stored_cfg, taken_at, version })
}

/// The snapshot's own config: complete for its version (a version 1 config holds none of the
/// version 2 fields, which keep their defaults), every field in range.
fn stored_config(config: &ConfigPatch, version: Version) -> Result<Config> {
    if version == Version::V1
        && let Some(field) = config.first_version_2_field()
    {
        return Err(bad(format!("config.{field}: not part of a version 1 snapshot (version 2 added it)")));
    }
    if let Some(field) = config.first_missing(version >= Version::V2) {
        return Err(bad(format!("config.{field}: missing (a snapshot holds the complete config)")));
    }
    config.apply(&Config::default(), "config.").map_err(bad)
}

fn check_capacity(cfg: &Config, snap: &SnapshotIn) -> Result<()> {
    let (resources, cells) = (snap.registered.len(), snap.cells.len());
    if resources > cfg.max_resources as usize {
        return Err(Error::CapacityExceeded(format!(
            "the snapshot holds {resources} resources; maxResources is {}",
            cfg.max_resources
        )));
    }
    if cells > cfg.max_cells as usize {
        return Err(Error::CapacityExceeded(format!(
            "the snapshot holds {cells} cells; maxCells is {}",
            cfg.max_cells
        )));
    }
    Ok(())
}

/// Registers every resource, applies the blocklist, and builds the resource order.
fn restore_resources(
    core: &mut Builder,
    snap: &SnapshotIn,
    taken_at: Millis,
    version: Version,
) -> Result<()> {
    for (i, r) in snap.registered.iter().enumerate() {
        resource_in(core, i, r, version)?;
    }
    for (i, b) in snap.blocklist.iter().enumerate() {
        block_in(core, i, b, taken_at)?;
    }
    core.resources_done();
    Ok(())
}

/// Checks and stores `registered[i]`; returns its kind and slot.
pub(super) fn resource_in(
    core: &mut Builder,
    i: usize,
    r: &ResourceIn,
    version: Version,
) -> Result<(Kind, u32)> {
    let kind = kind_at(&r.kind, || format!("registered[{i}].kind"))?;
    if let Err(e) = check::value_text("value", &r.value) {
        return Err(bad(format!("registered[{i}].{e}")));
    }
    if core.find(kind, &r.value).is_some() {
        return Err(bad(format!("registered[{i}]: duplicate resource")));
    }
    if let Some(g) = &r.group {
        if version == Version::V1 {
            return Err(bad(format!(
                "registered[{i}].group: not part of a version 1 snapshot (version 2 added it)"
            )));
        }
        if let Err(e) = check::group_text("group", g) {
            return Err(bad(format!("registered[{i}].{e}")));
        }
    }
    let max_leases = match r.max_leases {
        None => 1,
        Some(_) if version < Version::V3 => {
            return Err(bad(format!(
                "registered[{i}].maxLeases: not part of a version {} snapshot (version 3 added it)",
                version as u8 + 1
            )));
        }
        Some(m) => match int_in("maxLeases", m, 2, check::MAX_LEASES.into()) {
            Ok(m) => m as u32,
            Err(_) => {
                return Err(bad(format!(
                    "registered[{i}].maxLeases: must be an integer in 2..={} (1, the default, is left out)",
                    check::MAX_LEASES
                )));
            }
        },
    };
    Ok((kind, core.add_resource(kind, &r.value, r.group.as_deref(), max_leases)))
}

/// Checks `blocklist[i]` and blocks its resource; returns that resource's slot.
pub(super) fn block_in(core: &mut Builder, i: usize, b: &BlockIn, taken_at: Millis) -> Result<u32> {
    let kind = kind_at(&b.kind, || format!("blocklist[{i}].kind"))?;
    let slot = core
        .find(kind, &b.value)
        .ok_or_else(|| bad(format!("blocklist[{i}].value: not a registered resource")))?;
    let block = match (b.until, b.permanent) {
        (Some(u), None) => {
            let until = int_in(&format!("blocklist[{i}].until"), u, 0, check::MAX_END).map_err(bad)?;
            if until <= taken_at {
                return Err(bad(format!("blocklist[{i}].until: must be after takenAt")));
            }
            Block::Until(until)
        }
        (None, Some(true)) => Block::Permanent,
        (_, Some(false)) => {
            return Err(bad(format!("blocklist[{i}].permanent: must be true (or left out, with until)")));
        }
        _ => return Err(bad(format!("blocklist[{i}]: needs exactly one of until or permanent: true"))),
    };
    if !core.block(slot, block) {
        return Err(bad(format!("blocklist[{i}]: duplicate entry")));
    }
    Ok(slot)
}

/// A validated cell: its resource slot, its context's name, the cell.
pub(super) type Placed = (u32, Rc<str>, Cell);

/// Checks `cells`, the entries from `cells[first]` on, against the resources registered.
pub(super) fn validate_cells(
    core: &Builder,
    cells: &[CellIn],
    first: usize,
    taken_at: Millis,
    stored_cap: usize,
    version: Version,
) -> Result<Vec<Placed>> {
    let cap = core.config().window_size as usize;
    let mut names: FxHashMap<&str, Rc<str>> = FxHashMap::default();
    let mut placed: Vec<Placed> = Vec::with_capacity(cells.len());
    for (j, c) in cells.iter().enumerate() {
        let i = first + j;
        let kind = kind_at(&c.kind, || format!("cells[{i}].kind"))?;
        let slot = core
            .find(kind, &c.value)
            .ok_or_else(|| bad(format!("cells[{i}].value: not a registered resource")))?;
        if let Err(e) = check::context_text("context", &c.context) {
            return Err(bad(format!("cells[{i}].{e}")));
        }
        let name = Rc::clone(names.entry(&c.context).or_insert_with(|| Rc::from(&*c.context)));
        let cell = cell_in(c, taken_at, stored_cap, cap, version).map_err(|e| cell_error(i, e))?;
        placed.push((slot, name, cell));
    }
    Ok(placed)
}

/// `cells[i]`'s error of `cell_in`.
fn cell_error(i: usize, (field, msg): (&str, String)) -> Error {
    bad(if field.is_empty() { format!("cells[{i}]: {msg}") } else { format!("cells[{i}].{field}: {msg}") })
}

/// One cell's fields; an error is (field, message), formatted by the caller.
fn cell_in(
    c: &CellIn,
    taken_at: Millis,
    stored_cap: usize,
    cap: usize,
    version: Version,
) -> Result<Cell, (&'static str, String)> {
    let int = |field: &'static str, v: f64, hi: u64| {
        if v.is_finite() && v.fract() == 0.0 && v >= 0.0 && v <= hi as f64 {
            Ok(v as u64)
        } else {
            Err((field, format!("must be an integer in 0..={hi}")))
        }
    };
    if !(c.score.is_finite() && (-100.0..=100.0).contains(&c.score)) {
        return Err(("score", "must be a number in [-100, 100]".into()));
    }
    let cf = int("consecutiveFailures", c.consecutive_failures, u32::MAX.into())? as u32;
    let cs = int("consecutiveSuccesses", c.consecutive_successes, u32::MAX.into())? as u32;
    // A cell is created by a report and every report ends one streak and extends the other:
    // exactly one counter is non-zero, and the newest outcome in the window is of its kind.
    // Except after a suppressed cooldown (SPEC §3, cooling cap): the failure sets
    // `consecutiveFailures` back to its value before, 0 with `coolAfter` 1, so a held cell
    // may have both at 0, its newest outcome being that failure.
    let suppressed = cf == 0 && cs == 0 && c.held == Some(true);
    if (cf > 0) == (cs > 0) && !suppressed {
        return Err((
            "",
            "exactly one of consecutiveFailures and consecutiveSuccesses must be non-zero".into(),
        ));
    }
    if c.window.newest().is_none_or(|o| o.failure().is_some() != (cf > 0 || suppressed)) {
        return Err(("window", "must end with an outcome of the cell's streak".into()));
    }
    let state =
        State::parse(&c.state).ok_or(("state", "must be HEALTHY, COOLING or RECOVERING".to_owned()))?;
    let until = c.cooldown_until.map(|u| int("cooldownUntil", u, check::MAX_END)).transpose()?;
    let cause = c.cooldown_cause.as_ref().map(|c| c.0);
    if until.is_some() != cause.is_some() {
        return Err(("", "cooldownUntil and cooldownCause must both be set or both null".into()));
    }
    let updated_at = int("updatedAt", c.updated_at, MAX_SAFE)?;
    if updated_at > taken_at {
        return Err(("updatedAt", "must not be after takenAt".into()));
    }
    // States the rules can reach (SPEC §3): COOLING has a cooldown; RECOVERING began with a
    // success at or after its cooldown's end; HEALTHY keeps the last cooldown, which ended
    // before the success that made it healthy.
    match (state, until) {
        (State::Cooling, None) => {
            return Err(("", "a COOLING cell needs cooldownUntil and cooldownCause".into()));
        }
        (State::Recovering, None) => {
            return Err((
                "",
                "a RECOVERING cell needs the cooldownUntil and cooldownCause it recovers from".into(),
            ));
        }
        (State::Recovering | State::Healthy, Some(u)) if u > updated_at => {
            return Err((
                "cooldownUntil",
                format!("a {} cell's cooldown must have ended by updatedAt", c.state),
            ));
        }
        _ => {}
    }
    let held = match c.held {
        None => false,
        Some(_) if version == Version::V1 => {
            return Err(("held", "not part of a version 1 snapshot (version 2 added it)".into()));
        }
        Some(false) => return Err(("held", "must be true (or left out)".into())),
        Some(true) => true,
    };
    if held && state == State::Cooling && until.is_some_and(|u| u > taken_at) {
        return Err(("held", "a cell in a running cooldown is not held (it really cooled)".into()));
    }
    if c.window.len > stored_cap {
        return Err(("window", format!("holds more than windowSize = {stored_cap} outcomes")));
    }
    let window = Window::from_oldest_first(c.window.iter(), c.window.len, cap);
    Ok(Cell {
        score: clamp_score(c.score),
        consecutive_failures: cf,
        consecutive_successes: cs,
        state,
        cooldown_until: until,
        cooldown_cause: cause,
        updated_at,
        window,
        held,
    })
}

/// `order` reordered stably by `rank[i]` (each below `ranks`): a counting sort.
fn by_rank(order: &[u32], rank: &[u32], ranks: usize) -> Vec<u32> {
    let mut next = vec![0usize; ranks + 1];
    for &i in order {
        next[rank[i as usize] as usize + 1] += 1;
    }
    for r in 1..=ranks {
        next[r] += next[r - 1];
    }
    let mut out = vec![0u32; order.len()];
    for &i in order {
        let r = rank[i as usize] as usize;
        out[next[r]] = i;
        next[r] += 1;
    }
    out
}

/// Stores validated cells, creates their contexts and builds every index. Rejects a second
/// cell for one resource in one context.
fn build_cells(core: &mut Builder, placed: Vec<Placed>) -> Result<()> {
    // Canonical order by integer ranks: contexts by name bytes, resources by their order.
    // (Equal names share one `Rc`: `validate_cells` interns them.)
    let mut name_index: FxHashMap<*const u8, u32> = FxHashMap::default();
    let mut names: Vec<&str> = Vec::new();
    for p in &placed {
        name_index.entry(p.1.as_ptr()).or_insert_with(|| {
            names.push(&p.1);
            names.len() as u32 - 1
        });
    }
    let mut by_name: Vec<u32> = (0..names.len() as u32).collect();
    sort_ids(&mut by_name, &|a, b| names[a as usize].as_bytes().cmp(names[b as usize].as_bytes()));
    let mut name_rank = vec![0u32; names.len()];
    for (rank, &i) in by_name.iter().enumerate() {
        name_rank[i as usize] = rank as u32;
    }
    let res_rank = core.resource_ranks();
    // The placed cells by context rank, then resource rank: two counting sorts, O(cells +
    // resources + contexts), with no comparison sort of a type of its own in the module.
    let ctx_of: Vec<u32> = placed.iter().map(|p| name_rank[name_index[&p.1.as_ptr()] as usize]).collect();
    let res_of: Vec<u32> = placed.iter().map(|p| res_rank[p.0 as usize]).collect();
    let all: Vec<u32> = (0..placed.len() as u32).collect();
    let order = by_rank(&by_rank(&all, &res_of, res_rank.len()), &ctx_of, names.len());
    let key = |i: u32| (ctx_of[i as usize], res_of[i as usize]);
    if order.windows(2).any(|w| key(w[0]) == key(w[1])) {
        return Err(bad("cells: a second cell for the same resource and context"));
    }
    core.reserve_cells(placed.len());
    let mut placed: Vec<Option<Placed>> = placed.into_iter().map(Some).collect();
    let mut start = 0;
    while start < order.len() {
        let rank = ctx_of[order[start] as usize];
        let end = start + order[start..].iter().take_while(|&&i| ctx_of[i as usize] == rank).count();
        let name = Rc::clone(&placed[order[start] as usize].as_ref().expect("placed once").1);
        let cells = order[start..end].iter().map(|&i| {
            let (slot, _, cell) = placed[i as usize].take().expect("placed once");
            (slot, cell)
        });
        core.add_context(name, cells);
        start = end;
    }
    Ok(())
}
