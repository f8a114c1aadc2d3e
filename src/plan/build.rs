//! Building plan nodes: each constructor checks its arguments against the input schemas and
//! derives the node's schema and changelog mode.

use crate::expr::{bind_scalar, AggregateExpr, Expr, FunctionRegistry, ScalarExpr};
use crate::repr::{DataType, Field, Row, Schema};

use super::{DedupOrder, Join, JoinKind, Keep, Mode, Node, PlanError, RelExpr};

impl RelExpr {
    /// A registered table `name` with its schema. A changelog source is `Mode::Updating` (with
    /// the primary key as upsert key, if declared); any other is `Mode::AppendOnly`.
    pub fn scan(name: impl Into<String>, schema: Schema, changelog: bool) -> RelExpr {
        let mode = if changelog {
            Mode::Updating {
                upsert_key: schema.primary_key.clone(),
            }
        } else {
            Mode::AppendOnly
        };
        RelExpr {
            node: Node::Scan { name: name.into() },
            schema,
            mode,
        }
    }

    /// Literal rows of `schema` (each row must have one datum per column).
    pub fn values(schema: Schema, rows: Vec<Row>) -> Result<RelExpr, PlanError> {
        if let Some(row) = rows.iter().find(|r| r.iter().count() != schema.len()) {
            return Err(PlanError::invalid(
                "Values",
                format!(
                    "row {row:?} does not have the {} columns of the schema",
                    schema.len()
                ),
            ));
        }
        let schema = Schema {
            primary_key: None,
            rowtime: None,
            proctime: None,
            ..schema
        };
        Ok(RelExpr {
            node: Node::Values { rows },
            schema,
            mode: Mode::AppendOnly,
        })
    }

    /// Appends the computed columns `exprs` (expression, output name).
    pub fn map(self, exprs: Vec<(ScalarExpr, String)>) -> Result<RelExpr, PlanError> {
        let mut fields = self.schema.fields.clone();
        for (expr, name) in &exprs {
            fields.push(Field::new(name.clone(), expr.ty.clone()));
        }
        // Schema::new checks the names are unique; the attributes stay the input's.
        let schema = Schema {
            fields: Schema::new(fields)?.fields,
            ..self.schema.clone()
        };
        let mode = self.mode.clone();
        Ok(RelExpr {
            node: Node::Map {
                input: Box::new(self),
                exprs: exprs.into_iter().map(|(e, _)| e).collect(),
            },
            schema,
            mode,
        })
    }

    /// Keeps the rows for which `predicate` (BOOLEAN) is TRUE.
    pub fn filter(self, predicate: ScalarExpr) -> Result<RelExpr, PlanError> {
        if !matches!(predicate.ty.data_type, DataType::Boolean | DataType::Null) {
            return Err(PlanError::invalid(
                "Filter",
                format!(
                    "the filter condition must be of type BOOLEAN, but is of type {}",
                    predicate.ty
                ),
            ));
        }
        let (schema, mode) = (self.schema.clone(), self.mode.clone());
        Ok(RelExpr {
            node: Node::Filter {
                input: Box::new(self),
                predicate,
            },
            schema,
            mode,
        })
    }

    /// [`filter`](RelExpr::filter) with an unbound expression, bound against this node's schema.
    pub fn filter_expr(
        self,
        predicate: &Expr,
        registry: &FunctionRegistry,
    ) -> Result<RelExpr, PlanError> {
        let predicate = bind_scalar(predicate, &self.schema, registry)?;
        self.filter(predicate)
    }

