//! Rendering of `Sort` and `TopN`: the Top-N with differential's `reduce` per partition (the
//! whole table for a `Sort`; each change recomputes its partition's ranks from the consolidated
//! rows, and the output changes only where they do), or, for a time-ordered sort without a
//! fetch, the input itself.

use crate::plan::{top_n, SortKey};
use crate::repr::{DatumVec, Row};

use super::Collection;

/// The `fetch` rows after the first `offset` of each partition (the `partition` columns) of
/// `input` in the order `order`, with their row number appended if `rank`; without a fetch,
/// `input`.
pub(super) fn render<'s>(
    input: Collection<'s>,
    partition: Vec<usize>,
    order: Vec<SortKey>,
    offset: usize,
    fetch: Option<usize>,
    rank: bool,
) -> Collection<'s> {
    let Some(fetch) = fetch else {
        return input;
    };
    let mut datums = DatumVec::new();
    let top = input
        .into_table()
        .map(move |row| {
            let key = {
                let datums = datums.borrow_with(&row);
                Row::pack(partition.iter().map(|&c| datums[c]))
            };
            (key, row)
        })
        .reduce_named("TopN", move |_, rows, out| {
            out.extend(top_n(&order, offset, fetch, rank, rows));
        })
        .map(|(_, row)| row);
    Collection::Table(top)
}
