//! `partial-update` (Apache Paimon, rule C10): fields are merged one by one; a non-NULL incoming
//! value overwrites, NULL never does; sequence groups update a set of fields together.

use smallvec::SmallVec;

use super::aggregation::Cells;
use super::fold::{fold_cell, Cell};
use super::order::{order_key_by, OrderField, OrderKey};
use super::{FieldAgg, KeyState, Row};
use crate::operators::keyed_merge::Refusal;
use crate::operators::RowKind;
use crate::repr::Datum;

/// A row being merged, one cell per column.
type Building<'a> = SmallVec<[Cell<'a>; 16]>;

/// Paimon's error for a retraction on a partial-update table without a delete option.
pub const PARTIAL_UPDATE_DELETE_ERROR: &str = "By default, Partial update can not accept delete \
records, you can choose one of the following solutions: 1. Configure 'ignore-delete' to ignore \
delete records. 2. Configure 'partial-update.remove-record-on-delete' to remove the whole row when \
receiving delete records. 3. Configure 'sequence-group's to retract partial columns.";

/// A sequence group (`'fields.<seq>.sequence-group' = 'a,b'`): its fields are updated together,
/// NULLs included, iff the write's sequence is at least the stored one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequenceGroup {
    /// The group's sequence columns (several are compared left to right, NULL lowest).
    pub sequence: Vec<OrderField>,
    /// The columns the group updates (besides its sequence columns).
    pub fields: Vec<usize>,
    /// A winning retraction removes the whole row (Paimon
    /// `'partial-update.remove-record-on-sequence-group'` lists this group) instead of setting
    /// the group's fields to NULL.
    pub remove_record_on_retract: bool,
}

/// What a `-D`/`-U` write does to a partial-update table without sequence groups handling it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartialDeletes {
    /// Paimon's default: refused with Paimon's message, `PARTIAL_UPDATE_DELETE_ERROR` (unless
    /// sequence groups retract them).
    Reject,
    /// `'ignore-delete' = 'true'`: reported as ignored, the row is unchanged.
    Ignore,
    /// `'partial-update.remove-record-on-delete' = 'true'`: a `-D` removes the whole row, and so
    /// does a `-U` (Paimon's fix for a lone `-U` whose `+U` was filtered away upstream; a `-U`
    /// followed by its `+U` thus leaves the row the `+U`'s non-NULL cells). A retraction of a
    /// key without a row is reported as ignored.
    RemoveRecordOnDelete,
}

/// Paimon `partial-update`.
///
/// An accumulating write copies its non-NULL cells outside sequence groups into the stored row;
/// each sequence group whose sequence in the write is non-NULL and at least the stored one takes
/// all its cells from the write (NULLs included); a group whose write sequence is NULL is
/// skipped. The first write of a key starts from an all-NULL row. Every applied write emits
/// `+I new` or `-U old, +U new`.
///
/// A retraction: see [`PartialDeletes`]; with sequence groups, each group whose sequence wins
/// sets its fields to NULL (its sequence columns take the retraction's values), or removes the
/// row (`-D old`) if the group is configured so. A `-D` or `-U` on the `remove-record-on-delete`
/// path emits `-D` of the stored row (Paimon's merge function returns the delete record itself; a
/// retract changelog must retract what it inserted).
///
/// Aggregate functions ([`PartialUpdate::with_aggregates`], Paimon's "Aggregation For Partial
/// Update": `'fields.<f>.aggregate-function'`, `'fields.default-aggregate-function'`; Paimon
/// requires sequence groups for them): a column with a function is aggregated instead of
/// overwritten. In a group, every write whose group sequence is non-NULL is aggregated (also
/// one ordered below the stored sequence; order-dependent functions such as `first_value`
/// follow the group's sequence) and every such retraction is retracted by the function, while
/// the group's sequence columns still advance only with a winning write. A column outside the
/// groups aggregates every accumulating write in arrival order and is not retracted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialUpdate {
    key: Vec<usize>,
    groups: Vec<SequenceGroup>,
    deletes: PartialDeletes,
    /// Columns merged by "non-NULL overwrites": neither key nor in a group.
    plain: Vec<usize>,
    /// Number of columns of the table.
    width: usize,
    /// Per column, its aggregate function; empty if there are none.
    aggs: Vec<Option<FieldAgg>>,
}

