//! The facade's arguments as they cross from JavaScript, decoded: codes to kinds and outcomes,
//! a `groups` list from its names and lengths, a handle to a resource id, a token, a lease
//! named by its strings, `finish`'s next step, the dashboard's filter. Decoding only: a value
//! out of range is `INVALID_ARGUMENT` (a number that is no resource id `UNKNOWN_RESOURCE`);
//! the checks of what the values mean are the engine's. The codes are listed in `facade.rs`'s
//! header.

use std::rc::Rc;

use crate::check;
use crate::config::ConfigPatch;
use crate::error::{Error, invalid_argument};
use crate::ids::ResourceId;
use crate::pool::{Filter, Lease, Next};
use crate::types::{FailureType, Kind, Outcome, ViewState};

/// The length that stands for `null` in a `groups` list.
pub(super) const NULL_GROUP: u32 = u32::MAX;

pub(super) fn kind(code: u8) -> Result<Kind, Error> {
    Kind::ALL.get(usize::from(code)).copied().ok_or_else(|| invalid_argument("unknown kind"))
}

pub(super) fn outcome(code: u8, latency_ms: Option<f64>) -> Result<Outcome, Error> {
    match code {
        0 => Ok(Outcome::Success { latency_ms }),
        c => FailureType::ALL
            .get(usize::from(c) - 1)
            .map(|&failure| Outcome::Failure { failure, latency_ms })
            .ok_or_else(|| invalid_argument("unknown failure type")),
    }
}

pub(super) fn patch(config: Option<String>) -> Result<Option<ConfigPatch>, Error> {
    config.as_deref().map(ConfigPatch::from_json).transpose()
}

/// A `groups` list from its names run together and their UTF-16 lengths (`NULL_GROUP`: null).
pub(super) fn groups<'a>(mut names: &'a str, lens: &[u32]) -> Vec<Option<&'a str>> {
    let mut cut = |units: u32| {
        let mut left = units as usize;
        let end = names.char_indices().find_map(|(i, c)| {
            let here = left == 0;
            left = left.saturating_sub(c.len_utf16());
            here.then_some(i)
        });
        let (name, rest) = names.split_at(end.unwrap_or(names.len()));
        names = rest;
        name
    };
    lens.iter().map(|&n| (n != NULL_GROUP).then(|| cut(n))).collect()
}

/// A resource id from the number `ResourceId::to_f64` gave (any other: `UNKNOWN_RESOURCE`).
pub(super) fn resource_id(n: f64) -> Result<ResourceId, Error> {
    ResourceId::from_f64(n).ok_or_else(|| {
        Error::UnknownResource(format!("resource id {} names no resource", crate::json::float_text(n)))
    })
}

/// The dashboard's filter from `resources`' arguments: `state` a view state name, `by_group`
/// filtering by `group` (`None`: the resources with no group).
pub(super) fn filter_of(
    context: Option<String>,
    state: Option<String>,
    by_group: bool,
    group: Option<String>,
) -> Result<Filter, Error> {
    let state = match state.as_deref() {
        None => None,
        Some(s) => Some(ViewState::parse(s).ok_or_else(|| invalid_argument("unknown state"))?),
    };
    Ok(Filter { context, state, group: by_group.then_some(group) })
}

pub(super) fn token_of(token: f64) -> Result<u64, Error> {
    check::int_in("token", token, 1, check::MAX_SAFE).map_err(invalid_argument)
}

/// The lease a grant gave, as its resource's id and its token.
pub(super) fn grant(handle: f64, token: f64) -> Result<(ResourceId, u64), Error> {
    Ok((resource_id(handle)?, token_of(token)?))
}

/// The lease a call by name names (`Lease::id` `None`: the engine finds it by its strings).
pub(super) fn named(kind_code: u8, value: &str, context: &str, token: f64) -> Result<Lease, Error> {
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

/// `finish`'s next step: none unless `next`; `context` `None` for the lease's.
pub(super) fn next_of<'a>(
    next: bool,
    context: Option<&'a str>,
    groups: Option<&'a [Option<&'a str>]>,
    quiet: bool,
) -> Option<Next<'a>> {
    next.then_some(Next { context, groups, quiet })
}
