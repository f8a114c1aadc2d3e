//! The changelog check: a changelog's consistency per key, as a table of findings (what
//! `dtemporal validate` reports).
//!
//! A retract changelog (Flink's `ChangelogMode.all()`) is consistent per key when its changes
//! follow one another as a table's would: `+I` needs an absent key; `-U` and `-D` retract the
//! key's live row (the same values in every compared column); a `-U` is followed by a `+U` as
//! its key's next change, and a `+U` follows a `-U`. An upsert changelog (Flink's
//! `ChangelogMode.upsert()`) has no `-U`, and its `+I`/`+U` replace any row of their key; a
//! `-D` still needs a live row. Each departure is a [`Problem`], a row of the node's output.

use crate::repr::{DataType, Datum, Field, Row, Schema};
use differential_temporal_operators::{RowKind, Seq};

use super::{Mode, Node, PlanError, RelExpr};

/// The node [`Node::CheckChangelog`]: which changelog, keyed how, checked how.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangelogCheck {
    /// The changelog, a table's writes in source order.
    pub input: Box<RelExpr>,
    /// The key columns (NULL is a key value).
    pub key: Vec<usize>,
    /// Columns a retraction need not repeat (a CDC tool stamps a `-U`/`-D` with its own
    /// change time).
    pub uncompared: Vec<usize>,
    /// An upsert changelog (`+I`/`+U` replace, no `-U`) rather than a retract changelog.
    pub upsert: bool,
}

/// One inconsistency of a changelog: what a change (or the end of input) shows of its key.
/// Its [`Display`](std::fmt::Display) is the text `dtemporal validate` writes after the key,
/// positions written as lines (a CSV source's `seq` is the line a row starts on).
///
/// A retract changelog (Flink's `ChangelogMode.all()`) is consistent per key when its changes
/// follow one another as a table's would: `+I` needs an absent key; `-U` and `-D` retract the
/// key's live row (the same values in every compared column); a `-U` is followed by a `+U` as
/// its key's next change, and a `+U` follows a `-U`. An upsert changelog (Flink's
/// `ChangelogMode.upsert()`) has no `-U`, and its `+I`/`+U` replace any row of their key; a
/// `-D` still needs a live row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// `+I` of a key that is live since the change `since`.
    InsertOfLive {
        /// The change that made the key live.
        since: Seq,
    },
    /// `+U` with no `-U` before it: the key is live since `Some(change)`, or absent.
    UpdateAfterWithoutBefore {
        /// The change that made the key live, if it is.
        live_since: Option<Seq>,
    },
    /// `-U` or `-D` of a key with no live row.
    RetractionOfAbsent {
        /// `-U` or `-D`.
        kind: RowKind,
    },
    /// `-U` or `-D` whose row is not the live one: the first compared column that differs.
    RetractsOtherRow {
        /// `-U` or `-D`.
        kind: RowKind,
        /// The change that made the live row.
        since: Seq,
        /// The column's name.
        column: String,
        /// The retraction's value, quoted (or `NULL`).
        retracted: String,
        /// The live row's value, quoted (or `NULL`).
        live: String,
    },
    /// `-U` in an upsert changelog.
    UpdateBeforeInUpsert,
    /// A `-U` (the finding's position) whose key's next change is not `+U`: that change's kind
    /// and position, or `None` while there is none (at the end of input).
    UpdateBeforeAlone {
        /// The key's next change.
        next: Option<(RowKind, Seq)>,
    },
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::InsertOfLive { since } => write!(
                f,
                "+I of a key that is live (its row was inserted on line {since})"
            ),
            Problem::UpdateAfterWithoutBefore {
                live_since: Some(since),
            } => write!(
                f,
                "+U without a preceding -U (the key is live since line {since})"
            ),
            Problem::UpdateAfterWithoutBefore { live_since: None } => {
                write!(f, "+U without a preceding -U (the key is absent)")
            }
            Problem::RetractionOfAbsent { kind } => write!(f, "{kind} of a key with no live row"),
            Problem::RetractsOtherRow {
                kind,
                since,
                column,
                retracted,
                live,
            } => write!(
                f,
                "{kind} retracts a row other than the live one of line {since}: column {column:?} is {retracted}, the live row has {live}"
            ),
            Problem::UpdateBeforeInUpsert => write!(f, "-U in an upsert changelog (--upsert)"),
            Problem::UpdateBeforeAlone {
                next: Some((kind, at)),
            } => write!(
                f,
                "-U not followed by +U (the key's next change is {kind} on line {at})"
            ),
            Problem::UpdateBeforeAlone { next: None } => {
                write!(f, "-U not followed by +U (the input ends first)")
            }
        }
    }
}

