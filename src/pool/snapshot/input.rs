//! The shape of a snapshot as parsed: its sections read by `json_read.rs` with unknown-field
//! and duplicate-key detection, strings borrowed from the input, and windows read straight into
//! `Window`s (no per-cell allocation; each outcome checked as it is read).
//!
//! Semantic checks that need more than one field (ranges, references between sections) are
//! `restore.rs`'s.

use std::borrow::Cow;

use crate::config::{self, ConfigPatch};
use crate::json_read::{JsonError, Read, Reader};
use crate::types::FailureType;
use crate::window::Observation;

/// Whether `k` is a key of the format: a field any of the snapshot's readers (the config's
/// included) takes. These are the names an error message may quote
/// (`json_path::describe_private`); any other key in a document is text from the file, which
/// may be a fragment of a resource value.
pub fn is_key(k: &str) -> bool {
    [SNAPSHOT_FIELDS, RESOURCE_FIELDS, BLOCK_FIELDS, CELL_FIELDS, config::FIELDS, config::FAILURE_FIELDS]
        .iter()
        .any(|names| names.contains(&k))
}

pub struct SnapshotIn<'a> {
    pub format: Cow<'a, str>,
    pub version: f64,
    pub revision: f64,
    pub taken_at: f64,
    pub fencing_high_water: f64,
    pub next_event_seq: f64,
    pub config: ConfigPatch,
    pub registered: Vec<ResourceIn<'a>>,
    pub blocklist: Vec<BlockIn<'a>>,
    pub cells: Vec<CellIn<'a>>,
}

pub struct ResourceIn<'a> {
    pub kind: Cow<'a, str>,
    pub value: Cow<'a, str>,
    /// Version 2: the resource's group; left out when it has none (`null` is refused).
    pub group: Option<Cow<'a, str>>,
    /// Version 3: how many leases it may hold at once; left out when 1.
    pub max_leases: Option<f64>,
}

pub struct BlockIn<'a> {
    pub kind: Cow<'a, str>,
    pub value: Cow<'a, str>,
    /// Left out, or present with a value: `null` is refused (a permanent block has no
    /// `until` key at all).
    pub until: Option<f64>,
    pub permanent: Option<bool>,
}

pub struct CellIn<'a> {
    pub kind: Cow<'a, str>,
    pub value: Cow<'a, str>,
    pub context: Cow<'a, str>,
    /// Read exactly (`json_number.rs`).
    pub score: f64,
    pub consecutive_failures: f64,
    pub consecutive_successes: f64,
    pub state: Cow<'a, str>,
    /// Both keys are required, `null` when the cell never cooled.
    pub cooldown_until: Option<f64>,
    pub cooldown_cause: Option<CauseIn>,
    pub updated_at: f64,
    pub window: WindowIn,
    /// Version 2: `true` while the cell is held; left out otherwise.
    pub held: Option<bool>,
}

/// The first field of `names` whose slot is empty, as a "missing field" error (required
/// fields are checked in their declared order, after the object's closing brace).
fn require(r: &Reader, names: &[&str], present: &[bool]) -> Read<()> {
    match present.iter().position(|p| !p) {
        Some(i) => Err(r.missing(names[i])),
        None => Ok(()),
    }
}

const SNAPSHOT_FIELDS: &[&str] = &[
    "format",
    "version",
    "revision",
    "takenAt",
    "fencingHighWater",
    "nextEventSeq",
    "config",
    "registered",
    "blocklist",
    "cells",
];

