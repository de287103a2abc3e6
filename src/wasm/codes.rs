//! The facade's small codes turned into the engine's values: a kind code, an outcome's code
//! and latency, a fencing token given as a JavaScript number, and the lease a call by name
//! names (its strings and token). Shared by the facade's calls (`facade.rs`) and the calls by
//! the strings' buffer (`by_name.rs`, `text_args.rs`); the codes are listed in `facade.rs`.

use std::rc::Rc;

use crate::check;
use crate::error::{Error, invalid_argument};
use crate::pool::Lease;
use crate::types::{FailureType, Kind, Outcome};

pub fn kind(code: u8) -> Result<Kind, Error> {
    Kind::ALL.get(usize::from(code)).copied().ok_or_else(|| invalid_argument("unknown kind"))
}

pub fn outcome(code: u8, latency_ms: Option<f64>) -> Result<Outcome, Error> {
    match code {
        0 => Ok(Outcome::Success { latency_ms }),
        c => FailureType::ALL
            .get(usize::from(c) - 1)
            .map(|&failure| Outcome::Failure { failure, latency_ms })
            .ok_or_else(|| invalid_argument("unknown failure type")),
    }
}

pub fn token_of(token: f64) -> Result<u64, Error> {
    check::int_in("token", token, 1, check::MAX_SAFE).map_err(invalid_argument)
}

/// The lease a call by name names (`Lease::id` `None`: the engine finds it by its strings).
pub fn named(kind_code: u8, value: &str, context: &str, token: f64) -> Result<Lease, Error> {
    Ok(Lease {
        id: None,
        kind: kind(kind_code)?,
        value: Rc::from(value),
        group: None,
        context: Rc::from(context),
        token: token_of(token)?,
        leased_at: 0,
        expires_at: 0,
    })
}
