//! Temporal joins in the Table API: `FOR SYSTEM_TIME AS OF` against a versioned table,
//! temporal table functions with `join_lateral`, and the processing-time lookup join.
//!
//! A join condition is split into its conjuncts: each `probe_column = build_column` equality
//! is an equality key, the rest is the residual condition, checked on the chosen version only
//! (Flink's rule B5). Columns are named as in the join's output: the probe's columns, then the
//! build's, a build column whose name is taken getting the suffix `0` (`currency0`).

use crate::expr::{bind_scalar, col, Expr, FunctionRegistry};
use crate::plan::{check_unfiltered_versions, join_schema, JoinKind, PlanError, RelExpr};
use crate::repr::{Rowtime, Schema};

use super::env::{call_parts, TemporalTableFunction};
use super::lateral::{aliased_call, plan_table_function};
use super::{Table, TableError};

impl Table {
    /// `self JOIN build FOR SYSTEM_TIME AS OF self.rowtime ON condition`: each row joined with
    /// the version of `build` (a versioned table: a primary key and a rowtime, e.g. a
    /// [`deduplicate`](Table::deduplicate) keep-last view or a changelog table) valid at its
    /// event time; INNER or LEFT (Flink's event-time temporal join, rules B1-B9).
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::{col, lit};
    /// use differential_temporal::plan::{DedupOrder, JoinKind, Keep};
    /// use differential_temporal::repr::{DataType, Schema};
    /// let (env, dir) = doc_env();
    /// let orders = dir.write("o.csv", "id,cur,t\n1,Euro,2024-01-01 10:00:00\n2,Euro,2024-01-01 11:00:00\n");
    /// let schema = Schema::builder()
    ///     .column("id", DataType::BigInt.not_null())
    ///     .column("cur", DataType::STRING.not_null())
    ///     .column("t", DataType::Timestamp(3).not_null())
    ///     .rowtime("t", 0)
    ///     .build().unwrap();
    /// env.register_csv("O", &orders, Some(schema)).unwrap();
    /// let rates = env.from("Rates").deduplicate([col("currency")], Keep::Last, DedupOrder::EventTime);
    /// let joined = env.from("O")
    ///     .temporal_join(&rates, col("cur").eq(col("currency")), JoinKind::Left)
    ///     .select([col("id"), col("rate")]);
    /// assert_eq!(joined.execute().unwrap().rows_as_text(), vec!["1,114", "2,116"]);
    /// ```
    pub fn temporal_join(&self, build: &Table, condition: Expr, kind: JoinKind) -> Table {
        let registry = self.env.functions();
        let build = build.plan.clone();
        match build {
            Err(e) => Table::new(&self.env, Err(e)),
            Ok(build) => self.then("temporal_join", move |probe| {
                plan_join(probe, build, &condition, kind, false, &registry)
            }),
        }
    }

    /// `self JOIN build FOR SYSTEM_TIME AS OF self.proctime ON condition`: each row joined, when
    /// it arrives, with the latest row of its key in `build` (Flink's lookup join); earlier
    /// output is never revised by later build rows.
    pub fn lookup_join(&self, build: &Table, condition: Expr, kind: JoinKind) -> Table {
        let registry = self.env.functions();
        let build = build.plan.clone();
        match build {
            Err(e) => Table::new(&self.env, Err(e)),
            Ok(build) => self.then("lookup_join", move |probe| {
                plan_join(probe, build, &condition, kind, true, &registry)
            }),
        }
    }

    /// This append-only history as a temporal table function keyed by `key`, versioned by
    /// `time` (Flink's `createTemporalTableFunction(time, key)`): every row is a version of its
    /// key, valid from its `time` until the key's next row. Register it with
    /// [`TableEnv::register_temporal_table_function`](super::TableEnv::register_temporal_table_function).
    pub fn temporal_table_function(
        &self,
        time: Expr,
        key: Expr,
    ) -> Result<TemporalTableFunction, TableError> {
        let mut history = self.plan.as_ref().map_err(TableError::clone)?.clone();
        let fail = |source| TableError::Plan {
            operation: "temporal_table_function",
            source,
        };
        let column = |e: &Expr| {
            super::select::column_indices(
                &history.schema,
                std::slice::from_ref(e),
                "temporal_table_function",
            )
            .map(|c| c[0])
        };
        let time = column(&time).map_err(fail)?;
        let key = column(&key).map_err(fail)?;
        if !history.mode.is_append_only() {
            return Err(fail(PlanError::invalid(
                "TemporalTableFunction",
                "a temporal table function's history must be an append-only table",
            )));
        }
        set_rowtime(&mut history.schema, time).map_err(fail)?;
        history.schema.primary_key = Some(vec![key]);
        Ok(TemporalTableFunction { history, key })
    }