impl PartialUpdate {
    /// A partial-update engine over rows of `width` columns with primary-key columns `key`.
    pub fn new(
        width: usize,
        key: Vec<usize>,
        groups: Vec<SequenceGroup>,
        deletes: PartialDeletes,
    ) -> Self {
        let in_group = |c: &usize| {
            groups
                .iter()
                .any(|g| g.fields.contains(c) || g.sequence.iter().any(|s| s.column == *c))
        };
        let plain = (0..width)
            .filter(|c| !key.contains(c) && !in_group(c))
            .collect();
        PartialUpdate {
            key,
            groups,
            deletes,
            plain,
            width,
            aggs: Vec::new(),
        }
    }

    /// The engine with aggregate functions: `aggs[c]` for column `c` (`None`: overwritten as
    /// usual). The options parser refuses them without sequence groups and on key and sequence
    /// columns, as Paimon does.
    pub fn with_aggregates(mut self, aggs: Vec<Option<FieldAgg>>) -> Self {
        self.aggs = if aggs.iter().any(Option::is_some) {
            aggs
        } else {
            Vec::new()
        };
        self
    }

    /// The aggregate function of column `c`, if it has one.
    pub fn aggregate(&self, c: usize) -> Option<&FieldAgg> {
        self.aggs.get(c).and_then(Option::as_ref)
    }

    /// The stored ranks of the order-dependent functions (none without aggregate functions).
    fn ranks(&self, state: &Option<KeyState>) -> Vec<Option<OrderKey>> {
        match state {
            _ if self.aggs.is_empty() => Vec::new(),
            Some(s) if !s.ranks.is_empty() => s.ranks.clone(),
            _ => vec![None; self.width],
        }
    }

