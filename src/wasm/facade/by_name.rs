//! The calls by name that the hot path makes (`acquire`, and `report`, `renew`, `release` of a
//! resource or lease named by its strings), one body each, run by both ways their strings
//! cross: as `&str` arguments (`facade.rs`) or written by the JS side into a buffer the facade
//! keeps (`TextArgs`, read by `text_args.rs`'s calls) — so both check and answer alike and the
//! module holds each engine call once. The buffer is a fixed 2 KiB at a fixed address; the JS
//! side writes only ASCII that fits (`putText` in `pkg-scripts/lib/pool-args.js`), and what is
//! read from it is checked to be ASCII within it. Nothing is kept between calls; no rule lives
//! here.

use js_sys::Uint8Array;

use super::args::{kind, named, outcome};
use crate::error::{Error, invalid_argument};
use crate::pool::{Lease, Pool};

/// The buffer's size: a value (at most 1,024 bytes) and a context (256) with room to spare.
pub const TEXT_BYTES: usize = 2048;

/// The strings of one call, written by the JS side.
pub struct TextArgs(Box<[u8; TEXT_BYTES]>);

impl Default for TextArgs {
    fn default() -> TextArgs {
        TextArgs(Box::new([0; TEXT_BYTES]))
    }
}

impl TextArgs {
    /// A view of the buffer (see `RawPool::text_args`).
    pub fn view(&self) -> Uint8Array {
        // SAFETY: the buffer is boxed and lives as long as its pool; the JS side writes it only
        // while the pool lives, right before a call, and asks again once memory growth
        // detached the view.
        unsafe { Uint8Array::view(&self.0[..]) }
    }

    /// The `len` bytes from `from` as text: ASCII, as the JS side writes them (anything else,
    /// or bytes out of the buffer, is refused; a correct writer never gives them).
    pub fn text(&self, from: u32, len: u32) -> Result<&str, Error> {
        let (from, len) = (from as usize, len as usize);
        match self.0.get(from..from.saturating_add(len)) {
            // SAFETY: ASCII is UTF-8 (checked here: cheaper, and smaller in the module, than
            // `str::from_utf8`).
            Some(bytes) if bytes.is_ascii() => Ok(unsafe { std::str::from_utf8_unchecked(bytes) }),
            _ => Err(invalid_argument("a text argument in the buffer is not ASCII within it")),
        }
    }

    /// A call's value (from 0) and context (after it).
    pub fn pair(&self, value_len: u32, context_len: u32) -> Result<(&str, &str), Error> {
        Ok((self.text(0, value_len)?, self.text(value_len, context_len)?))
    }
}

/// `acquire` of `context`; `quiet`: no `ACQUISITION_REJECTED` (`Pool::try_acquire`).
#[inline(never)]
pub fn acquire(pool: &mut Pool, now: f64, context: &str, quiet: bool) -> Result<Option<Lease>, Error> {
    if quiet { pool.try_acquire(now, context, None) } else { pool.acquire(now, context) }
}

/// `report` by name, the outcome as its code and latency.
#[inline(never)]
pub fn report(
    pool: &mut Pool,
    now: f64,
    kind_code: u8,
    (value, context): (&str, &str),
    code: u8,
    latency: Option<f64>,
) -> Result<f64, Error> {
    let (k, o) = (kind(kind_code)?, outcome(code, latency)?);
    pool.report(now, k, value, context, o).map(|()| 0.0)
}

/// `renew` of the lease named by its strings and token.
#[inline(never)]
pub fn renew(
    pool: &mut Pool,
    now: f64,
    kind_code: u8,
    (value, context): (&str, &str),
    token: f64,
) -> Result<Option<Lease>, Error> {
    pool.renew(now, &named(kind_code, value, context, token)?)
}

/// `release` of the lease named by its strings and token.
#[inline(never)]
pub fn release(
    pool: &mut Pool,
    now: f64,
    kind_code: u8,
    (value, context): (&str, &str),
    token: f64,
) -> Result<f64, Error> {
    pool.release(now, &named(kind_code, value, context, token)?).map(f64::from)
}