    /// `self, LATERAL TABLE (f(..)) ON condition` (Flink's `joinLateral`), dispatched on what
    /// `f` is registered as:
    /// * a **table function** ([`TableEnv::register_table_function`](super::TableEnv::register_table_function)):
    ///   each row joined with every row the function returns for it (none: the row is
    ///   dropped), the function's columns after the row's (renamed with
    ///   [`as_columns`](crate::expr::Expr::as_columns), Flink's `.as("word", "length")`),
    ///   `condition` checked on each joined row (`lit(true)` for none). Works on updating
    ///   inputs: a retracted row retracts its expansions (the function must be
    ///   deterministic). Errors: arguments that do not fit the function's signature, named
    ///   with it (see [`plan::Correlate`](crate::plan::Correlate));
    /// * a **temporal table function**: each row joined with the version of `f` valid at the
    ///   row's `time` (INNER: rows without a version are dropped); `call` is
    ///   `call("f", [col("time")])`.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use differential_temporal::expr::{call, col};
    /// use differential_temporal::repr::{DataType, Schema};
    /// let (env, dir) = doc_env();
    /// let orders = dir.write("o.csv", "amount,cur,t\n2,Euro,2024-01-01 10:00:00\n");
    /// let schema = Schema::builder()
    ///     .column("amount", DataType::BigInt.not_null())
    ///     .column("cur", DataType::STRING.not_null())
    ///     .column("t", DataType::Timestamp(3).not_null())
    ///     .rowtime("t", 0)
    ///     .build().unwrap();
    /// env.register_csv("O", &orders, Some(schema)).unwrap();
    /// let rates = env.from("Rates").temporal_table_function(col("update_time"), col("currency")).unwrap();
    /// env.register_temporal_table_function("rates", rates).unwrap();
    /// let converted = env.from("O")
    ///     .join_lateral(call("rates", [col("t")]), col("cur").eq(col("currency")))
    ///     .select([col("amount").mul(col("rate")).alias("value")]);
    /// assert_eq!(converted.execute().unwrap().rows_as_text(), vec!["228"]);
    /// ```
    pub fn join_lateral(&self, call: Expr, condition: Expr) -> Table {
        self.lateral(call, condition, JoinKind::Inner, "join_lateral")
    }

    /// As [`join_lateral`](Table::join_lateral) with a table function, keeping rows whose
    /// function returns no row once, padded with NULLs (Flink's `leftOuterJoinLateral`). The
    /// condition must be `lit(true)` (Flink: "Left outer joins with a table function do not
    /// accept a predicate such as .. Only literal TRUE is accepted."). A temporal table
    /// function is refused here, as in Flink (its join is INNER only, case E05): a LEFT
    /// temporal join is [`temporal_join`](Table::temporal_join) with `JoinKind::Left`.
    ///
    /// ```
    /// # use differential_temporal::table::doc_env;
    /// use std::sync::Arc;
    /// use differential_temporal::expr::{call, col, lit, Collector, TableFunction};
    /// use differential_temporal::repr::{DataType, Datum, Field};
    ///
    /// /// `chars(s)`: each character of `s` with its position.
    /// struct Chars;
    /// impl TableFunction for Chars {
    ///     fn name(&self) -> &str { "chars" }
    ///     fn arguments(&self) -> Vec<DataType> { vec![DataType::STRING] }
    ///     fn output(&self) -> Vec<Field> {
    ///         vec![Field::new("c", DataType::STRING.nullable()),
    ///              Field::new("pos", DataType::BigInt.nullable())]
    ///     }
    ///     fn eval(&self, args: &[Datum<'_>], out: &mut Collector<'_>) -> Result<(), String> {
    ///         if let Datum::Str(s) = args[0] {
    ///             for (i, (at, c)) in s.char_indices().enumerate() {
    ///                 out.collect([Datum::Str(&s[at..at + c.len_utf8()]), Datum::Int(i as i64)]);
    ///             }
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// let (env, _dir) = doc_env(); // Orders(a STRING, b BIGINT): (x, 2), (y, 3), (x, 1)
    /// env.register_table_function(Arc::new(Chars)).unwrap();
    /// let chars = env.from("Orders")
    ///     .left_outer_join_lateral(call("chars", [col("a")]).as_columns(["ch", "at"]), lit(true))
    ///     .select([col("b"), col("ch"), col("at")]);
    /// assert_eq!(chars.execute().unwrap().rows_as_text(), vec!["1,x,0", "2,x,0", "3,y,0"]);
    /// ```
    pub fn left_outer_join_lateral(&self, call: Expr, condition: Expr) -> Table {
        self.lateral(call, condition, JoinKind::Left, "left_outer_join_lateral")
    }