    /// Aggregates column `c` of a write of `kind` with order `rank` into `row` if the column has
    /// a function; returns whether it has one.
    fn aggregate_into<'a>(
        &self,
        c: usize,
        kind: RowKind,
        row: &mut Building<'a>,
        cell: Datum<'a>,
        rank: &OrderKey,
        ranks: &mut [Option<OrderKey>],
    ) -> Result<bool, String> {
        let Some(f) = self.aggregate(c) else {
            return Ok(false);
        };
        let acc = std::mem::replace(&mut row[c], Cell::NULL);
        row[c] = fold_cell(f, kind, acc, cell, rank, &mut ranks[c])?;
        Ok(true)
    }

    /// Group `group`'s sequence in the write (`cells`) and whether it wins over the one in
    /// `row`; `None` if the write's sequence is all NULL (the group is skipped).
    fn group_order(
        group: &SequenceGroup,
        cells: &[Datum<'_>],
        row: &Building<'_>,
    ) -> Result<Option<(OrderKey, bool)>, String> {
        let incoming = order_key_by(&group.sequence, |c| cells.get(c).copied())?;
        if incoming.iter().all(Option::is_none) {
            return Ok(None);
        }
        let stored = order_key_by(&group.sequence, |c| row.get(c).map(Cell::datum))?;
        let wins = incoming >= stored;
        Ok(Some((incoming, wins)))
    }

    /// Whether column `c` is a primary-key column.
    pub fn is_key(&self, c: usize) -> bool {
        self.key.contains(&c)
    }

    /// The sequence groups.
    pub fn groups(&self) -> &[SequenceGroup] {
        &self.groups
    }

    /// Whether a `-D` or `-U` removes the whole row (`'partial-update.remove-record-on-delete'`).
    pub fn removes_record_on_delete(&self) -> bool {
        self.deletes == PartialDeletes::RemoveRecordOnDelete
    }

    /// What a retraction does without sequence groups.
    pub fn deletes(&self) -> PartialDeletes {
        self.deletes
    }

    /// Folds one write (see [`MergeRule::merge`](crate::operators::keyed_merge::MergeRule::merge)).
    pub fn merge(
        &self,
        state: &mut Option<KeyState>,
        kind: RowKind,
        write: &Row,
        out: &mut Vec<(RowKind, Row)>,
    ) -> Result<(), Refusal> {
        let cells: Cells<'_> = write.iter().collect();
        if cells.len() != self.width {
            let n = self.width;
            return Err(format!("write has {} columns, the table {n}", cells.len()).into());
        }
        if !kind.is_accumulate() {
            return self.retract(state, kind, &cells, out);
        }
        let old = state.as_ref().and_then(|s| s.row.as_ref());
        let mut row: Building<'_> = match old {
            Some(old) => old.iter().map(Cell::Datum).collect(),
            None => {
                let mut empty: Building<'_> = (0..self.width).map(|_| Cell::NULL).collect();
                for &k in &self.key {
                    empty[k] = Cell::Datum(cells[k]);
                }
                empty
            }
        };
        let mut ranks = self.ranks(state);
        let arrival = OrderKey::new();
        for &c in &self.plain {
            let cell = cells[c];
            if !self.aggregate_into(c, kind, &mut row, cell, &arrival, &mut ranks)?
                && !cell.is_null()
            {
                row[c] = Cell::Datum(cell);
            }
        }
        for group in &self.groups {
            let Some((incoming, wins)) = Self::group_order(group, &cells, &row)? else {
                continue;
            };
            for &c in &group.fields {
                let cell = cells[c];
                if !self.aggregate_into(c, kind, &mut row, cell, &incoming, &mut ranks)? && wins {
                    row[c] = Cell::Datum(cell);
                }
            }
            if wins {
                for s in &group.sequence {
                    row[s.column] = Cell::Datum(cells[s.column]);
                }
            }
        }
        let packed = Row::pack(row.iter().map(Cell::datum));
        // The cells borrow the stored row, which is replaced below.
        drop(row);
        let row = packed;
        match state.take().and_then(|s| s.row) {
            None => out.push((RowKind::Insert, row.clone())),
            Some(old) => {
                out.push((RowKind::UpdateBefore, old));
                out.push((RowKind::UpdateAfter, row.clone()));
            }
        }
        *state = Some(KeyState {
            ranks,
            ..KeyState::new(row)
        });
        Ok(())
    }

    fn retract(
        &self,
        state: &mut Option<KeyState>,
        kind: RowKind,
        cells: &[Datum<'_>],
        out: &mut Vec<(RowKind, Row)>,
    ) -> Result<(), Refusal> {
        match self.deletes {
            PartialDeletes::Ignore => {
                return Err(Refusal::ignored(format!(
                    "{kind} write ('ignore-delete' = 'true')"
                )))
            }
            PartialDeletes::RemoveRecordOnDelete => {
                let Some(old) = state.take().and_then(|s| s.row) else {
                    return Err(Refusal::ignored(format!(
                        "{kind} write on a key without a row"
                    )));
                };
                out.push((RowKind::Delete, old));
                return Ok(());
            }
            _ if self.groups.is_empty() => {
                return Err(Refusal::invalid(PARTIAL_UPDATE_DELETE_ERROR))
            }
            _ => {}
        }
        let Some(old) = state.as_ref().and_then(|s| s.row.as_ref()) else {
            return Err(Refusal::ignored(format!(
                "{kind} write on a key without a row"
            )));
        };
        let mut row: Building<'_> = old.iter().map(Cell::Datum).collect();
        let mut ranks = self.ranks(state);
        let mut remove = false;
        for group in &self.groups {
            let Some((incoming, wins)) = Self::group_order(group, cells, &row)? else {
                continue;
            };
            remove |= wins && group.remove_record_on_retract;
            // A winning group's plain fields become NULL; its aggregated ones are retracted
            // (also by a losing group, as Paimon does).
            for &c in &group.fields {
                let cell = cells[c];
                if !self.aggregate_into(c, kind, &mut row, cell, &incoming, &mut ranks)? && wins {
                    row[c] = Cell::NULL;
                }
            }
            if wins {
                for s in &group.sequence {
                    row[s.column] = Cell::Datum(cells[s.column]);
                }
            }
        }
        let packed = Row::pack(row.iter().map(Cell::datum));
        let old = old.clone();
        drop(row);
        let row = packed;
        if remove {
            out.push((RowKind::Delete, old));
            *state = None;
        } else {
            out.push((RowKind::UpdateBefore, old));
            out.push((RowKind::UpdateAfter, row.clone()));
            *state = Some(KeyState {
                ranks,
                ..KeyState::new(row)
            });
        }
        Ok(())
    }
}