impl<'a> SnapshotIn<'a> {
    /// Parses a whole document.
    pub fn parse(json: &'a str) -> Result<SnapshotIn<'a>, JsonError> {
        let mut r = Reader::new(json);
        let snap = SnapshotIn::read(&mut r)?;
        r.end()?;
        Ok(snap)
    }

    fn read(r: &mut Reader<'a>) -> Read<SnapshotIn<'a>> {
        let mut format = None;
        let mut numbers = [None; 5];
        let mut config = None;
        let mut registered = None;
        let mut blocklist = None;
        let mut cells = None;
        r.fields("struct SnapshotIn", SNAPSHOT_FIELDS, true, &mut |r, k| {
            match k {
                0 => format = Some(r.str()?),
                1..=5 => numbers[k - 1] = Some(r.f64()?),
                6 => config = Some(ConfigPatch::read(r)?),
                7 => registered = Some(list(r, ResourceIn::read)?),
                8 => blocklist = Some(list(r, BlockIn::read)?),
                _ => cells = Some(list(r, CellIn::read)?),
            }
            Ok(())
        })?;
        let [v, rev, t, f, seq] = numbers;
        let present = [
            format.is_some(),
            v.is_some(),
            rev.is_some(),
            t.is_some(),
            f.is_some(),
            seq.is_some(),
            config.is_some(),
            registered.is_some(),
            blocklist.is_some(),
            cells.is_some(),
        ];
        require(r, SNAPSHOT_FIELDS, &present)?;
        let n = |x: Option<f64>| x.unwrap_or_default();
        Ok(SnapshotIn {
            format: format.unwrap_or_default(),
            version: n(v),
            revision: n(rev),
            taken_at: n(t),
            fencing_high_water: n(f),
            next_event_seq: n(seq),
            config: config.unwrap_or_default(),
            registered: registered.unwrap_or_default(),
            blocklist: blocklist.unwrap_or_default(),
            cells: cells.unwrap_or_default(),
        })
    }
}

/// An array of `item`s.
fn list<'a, T>(r: &mut Reader<'a>, item: fn(&mut Reader<'a>) -> Read<T>) -> Read<Vec<T>> {
    let mut out = Vec::new();
    r.seq("a sequence", &mut |r| {
        out.push(item(r)?);
        Ok(())
    })?;
    Ok(out)
}

impl<'a> ResourceIn<'a> {
    fn read(r: &mut Reader<'a>) -> Read<ResourceIn<'a>> {
        let (mut kind, mut value, mut group, mut max_leases) = (None, None, None, None);
        r.fields("struct ResourceIn", RESOURCE_FIELDS, true, &mut |r, k| {
            match k {
                0 => kind = Some(r.str()?),
                1 => value = Some(r.str()?),
                2 => group = Some(r.str()?),
                _ => max_leases = Some(r.f64()?),
            }
            Ok(())
        })?;
        require(r, RESOURCE_FIELDS, &[kind.is_some(), value.is_some()])?;
        Ok(ResourceIn { kind: kind.unwrap_or_default(), value: value.unwrap_or_default(), group, max_leases })
    }
}

impl<'a> BlockIn<'a> {
    fn read(r: &mut Reader<'a>) -> Read<BlockIn<'a>> {
        let (mut kind, mut value, mut until, mut permanent) = (None, None, None, None);
        r.fields("struct BlockIn", BLOCK_FIELDS, true, &mut |r, k| {
            match k {
                0 => kind = Some(r.str()?),
                1 => value = Some(r.str()?),
                2 => until = Some(r.f64()?),
                _ => permanent = Some(r.bool()?),
            }
            Ok(())
        })?;
        require(r, BLOCK_FIELDS, &[kind.is_some(), value.is_some()])?;
        Ok(BlockIn { kind: kind.unwrap_or_default(), value: value.unwrap_or_default(), until, permanent })
    }
}

const RESOURCE_FIELDS: &[&str] = &["kind", "value", "group", "maxLeases"];
const BLOCK_FIELDS: &[&str] = &["kind", "value", "until", "permanent"];

const CELL_FIELDS: &[&str] = &[
    "kind",
    "value",
    "context",
    "score",
    "consecutiveFailures",
    "consecutiveSuccesses",
    "state",
    "cooldownUntil",
    "cooldownCause",
    "updatedAt",
    "window",
    "held",
];

impl<'a> CellIn<'a> {
    fn read(r: &mut Reader<'a>) -> Read<CellIn<'a>> {
        let mut text: [Option<Cow<'a, str>>; 4] = [None, None, None, None]; // kind, value, context, state
        let mut numbers = [None; 4]; // score, consecutiveFailures, consecutiveSuccesses, updatedAt
        let mut cooldown_until = None;
        let mut cooldown_cause = None;
        let mut window = None;
        let mut held = None;
        r.fields("struct CellIn", CELL_FIELDS, true, &mut |r, k| {
            match k {
                0..=2 => text[k] = Some(r.str()?),
                3 => numbers[0] = Some(r.exact()?),
                4 | 5 => numbers[k - 3] = Some(r.f64()?),
                6 => text[3] = Some(r.str()?),
                7 => cooldown_until = Some(r.nullable(Reader::f64)?),
                8 => cooldown_cause = Some(r.nullable(CauseIn::read)?),
                9 => numbers[3] = Some(r.f64()?),
                10 => window = Some(WindowIn::read(r)?),
                _ => held = Some(r.bool()?),
            }
            Ok(())
        })?;
        let [kind, value, context, state] = text;
        let [score, failures, successes, updated_at] = numbers;
        let present = [
            kind.is_some(),
            value.is_some(),
            context.is_some(),
            score.is_some(),
            failures.is_some(),
            successes.is_some(),
            state.is_some(),
            cooldown_until.is_some(),
            cooldown_cause.is_some(),
            updated_at.is_some(),
            window.is_some(),
        ];
        require(r, CELL_FIELDS, &present)?;
        let n = |x: Option<f64>| x.unwrap_or_default();
        Ok(CellIn {
            kind: kind.unwrap_or_default(),
            value: value.unwrap_or_default(),
            context: context.unwrap_or_default(),
            score: n(score),
            consecutive_failures: n(failures),
            consecutive_successes: n(successes),
            state: state.unwrap_or_default(),
            cooldown_until: cooldown_until.flatten(),
            cooldown_cause: cooldown_cause.flatten(),
            updated_at: n(updated_at),
            window: window.unwrap_or_else(WindowIn::empty),
            held,
        })
    }
}

/// A failure type by its name (no allocation: the name is matched as it is read).
pub struct CauseIn(pub FailureType);

impl CauseIn {
    fn read(r: &mut Reader) -> Read<CauseIn> {
        let name = r.str_as("BLOCKED, TLS_HANDSHAKE, CONNECTION_RESET, TIMEOUT, SLOW or null")?;
        FailureType::parse(&name).map(CauseIn).ok_or_else(|| {
            r.data("must be BLOCKED, TLS_HANDSHAKE, CONNECTION_RESET, TIMEOUT or SLOW".to_owned())
        })
    }
}

/// The largest window a snapshot may hold (the `windowSize` limit).
const MAX_WINDOW: usize = 1024;

/// A window as read: its outcomes, oldest first, the first few inline (no allocation for
/// default-sized windows).
pub struct WindowIn {
    head: [Observation; 10],
    more: Vec<Observation>,
    pub len: usize,
}

impl WindowIn {
    fn empty() -> WindowIn {
        WindowIn { head: [Observation::new(None, None); 10], more: Vec::new(), len: 0 }
    }

    pub fn iter(&self) -> impl Iterator<Item = Observation> + '_ {
        self.head[..self.len.min(10)].iter().chain(&self.more).copied()
    }

    /// The newest outcome, if any.
    pub fn newest(&self) -> Option<Observation> {
        self.more.last().or(self.head[..self.len.min(10)].last()).copied()
    }

    fn read(r: &mut Reader) -> Read<WindowIn> {
        let mut w = WindowIn::empty();
        r.seq("an array of [label, latencyMs | null] outcomes", &mut |r| {
            let o = read_observation(r)?;
            if w.len == MAX_WINDOW {
                return Err(Reader::unplaced("holds more than 1024 outcomes".to_owned()));
            }
            if w.len < w.head.len() {
                w.head[w.len] = o;
            } else {
                w.more.push(o);
            }
            w.len += 1;
            Ok(())
        })?;
        Ok(w)
    }
}

/// One `[label, latencyMs | null]` outcome.
fn read_observation(r: &mut Reader) -> Read<Observation> {
    const EXPECTED: &str = "[label, latencyMs | null]";
    let length = |n: usize| Reader::unplaced(format!("invalid length {n}, expected {EXPECTED}"));
    let mut failure = None;
    let mut latency = None;
    let mut n = 0;
    r.seq(EXPECTED, &mut |r| {
        match n {
            0 => {
                let label = r.str()?;
                if &*label != "OK" {
                    failure = Some(FailureType::parse(&label).ok_or_else(|| {
                        Reader::unplaced(
                            "label must be OK, BLOCKED, TLS_HANDSHAKE, CONNECTION_RESET, TIMEOUT or SLOW"
                                .to_owned(),
                        )
                    })?);
                }
            }
            1 => {
                latency = r.nullable(Reader::exact)?;
                if latency.is_some_and(|l: f64| !(l.is_finite() && l >= 0.0)) {
                    return Err(Reader::unplaced(
                        "latencyMs must be a non-negative number or null".to_owned(),
                    ));
                }
            }
            _ => {
                r.skip()?;
                return Err(length(3));
            }
        }
        n += 1;
        Ok(())
    })?;
    if n < 2 {
        return Err(r.data(length(n).msg));
    }
    Ok(Observation::new(failure, latency))
}
