//! Rendering of the changelog check onto the generic keyed merge: each key's changes folded in
//! source order by [`CheckRule`], whose "merged table" is the key's findings.
//!
//! A `-U` inserts the finding "not followed by +U (the input ends first)" and its key's next
//! change deletes it (replacing it by "the key's next change is ..." unless that change is the
//! `+U`), so the findings are exact at every system time without an end-of-input step, and the
//! state is one entry per key that is live or waits for its `+U`.

use differential_temporal_operators::keyed_merge::{keyed_merge, Folded, MergeRule};
use differential_temporal_operators::{Change, RowKind, Seq};

use crate::plan::{ChangelogCheck, PlanError, Problem};
use crate::repr::{ColumnSpans, Row};

use super::nodes::{project, render as render_input};
use super::{Collection, RenderContext};

/// The findings of `check`'s input (see the [module docs](self)).
pub(super) fn render<'s>(
    ctx: &mut RenderContext<'s>,
    check: &ChangelogCheck,
) -> Result<Collection<'s>, PlanError> {
    let changes = render_input(ctx, &check.input)?.into_changelog();
    let key = check.key.clone();
    let mut spans = ColumnSpans::new();
    let keyed = changes.map(move |c| {
        let key = project(&c.row, &key, &mut spans);
        (key, Change::new(c.seq, c.kind, (c.seq, c.row)))
    });
    let rule = CheckRule {
        check: check.clone(),
    };
    let merged = keyed_merge(keyed, rule, None, "CheckChangelog");
    // The rule applies every change: it refuses none.
    ctx.refused.push(merged.rejected.map(|(_, r)| r));
    Ok(Collection::Changelog(merged.changelog.map(|(_, c)| c)))
}

/// What the check knows of a key that is not absent.
enum KeyState {
    /// Live with `row`, made live by the change `since`.
    Live { since: Seq, row: Row },
    /// Retracted by the `-U` at `at`, whose `+U` must be the key's next change.
    Retracted { at: Seq },
}

/// The check as a merge rule: a write is a change with its `seq`, the state what the key is,
/// the emitted rows its findings.
struct CheckRule {
    check: ChangelogCheck,
}

impl MergeRule for CheckRule {
    type Write = (Seq, Row);
    type State = KeyState;
    type Row = Row;

    fn merge(
        &self,
        state: &mut Option<KeyState>,
        kind: RowKind,
        write: &(Seq, Row),
        out: &mut Vec<(RowKind, Row)>,
    ) -> Folded {
        self.merge_owned(state, kind, write.clone(), out)
    }

    fn merge_owned(
        &self,
        state: &mut Option<KeyState>,
        kind: RowKind,
        (at, row): (Seq, Row),
        out: &mut Vec<(RowKind, Row)>,
    ) -> Folded {
        let upsert = self.check.upsert;
        let waiting = Problem::UpdateBeforeAlone { next: None };
        let mut live = None;
        match state.take() {
            Some(KeyState::Retracted { at: u }) => {
                out.push((RowKind::Delete, self.finding(&row, u, &waiting)));
                if kind == RowKind::UpdateAfter {
                    *state = Some(KeyState::Live { since: at, row });
                    return Ok(None);
                }
                let alone = Problem::UpdateBeforeAlone {
                    next: Some((kind, at)),
                };
                out.push((RowKind::Insert, self.finding(&row, u, &alone)));
            }
            Some(KeyState::Live { since, row }) => live = Some((since, row)),
            None => {}
        }
        let live_since = live.as_ref().map(|(since, _)| *since);
        let problem = match (kind, &live) {
            (RowKind::Insert | RowKind::UpdateAfter, _) if upsert => None,
            (RowKind::UpdateBefore, _) if upsert => Some(Problem::UpdateBeforeInUpsert),
            (RowKind::Insert, Some((since, _))) => Some(Problem::InsertOfLive { since: *since }),
            (RowKind::Insert, None) => None,
            // A `+U` awaited by a `-U` returned above.
            (RowKind::UpdateAfter, _) => Some(Problem::UpdateAfterWithoutBefore { live_since }),
            (_, None) => Some(Problem::RetractionOfAbsent { kind }),
            (_, Some(_)) if upsert => None,
            (_, Some((since, live))) => self.check.retracts_other_row(kind, *since, live, &row),
        };
        if let Some(problem) = problem {
            out.push((RowKind::Insert, self.finding(&row, at, &problem)));
        }
        *state = match kind {
            RowKind::Insert | RowKind::UpdateAfter => Some(KeyState::Live { since: at, row }),
            // An upsert changelog's `-U` changes nothing.
            RowKind::UpdateBefore if upsert => {
                live.map(|(since, row)| KeyState::Live { since, row })
            }
            RowKind::UpdateBefore => {
                out.push((RowKind::Insert, self.finding(&row, at, &waiting)));
                Some(KeyState::Retracted { at })
            }
            RowKind::Delete => None,
        };
        Ok(None)
    }
}

impl CheckRule {
    /// The finding row about the change `seq` of the key of `row`.
    fn finding(&self, row: &Row, seq: Seq, problem: &Problem) -> Row {
        let key = self
            .check
            .key
            .iter()
            .map(|&c| row.get(c).expect("a key column"));
        ChangelogCheck::finding(key, seq, problem)
    }
}
