//! The reference of the changelog check: at every system time, the changes so far read one by
//! one in `(system time, seq)` order, from scratch, each key's state kept as the sequential
//! checker of `dtemporal validate` always kept it; a `-U` still waiting for its `+U` when they
//! end is a finding.

use std::collections::BTreeMap;

use crate::plan::{ChangelogCheck, Problem};
use crate::repr::{Datum, Row};
use differential_temporal_operators::{Change, RowKind, Seq};

use super::rows::{diff_into, times};
use super::Stream;

/// What the checker knows of a key that is not absent.
enum Known {
    /// Live with `row`, made live by the change `since`.
    Live { since: Seq, row: Row },
    /// Retracted by the `-U` at `at`, whose `+U` must come next.
    Retracted { at: Seq },
}

/// The findings of `check` over `changes` (sorted by `(system time, seq)`), as a stream.
pub(super) fn check(changes: &Stream, check: &ChangelogCheck) -> Stream {
    let mut out = Vec::new();
    let mut previous = Vec::new();
    for at in times(changes.iter().map(|(t, _)| *t)) {
        let mut now = findings(changes.iter().filter(|(t, _)| *t <= at), check);
        now.sort();
        diff_into(&mut out, at, &previous, &now);
        previous = now;
    }
    out
}

/// The finding rows of the changes `changes`, in order, ending with those of the `-U`s still
/// waiting.
fn findings<'a>(
    changes: impl Iterator<Item = &'a (u64, Change<Row>)>,
    check: &ChangelogCheck,
) -> Vec<Row> {
    let mut known: BTreeMap<Row, Known> = BTreeMap::new();
    let mut found: Vec<(Row, Seq, Problem)> = Vec::new();
    for (_, change) in changes {
        let (at, kind) = (change.seq, change.kind);
        let datums: Vec<Datum> = change.row.iter().collect();
        let key = Row::pack(check.key.iter().map(|&c| datums[c]));
        let mut report = |seq, problem| found.push((key.clone(), seq, problem));
        let previous = known.remove(&key);
        let mut live = None;
        let mut awaited = false;
        match previous {
            Some(Known::Retracted { at: u }) => {
                awaited = true;
                if kind != RowKind::UpdateAfter {
                    let next = Some((kind, at));
                    report(u, Problem::UpdateBeforeAlone { next });
                }
            }
            Some(Known::Live { since, row }) => live = Some((since, row)),
            None => {}
        }
        let since = live.as_ref().map(|(s, _)| *s);
        let next = match kind {
            RowKind::Insert | RowKind::UpdateAfter if check.upsert => Some(Known::Live {
                since: at,
                row: change.row.clone(),
            }),
            RowKind::UpdateBefore if check.upsert => {
                report(at, Problem::UpdateBeforeInUpsert);
                live.map(|(since, row)| Known::Live { since, row })
            }
            RowKind::Insert => {
                if let Some(since) = since {
                    report(at, Problem::InsertOfLive { since });
                }
                Some(Known::Live {
                    since: at,
                    row: change.row.clone(),
                })
            }
            RowKind::UpdateAfter => {
                if since.is_some() || !awaited {
                    let problem = Problem::UpdateAfterWithoutBefore { live_since: since };
                    report(at, problem);
                }
                Some(Known::Live {
                    since: at,
                    row: change.row.clone(),
                })
            }
            RowKind::UpdateBefore | RowKind::Delete => {
                match &live {
                    None => report(at, Problem::RetractionOfAbsent { kind }),
                    Some((since, row)) if !check.upsert => {
                        if let Some(p) = check.retracts_other_row(kind, *since, row, &change.row) {
                            report(at, p);
                        }
                    }
                    Some(_) => {}
                }
                (kind == RowKind::UpdateBefore).then_some(Known::Retracted { at })
            }
        };
        if let Some(next) = next {
            known.insert(key, next);
        }
    }
    for (key, state) in known {
        if let Known::Retracted { at } = state {
            found.push((key, at, Problem::UpdateBeforeAlone { next: None }));
        }
    }
    found
        .into_iter()
        .map(|(key, seq, problem)| ChangelogCheck::finding(key.iter(), seq, &problem))
        .collect()
}
