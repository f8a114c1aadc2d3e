//! The merge-engine node: a primary-key table whose writes are merged per key by a Fluss / Paimon
//! merge engine (semantics section C; [`crate::merge_engine`] has the rules).

use crate::merge_engine::{Deletes, MergeEngine};
use crate::merge_options::merge_engine_from_options;

use super::{Mode, Node, PlanError, RelExpr};

impl RelExpr {
    /// This table's writes merged per primary key `key` (column names) by the merge engine the
    /// table options `options` configure (`('table.merge-engine', 'versioned')`,
    /// `('merge-engine', 'partial-update')`, `('sequence.field', 'ts')`...: the vocabulary of
    /// [`merge_options`](crate::merge_options), validated against this table's columns and
    /// types). Fluss's `table.merge-engine` and Paimon's `merge-engine` table property.
    ///
    /// The output has this table's columns with `key` as its primary key; it is updating,
    /// keyed by `key` (`+I`, `-U`/`+U`, `-D`), except a `first_row` table that ignores or
    /// refuses deletes, which only inserts. Each write is applied per key in source order
    /// (its system time, then its `seq`), so the result does not depend on the worker count
    /// or the epochs. Writes the engine does not apply are reported with their `seq` (see
    /// [`RejectKind`](crate::operators::keyed_merge::RejectKind): `Ignored` for those it skips
    /// by definition, `Invalid` for errors). NULL is a key value, as in deduplication (a table
    /// declared with a primary key has NOT NULL key columns, so its source refuses NULL key
    /// cells).
    ///
    /// Errors: an empty or unknown key column, options the engine refuses (an unknown engine
    /// or option, a version column of a type that cannot order...), or an input that is not a
    /// table's writes in source order: a scanned table, optionally filtered, projected or
    /// with computed columns (a merge engine is a table's property; an aggregation's or a
    /// join's changes have no source order to merge in).
    ///
    /// ```
    /// use differential_temporal::plan::RelExpr;
    /// use differential_temporal::repr::{DataType, Schema};
    ///
    /// let writes = Schema::builder()
    ///     .column("a", DataType::BigInt.not_null())
    ///     .column("b", DataType::STRING.nullable())
    ///     .column("ts", DataType::BigInt.nullable())
    ///     .build()
    ///     .unwrap();
    /// let options = [
    ///     ("table.merge-engine".to_string(), "versioned".to_string()),
    ///     ("table.merge-engine.versioned.ver-column".to_string(), "ts".to_string()),
    /// ];
    /// let table = RelExpr::scan("writes", writes, true)
    ///     .merge_engine(&["a".to_string()], &options)
    ///     .unwrap();
    /// assert_eq!(table.schema.primary_key, Some(vec![0]));
    /// assert!(table.explain().starts_with("MergeEngine(engine=versioned, key=[a])"));
    /// ```
    pub fn merge_engine(
        self,
        key: &[String],
        options: &[(String, String)],
    ) -> Result<RelExpr, PlanError> {
        let engine = merge_engine_from_options(options, &self.schema, key)
            .map_err(|e| PlanError::invalid("MergeEngine", e.to_string()))?;
        let columns = key
            .iter()
            .map(|k| {
                let unknown = || PlanError::invalid("MergeEngine", format!("no column '{k}'"));
                self.schema.index_of(k).ok_or_else(unknown)
            })
            .collect::<Result<_, _>>()?;
        self.merged_by(columns, engine)
    }

    /// This table's writes merged per primary key `key` (column positions) by `engine`,
    /// configured for this table's columns, as [`merge_engine`](Self::merge_engine) describes.
    ///
    /// Errors: an empty key, a key column out of range, an input that is not a table's writes
    /// in source order.
    pub(crate) fn merged_by(
        self,
        key: Vec<usize>,
        engine: MergeEngine,
    ) -> Result<RelExpr, PlanError> {
        let invalid = |reason: String| PlanError::invalid("MergeEngine", reason);
        if key.is_empty() {
            return Err(invalid("the primary key is empty".to_string()));
        }
        super::build::check_columns("MergeEngine", &key, &self.schema)?;
        if let Some(node) = self.source_order_breaker() {
            return Err(invalid(format!(
                "a merge engine merges a table's writes in source order, but its input is a {} (merge a scanned table, optionally filtered, projected or with computed columns)",
                node.kind_name()
            )));
        }
        let mut schema = self.schema.clone();
        schema.primary_key = Some(key.clone());
        let mode = match &engine {
            MergeEngine::FirstRow(f) if f.deletes != Deletes::Apply => Mode::AppendOnly,
            _ => Mode::Updating {
                upsert_key: Some(key.clone()),
            },
        };
        Ok(RelExpr {
            node: Node::MergeEngine {
                input: Box::new(self),
                key,
                engine,
            },
            schema,
            mode,
        })
    }

    /// The first node below (or at) this one, on the way to its source, whose changes do not
    /// keep the source's order (`seq`) and kinds; `None` for a chain of per-row nodes over a
    /// scan or literal rows.
    pub(super) fn source_order_breaker(&self) -> Option<&RelExpr> {
        match &self.node {
            Node::Scan { .. } | Node::Values { .. } => None,
            Node::Map { input, .. }
            | Node::Filter { input, .. }
            | Node::Project { input, .. }
            | Node::ProcTime { input, .. } => input.source_order_breaker(),
            _ => Some(self),
        }
    }
}
