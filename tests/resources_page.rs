//! `Pool::resources_page`: the dashboard view a page at a time (the HTTP API's
//! `GET /api/resources?limit=&after=`). Pages of any size, joined, are exactly `resources`; a
//! page starts after its `after` key in canonical order (kind, then value bytes) whether or not
//! that resource is still registered; filters apply as they do to `resources`; a bad `after`
//! value is refused like any value.

use repute::{Config, FailureType, Filter, Kind, Outcome, Pool, ResourceView, ViewState};

const T: f64 = 1_700_000_000_000.0;

fn pool() -> Pool {
    let mut p = Pool::with_seed(Config::default(), 3).unwrap();
    for v in ["p3", "p1", "p10", "p2"] {
        p.register(T, Kind::Proxy, v).unwrap();
    }
    for v in ["a2", "a1"] {
        p.register(T, Kind::Account, v).unwrap();
    }
    p.register(T, Kind::Session, "s1").unwrap();
    p.report(T, Kind::Proxy, "p2", "c", Outcome::failure(FailureType::Blocked)).unwrap();
    p.report(T, Kind::Proxy, "p2", "c", Outcome::failure(FailureType::Blocked)).unwrap();
    p.report(T, Kind::Account, "a1", "c", Outcome::success()).unwrap();
    p
}

fn keys(views: &[ResourceView]) -> Vec<(Kind, String)> {
    views.iter().map(|v| (v.kind, v.value.to_string())).collect()
}

/// Every page of `limit` in turn, each after the last one's final resource, joined.
fn paged(p: &mut Pool, filter: &Filter, limit: usize) -> Vec<ResourceView> {
    let mut all: Vec<ResourceView> = Vec::new();
    loop {
        let after = all.last().map(|v| (v.kind, v.value.to_string()));
        let page = p.resources_page(T, filter, after.as_ref().map(|(k, v)| (*k, v.as_str())), limit).unwrap();
        let full = page.len() == limit;
        all.extend(page);
        if !full {
            return all;
        }
    }
}

#[test]
fn pages_of_any_size_join_into_the_whole_view() {
    let mut p = pool();
    let whole = p.resources(T, &Filter::default()).unwrap();
    assert_eq!(whole.len(), 7);
    for limit in 1..=8 {
        assert_eq!(paged(&mut p, &Filter::default(), limit), whole, "limit {limit}");
    }
    let cooling = Filter { state: Some(ViewState::Cooling), ..Filter::default() };
    let filtered = p.resources(T, &cooling).unwrap();
    assert_eq!(keys(&filtered), vec![(Kind::Proxy, "p2".to_owned())]);
    assert_eq!(paged(&mut p, &cooling, 1), filtered);
}

#[test]
fn a_page_starts_after_its_key_even_when_that_resource_is_gone() {
    let mut p = pool();
    let first = p.resources_page(T, &Filter::default(), None, 3).unwrap();
    // PROXY first (declaration order), values by bytes: p1, p10, p2.
    assert_eq!(
        keys(&first),
        vec![(Kind::Proxy, "p1".into()), (Kind::Proxy, "p10".into()), (Kind::Proxy, "p2".into())]
    );
    p.deregister(T, Kind::Proxy, "p2").unwrap();
    let next = p.resources_page(T, &Filter::default(), Some((Kind::Proxy, "p2")), 3).unwrap();
    assert_eq!(
        keys(&next),
        vec![(Kind::Proxy, "p3".into()), (Kind::Account, "a1".into()), (Kind::Account, "a2".into())]
    );
    // A key between two resources, and one past the last.
    let between = p.resources_page(T, &Filter::default(), Some((Kind::Proxy, "p25")), 1).unwrap();
    assert_eq!(keys(&between), vec![(Kind::Proxy, "p3".into())]);
    assert!(p.resources_page(T, &Filter::default(), Some((Kind::Session, "zz")), 5).unwrap().is_empty());
    assert!(p.resources_page(T, &Filter::default(), None, 0).unwrap().is_empty());
}

#[test]
fn a_bad_after_value_is_refused() {
    let mut p = pool();
    let e = p.resources_page(T, &Filter::default(), Some((Kind::Proxy, " ")), 3).unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
}
