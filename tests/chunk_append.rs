//! `ChunkList::extend_sorted` (`src/seq/chunks.rs`): a list built empty and extended batch by
//! batch — as a restore fed parts builds the resource and group orders — is the list
//! `from_sorted` builds of all the entries at once: the same chunks in the same order, the same
//! locations reported, the same summaries once the tree is brought up to date. Run with and
//! without `small-blocks` (`pkg-scripts/test`), so that many chunks are exercised. Native only
//! (proptest does not build for wasm32).

#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use repute::registry::order::OrderItem;
use repute::seq::chunks::{ChunkList, Loc};

/// Every chunk's entries in sequence order, and where each id was placed last.
fn layout(list: &ChunkList<OrderItem>, placed: &[Loc]) -> (Vec<Vec<(u32, bool)>>, Vec<Loc>) {
    let chunks = (0..list.chunks())
        .map(|p| list.chunk_at(p).entries.iter().map(|e| (e.slot, e.avail)).collect())
        .collect();
    (chunks, placed.to_vec())
}

proptest! {
    #[test]
    fn extended_in_batches_is_built_at_once(
        avail in prop::collection::vec(any::<bool>(), 0..400),
        batches in prop::collection::vec(1usize..40, 1..30),
    ) {
        let items: Vec<OrderItem> =
            avail.iter().enumerate().map(|(i, &a)| OrderItem { slot: i as u32, avail: a }).collect();
        let mut whole_at = vec![Loc::default(); items.len()];
        let mut whole = ChunkList::from_sorted(items.clone(), |s, at| whole_at[s as usize] = at);
        let mut built_at = vec![Loc::default(); items.len()];
        let mut built: ChunkList<OrderItem> = ChunkList::from_sorted(Vec::new(), |_, _| {});
        let mut rest = &items[..];
        for n in batches.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (now, later) = rest.split_at((*n).min(rest.len()));
            built.extend_sorted(now.iter().copied(), |s, at| built_at[s as usize] = at);
            rest = later;
        }
        whole.ensure();
        built.ensure();
        prop_assert_eq!(layout(&built, &built_at), layout(&whole, &whole_at));
        prop_assert_eq!(built.len(), whole.len());
        prop_assert_eq!(built.total(), whole.total());
        for p in 0..=whole.chunks() {
            prop_assert_eq!(built.prefix(p), whole.prefix(p));
        }
        built.verify().map_err(TestCaseError::fail)?;
    }
}
