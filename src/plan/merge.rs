//! The merge-engine node: a primary-key table whose writes are merged per key by a Fluss / Paimon
//! merge engine (semantics section C; [`crate::merge_engine`] has the rules).

use crate::merge_engine::{Deduplicate, Deletes, MergeEngine};
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
                normalize: false,
            },
            schema,
            mode,
        })
    }

    /// This upsert source (a scan of a changelog whose `+U` rows come without their `-U`,
    /// with a primary key) normalized by its key: Flink's ChangelogNormalize (rule A12;
    /// `StreamPhysicalChangelogNormalize`, inserted for an upsert source wherever it is read
    /// but as a temporal join's versions). Per key in source order a `+I`/`+U` becomes `+I`
    /// (no row held), `-U old, +U new` (another row held) or nothing (the same row held), a
    /// `-D` becomes `-D` of the row held, so a filter or an aggregate over it sees each key
    /// once; a `-D` of a key that holds no row changes nothing and is counted as ignored. The
    /// fold is the `deduplicate` merge engine's (last write wins, deletes applied); schema and
    /// mode are the scan's. EXPLAIN shows it as `ChangelogNormalize(key=[..])`.
    ///
    /// Errors: `self` has no primary key.
    ///
    /// ```
    /// use differential_temporal::plan::RelExpr;
    /// use differential_temporal::repr::{DataType, Schema};
    ///
    /// let rates = Schema::builder()
    ///     .column("currency", DataType::STRING.not_null())
    ///     .column("rate", DataType::BigInt.nullable())
    ///     .primary_key(["currency"])
    ///     .build()
    ///     .unwrap();
    /// let scan = RelExpr::scan("rates", rates, true);
    /// let normalized = scan.clone().normalized_by_key().unwrap();
    /// assert_eq!((&normalized.schema, &normalized.mode), (&scan.schema, &scan.mode));
    /// assert!(normalized.explain().starts_with("ChangelogNormalize(key=[currency])"));
    /// assert!(normalized.reads_upsert_source());
    /// assert_eq!(normalized.as_versions(), scan);
    /// ```
    pub fn normalized_by_key(self) -> Result<RelExpr, PlanError> {
        let key = self.schema.primary_key.clone().ok_or_else(|| {
            PlanError::invalid(
                "ChangelogNormalize",
                "an upsert changelog needs a primary key to be normalized by",
            )
        })?;
        let engine = MergeEngine::Deduplicate(Deduplicate {
            sequence: Vec::new(),
            deletes: Deletes::Apply,
        });
        let mut merged = self.merged_by(key, engine)?;
        if let Node::MergeEngine { normalize, .. } = &mut merged.node {
            *normalize = true;
        }
        Ok(merged)
    }

    /// Whether this table reads an upsert source through its normalization
    /// ([`normalized_by_key`](Self::normalized_by_key)), below per-row nodes (filters,
    /// projections, computed columns): DESCRIBE says which mode a table is read in.
    pub fn reads_upsert_source(&self) -> bool {
        match &self.node {
            Node::MergeEngine { normalize, .. } => *normalize,
            Node::Map { input, .. }
            | Node::Filter { input, .. }
            | Node::Project { input, .. }
            | Node::ProcTime { input, .. } => input.reads_upsert_source(),
            _ => false,
        }
    }

    /// This table read as versions, the changes of its source as they are: the normalization
    /// of an upsert source below its per-row nodes is left out (a temporal join's build side,
    /// AS OF and the history read a `-D` as a delete version at its own event time, and a
    /// `+U` as the version it is; the normalization would carry the replaced row's time).
    /// Schemas and modes do not change.
    pub fn as_versions(self) -> RelExpr {
        let RelExpr { node, schema, mode } = self;
        let node = match node {
            Node::MergeEngine {
                input,
                normalize: true,
                ..
            } => return *input,
            Node::Map { input, exprs } => Node::Map {
                input: Box::new(input.as_versions()),
                exprs,
            },
            Node::Filter { input, predicate } => Node::Filter {
                input: Box::new(input.as_versions()),
                predicate,
            },
            Node::Project { input, columns } => Node::Project {
                input: Box::new(input.as_versions()),
                columns,
            },
            Node::ProcTime {
                input,
                column,
                clock,
            } => Node::ProcTime {
                input: Box::new(input.as_versions()),
                column,
                clock,
            },
            other => other,
        };
        RelExpr { node, schema, mode }
    }

    /// The first node below (or at) this one, on the way to its source, whose changes do not
    /// keep the source's order (`seq`) and kinds; `None` for a chain of per-row nodes over a
    /// scan or literal rows.
    pub(crate) fn source_order_breaker(&self) -> Option<&RelExpr> {
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
