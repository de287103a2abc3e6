//! Restoring from a snapshot's parts, a batch of resources at a time, so that a host can build
//! a large import in short steps while its live pool goes on serving. The parts are those
//! `write.rs` writes (`write_head`, then each resource's three lines of `write_resource`, in
//! canonical order): `PartsRestore::begin(head)`, `reserve(counts)` if they are known, then
//! `add(parts)` (parts joined by line breaks) or `add_sections` (the same regrouped: their
//! `registered`, `blocklist` and cells entries, as a host sends them) until every resource is
//! in, `step()` until it answers true (the orders' trees first — the resource order and each
//! group's are built batch by batch as the parts come, laid out as `order_rebuild` lays them —
//! then one context's cells a step), and `Pool::from_parts` (`pool/from_parts.rs`) — the state
//! `restore.rs` builds of the joined document (tests/parts_restore.rs).
//!
//! A batch is read as a document of its own under the head, by `restore.rs`'s reader and
//! checks, whose messages name the joined document's paths (serde's own complaints name the
//! batch's). Parts out of canonical order are refused: that order gives each context's cells in
//! resource order as they come, so there is no sort of every cell to do at the end, only the
//! resource order's (one step). Nothing is seen by anyone until it is finished; after an error
//! the session refuses every call (a caller drops it).

use std::rc::Rc;

use super::input::CellIn;
use super::restore::{self, HeadFields, Start, Version, bad, block_in, resource_in, validate_cells};
use super::write::write_head;
use crate::cell::Cell;
use crate::config::ConfigPatch;
use crate::error::{Error, Result, invalid_argument};
use crate::pool::core::Core;
use crate::pool::durable::Builder;
use crate::pool::floor::Floor;
use crate::types::{Kind, Millis};

/// A cell with its resource's slot.
type SlotCell = (u32, Cell);

/// A restore being fed parts (see the header).
pub struct PartsRestore {
    core: Builder,
    version: Version,
    taken_at: Millis,
    /// The stored config's `windowSize` (a window may not hold more).
    stored_cap: usize,
    /// The snapshot's head, under which each batch of parts is read.
    head: Box<str>,
    /// The last part's resource and the last cell's key: what comes next must come after them.
    last: Option<(Kind, Box<str>)>,
    last_cell: Option<(Kind, Box<str>, Box<str>)>,
    /// What was added so far (the next entries' indexes in the joined document).
    added: Added,
    /// Each context's cells in resource order, sorted by name bytes (a sorted list rather
    /// than a map: contexts are few, and the module is smaller).
    contexts: Vec<(Rc<str>, Vec<SlotCell>)>,
    /// The resource order is built: no more parts.
    ordered: bool,
    /// A call failed: the session is of no further use.
    broken: bool,
}

/// Resources, blocklist entries and cells added.
#[derive(Debug, Default, Clone, Copy)]
struct Added {
    resources: usize,
    blocks: usize,
    cells: usize,
}

impl std::fmt::Debug for PartsRestore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartsRestore").field("added", &self.added).finish_non_exhaustive()
    }
}

impl PartsRestore {
    /// A session for the snapshot whose head is `head` (every field before `registered`, as
    /// `write_head` writes it); `overrides` as `restore`'s.
    pub fn begin(head: &str, overrides: Option<&ConfigPatch>) -> Result<PartsRestore> {
        // The head with empty sections is a document: read by `restore`'s own reader, with
        // its errors (the version's first).
        let text = format!("{head},\"registered\":[],\"blocklist\":[],\"cells\":[]}}");
        let h = restore::parse(&text)?;
        let fields = HeadFields {
            format: &h.format,
            version: h.version,
            revision: h.revision,
            taken_at: h.taken_at,
            fencing_high_water: h.fencing_high_water,
            next_event_seq: h.next_event_seq,
            config: &h.config,
        };
        let Start { core, stored_cfg, taken_at, version } = restore::start(&fields, overrides)?;
        Ok(PartsRestore {
            core,
            version,
            taken_at,
            stored_cap: stored_cfg.window_size as usize,
            head: head.into(),
            last: None,
            last_cell: None,
            added: Added::default(),
            contexts: Vec::new(),
            ordered: false,
            broken: false,
        })
    }