    fn lateral(
        &self,
        call: Expr,
        condition: Expr,
        kind: JoinKind,
        operation: &'static str,
    ) -> Table {
        let registry = self.env.functions();
        let (udtf, names) = aliased_call(&call);
        if call_parts(udtf).is_some_and(|(name, _)| registry.table(name).is_some()) {
            let udtf = udtf.clone();
            return self.then(operation, move |probe| {
                plan_table_function(probe, &udtf, names.as_deref(), &condition, kind, &registry)
            });
        }
        let Some((name, args)) = call_parts(&call) else {
            return Table::new(
                &self.env,
                Err(TableError::Invalid(format!(
                    "{operation} takes a call of a temporal table function, call(\"rates\", [col(\"time\")]), not '{call}'"
                ))),
            );
        };
        let function = match self.env.temporal_function(name) {
            Ok(f) => f,
            Err(e) => return Table::new(&self.env, Err(e)),
        };
        let args = args.to_vec();
        self.then(operation, move |probe| {
            let [time] = args.as_slice() else {
                return Err(PlanError::invalid(
                    "TemporalJoin",
                    "a temporal table function takes one argument: the probe's time attribute",
                ));
            };
            let time = super::select::column_indices(
                &probe.schema,
                std::slice::from_ref(time),
                operation,
            )?[0];
            plan_lateral(probe, function, time, &condition, kind, &registry)
        })
    }
}

/// `probe JOIN build FOR SYSTEM_TIME AS OF probe.rowtime ON condition` (or `.proctime`, a
/// lookup join, when `lookup`): the condition split into equality keys and a residual, then
/// the plan node. Shared by the Table API and the SQL binder. `condition` names columns as the
/// join's output does ([`join_schema`]).
pub(crate) fn plan_join(
    probe: RelExpr,
    build: RelExpr,
    condition: &Expr,
    kind: JoinKind,
    lookup: bool,
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    if !lookup {
        check_unfiltered_versions(&build)?;
    }
    plan_keyed_join(probe, build, condition, kind, lookup, registry)
}

/// [`plan_join`] without its check of the build side's versions (a temporal table function's
/// history may be filtered).
fn plan_keyed_join(
    probe: RelExpr,
    build: RelExpr,
    condition: &Expr,
    kind: JoinKind,
    lookup: bool,
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    let (width, build_width) = (probe.schema.len(), build.schema.len());
    let joined = join_schema(&probe.schema, &build.schema, kind);
    let (probe, condition) = computed_probe_keys(probe, &joined, condition, lookup, registry)?;
    let with_keys = probe.schema.len();
    let joined = join_schema(&probe.schema, &build.schema, kind);
    let (pk, bk, residual) = split_condition(with_keys, &joined, &condition, registry)?;
    let join = if lookup {
        probe.lookup_join(build, pk, bk, kind, residual)?
    } else {
        probe.temporal_join(build, pk, bk, kind, residual)?
    };
    if with_keys == width {
        return Ok(join);
    }
    // The computed key columns leave the output.
    let columns = (0..width).chain(with_keys..with_keys + build_width);
    join.project(columns.collect(), None)
}

/// The probe with a column appended per equality of `condition` between a build column and an
/// expression of probe columns that is not a column itself (`mod(b.auction, 10000) = s.key`),
/// and the condition comparing that column instead: Flink computes such a key on the probe
/// side (Calcite's `JoinPushExpressionsRule`). A lookup join also takes a constant
/// (`d.id = 1`, Flink's constant lookup key); an event-time temporal join keeps a constant in
/// its residual condition, checked on the chosen version, as Flink does.
fn computed_probe_keys(
    probe: RelExpr,
    joined: &Schema,
    condition: &Expr,
    lookup: bool,
    registry: &FunctionRegistry,
) -> Result<(RelExpr, Expr), PlanError> {
    let width = probe.schema.len();
    let build_column = |e: &Expr| match e.unaliased() {
        Expr::Column(c) => joined.resolve(c).is_ok_and(|i| i >= width),
        _ => false,
    };
    let probe_side = |e: &Expr| {
        if matches!(e.unaliased(), Expr::Column(_)) {
            return None;
        }
        let bound = bind_scalar(e, &probe.schema, registry).ok()?;
        let mut columns = Vec::new();
        bound.columns(&mut columns);
        (lookup || !columns.is_empty()).then_some(bound)
    };
    let mut conjuncts = Vec::new();
    flatten_and(condition, &mut conjuncts);
    let (mut keys, mut rewritten) = (Vec::new(), Vec::new());
    for conjunct in conjuncts {
        let pair = match conjunct.unaliased() {
            Expr::Call { func, args } if func == "=" && args.len() == 2 => {
                match (build_column(&args[0]), build_column(&args[1])) {
                    (true, false) => probe_side(&args[1]).map(|p| (p, &args[0])),
                    (false, true) => probe_side(&args[0]).map(|p| (p, &args[1])),
                    _ => None,
                }
            }
            _ => None,
        };
        match pair {
            Some((key, build)) => {
                let name = (keys.len()..)
                    .map(|n| format!("$key{n}"))
                    .find(|n| joined.index_of(n).is_none())
                    .expect("a free name");
                rewritten.push(col(name.as_str()).eq(build.clone()));
                keys.push((key, name));
            }
            None => rewritten.push(conjunct.clone()),
        }
    }
    if keys.is_empty() {
        return Ok((probe, condition.clone()));
    }
    let condition = rewritten
        .into_iter()
        .reduce(Expr::and)
        .expect("a conjunct per key");
    Ok((probe.map(keys)?, condition))
}

