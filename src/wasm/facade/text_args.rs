//! The hot path's calls by name with their strings in the facade's buffer (`by_name.rs`): the
//! JS side writes a call's context (and a call by name's value before it) into `textArgs` and
//! passes only their lengths — no allocation, copy and free per string, which a `&str`
//! argument costs through wasm-bindgen. Anything the JS side cannot write there (past ASCII,
//! or too long) goes by the calls that take strings (`facade.rs`), which run the same bodies.

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;

use super::RawPool;
use super::by_name::{acquire, release, renew, report};

#[wasm_bindgen]
impl RawPool {
    /// A view of the strings' buffer, at a fixed address for the pool's life; the module's
    /// memory growing detaches it (its length reads 0): the JS side asks again then.
    #[wasm_bindgen(js_name = textArgs)]
    pub fn text_args(&self) -> Uint8Array {
        self.text.view()
    }

    /// `acquire` of the context in the buffer's first `len` bytes.
    #[wasm_bindgen(js_name = acquireText)]
    pub fn acquire_text(&mut self, now: f64, len: u32, quiet: bool) -> f64 {
        let lease = self.text.text(0, len).and_then(|context| acquire(&mut self.pool, now, context, quiet));
        let answer = lease.map(|l| self.keep(l));
        self.answer(answer)
    }

    /// `report` by name, the value and context in the buffer: answers 0, or NaN on an error.
    #[wasm_bindgen(js_name = reportText)]
    pub fn report_text(
        &mut self,
        now: f64,
        kind_code: u8,
        value_len: u32,
        context_len: u32,
        code: u8,
        latency: Option<f64>,
    ) -> f64 {
        let names = self.text.pair(value_len, context_len);
        let answer = names.and_then(|n| report(&mut self.pool, now, kind_code, n, code, latency));
        self.answer(answer)
    }

    /// `renew` of the lease named by the value and context in the buffer and its token.
    #[wasm_bindgen(js_name = renewText)]
    pub fn renew_text(&mut self, now: f64, kind: u8, v_len: u32, c_len: u32, token: f64) -> f64 {
        let names = self.text.pair(v_len, c_len);
        let renewed = names.and_then(|n| renew(&mut self.pool, now, kind, n, token));
        let answer = renewed.map(|l| self.keep(l));
        self.answer(answer)
    }

    /// `release` of the lease named by the value and context in the buffer and its token.
    #[wasm_bindgen(js_name = releaseText)]
    pub fn release_text(&mut self, now: f64, kind: u8, v_len: u32, c_len: u32, token: f64) -> f64 {
        let answer = self.text.pair(v_len, c_len).and_then(|n| release(&mut self.pool, now, kind, n, token));
        self.answer(answer)
    }
}