    /// Adds the next resources' parts (each three lines: its `registered` entry, its
    /// `blocklist` entry or nothing, its cells comma-separated or nothing), joined by line
    /// breaks. A batch is read as one document; its errors name the joined document's paths,
    /// but for what serde refuses, named inside the batch.
    pub fn add(&mut self, parts: &str) -> Result<()> {
        let mut sections = [String::new(), String::new(), String::new()];
        let mut lines = parts.split('\n');
        while let Some(r) = lines.next() {
            let (Some(b), Some(c)) = (lines.next(), lines.next()) else {
                self.broken = true;
                return Err(bad(format!(
                    "registered[{}]: a resource's part is three lines",
                    self.added.resources
                )));
            };
            for (section, line) in sections.iter_mut().zip([r, b, c]) {
                if !line.is_empty() {
                    if !section.is_empty() {
                        section.push(',');
                    }
                    section.push_str(line);
                }
            }
        }
        let [registered, blocklist, cells] = &sections;
        self.add_sections(registered, blocklist, cells)
    }

    /// Adds the next resources' parts as the three sections they make: their `registered`
    /// entries, their `blocklist` entries and their cells, each comma-separated (empty when
    /// there are none) — `add`'s parts, regrouped, as a host sends them.
    pub fn add_sections(&mut self, registered: &str, blocklist: &str, cells: &str) -> Result<()> {
        self.guard(|s| s.add_parts(registered, blocklist, cells))
    }

    /// One bounded piece of the build once every part is in: answers true when it is complete.
    pub fn step(&mut self) -> Result<bool> {
        self.guard(|s| {
            if !s.ordered {
                s.core.appended_done();
                s.core.reserve_cells(s.added.cells);
                s.ordered = true;
            } else if !s.contexts.is_empty() {
                let (name, cells) = s.contexts.remove(0);
                s.core.add_context(name, cells.into_iter());
            }
            Ok(s.ordered && s.contexts.is_empty())
        })
    }

    /// Room for the resources to come, `by_kind[k]` of each kind (`Kind::index` order: the
    /// restored pool's `registered_by_kind`), before the first part: a registry table that
    /// doubles as 262,000 resources of 1 KB come in rehashes every value (133 ms in Node). A
    /// count off the mark costs only room or a doubling; the parts decide what is built.
    pub fn reserve(&mut self, by_kind: [usize; 3]) {
        self.core.reserve_resources(by_kind);
    }

    /// Raises the counters to at least `floor`'s (`floor.rs`).
    pub fn raise_to(&mut self, floor: &Floor) {
        self.core.raise_to(floor);
    }

    /// The head of the snapshot being built (its counters as raised).
    pub fn head(&self) -> String {
        write_head(self.core.built())
    }

    /// Resources added so far.
    pub fn resources(&self) -> usize {
        self.added.resources
    }

    /// The complete state: the remaining steps are run first.
    pub(crate) fn finish(mut self) -> Result<Core> {
        while !self.step()? {}
        Ok(self.core.finish())
    }

    fn guard<T>(&mut self, call: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.broken {
            return Err(invalid_argument("this restore was refused already: start another"));
        }
        let out = call(self);
        self.broken = out.is_err();
        out
    }

