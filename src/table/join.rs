//! Temporal joins in the Table API: `FOR SYSTEM_TIME AS OF` against a versioned table,
//! temporal table functions with `join_lateral`, and the processing-time lookup join.
//!
//! A join condition is split into its conjuncts: each `probe_column = build_column` equality
//! is an equality key, the rest is the residual condition, checked on the chosen version only
//! (Flink's rule B5). Columns are named as in the join's output: the probe's columns, then the
//! build's, a build column whose name is taken getting the suffix `0` (`currency0`).

use crate::expr::Expr;
use crate::plan::lower::{
    column_indices, plan_table_function, plan_temporal_function_join, plan_temporal_join,
    set_rowtime,
};
use crate::plan::{JoinKind, PlanError};

use super::env::{call_parts, TemporalTableFunction};
use super::lateral::aliased_call;
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
                plan_temporal_join(probe, build, &condition, kind, false, &registry)
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
                plan_temporal_join(probe, build, &condition, kind, true, &registry)
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
            column_indices(
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
            let time = column_indices(&probe.schema, std::slice::from_ref(time), operation)?[0];
            plan_temporal_function_join(probe, function.history, time, &condition, kind, &registry)
        })
    }
}
