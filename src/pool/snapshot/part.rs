//! One resource's snapshot part read back (`Pool::reinstate`, `pool/reinstate.rs`): the three
//! lines `write_resource` gave — its `registered` entry, its `blocklist` entry or an empty line,
//! its cells — validated exactly as a restore validates them, by restoring them as a document of
//! their own under the live pool's config.
//!
//! The document's `takenAt` is the live pool's instant, so a cell updated after it, or a
//! cooldown that "ended" after its cell's update, is refused as a restore refuses it; a timed
//! block that has ended by then is left out (it would have expired). Windows are read under the
//! largest `windowSize` and cut to the live one (a part taken before a smaller `windowSize` came
//! in keeps its newest outcomes, as a restore does).

use super::input::BlockIn;
use super::restore::restore;
use super::write::{FORMAT, VERSION};
use crate::config::{Config, ConfigPatch};
use crate::error::{Error, Result};
use crate::pool::core::Core;
use crate::types::Millis;

/// The largest `windowSize` a config takes (SPEC §3, config ranges).
const MAX_WINDOW: u32 = 1024;
/// The largest `maxCells` a config takes: a part is checked against the live pool's room by
/// the caller, not here.
const MAX_CELLS: u32 = 100_000_000;

fn bad(msg: &str) -> Error {
    Error::InvalidSnapshot(format!("the resource's part: {msg}"))
}

/// A state holding only the resource of `part` (taken from a pool whose config is `cfg`),
/// as of `taken_at`; an error names what is wrong, quoting nothing of the part.
pub fn read_part(part: &str, cfg: &Config, taken_at: Millis) -> Result<Core> {
    let mut lines = part.split('\n');
    let (Some(registered), Some(block), Some(cells), None) =
        (lines.next(), lines.next(), lines.next(), lines.next())
    else {
        return Err(bad("must be three lines (registered, blocklist, cells)"));
    };
    if registered.is_empty() {
        return Err(bad("the registered line is empty"));
    }
    let block = match serde_json::from_str::<BlockIn>(block) {
        Ok(b) if b.until.is_some_and(|u| u <= taken_at as f64) => "", // ended meanwhile
        _ => block,
    };
    let stored = Config { window_size: MAX_WINDOW, max_cells: MAX_CELLS, ..cfg.clone() };
    let mut doc = String::with_capacity(part.len() + 1024);
    doc.push_str(&format!(
        "{{\"format\":\"{FORMAT}\",\"version\":{VERSION},\"revision\":0,\"takenAt\":{taken_at},\
         \"fencingHighWater\":0,\"nextEventSeq\":1,\"config\":"
    ));
    stored.write_json(&mut doc);
    doc.push_str(&format!(",\"registered\":[{registered}],\"blocklist\":[{block}],\"cells\":[{cells}]}}"));
    let window = ConfigPatch { window_size: Some(cfg.window_size.into()), ..ConfigPatch::default() };
    restore(&doc, Some(&window))
}