    /// Keeps the input columns `columns` in that order, named `names` (or their input names).
    /// Key and time attributes survive when their columns do.
    pub fn project(
        self,
        columns: Vec<usize>,
        names: Option<Vec<String>>,
    ) -> Result<RelExpr, PlanError> {
        let width = self.schema.len();
        if let Some(&bad) = columns.iter().find(|&&c| c >= width) {
            return Err(PlanError::invalid(
                "Project",
                format!("column {bad} out of range: the input has {width} columns"),
            ));
        }
        if names.as_ref().is_some_and(|n| n.len() != columns.len()) {
            return Err(PlanError::invalid(
                "Project",
                "one name per column is needed",
            ));
        }
        let fields = columns
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let mut field = self.schema.fields[c].clone();
                if let Some(names) = &names {
                    field.name = names[i].clone();
                }
                field
            })
            .collect();
        let mut schema = Schema::new(fields)?;
        // A column kept twice keeps its attribute at its first position.
        let position = |c: usize| columns.iter().position(|&k| k == c);
        schema.primary_key = remap(self.schema.primary_key.as_deref(), &position);
        schema.rowtime = self.schema.rowtime.as_ref().and_then(|r| {
            position(r.column).map(|column| crate::repr::Rowtime {
                column,
                delay_ms: r.delay_ms,
            })
        });
        schema.proctime = self.schema.proctime.and_then(position);
        let mode = match &self.mode {
            Mode::AppendOnly => Mode::AppendOnly,
            Mode::Updating { upsert_key } => Mode::Updating {
                upsert_key: remap(upsert_key.as_deref(), &position),
            },
        };
        Ok(RelExpr {
            node: Node::Project {
                input: Box::new(self),
                columns,
            },
            schema,
            mode,
        })
    }

    /// `GROUP BY group` computing `aggregates` (aggregate, output name): the group columns, then
    /// one column per aggregate. An aggregate that cannot retract is refused over an updating
    /// input, as Flink's planner refuses it.
    pub fn reduce(
        self,
        group: Vec<usize>,
        aggregates: Vec<(AggregateExpr, String)>,
    ) -> Result<RelExpr, PlanError> {
        if !self.mode.is_append_only() {
            let named = aggregates.iter().map(|(a, name)| (a, name.as_str()));
            super::execution::retractable("Reduce", named)?;
        }
        // With grouping columns every group holds a row (Calcite's typing, see
        // `in_keyed_group`); without, the one group may be empty.
        let aggregates: Vec<_> = match group.is_empty() {
            true => aggregates,
            false => (aggregates.into_iter())
                .map(|(a, name)| (a.in_keyed_group(), name))
                .collect(),
        };
        let mut fields = Vec::with_capacity(group.len() + aggregates.len());
        for &c in &group {
            // A grouped rowtime is a plain TIMESTAMP in the output (Flink drops the attribute).
            let field = self.schema.fields.get(c).cloned().ok_or_else(|| {
                PlanError::invalid("Reduce", format!("group column {c} out of range"))
            })?;
            fields.push(field);
        }
        for (agg, name) in &aggregates {
            fields.push(Field::new(name.clone(), agg.ty.clone()));
        }
        let mut schema = Schema::new(fields)?;
        let key: Vec<usize> = (0..group.len()).collect();
        if !group.is_empty() {
            schema.primary_key = Some(key.clone());
        }
        Ok(RelExpr {
            node: Node::Reduce {
                input: Box::new(self),
                group,
                aggregates: aggregates.into_iter().map(|(a, _)| a).collect(),
            },
            schema,
            mode: Mode::Updating {
                upsert_key: Some(key),
            },
        })
    }

    /// `SELECT DISTINCT *`.
    pub fn distinct(self) -> RelExpr {
        let mut schema = self.schema.clone();
        schema.rowtime = None;
        schema.proctime = None;
        let all: Vec<usize> = (0..schema.len()).collect();
        let mode = if self.mode.is_append_only() && all.is_empty() {
            Mode::AppendOnly
        } else {
            Mode::Updating {
                upsert_key: Some(all),
            }
        };
        RelExpr {
            node: Node::Distinct {
                input: Box::new(self),
            },
            schema,
            mode,
        }
    }

    /// Deduplication: the first or last row of each `key` by the rowtime attribute
    /// (`DedupOrder::EventTime`) or by arrival (`DedupOrder::Arrival`, Flink's proctime order).
    /// The input must be append-only and, for event time, have a rowtime attribute. The output
    /// has `key` as its primary key: keep-last by rowtime is Flink's versioned view.
    pub fn dedup(
        self,
        key: Vec<usize>,
        keep: Keep,
        order: DedupOrder,
    ) -> Result<RelExpr, PlanError> {
        if !self.mode.is_append_only() {
            return Err(PlanError::invalid(
                "Dedup",
                "deduplication needs an append-only input, but the input is an updating table",
            ));
        }
        if order == DedupOrder::EventTime && self.schema.rowtime.is_none() {
            return Err(PlanError::invalid(
                "Dedup",
                "ordering by event time needs a rowtime attribute (declare a watermark on the input)",
            ));
        }
        check_columns("Dedup", &key, &self.schema)?;
        if key.is_empty() {
            return Err(PlanError::invalid("Dedup", "the partition key is empty"));
        }
        let mut schema = self.schema.clone();
        schema.primary_key = Some(key.clone());
        let mode = match (keep, order) {
            (Keep::First, DedupOrder::Arrival) => Mode::AppendOnly,
            _ => Mode::Updating {
                upsert_key: Some(key.clone()),
            },
        };
        Ok(RelExpr {
            node: Node::Dedup {
                input: Box::new(self),
                key,
                keep,
                order,
                state_ttl: None,
            },
            schema,
            mode,
        })
    }

    /// This plan with idle-state retention measured in event time on the watermark (Flink's
    /// `table.exec.state.ttl`), in final mode; `ttl_ms = 0` is off. Measured on the watermark,
    /// not the wall clock, so the result never depends on the worker count (see
    /// [`retention`](differential_temporal_operators::retention)); rendering it in incremental
    /// mode is an error. It applies to:
    /// * a keep-first deduplication by rowtime (`RowTimeDeduplicateKeepFirstRowFunction`, rule
    ///   A13): a key's "already emitted" flag is gone once the watermark has passed the emitted
    ///   row's event time plus `ttl_ms`, and the key's next row is a first row again (emitted as
    ///   `+I`, the earlier one not retracted);
    /// * an event-time temporal join (rule B13): a key that no probe row and no build version
    ///   touched within `ttl_ms` of event time before the combined watermark is forgotten, its
    ///   versions no longer found by later probe rows (a LEFT join pads them).
    ///
    /// Errors: `self` is neither of those, or `ttl_ms < 0`.
    ///
    /// ```
    /// use differential_temporal::plan::{DedupOrder, Keep, RelExpr};
    /// use differential_temporal::repr::{DataType, Schema};
    ///
    /// let schema = Schema::builder()
    ///     .column("id", DataType::STRING.nullable())
    ///     .column("t", DataType::Timestamp(3).not_null())
    ///     .rowtime("t", 0)
    ///     .build()
    ///     .unwrap();
    /// let first = RelExpr::scan("events", schema, false)
    ///     .dedup(vec![0], Keep::First, DedupOrder::EventTime)?
    ///     .with_event_time_ttl(3_600_000)?;
    /// assert!(first.explain().contains("state_ttl=3600000ms"));
    /// # Ok::<(), differential_temporal::plan::PlanError>(())
    /// ```
    pub fn with_event_time_ttl(mut self, ttl_ms: i64) -> Result<RelExpr, PlanError> {
        let node = self.kind_name();
        let invalid = |reason: &str| Err(PlanError::invalid(node, reason));
        let ttl = match ttl_ms {
            ..0 => return invalid("a state TTL cannot be negative"),
            0 => None,
            ttl => Some(ttl),
        };
        match &mut self.node {
            Node::Dedup {
                keep: Keep::First,
                order: DedupOrder::EventTime,
                state_ttl,
                ..
            } => *state_ttl = ttl,
            Node::TemporalJoin(join) => join.state_ttl = ttl.map(|ms| ms as u64),
            _ => {
                return invalid(
                    "an event-time state TTL applies to a keep-first deduplication by event time \
                     and to an event-time temporal join, the operators that wait for the \
                     watermark",
                )
            }
        }
        Ok(self)
    }

    /// The processing-time lookup join `self JOIN build FOR SYSTEM_TIME AS OF self.proctime ON
    /// self.probe_key = build.build_key [AND residual]`: each probe row is joined once, when it
    /// arrives, with the build side's latest row of its key.
    pub fn lookup_join(
        self,
        build: RelExpr,
        probe_key: Vec<usize>,
        build_key: Vec<usize>,
        kind: JoinKind,
        residual: Option<ScalarExpr>,
    ) -> Result<RelExpr, PlanError> {
        join(
            self,
            build,
            probe_key,
            build_key,
            kind,
            residual,
            "LookupJoin",
        )
    }

    /// Writes this plan's output to the sink `name`.
    pub fn sink(self, name: impl Into<String>) -> RelExpr {
        let (schema, mode) = (self.schema.clone(), self.mode.clone());
        RelExpr {
            node: Node::Sink {
                input: Box::new(self),
                name: name.into(),
            },
            schema,
            mode,
        }
    }
}

