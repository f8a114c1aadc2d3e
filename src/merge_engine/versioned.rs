//! `versioned` (Apache Fluss / Alibaba Realtime Compute `table.merge-engine` = `versioned`,
//! rules C1–C4, C6): keep the row with the highest version column.

use std::borrow::Cow;

use super::deduplicate::{keep_highest, Highest};
use super::order::OrderField;
use super::{Deletes, KeyState, Row};
use crate::operators::keyed_merge::Folded;
use crate::operators::RowKind;
use crate::repr::Datum;

/// Fluss `versioned`: a write replaces the stored row iff its version is greater than or equal
/// to the stored version (ties: the later write wins and `-U old, +U new` are emitted); a
/// smaller version changes nothing, emits nothing and is reported as ignored (counted).
///
/// The version column is compared as its declared type ([`OrderField::ty`]): a typed cell (a
/// `BIGINT` or `TIMESTAMP(p)` column of a table with a schema, parsed once at ingest) is read
/// as it is, a text cell is parsed on every write. A NULL version compares equal to the
/// smallest value of the type (rule C3: NULL new vs non-NULL stored is ignored, non-NULL new
/// vs NULL stored replaces, NULL vs NULL replaces). An unparsable version cell is a rejected
/// write.
///
/// Deletes: Fluss ignores `-U` and `-D` writes ([`Deletes::Ignore`], reported as ignored) or,
/// with `'table.delete.behavior' = 'disable'`, refuses them ([`Deletes::Reject`]).
/// [`Deletes::Apply`] goes **beyond Fluss** (which only ignores them): a retraction whose
/// version is at least the stored one deletes the key, and the key keeps that version, so
/// older writes arriving later stay ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Versioned {
    /// The version column (`'table.merge-engine.versioned.ver-column'`).
    pub version: OrderField,
    /// What a `-D`/`-U` write does.
    pub deletes: Deletes,
}

impl Versioned {
    /// Folds one write, borrowed or owned (cloned only if it wins). Inlined into the engine's
    /// dispatch, so the write and the result are not moved through one more call per write.
    #[inline]
    pub(crate) fn merge(
        &self,
        state: &mut Option<KeyState>,
        kind: RowKind,
        write: Cow<'_, Row>,
        out: &mut Vec<(RowKind, Row)>,
    ) -> Folded {
        let name = &self.version.name;
        let version = match write.get(self.version.column) {
            None => return Err(format!("row has no version column '{name}'").into()),
            Some(Datum::Null) => self.version.ty.min_value(),
            Some(cell) => self
                .version
                .ty
                .read(cell)
                .map_err(|e| format!("version column '{name}': {e}"))?,
        };
        keep_highest(
            state,
            kind,
            write,
            &[Some(version)],
            &self.deletes,
            Highest::Versioned,
            out,
        )
    }
}