impl ChangelogCheck {
    /// The output row of a finding about the change `seq` of the key `key` (its datums):
    /// `follow_up` for a `-U` reported on its key's next change ([`Problem::UpdateBeforeAlone`]).
    pub fn finding<'a>(
        key: impl IntoIterator<Item = Datum<'a>>,
        seq: Seq,
        problem: &Problem,
    ) -> Row {
        let follow_up = matches!(problem, Problem::UpdateBeforeAlone { .. });
        let text = problem.to_string();
        let mut row = Row::new();
        let mut packer = row.packer();
        packer.extend(key);
        packer.extend([
            Datum::Int(seq as i64),
            Datum::Bool(follow_up),
            Datum::Str(&text),
        ]);
        row
    }

    /// The problem of the retraction (`kind`) `retracted` of the live row `live` made by the
    /// change `since`, if a column other than the uncompared ones differs: the first such
    /// column, with both values quoted in their text form (or `NULL`).
    pub fn retracts_other_row(
        &self,
        kind: RowKind,
        since: Seq,
        live: &Row,
        retracted: &Row,
    ) -> Option<Problem> {
        let fields = &self.input.schema.fields;
        let text = |d: Datum, ty: &DataType| {
            if d.is_null() {
                return "NULL".to_string();
            }
            let mut s = String::new();
            crate::repr::format_datum(d, ty, &mut s).expect("a String takes any text");
            format!("{s:?}")
        };
        (live.iter().zip(retracted.iter()).enumerate())
            .filter(|(c, _)| !self.uncompared.contains(c))
            .find(|(_, (l, r))| l != r)
            .map(|(c, (l, r))| {
                let ty = &fields[c].ty.data_type;
                Problem::RetractsOtherRow {
                    kind,
                    since,
                    column: fields[c].name.clone(),
                    retracted: text(r, ty),
                    live: text(l, ty),
                }
            })
    }
}

impl RelExpr {
    /// The consistency of this changelog per key `key` (column names), as a table of
    /// findings (the rules are [`Problem`]'s): per problem one row of the key's columns, `seq`
    /// (`BIGINT`, the change the finding is about: for a CSV source its line), `follow_up`
    /// (`BOOLEAN`, TRUE for a `-U` reported on its key's next change, which sorts after the
    /// `-U`'s own finding) and `problem` (`STRING`, [`Problem`]'s text); a name already taken
    /// gets a leading `$`. A retraction must repeat the live row in every column but
    /// `uncompared`; `upsert` reads an upsert changelog. Changes apply per key in source order
    /// (system time, then `seq`), so the findings do not depend on epochs or workers.
    ///
    /// The output is updating: a `-U` is a finding ("the input ends first") until its key's
    /// next change, which replaces it (by nothing if that change is the `+U`). State: the
    /// live row of each live key.
    ///
    /// Errors: an empty or unknown key column, an unknown uncompared column, an input that is
    /// not a table's writes in source order (see [`RelExpr::merge_engine`]).
    ///
    /// ```
    /// use differential_temporal::plan::RelExpr;
    /// use differential_temporal::repr::{DataType, Schema};
    ///
    /// let products = Schema::builder()
    ///     .column("id", DataType::STRING.not_null())
    ///     .column("price", DataType::BigInt.nullable())
    ///     .column("update_time", DataType::STRING.nullable())
    ///     .build()
    ///     .unwrap();
    /// let key = ["id".to_string()];
    /// let stamped = ["update_time".to_string()];
    /// let findings = RelExpr::scan("products", products, true)
    ///     .check_changelog(&key, &stamped, false)?;
    /// let names: Vec<_> = findings.schema.names().collect();
    /// assert_eq!(names, ["id", "seq", "follow_up", "problem"]);
    /// # Ok::<(), differential_temporal::plan::PlanError>(())
    /// ```
    pub fn check_changelog(
        self,
        key: &[String],
        uncompared: &[String],
        upsert: bool,
    ) -> Result<RelExpr, PlanError> {
        const NODE: &str = "CheckChangelog";
        let positions = |names: &[String]| {
            let find = |n: &String| {
                let unknown = || PlanError::invalid(NODE, format!("no column '{n}'"));
                self.schema.index_of(n).ok_or_else(unknown)
            };
            names.iter().map(find).collect::<Result<Vec<_>, _>>()
        };
        let (key, uncompared) = (positions(key)?, positions(uncompared)?);
        if key.is_empty() {
            return Err(PlanError::invalid(NODE, "the key is empty"));
        }
        if let Some(node) = self.source_order_breaker() {
            return Err(PlanError::invalid(
                NODE,
                format!(
                    "a changelog is checked in source order, but its input is a {} (check a scanned table, optionally filtered, projected or with computed columns)",
                    node.kind_name()
                ),
            ));
        }
        let mut fields: Vec<Field> = key.iter().map(|&c| self.schema.fields[c].clone()).collect();
        let appended = [
            ("seq", DataType::BigInt),
            ("follow_up", DataType::Boolean),
            ("problem", DataType::STRING),
        ];
        for (name, ty) in appended {
            let mut name = name.to_string();
            while fields.iter().any(|f| f.name == name) {
                name.insert(0, '$');
            }
            fields.push(Field::new(name, ty.not_null()));
        }
        let schema = Schema::new(fields).expect("the appended names are unused");
        Ok(RelExpr {
            node: Node::CheckChangelog(ChangelogCheck {
                input: Box::new(self),
                key,
                uncompared,
                upsert,
            }),
            schema,
            mode: Mode::Updating { upsert_key: None },
        })
    }
}