/// The output schema of a join: the probe's columns, then the build's (nullable for LEFT),
/// a build column whose name is taken renamed with the first free suffix `0`, `1`, ...
/// (Flink's rule), the probe's rowtime and proctime kept.
pub fn join_schema(probe: &Schema, build: &Schema, kind: JoinKind) -> Schema {
    let mut fields = probe.fields.clone();
    for field in &build.fields {
        let mut field = field.clone();
        if kind == JoinKind::Left {
            field.ty.nullable = true;
        }
        if fields.iter().any(|f| f.name == field.name) {
            let base = field.name.clone();
            field.name = (0..)
                .map(|i| format!("{base}{i}"))
                .find(|n| !fields.iter().any(|f| &f.name == n))
                .expect("a free name");
        }
        fields.push(field);
    }
    Schema {
        fields,
        primary_key: None,
        rowtime: probe.rowtime.clone(),
        proctime: probe.proctime,
    }
}

pub(super) fn join(
    probe: RelExpr,
    build: RelExpr,
    probe_key: Vec<usize>,
    build_key: Vec<usize>,
    kind: JoinKind,
    residual: Option<ScalarExpr>,
    node: &'static str,
) -> Result<RelExpr, PlanError> {
    check_join(
        node,
        (&probe.schema, &probe_key),
        (&build.schema, &build_key),
        residual.as_ref(),
        "the join needs one or more equality keys, as many on the probe side as on the build side",
    )?;
    let schema = join_schema(&probe.schema, &build.schema, kind);
    let mode = match &probe.mode {
        Mode::AppendOnly => Mode::AppendOnly,
        Mode::Updating { .. } => Mode::Updating { upsert_key: None },
    };
    let join = Join {
        probe: Box::new(probe),
        build: Box::new(build),
        probe_key,
        build_key,
        kind,
        residual,
        state_ttl: None,
    };
    let node = if node == "TemporalJoin" {
        Node::TemporalJoin(join)
    } else {
        Node::LookupJoin(join)
    };
    Ok(RelExpr { node, schema, mode })
}

