//! The facade of a restore from a snapshot's parts (`pool/snapshot/session.rs`): `RawRestore`,
//! which a host drives in steps (`pkg-scripts/lib/node/import-steps.js`) and finishes into a
//! `RawPool`. Only converts, as `facade.rs` does.

use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::RawPool;
use super::args::patch;
use crate::error::{Error, invalid_argument};
use crate::pool::{Floor, PartsRestore, Pool};
use crate::wasm::host::{draws, js_error};

#[wasm_bindgen]
pub struct RawRestore {
    session: PartsRestore,
}

#[wasm_bindgen]
impl RawRestore {
    /// A restore of the snapshot whose head is `head` (`snapshotPart()`); `config` overrides
    /// fields of its config (JSON text), as `RawPool.restore`'s.
    #[wasm_bindgen(constructor)]
    pub fn new(head: &str, config: Option<String>) -> Result<RawRestore, JsValue> {
        let build = || -> Result<RawRestore, Error> {
            Ok(RawRestore { session: PartsRestore::begin(head, patch(config)?.as_ref())? })
        };
        build().map_err(js_error)
    }

    /// Makes room for the resources to come, of each kind (`RawPool.registeredByKind` of the
    /// pool restored elsewhere), before the first part.
    pub fn reserve(&mut self, proxies: u32, accounts: u32, sessions: u32) {
        self.session.reserve([proxies, accounts, sessions].map(|n| n as usize));
    }

    /// Adds the next resources' parts (`snapshotPart(kind, value)`, in canonical order) as
    /// their three sections, each UTF-8 bytes of comma-separated entries: bytes, so that a
    /// host keeps what it received outside the JavaScript heap and the module takes it as it
    /// is (no string encoded on the way in).
    pub fn add(&mut self, registered: &[u8], blocklist: &[u8], cells: &[u8]) -> Result<(), JsValue> {
        let text =
            |b| std::str::from_utf8(b).map_err(|_| js_error(invalid_argument("a section is not UTF-8")));
        self.session.add_sections(text(registered)?, text(blocklist)?, text(cells)?).map_err(js_error)
    }

    /// One bounded piece of the build, once every part is in; true when it is complete.
    pub fn step(&mut self) -> Result<bool, JsValue> {
        self.session.step().map_err(js_error)
    }

    /// Raises the counters to at least these (each optional).
    #[wasm_bindgen(js_name = raiseTo)]
    pub fn raise_to(
        &mut self,
        min_revision: Option<f64>,
        min_fencing: Option<f64>,
        min_next_seq: Option<f64>,
    ) -> Result<(), JsValue> {
        let floor = Floor::from_host(min_revision, min_fencing, min_next_seq).map_err(js_error)?;
        self.session.raise_to(&floor);
        Ok(())
    }

    /// The head of the snapshot being built, its counters as raised.
    pub fn head(&self) -> String {
        self.session.head()
    }

    /// The pool built (the remaining steps run first), drawing as `RawPool.restore`'s.
    pub fn finish(self, rand: Option<Function>, seed: Option<f64>) -> Result<RawPool, JsValue> {
        let build = || -> Result<RawPool, Error> {
            Ok(RawPool::wrap(Pool::from_parts(self.session, draws(rand, seed)?)?))
        };
        build().map_err(js_error)
    }
}