    fn add_parts(&mut self, registered: &str, blocklist: &str, cells: &str) -> Result<()> {
        if self.ordered {
            return Err(invalid_argument("a part after the build began"));
        }
        // The sections, joined under the head, are a document: read by `restore`'s own reader
        // (no reader of a part's own in the module).
        let text = format!(
            "{},\"registered\":[{registered}],\"blocklist\":[{blocklist}],\"cells\":[{cells}]}}",
            self.head
        );
        let batch = restore::parse(&text)?;
        let base = self.added;
        let max = self.core.config().max_resources;
        if base.resources + batch.registered.len() > max as usize {
            return Err(Error::CapacityExceeded(format!(
                "the snapshot holds more than {max} resources; maxResources is {max}"
            )));
        }
        let mut appended = Vec::with_capacity(batch.registered.len());
        for (j, r) in batch.registered.iter().enumerate() {
            let i = base.resources + j;
            let (kind, slot) = resource_in(&mut self.core, i, r, self.version)?;
            appended.push(slot);
            if let Some((k, v)) = &self.last
                && (*k, v.as_bytes()) >= (kind, r.value.as_bytes())
            {
                return Err(bad(format!(
                    "registered[{i}]: must come after registered[{}] (kind, then value bytes)",
                    i - 1
                )));
            }
            self.last = Some((kind, r.value.as_ref().into()));
        }
        self.added.resources += batch.registered.len();
        let mut blocked = Vec::with_capacity(batch.blocklist.len());
        for (j, b) in batch.blocklist.iter().enumerate() {
            blocked.push(block_in(&mut self.core, base.blocks + j, b, self.taken_at)?);
        }
        self.added.blocks += batch.blocklist.len();
        // The batch's resources join the orders now, their blocks applied. A block for one of
        // an earlier batch (a crafted document may place it so) must be read again there; for
        // one of this batch, reading it again changes nothing (one lookup a block).
        self.core.resources_appended(&appended);
        for slot in blocked {
            self.core.block_after_append(slot);
        }
        self.cells_in(&batch.cells)
    }

    /// Checks and keeps a batch's cells, which come in canonical order (resource, then context
    /// name bytes) after the last batch's.
    fn cells_in(&mut self, list: &[CellIn]) -> Result<()> {
        let max = self.core.config().max_cells;
        if self.added.cells + list.len() > max as usize {
            return Err(Error::CapacityExceeded(format!(
                "the snapshot holds more than {max} cells; maxCells is {max}"
            )));
        }
        let placed =
            validate_cells(&self.core, list, self.added.cells, self.taken_at, self.stored_cap, self.version)?;
        for (j, (slot, name, cell)) in placed.into_iter().enumerate() {
            let k = self.added.cells + j;
            let previous = match j {
                0 => self.last_cell.as_ref().map(|(k, v, c)| (*k, v.as_bytes(), c.as_bytes())),
                _ => Some(key(&list[j - 1])),
            };
            match previous {
                Some(p) if p == key(&list[j]) => {
                    return Err(bad("cells: a second cell for the same resource and context"));
                }
                Some(p) if p > key(&list[j]) => {
                    return Err(bad(format!(
                        "cells[{k}]: must come after cells[{}] (resource, then context bytes)",
                        k - 1
                    )));
                }
                _ => {}
            }
            match self.contexts.binary_search_by(|(n, _)| n.as_bytes().cmp(name.as_bytes())) {
                Ok(at) => self.contexts[at].1.push((slot, cell)),
                Err(at) => self.contexts.insert(at, (name, vec![(slot, cell)])),
            }
        }
        if let Some(c) = list.last() {
            self.last_cell = Some((kind_of(c), c.value.as_ref().into(), c.context.as_ref().into()));
        }
        self.added.cells += list.len();
        Ok(())
    }
}

/// A checked cell's key in canonical order.
fn key<'a>(c: &'a CellIn) -> (Kind, &'a [u8], &'a [u8]) {
    (kind_of(c), c.value.as_bytes(), c.context.as_bytes())
}

/// A checked cell's kind (checked as it was read: `cells_in`).
fn kind_of(c: &CellIn) -> Kind {
    Kind::parse(&c.kind).unwrap_or(Kind::Proxy)
}
