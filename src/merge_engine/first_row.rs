//! `first_row` (Apache Fluss `first_row`, Apache Paimon `first-row`, rules C7, C12): the first
//! row written for a key wins.

use std::borrow::Cow;

use super::{Deletes, KeyState, Row};
use crate::operators::keyed_merge::Refusal;
use crate::operators::RowKind;

/// First row wins: the first accumulating write of a key is stored and emitted as `+I`; later
/// writes are ignored (reported as ignored, so they are counted). The changelog is insert-only.
///
/// Deletes: [`Deletes::Ignore`] (Fluss; Paimon with `'ignore-delete' = 'true'`) reports them as
/// ignored; [`Deletes::Reject`] (Paimon's default, Fluss with `'table.delete.behavior' =
/// 'disable'`) refuses them. [`Deletes::Apply`] goes **beyond Fluss and Paimon**: a `-D`/`-U`
/// removes the stored row (`-D`), and the next write becomes the key's first row again; the
/// changelog is then no longer insert-only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirstRow {
    /// What a `-D`/`-U` write does.
    pub deletes: Deletes,
}

/// The reason of a later write of a key that already has its first row (the common case of a
/// `first_row` table: a constant, so ignoring a write costs no formatting).
pub(crate) const HAS_FIRST_ROW: &str = "the key already has its first row";

impl FirstRow {
    /// Folds one write, borrowed or owned (cloned only if it is stored).
    pub(crate) fn merge(
        &self,
        state: &mut Option<KeyState>,
        kind: RowKind,
        write: Cow<'_, Row>,
        out: &mut Vec<(RowKind, Row)>,
    ) -> Result<(), Refusal> {
        if !kind.is_accumulate() {
            return match &self.deletes {
                Deletes::Ignore => Err(Refusal::ignored(format!(
                    "{kind} write on the first_row merge engine"
                ))),
                Deletes::Reject(reason) => Err(Refusal::invalid(reason.clone())),
                Deletes::Apply => {
                    if let Some(old) = state.take().and_then(|s| s.row) {
                        out.push((RowKind::Delete, old));
                    }
                    Ok(())
                }
            };
        }
        if state.is_some() {
            return Err(Refusal::ignored(HAS_FIRST_ROW));
        }
        let write = write.into_owned();
        out.push((RowKind::Insert, write.clone()));
        *state = Some(KeyState::new(write));
        Ok(())
    }
}