/// `probe, LATERAL TABLE (function(probe.time)) ... condition`: the probe's column `time`
/// becomes its rowtime and the probe joins the function's history as of it (Flink's temporal
/// table function join). Shared by the Table API and the SQL binder.
pub(crate) fn plan_lateral(
    mut probe: RelExpr,
    function: TemporalTableFunction,
    time: usize,
    condition: &Expr,
    kind: JoinKind,
    registry: &FunctionRegistry,
) -> Result<RelExpr, PlanError> {
    if kind != JoinKind::Inner {
        return Err(PlanError::invalid(
            "TemporalTableFunctionJoin",
            "a temporal table function join supports INNER JOIN only (as in Flink): use \
             join_lateral / LATERAL TABLE without LEFT, or a LEFT JOIN .. FOR SYSTEM_TIME AS OF a \
             versioned table",
        ));
    }
    set_rowtime(&mut probe.schema, time)?;
    plan_keyed_join(probe, function.history, condition, kind, false, registry)
}

/// Makes `column` the rowtime attribute (keeping the declared watermark delay if it already is
/// one, else a delay of 0); it must be a TIMESTAMP or TIMESTAMP_LTZ column.
fn set_rowtime(schema: &mut Schema, column: usize) -> Result<(), PlanError> {
    if schema.rowtime.as_ref().is_some_and(|r| r.column == column) {
        return Ok(());
    }
    let field = &schema.fields[column];
    if !field.ty.data_type.is_timestamp() {
        return Err(PlanError::invalid(
            "TemporalJoin",
            format!(
                "the time attribute '{}' must be of type TIMESTAMP or TIMESTAMP_LTZ, but is of type {}",
                field.name, field.ty
            ),
        ));
    }
    schema.rowtime = Some(Rowtime {
        column,
        delay_ms: 0,
    });
    Ok(())
}

/// Splits a join condition into equality keys (a column of the first `width` columns of
/// `joined`, the left or probe side, = a column of the rest) and the residual, bound against
/// the join's output schema `joined`.
pub(crate) fn split_condition(
    width: usize,
    joined: &Schema,
    condition: &Expr,
    registry: &FunctionRegistry,
) -> Result<(Vec<usize>, Vec<usize>, Option<crate::expr::ScalarExpr>), PlanError> {
    let mut conjuncts = Vec::new();
    flatten_and(condition, &mut conjuncts);
    let (mut probe_key, mut build_key, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    for conjunct in conjuncts {
        let pair = match conjunct.unaliased() {
            Expr::Call { func, args } if func == "=" && args.len() == 2 => {
                match (args[0].unaliased(), args[1].unaliased()) {
                    (Expr::Column(a), Expr::Column(b)) => {
                        Some((joined.resolve(a)?, joined.resolve(b)?))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        match pair {
            Some((a, b)) if a < width && b >= width => {
                probe_key.push(a);
                build_key.push(b - width);
            }
            Some((a, b)) if b < width && a >= width => {
                probe_key.push(b);
                build_key.push(a - width);
            }
            _ => rest.push(conjunct.clone()),
        }
    }
    let residual = rest
        .into_iter()
        .reduce(|a, b| a.and(b))
        .map(|r| bind_scalar(&r, joined, registry))
        .transpose()?;
    Ok((probe_key, build_key, residual))
}

/// The conjuncts of `expr` (its `AND` operands, flattened), in order.
pub(super) fn flatten_and<'a>(expr: &'a Expr, out: &mut Vec<&'a Expr>) {
    match expr.unaliased() {
        Expr::Call { func, args } if func.eq_ignore_ascii_case("and") => {
            args.iter().for_each(|a| flatten_and(a, out))
        }
        other => out.push(other),
    }
}
