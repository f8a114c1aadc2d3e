//! Rendering of `Sort`: the Top-N with differential's `reduce` over the whole table as one group
//! (each change recomputes the window from the consolidated rows; the output changes only where
//! the window does), or, for a time-ordered sort without a fetch, the input itself.

use crate::plan::{top_n, SortKey};

use super::Collection;

/// `ORDER BY order OFFSET offset FETCH fetch` over `input`.
pub(super) fn render<'s>(
    input: Collection<'s>,
    order: Vec<SortKey>,
    offset: usize,
    fetch: Option<usize>,
) -> Collection<'s> {
    let Some(fetch) = fetch else {
        return input;
    };
    let top = input
        .into_table()
        .map(|row| ((), row))
        .reduce_named("Sort: Top-N", move |_, rows, out| {
            out.extend(top_n(&order, offset, fetch, rows));
        })
        .map(|((), row)| row);
    Collection::Table(top)
}