/// Checks a join's keys, `(schema, key columns)` of each side: in range, as many on each side
/// and at least one (else the error `missing`), pairwise comparable; and that the residual is
/// BOOLEAN.
pub(super) fn check_join(
    node: &'static str,
    (left, left_key): (&Schema, &[usize]),
    (right, right_key): (&Schema, &[usize]),
    residual: Option<&ScalarExpr>,
    missing: &str,
) -> Result<(), PlanError> {
    check_columns(node, left_key, left)?;
    check_columns(node, right_key, right)?;
    if left_key.is_empty() || left_key.len() != right_key.len() {
        return Err(PlanError::invalid(node, missing));
    }
    for (&l, &r) in left_key.iter().zip(right_key) {
        let (lf, rf) = (&left.fields[l], &right.fields[r]);
        let (lt, rt) = (&lf.ty.data_type, &rf.ty.data_type);
        if !comparable(lt, rt) {
            return Err(PlanError::invalid(
                node,
                format!(
                    "the key columns '{}' ({lt}) and '{}' ({rt}) cannot be compared",
                    lf.name, rf.name
                ),
            ));
        }
    }
    if let Some(r) = residual {
        if !matches!(r.ty.data_type, DataType::Boolean | DataType::Null) {
            return Err(PlanError::invalid(
                node,
                format!(
                    "the join condition must be of type BOOLEAN, but is of type {}",
                    r.ty
                ),
            ));
        }
    }
    Ok(())
}

/// Whether two key types compare by their packed bytes: equal types, any two integer types (all
/// pack as `Int`), or two string types.
fn comparable(a: &DataType, b: &DataType) -> bool {
    a == b || (a.is_integer() && b.is_integer()) || (a.is_string() && b.is_string())
}

pub(super) fn check_columns(
    node: &'static str,
    columns: &[usize],
    schema: &Schema,
) -> Result<(), PlanError> {
    match columns.iter().find(|&&c| c >= schema.len()) {
        Some(c) => Err(PlanError::invalid(
            node,
            format!(
                "column {c} out of range: the input has {} columns",
                schema.len()
            ),
        )),
        None => Ok(()),
    }
}

fn remap(key: Option<&[usize]>, position: &impl Fn(usize) -> Option<usize>) -> Option<Vec<usize>> {
    key?.iter().map(|&c| position(c)).collect()
}
