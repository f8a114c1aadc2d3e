//! `first_row` (Apache Fluss `first_row`, Apache Paimon `first-row`, rules C7, C12): the first
//! row written for a key wins.

use super::{Deletes, KeyState, Row, IGNORED};
use crate::RowKind;

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

impl FirstRow {
    /// Folds one write (see [`MergeRule::merge`](crate::keyed_merge::MergeRule::merge)).
    pub fn merge(
        &self,
        state: &mut Option<KeyState>,
        kind: RowKind,
        write: &Row,
        out: &mut Vec<(RowKind, Row)>,
    ) -> Result<(), String> {
        if !kind.is_accumulate() {
            return match &self.deletes {
                Deletes::Ignore => Err(format!(
                    "{IGNORED}{kind} write on the first_row merge engine"
                )),
                Deletes::Reject(reason) => Err(reason.clone()),
                Deletes::Apply => {
                    if let Some(old) = state.take().and_then(|s| s.row) {
                        out.push((RowKind::Delete, old));
                    }
                    Ok(())
                }
            };
        }
        if state.is_some() {
            return Err(format!("{IGNORED}the key already has its first row"));
        }
        out.push((RowKind::Insert, write.clone()));
        *state = Some(KeyState::new(write.clone()));
        Ok(())
    }
}
